//===- SplitKv.h - The split-KV rule and its workspace ----------*- C++ -*-===//
//
// The paged attention kernel can split a tile's keys over grid z
// (`num_kv_splits`): each split writes its unnormalised output and softmax
// state to a workspace, and the last split to finish merges them. This is
// the one definition of how many splits a launch gets and how large the
// workspace is; the emitter sizes the workspace by it, the runtime and the
// Python package (through the C API) choose and check the count by it.
//
// Terms: a launch has `base` CTAs per split (the grid axes that do not follow
// num_kv_splits), of which `busy` surely have rows (for the attention kernel
// max(ceil(num_tokens * gqa_pack / block_m), num_seqs) * grid y). The
// workspace holds partials for 2 * target_ctas CTAs.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_PLAN_SPLITKV_H
#define ATTNC_PLAN_SPLITKV_H

#include "attnc/Support/Status.h"

#include <cstdint>
#include <string>

namespace attnc::plan {

/// The split-KV facts a kernel is compiled with (its ABI hints).
struct SplitKvLimits {
  int64_t targetCtas = 0;  ///< the CTA count that fills the GPU (2 x SMs)
  int64_t maxKvSplits = 0; ///< the largest split count

  /// The most CTAs (base * splits) the workspace holds partials for.
  int64_t capacityCtas() const { return 2 * targetCtas; }
};

/// The largest split count for a GPU of `targetCtas` CTAs: min(64, target).
int64_t maxKvSplitsFor(int64_t targetCtas);

/// The workspace of the attention kernel, in floats: per CTA of the capacity
/// `blockM` rows of `vPadded` output values plus the row's max and sum, then
/// one arrival counter per tile (targetCtas of them).
int64_t attentionWorkspaceFloats(const SplitKvLimits &limits, int64_t blockM,
                                 int64_t vPadded);

/// The rule: 1 when busy >= target_ctas (or busy <= 0), else
/// min(max_kv_splits, floor(target_ctas / busy)): the most splits whose busy
/// CTAs fit one wave. base <= 2 * busy, so the count fits the workspace.
int64_t chooseKvSplits(const SplitKvLimits &limits, int64_t busy);

/// The rule in words, with this kernel's limits (for error messages).
std::string kvSplitRuleText(const SplitKvLimits &limits);

/// A requested count, checked: in [1, max_kv_splits], and base * splits
/// within the workspace's capacity when splitting. The error names
/// num_kv_splits and the rule; `baseAxes` names the grid axes whose product
/// is the base ("x * y").
Result<int64_t> checkKvSplits(const SplitKvLimits &limits, int64_t base,
                                int64_t requested,
                                const std::string &baseAxes = "x * y");

} // namespace attnc::plan

#endif // ATTNC_PLAN_SPLITKV_H
