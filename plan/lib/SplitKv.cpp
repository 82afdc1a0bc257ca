//===- SplitKv.cpp - The split-KV rule and its workspace ------------------===//
#include "attnc/Plan/SplitKv.h"

#include <algorithm>
#include <string>

namespace attnc::plan {

int64_t maxKvSplitsFor(int64_t targetCtas) {
  return std::min<int64_t>(64, targetCtas);
}

int64_t attentionWorkspaceFloats(const SplitKvLimits &limits, int64_t blockM,
                                 int64_t vPadded) {
  return limits.capacityCtas() * blockM * (vPadded + 2) + limits.targetCtas;
}

int64_t chooseKvSplits(const SplitKvLimits &limits, int64_t busy) {
  if (busy >= limits.targetCtas || busy <= 0)
    return 1;
  return std::max<int64_t>(
      1, std::min(limits.maxKvSplits, limits.targetCtas / busy));
}

Expected<int64_t> checkKvSplits(const SplitKvLimits &limits, int64_t base,
                                int64_t requested) {
  if (requested < 1 || requested > limits.maxKvSplits)
    return Error{"num_kv_splits", "must be in [1, max_kv_splits] = [1, " +
                                      std::to_string(limits.maxKvSplits) +
                                      "] (got " + std::to_string(requested) +
                                      ")"};
  if (requested > 1 && base * requested > limits.capacityCtas())
    return Error{"num_kv_splits",
                 std::to_string(requested) + " splits of " +
                     std::to_string(base) + " CTAs need " +
                     std::to_string(base * requested) +
                     " CTAs of workspace, more than its capacity 2 * "
                     "target_ctas = " +
                     std::to_string(limits.capacityCtas()) + " (at most " +
                     std::to_string(std::max<int64_t>(
                         limits.capacityCtas() / std::max<int64_t>(base, 1), 1)) +
                     " splits here)"};
  return requested;
}

} // namespace attnc::plan
