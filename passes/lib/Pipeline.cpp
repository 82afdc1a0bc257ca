//===- Pipeline.cpp - attnc-pipeline --------------------------------------===//
#include "attnc/Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace attnc {

void buildAttncPipeline(OpPassManager &pm, const PipelineOptions &options) {
  pm.addPass(createAttnCanonicalize());
  pm.addPass(createAttnFusePreprocess());
  // Fusion can leave an unused gate output or dead ops behind.
  pm.addPass(createAttnCanonicalize());
  AttnSpecializeOptions specialize;
  specialize.arch = options.arch;
  specialize.numSms = options.num_sms;
  pm.addPass(createAttnSpecialize(specialize));
  pm.addPass(createAttnOutlineKernels());
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
        buildAttncPipeline(pm, options);
      });
}

} // namespace attnc
