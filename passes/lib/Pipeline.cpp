//===- Pipeline.cpp - attnc-pipeline --------------------------------------===//
#include "attnc/Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace attnc {

std::vector<PipelineStage> attncPipelineStages(const PipelineOptions &options) {
  AttnSpecializeOptions specialize;
  specialize.arch = options.arch;
  specialize.numSms = options.num_sms;
  specialize.baseline = options.baseline;
  specialize.prefillKernel = options.prefill_kernel;
  return {
      {"attn-canonicalize", [] { return createAttnCanonicalize(); }},
      {"attn-fuse-preprocess", [] { return createAttnFusePreprocess(); }},
      // Fusion can leave an unused gate output or dead ops behind.
      {"attn-canonicalize", [] { return createAttnCanonicalize(); }},
      {"attn-specialize",
       [specialize] { return createAttnSpecialize(specialize); }},
      {"attn-outline-kernels", [] { return createAttnOutlineKernels(); }},
  };
}

void buildAttncPipeline(OpPassManager &pm, const PipelineOptions &options) {
  for (const PipelineStage &stage : attncPipelineStages(options))
    pm.addPass(stage.create());
}

namespace {
struct PipelineCommandLineOptions
    : public PassPipelineOptions<PipelineCommandLineOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("Target GPU architecture"),
                           llvm::cl::init("sm_90a")};
  Option<int64_t> numSms{*this, "num-sms",
                         llvm::cl::desc("SMs to fill (0: the arch's flagship)"),
                         llvm::cl::init(0)};
  Option<bool> baseline{*this, "baseline",
                        llvm::cl::desc("The tiered JIT's baseline: mma.sync "
                                       "attention where wgmma would be taken"),
                        llvm::cl::init(false)};
  Option<bool> prefillKernel{
      *this, "prefill-kernel",
      llvm::cl::desc("The warp-specialised prefill kernel of eligible paged "
                     "attention layers on sm_90a"),
      llvm::cl::init(true)};
};
} // namespace

void registerAttncPipeline() {
  registerAttncPasses();
  PassPipelineRegistration<PipelineCommandLineOptions>(
      "attnc-pipeline",
      "verify, canonicalize, fuse the preprocess chain, specialize for the "
      "target, lower to the kernel form",
      [](OpPassManager &pm, const PipelineCommandLineOptions &cl) {
        PipelineOptions options;
        options.arch = cl.arch;
        options.num_sms = cl.numSms;
        options.baseline = cl.baseline;
        options.prefill_kernel = cl.prefillKernel;
        buildAttncPipeline(pm, options);
      });
}

} // namespace attnc
