//===- CApiLaunch.cpp - C API: launch plans and the checked launch --------===//
//
// Thin wrappers over KernelLauncher and LaunchPlan (LaunchPlan.h) and the
// launch checks (LaunchChecks.h). attnc_launch_plan_run stays off
// guarded() and std::string on success: its hot path is LaunchPlan::tryRun.
//
//===----------------------------------------------------------------------===//
#include "attnc-c/Runtime.h"

#include "CApiInternal.h"
#include "attnc/Runtime/LaunchChecks.h"
#include "attnc/Runtime/LaunchPlan.h"

#include <cstddef>

using namespace attnc;
using namespace attnc::runtime;
using namespace attnc::runtime::capi;

// attnc_dtype_t is ElementType, and attnc_tensor_t / attnc_symbol_t are
// TensorView / SymbolValue, value for value and byte for byte.
#define ATTNC_CHECK_DTYPE(c, cxx)                                              \
  static_assert(int(c) == int(ElementType::cxx), #c " != ElementType::" #cxx)
ATTNC_CHECK_DTYPE(ATTNC_DTYPE_F32, F32);
ATTNC_CHECK_DTYPE(ATTNC_DTYPE_F16, F16);
ATTNC_CHECK_DTYPE(ATTNC_DTYPE_BF16, BF16);
ATTNC_CHECK_DTYPE(ATTNC_DTYPE_FP8_E4M3, Fp8E4M3);
ATTNC_CHECK_DTYPE(ATTNC_DTYPE_FP8_E5M2, Fp8E5M2);
ATTNC_CHECK_DTYPE(ATTNC_DTYPE_I8, I8);
ATTNC_CHECK_DTYPE(ATTNC_DTYPE_U8, U8);
ATTNC_CHECK_DTYPE(ATTNC_DTYPE_I32, I32);
ATTNC_CHECK_DTYPE(ATTNC_DTYPE_I64, I64);
#undef ATTNC_CHECK_DTYPE
static_assert(ATTNC_MAX_TENSOR_DIMS == kMaxTensorDims);
#define ATTNC_CHECK_FIELD(c, cxx, field)                                       \
  static_assert(offsetof(c, field) == offsetof(cxx, field), #c "." #field)
static_assert(sizeof(attnc_tensor_t) == sizeof(TensorView));
ATTNC_CHECK_FIELD(attnc_tensor_t, TensorView, data);
ATTNC_CHECK_FIELD(attnc_tensor_t, TensorView, dtype);
ATTNC_CHECK_FIELD(attnc_tensor_t, TensorView, device);
ATTNC_CHECK_FIELD(attnc_tensor_t, TensorView, ndim);
ATTNC_CHECK_FIELD(attnc_tensor_t, TensorView, readonly);
ATTNC_CHECK_FIELD(attnc_tensor_t, TensorView, shape);
ATTNC_CHECK_FIELD(attnc_tensor_t, TensorView, strides);
static_assert(sizeof(attnc_symbol_t) == sizeof(SymbolValue));
ATTNC_CHECK_FIELD(attnc_symbol_t, SymbolValue, name);
ATTNC_CHECK_FIELD(attnc_symbol_t, SymbolValue, value);
#undef ATTNC_CHECK_FIELD

extern "C" {

attnc_status_t attnc_kernel_prepare(attnc_kernel_t kernel) {
  return guarded([&]() -> attnc_status_t {
    if (!kernel)
      return invalid("kernel", "NULL");
    takeUpgrade(kernel->set, nullptr, false);
    auto plan = kernel->tier().launcher->currentPlan();
    return plan ? ATTNC_STATUS_OK : fail(plan.status());
  });
}

attnc_status_t attnc_launch_plan_create(attnc_kernel_t kernel,
                                        attnc_launch_plan_t *out_plan) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s =
            checkArgs(out_plan, "out_plan", {{"kernel", kernel}}))
      return s;
    takeUpgrade(kernel->set, nullptr, false);
    auto plan = kernel->tier().launcher->currentPlan();
    if (!plan)
      return fail(plan.status());
    *out_plan = new attnc_launch_plan_s{**plan};
    return ATTNC_STATUS_OK;
  });
}

void attnc_launch_plan_destroy(attnc_launch_plan_t plan) { delete plan; }

attnc_status_t attnc_launch_plan_run(attnc_launch_plan_t plan, void *stream,
                                     void *const *args,
                                     const int64_t *launch_scalars) {
  if (__builtin_expect(plan == nullptr, 0))
    return guarded([] { return invalid("plan", "NULL"); });
  int code =
      plan->plan.tryRun(static_cast<CUstream>(stream), args, launch_scalars);
  if (__builtin_expect(code == 0, 1))
    return ATTNC_STATUS_OK;
  return guarded([&]() -> attnc_status_t {
    return fail(plan->plan.failure(code, args, launch_scalars));
  });
}

int attnc_launch_plan_programmatic_launch(attnc_launch_plan_t plan) {
  return plan && plan->plan.programmaticLaunch() ? 1 : 0;
}

attnc_status_t attnc_kernel_check_tensors(
    attnc_kernel_t kernel, const attnc_tensor_t *tensors, size_t num_tensors,
    const attnc_symbol_t *symbols, size_t num_symbols, int64_t *out_params,
    size_t num_params, int64_t *out_launch_scalars,
    size_t num_launch_scalars) {
  return guarded([&]() -> attnc_status_t {
    if (!kernel)
      return invalid("kernel", "NULL");
    Status s = kernel->tier().launcher->checker().check(
        reinterpret_cast<const TensorView *>(tensors), num_tensors,
        reinterpret_cast<const SymbolValue *>(symbols), num_symbols,
        out_params, num_params, out_launch_scalars, num_launch_scalars);
    return s ? ATTNC_STATUS_OK : fail(s);
  });
}

attnc_status_t attnc_kernel_launch_checked(attnc_kernel_t kernel, void *stream,
                                           const attnc_tensor_t *tensors,
                                           size_t num_tensors,
                                           const attnc_symbol_t *symbols,
                                           size_t num_symbols) {
  return guarded([&]() -> attnc_status_t {
    if (!kernel)
      return invalid("kernel", "NULL");
    takeUpgrade(kernel->set, stream, true);
    Status s = kernel->tier().launcher->launchChecked(
        stream, reinterpret_cast<const TensorView *>(tensors), num_tensors,
        reinterpret_cast<const SymbolValue *>(symbols), num_symbols);
    return s ? ATTNC_STATUS_OK : fail(s);
  });
}

} // extern "C"
