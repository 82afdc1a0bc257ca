//===- attn-opt.cpp - The attn pass driver --------------------------------===//
//
// Parses, verifies, transforms and prints `attn` IR; the driver of the lit
// suite. Exit status as the attnc CLI's: 0 ok, 2 bad input (IR that does not
// parse or verify, a pass that refuses it, an unreadable input or
// unwritable output, IR nested deeper than the parser can take), 1 never
// (an internal failure aborts).
//
//===----------------------------------------------------------------------===//
#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Support/TextNesting.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace {
constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
} // namespace

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  attnc::registerAttncPipeline();
  attnc::registerAttncCodegenPasses();
  mlir::DialectRegistry registry;
  // arith: constants in tests (e.g. a splat gate for attn-canonicalize).
  registry.insert<attnc::attn::AttnDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "attnc pass driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "attn-opt: error: " << error << "\n";
    return kExitBadInput;
  }
  // The parser recurses per nesting level without a limit of its own.
  if (std::string nesting =
          attnc::irNestingError(inputFilename, input->getBuffer());
      !nesting.empty()) {
    llvm::errs() << "attn-opt: error: " << nesting << "\n";
    return kExitBadInput;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "attn-opt: error: " << error << "\n";
    return kExitBadInput;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return kExitBadInput;
  output->keep();
  return kExitOk;
}
