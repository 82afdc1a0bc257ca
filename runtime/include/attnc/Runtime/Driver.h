//===- Driver.h - The CUDA driver, loaded at run time -----------*- C++ -*-===//
//
// libcuda.so.1 is opened with dlopen when something first needs it, and its
// entry points are resolved from an X-macro table (lib/DriverSymbols.def)
// whose types come from cuda.h. So the runtime library, its tests and every
// GPU-free path (NVRTC compile, cache, bundles, ABI checks) work on machines
// without a driver; only the calls below fail there, with NoDriver and
// "CUDA driver not available: dlopen libcuda.so.1 failed: <reason>".
//
// Every driver call is checked; a failure names the call, the CUDA error
// (cuGetErrorName / cuGetErrorString) and the file:line that made it.
//
// This header does not include cuda.h: the handle types are declared here
// exactly as cuda.h declares them (an identical typedef is legal to repeat),
// so users of attnc need no CUDA include path.
//
// Thread safety: a CudaDriver is immutable after load; its methods may be
// called from any thread (the driver API itself is thread-safe). Contexts
// follow CUDA's rules: each call works on the calling thread's current one.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_DRIVER_H
#define ATTNC_RUNTIME_DRIVER_H

#include "attnc/Support/Status.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>

typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

namespace attnc::runtime {

struct DriverSymbols; // lib/DriverSymbols.h

/// The default driver library name.
inline constexpr const char *kCudaDriverLibrary = "libcuda.so.1";

/// A loaded and initialised (cuInit) CUDA driver.
class CudaDriver {
public:
  /// The driver from `library` (default libcuda.so.1), loaded and cuInit'd
  /// once per process and never unloaded (unloading libcuda under live
  /// contexts crashes). A failure is remembered and returned again:
  /// NoDriver if dlopen fails or a symbol is missing, CudaError if cuInit
  /// fails (e.g. no device).
  static Result<const CudaDriver *>
  get(const std::string &library = kCudaDriverLibrary);

  /// cuDriverGetVersion, e.g. 13000.
  int version() const { return version_; }

  /// The calling thread's current context; null if none.
  Result<CUcontext> currentContext() const;
  /// The device of the current context.
  Result<int> currentDevice() const;
  /// (major, minor) compute capability of `device`, e.g. (9, 0).
  Result<std::array<int, 2>> computeCapability(int device) const;

  /// Loads a cubin (or PTX) into the current context.
  Result<CUmodule> loadModule(const std::string &image) const;
  /// Unloads `module` from `context` (made current for the call, then the
  /// previous context is restored).
  Status unloadModule(CUcontext context, CUmodule module) const;
  /// The kernel called `name` in `module`: NotFound if absent.
  Result<CUfunction> getFunction(CUmodule module,
                                 const std::string &name) const;
  /// Lets `function` use `bytes` of dynamic shared memory (needed above
  /// 48 KiB).
  Status setMaxDynamicSharedMemory(CUfunction function, uint32_t bytes) const;
  /// cuLaunchKernel. `args[i]` points to the i-th parameter's value.
  Status launch(CUfunction function, const std::array<uint32_t, 3> &grid,
                const std::array<uint32_t, 3> &block,
                uint32_t dynamic_shared_memory_bytes, CUstream stream,
                void **args) const;

  /// Whether `stream` is capturing a CUDA graph (cuStreamIsCapturing):
  /// true while active, and also when the capture was invalidated (not yet
  /// ended), so that nothing is changed under either.
  Result<bool> isCapturing(CUstream stream) const;

  /// The calling thread's current context (null if none) without building
  /// a Result: the CUresult of cuCtxGetCurrent (0 on success). For the
  /// launch hot path.
  int currentContextRaw(CUcontext *context) const noexcept;

  /// Whether the driver has cuLaunchKernelEx, which programmatic dependent
  /// launch needs (CUDA 12.0 on); without it PDL-aware kernels are launched
  /// with cuLaunchKernel, without the attribute (correct, no overlap).
  bool hasProgrammaticLaunch() const;

  /// The resolved entry points (lib/DriverSymbols.h), for the launch plan's
  /// direct cuLaunchKernel call.
  const DriverSymbols &symbols() const { return *symbols_; }

  /// Turns a CUresult into a Status naming the call and where it was made
  /// (Ok for CUDA_SUCCESS).
  Status check(int result, const char *call, const char *file, int line) const;

  ~CudaDriver();

private:
  CudaDriver() = default;

  std::unique_ptr<DriverSymbols> symbols_;
  std::string library_;
  int version_ = 0;
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_DRIVER_H
