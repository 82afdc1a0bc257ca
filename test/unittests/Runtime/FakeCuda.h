//===- FakeCuda.h - What the fake libcuda records (tests only) --*- C++ -*-===//
//
// FakeCudaDriver.cpp builds into a shared library that exports the driver
// entry points the runtime resolves, with cuda.h's signatures and versioned
// names. It lets the tests drive the whole launch path (context, device,
// module load, function lookup, shared-memory opt-in, cuLaunchKernel) on a
// machine without a GPU, and read back what the runtime asked for.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_TEST_RUNTIME_FAKECUDA_H
#define ATTNC_TEST_RUNTIME_FAKECUDA_H

#include <cstddef>
#include <cstdint>

struct FakeCudaState {
  int init_calls = 0;
  int modules_loaded = 0;
  int modules_unloaded = 0;
  size_t last_module_size = 0;
  int launches = 0;
  unsigned grid[3] = {0, 0, 0};
  unsigned block[3] = {0, 0, 0};
  unsigned shared_memory_bytes = 0;
  void *stream = nullptr;
  /// The kernelParams array of the last launch, as passed.
  void **params = nullptr;
  int max_dynamic_shared_memory_set = 0;
  /// Compute capability the fake device reports.
  int major = 9;
  int minor = 0;
  /// Whether a context is current.
  bool has_context = true;
  /// The device cuCtxGetDevice reports for the current context.
  int device = 0;
  /// The function of the last launch.
  void *function = nullptr;
  /// Calls of cuCtxGetCurrent, cuCtxGetDevice, cuDeviceGet and
  /// cuDeviceGetAttribute (what a launch asks the driver besides launching).
  int queries = 0;
  /// Calls of cuModuleGetFunction.
  int functions_got = 0;
  /// What cuStreamIsCapturing reports for every stream.
  bool capturing = false;
  /// Calls of cuStreamIsCapturing.
  int capture_queries = 0;
};

/// The fake hands out this many distinct modules (the n-th load gets module
/// n % kFakeModules), each with its own functions, so that kernels of the
/// same name in two modules are two CUfunctions.
inline constexpr int kFakeModules = 16;

/// Exported by the fake library: its state, for the test to inspect.
extern "C" FakeCudaState *attnc_fake_cuda_state();

#endif // ATTNC_TEST_RUNTIME_FAKECUDA_H
