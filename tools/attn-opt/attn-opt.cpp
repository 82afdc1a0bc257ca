//===- attn-opt.cpp - The attn pass driver --------------------------------===//
//
// Parses, verifies, transforms and prints `attn` IR; the driver of the lit
// suite.
//
//===----------------------------------------------------------------------===//
#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  attnc::registerAttncPipeline();
  attnc::registerAttncCodegenPasses();
  mlir::DialectRegistry registry;
  // arith: constants in tests (e.g. a splat gate for attn-canonicalize).
  registry.insert<attnc::attn::AttnDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attnc pass driver\n", registry));
}
