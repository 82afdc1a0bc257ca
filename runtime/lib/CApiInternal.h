//===- CApiInternal.h - C API handles (private) ----------------*- C++ -*-===//
//
// The definitions behind the opaque C handles and the helpers that turn a
// Status into a C status with attnc_last_error(), shared by the runtime's C
// API and the JIT compiler's (attnc-c/Compiler.h). Private to those two
// libraries (runtime/lib, on AttncJit's private include path); not for
// engines.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_LIB_CAPIINTERNAL_H
#define ATTNC_RUNTIME_LIB_CAPIINTERNAL_H

#include "attnc-c/Runtime.h"

#include "attnc/Runtime/Context.h"
#include "attnc/Runtime/KernelAbi.h"
#include "attnc/Runtime/LaunchPlan.h"
#include "attnc/Runtime/PendingKernelSet.h"

#include <atomic>
#include <exception>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

struct attnc_context_s {
  std::shared_ptr<attnc::runtime::Context> context;
  /// The JIT compiler's in-process memo of compiled models
  /// (attnc-c/Compiler.h), by the compile's full input; opaque here (the
  /// runtime links no compiler). Dropped with the handle.
  std::mutex model_memo_mutex;
  std::unordered_map<std::string, std::shared_ptr<void>> model_memo;
};

/// One tier of a kernel: its ABI (in the tier's set) and launch state.
struct attnc_kernel_tier_s {
  const attnc::runtime::KernelAbi *abi = nullptr;
  std::string abi_json;
  /// Per-context plans and the launch checks, precomputed from the ABI.
  std::unique_ptr<attnc::runtime::KernelLauncher> launcher;
};

struct attnc_kernel_s {
  attnc_kernel_set_s *set = nullptr;
  /// The tier launches use now: tiers[0], then tiers[1] once the set's
  /// optimised tier has been taken. Both stay alive (plans made from the
  /// first keep pointing into it).
  std::atomic<const attnc_kernel_tier_s *> active{nullptr};
  std::vector<std::unique_ptr<attnc_kernel_tier_s>> tiers;

  const attnc_kernel_tier_s &tier() const {
    return *active.load(std::memory_order_acquire);
  }
};

struct attnc_launch_plan_s {
  attnc::runtime::LaunchPlan plan;
};

struct attnc_kernel_set_s {
  // Keeps the context (cache, loaded modules) alive as long as the set.
  std::shared_ptr<attnc::runtime::Context> context;
  /// The set first delivered (the baseline tier of a tiered kernel).
  std::shared_ptr<const attnc::runtime::KernelSet> set;
  std::vector<std::unique_ptr<attnc_kernel_s>> kernels;

  /// Tiered kernels only: the optimised set still compiling, and whether it
  /// may still be taken (false once taken or failed).
  std::shared_ptr<attnc::runtime::PendingKernelSet> upgrade;
  std::atomic<bool> upgrade_open{false};
  std::mutex upgrade_mutex;
  /// The optimised set once taken.
  std::shared_ptr<const attnc::runtime::KernelSet> optimised;
  /// The set queries answer from: `set`, then `optimised`.
  std::atomic<const attnc::runtime::KernelSet *> current{nullptr};

  const attnc::runtime::KernelSet &currentSet() const {
    return *current.load(std::memory_order_acquire);
  }
};

namespace attnc::runtime::capi {

/// Records `status` as this thread's last error and returns its C code.
attnc_status_t fail(const Status &status);
/// fail() with an InvalidArgument naming `field`.
attnc_status_t invalid(const std::string &field, const std::string &rule);
/// A C handle for `set`, keeping `context` alive as long as the handle.
attnc_kernel_set_t wrap(const std::shared_ptr<Context> &context,
                        std::shared_ptr<const KernelSet> set);

/// A tiered kernel set: `baseline` serves launches until `upgrade` has
/// finished and a launch boundary takes it (takeUpgrade).
attnc_kernel_set_t wrapTiered(const std::shared_ptr<Context> &context,
                              std::shared_ptr<const KernelSet> baseline,
                              std::shared_ptr<PendingKernelSet> upgrade);

/// Takes the set's finished optimised tier at a launch boundary, unless
/// `stream` is capturing a CUDA graph (`has_stream` false: a call that
/// launches nothing, attnc_kernel_prepare or attnc_launch_plan_create).
/// A failed optimised compile is reported once through the context's
/// warning handler and the baseline kept. Cheap when there is nothing to
/// take: one relaxed atomic load.
void upgradeSlow(attnc_kernel_set_s *set, void *stream, bool has_stream);
inline void takeUpgrade(attnc_kernel_set_s *set, void *stream,
                        bool has_stream) {
  if (__builtin_expect(set->upgrade_open.load(std::memory_order_relaxed), 0) &&
      set->upgrade->ready())
    upgradeSlow(set, stream, has_stream);
}

/// A pointer argument of an entry point and its name, for checkArgs().
struct NamedArg {
  const char *name;
  const void *value;
};

/// The NULL checks an entry point starts with: the first of `args`, in
/// order, that is NULL fails as invalid(name, "NULL"). ATTNC_STATUS_OK when
/// none is.
attnc_status_t checkArgs(std::initializer_list<NamedArg> args);

/// checkArgs() for an entry point that answers through `out`: `out` (named
/// `out_name`) is checked first and then cleared, so that a call failing on
/// one of `args` leaves no stale value there.
template <typename T>
attnc_status_t checkArgs(T *out, const char *out_name,
                         std::initializer_list<NamedArg> args = {}) {
  if (!out)
    return invalid(out_name, "NULL");
  *out = T{};
  return checkArgs(args);
}

/// Runs `body`, turning exceptions into ATTNC_STATUS_INTERNAL, so none
/// crosses the C boundary.
template <typename Body> attnc_status_t guarded(Body &&body) {
  try {
    return body();
  } catch (const std::exception &e) {
    return fail(Status(StatusCode::Internal, "", e.what()));
  } catch (...) {
    return fail(Status(StatusCode::Internal, "", "unknown exception"));
  }
}

} // namespace attnc::runtime::capi

#endif // ATTNC_RUNTIME_LIB_CAPIINTERNAL_H
