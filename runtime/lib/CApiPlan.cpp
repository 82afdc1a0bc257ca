//===- CApiPlan.cpp - C API over the plan library -------------------------===//
//
// The plan library's launch-time rules for callers that do not link C++:
// the Python package chooses and checks num_kv_splits through these.
//
//===----------------------------------------------------------------------===//
#include "attnc/Plan/SplitKv.h"
#include "CApiInternal.h"

using namespace attnc;
using namespace attnc::runtime::capi;

extern "C" {

attnc_status_t attnc_split_kv_count(int64_t target_ctas, int64_t max_kv_splits,
                                    int64_t base, int64_t busy,
                                    const int64_t *requested,
                                    const char *base_axes,
                                    int64_t *out_splits) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s = checkArgs(out_splits, "out_splits"))
      return s;
    if (target_ctas < 1 || max_kv_splits < 1)
      return invalid("target_ctas", "target_ctas (" +
                                        std::to_string(target_ctas) +
                                        ") and max_kv_splits (" +
                                        std::to_string(max_kv_splits) +
                                        ") must be >= 1");
    if (base < 0 || busy < 0)
      return invalid("base", "base (" + std::to_string(base) + ") and busy (" +
                                 std::to_string(busy) + ") must be >= 0");
    plan::SplitKvLimits limits{target_ctas, max_kv_splits};
    if (!requested) {
      *out_splits = plan::chooseKvSplits(limits, busy);
      return ATTNC_STATUS_OK;
    }
    Result<int64_t> splits = plan::checkKvSplits(
        limits, base, *requested, base_axes ? base_axes : "x * y");
    if (!splits)
      return invalid(splits.error().field, splits.error().rule);
    *out_splits = *splits;
    return ATTNC_STATUS_OK;
  });
}

} // extern "C"
