//===- AttnIrFuzzer.cpp - parser, verifier, pipeline and CUDA emission ----===//
//
// `attn` IR text (with the dialects attn-opt registers) through everything
// attn-opt and attn-translate do with it, NVRTC excepted:
//
//   parse + verify; print, re-parse and print again (the same text);
//   attnc-pipeline stage by stage, then attn-prepare-emission and the CUDA
//     emitter, with the verifier run after each stage; every emitted ABI
//     must validate;
//   on a copy of the input, the attn-to-cuda translation (attn-translate).
//
// Failing is fine, failing silently is not: every failure must have emitted
// an error diagnostic, and a stage that succeeds must leave valid IR.
//
//===----------------------------------------------------------------------===//
#include "FuzzUtil.h"

#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Runtime/KernelAbi.h"
#include "attnc/Support/TextNesting.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace mlir;

namespace {

/// Larger inputs are not interesting and slow the fuzzer down (scripts/
/// fuzz.sh also passes -max_len); replayed files may be any size.
constexpr size_t kMaxInputBytes = 64 * 1024;

/// MLIR's parser recurses once per nested region, attribute, type and
/// bracket, with no depth limit of its own: a few thousand levels overflow
/// the stack (a known limit, guarded in the tools separately by the same
/// count, attnc/Support/TextNesting.h, at 512 levels). That is not the code
/// under test here, so inputs deeper than this are skipped; the test inputs
/// nest fewer than 20 levels.
constexpr size_t kMaxNesting = 64;

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

/// Counts error diagnostics (and drops them all: printing is slow).
struct ErrorCounter {
  explicit ErrorCounter(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
            ++errors;
          return success();
        }) {}
  int errors = 0;
  ScopedDiagnosticHandler handler;
};

/// A failure must come with an error diagnostic that says what is wrong.
void checkFailureExplained(const ErrorCounter &counter, int errorsBefore,
                           const char *what, const std::string &ir) {
  if (counter.errors == errorsBefore)
    attnc::fuzz::fail(what, ir);
}

/// Runs one pass with the pass manager's own verifier off, then verifies:
/// a pass that succeeds but leaves invalid IR is a bug, not a rejection.
/// Returns false when the pass refused the module (with a diagnostic).
bool runStage(MLIRContext &context, ModuleOp module, ErrorCounter &counter,
              const std::string &name, std::unique_ptr<Pass> pass) {
  std::string before = print(module);
  PassManager pm(&context);
  pm.enableVerifier(false);
  pm.addPass(std::move(pass));
  int errorsBefore = counter.errors;
  if (failed(pm.run(module))) {
    checkFailureExplained(counter, errorsBefore,
                          ("pass failed without an error: " + name).c_str(),
                          before);
    return false;
  }
  if (failed(verify(module)))
    attnc::fuzz::fail(("pass left IR that does not verify: " + name).c_str(),
                      before);
  return true;
}

void pipelineAndEmission(MLIRContext &context, ModuleOp module,
                         ErrorCounter &counter, const std::string &arch) {
  attnc::PipelineOptions options;
  options.arch = arch;
  for (attnc::PipelineStage &stage : attnc::attncPipelineStages(options))
    if (!runStage(context, module, counter, stage.name, stage.create()))
      return;
  if (!runStage(context, module, counter, "attn-prepare-emission",
                attnc::createAttnPrepareEmission()))
    return;
  std::string before = print(module);
  int errorsBefore = counter.errors;
  FailureOr<std::vector<attnc::EmittedKernel>> kernels =
      attnc::emitCudaKernels(module);
  if (failed(kernels)) {
    checkFailureExplained(counter, errorsBefore,
                          "CUDA emission failed without an error", before);
    return;
  }
  for (const attnc::EmittedKernel &kernel : *kernels) {
    if (kernel.source.empty())
      attnc::fuzz::fail("a kernel was emitted without a source", kernel.name);
    if (attnc::Status status = attnc::runtime::validateKernelAbi(kernel.abi);
        !status.ok())
      attnc::fuzz::fail("an emitted kernel ABI does not validate",
                        status.message() + "\n" + before);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  if (size > kMaxInputBytes || attnc::irNestingDepth(text) > kMaxNesting)
    return -1; // not added to the corpus

  DialectRegistry registry;
  registry.insert<attnc::attn::AttnDialect, func::FuncDialect,
                  arith::ArithDialect>();
  // One context per input: nothing (uniqued attributes, diagnostics) carries
  // over from one input to the next.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  ErrorCounter counter(context);

  // MLIR's lexer stops at a NUL after the buffer, which libFuzzer's input
  // does not have (jit::compileModelIr copies for the same reason).
  const std::string source(text);
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, config);
  if (!module) {
    checkFailureExplained(counter, 0, "the IR was refused without an error",
                          source);
    return 0;
  }

  // The printed form must parse back to the same module.
  std::string printed = print(*module);
  {
    OwningOpRef<ModuleOp> again =
        parseSourceString<ModuleOp>(printed, ParserConfig(&context));
    if (!again)
      attnc::fuzz::fail("the printed IR does not parse back", printed);
    if (print(*again) != printed)
      attnc::fuzz::fail("the IR round trip changes the module", printed);
  }

  // attn-translate's path on a copy (it wants the kernel form; the layer
  // form is refused or emits nothing).
  {
    OwningOpRef<ModuleOp> copy = module->clone();
    std::string output;
    llvm::raw_string_ostream os(output);
    int errorsBefore = counter.errors;
    if (failed(attnc::translateAttnToCuda(*copy, os)))
      checkFailureExplained(counter, errorsBefore,
                            "attn-to-cuda failed without an error", printed);
  }

  // The pipeline for an arch with wgmma and one without, chosen by the
  // input's length so that each input takes one path and stays fast.
  pipelineAndEmission(context, *module, counter,
                      size % 2 ? "sm_80" : "sm_90a");
  return 0;
}
