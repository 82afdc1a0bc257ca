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

std::string kvSplitRuleText(const SplitKvLimits &limits) {
  return "the split rule: 1 if busy >= target_ctas (" +
         std::to_string(limits.targetCtas) +
         "), else min(max_kv_splits (" + std::to_string(limits.maxKvSplits) +
         "), floor(target_ctas / busy)), busy = the CTAs per split that "
         "surely have rows";
}

Result<int64_t> checkKvSplits(const SplitKvLimits &limits, int64_t base,
                                int64_t requested,
                                const std::string &baseAxes) {
  auto str = [](int64_t value) { return std::to_string(value); };
  std::string rule = "; None picks it by " + kvSplitRuleText(limits);
  if (requested < 1 || requested > limits.maxKvSplits)
    return Status{"num_kv_splits", "must be in [1, max_kv_splits] = [1, " +
                                      str(limits.maxKvSplits) + "] (got " +
                                      str(requested) + ")" + rule};
  int64_t capacity = limits.capacityCtas();
  if (requested > 1 && base * requested > capacity)
    return Status{"num_kv_splits",
                 str(requested) + " splits of " + str(base) + " CTAs (grid " +
                     baseAxes + ") need " + str(base * requested) +
                     " CTAs of workspace, more than its capacity 2 * "
                     "target_ctas = " +
                     str(capacity) + ": base * num_kv_splits must be <= " +
                     str(capacity) + " (at most " +
                     str(std::max<int64_t>(capacity / std::max<int64_t>(base, 1), 1)) +
                     " splits here)" + rule};
  return requested;
}

} // namespace attnc::plan
