//===- PendingKernelSet.h - A kernel set still being compiled ---*- C++ -*-===//
//
// The tiered JIT (attnc-c/Compiler.h) serves a kernel's first launches from
// a baseline set that compiles quickly while the optimised set compiles on a
// background thread. A PendingKernelSet is that optimised set's future: the
// compiling thread finishes it once (with the set or the compile's error),
// and launchers look at ready() -- one atomic load -- at each launch
// boundary to decide whether to swap (attnc-c/Runtime.h says where).
//
// Thread safety: every method may be called from any number of threads;
// finish() is called once.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_PENDINGKERNELSET_H
#define ATTNC_RUNTIME_PENDINGKERNELSET_H

#include "attnc/Runtime/KernelSet.h"
#include "attnc/Support/Status.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace attnc::runtime {

class PendingKernelSet {
public:
  using SetResult = Result<std::shared_ptr<const KernelSet>>;

  /// Whether finish() has been called: lock-free, for the launch path.
  bool ready() const noexcept { return ready_.load(std::memory_order_acquire); }

  /// The result once ready() (Internal before).
  SetResult result() const {
    if (!ready())
      return Status(StatusCode::Internal, "tier", "the compile has not ended");
    return *result_;
  }

  /// Blocks until finish() has been called, then returns the result.
  SetResult wait() const {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [this] { return ready(); });
    return *result_;
  }

  /// Records the compile's outcome and releases waiters. Once.
  void finish(SetResult result) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (ready())
        return;
      result_ = std::make_unique<SetResult>(std::move(result));
      ready_.store(true, std::memory_order_release);
    }
    finished_.notify_all();
  }

private:
  mutable std::mutex mutex_;
  mutable std::condition_variable finished_;
  std::atomic<bool> ready_{false};
  std::unique_ptr<SetResult> result_;
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_PENDINGKERNELSET_H
