//===- Passes.h - attn transformation passes --------------------*- C++ -*-===//
#ifndef ATTNC_TRANSFORMS_PASSES_H
#define ATTNC_TRANSFORMS_PASSES_H

#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnc {

#define GEN_PASS_DECL
#include "attnc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attnc/Transforms/Passes.h.inc"

/// Options of the named pipeline `attnc-pipeline`.
struct PipelineOptions {
  std::string arch = "sm_90a";
  int64_t num_sms = 0;
  /// attn-specialize's `baseline`: the mma.sync attention form everywhere
  /// (the tiered JIT's fast-compiling first tier).
  bool baseline = false;
  /// attn-specialize's `prefill-kernel`: the warp-specialised prefill kernel
  /// of eligible paged attention layers on sm_90a (a second attention kernel
  /// per layer kind, ~0.8 s more NVRTC each).
  bool prefill_kernel = true;
};

/// The paged attention op's warp-specialised prefill schedule
/// (attn-specialize sets it; attn-outline-kernels turns it into the layer's
/// `prefill_attention` kernel and drops it).
inline constexpr llvm::StringLiteral kPrefillScheduleAttr =
    "attn.prefill_schedule";

/// Marks an attention op whose schedule attn-specialize keeps as it is (a
/// hand-written schedule, a benchmark's variant) instead of choosing one.
inline constexpr llvm::StringLiteral kKeepScheduleAttr = "attn.keep_schedule";

/// One stage of attnc-pipeline: its pass flag and a way to create the pass.
struct PipelineStage {
  std::string name;
  std::function<std::unique_ptr<mlir::Pass>()> create;
};

/// The stages of attnc-pipeline in order: attn-canonicalize →
/// attn-fuse-preprocess → attn-canonicalize → attn-specialize →
/// attn-outline-kernels. The one definition of the pipeline; callers that
/// keep the IR after each stage (attnc compile) run them one at a time.
std::vector<PipelineStage> attncPipelineStages(const PipelineOptions &options);

/// All of attncPipelineStages in one pass manager. The pass manager verifies
/// the input before the first pass and the IR after each.
void buildAttncPipeline(mlir::OpPassManager &pm,
                        const PipelineOptions &options);

/// Registers the passes and `attnc-pipeline` (with `arch` and `num-sms`
/// options) for attn-opt.
void registerAttncPipeline();

} // namespace attnc

#endif // ATTNC_TRANSFORMS_PASSES_H
