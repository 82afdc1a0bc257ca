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

#include <exception>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

struct attnc_context_s {
  std::shared_ptr<attnc::runtime::Context> context;
};

struct attnc_kernel_s {
  attnc_kernel_set_s *set = nullptr;
  const attnc::runtime::KernelAbi *abi = nullptr;
  std::string abi_json;
  /// Per-context plans and the launch checks, precomputed from the ABI.
  std::unique_ptr<attnc::runtime::KernelLauncher> launcher;
};

struct attnc_launch_plan_s {
  attnc::runtime::LaunchPlan plan;
};

struct attnc_kernel_set_s {
  // Keeps the context (cache, loaded modules) alive as long as the set.
  std::shared_ptr<attnc::runtime::Context> context;
  std::shared_ptr<const attnc::runtime::KernelSet> set;
  std::vector<std::unique_ptr<attnc_kernel_s>> kernels;
};

namespace attnc::runtime::capi {

/// Records `status` as this thread's last error and returns its C code.
attnc_status_t fail(const Status &status);
/// fail() with an InvalidArgument naming `field`.
attnc_status_t invalid(const std::string &field, const std::string &rule);
/// A C handle for `set`, keeping `context` alive as long as the handle.
attnc_kernel_set_t wrap(const std::shared_ptr<Context> &context,
                        std::shared_ptr<const KernelSet> set);

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
