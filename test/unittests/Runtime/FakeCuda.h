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
  /// Calls of cuTensorMapEncodeTiled, and what the last one asked for.
  int tensor_maps_encoded = 0;
  struct TensorMapRequest {
    int data_type = -1;
    unsigned rank = 0;
    void *address = nullptr;
    unsigned long long dims[5] = {};    ///< innermost first
    unsigned long long strides[4] = {}; ///< bytes, dims 1..rank-1
    unsigned box[5] = {};
    int swizzle = -1;
  } last_tensor_map;
  /// What cuTensorMapEncodeTiled returns (a CUresult; 0: success). On
  /// success the fake writes the address into the map's first 8 bytes and
  /// the rank into the next 4.
  int tensor_map_result = 0;
  /// When >= 0: cuLaunchKernel copies the 128 bytes its params[this] points
  /// at into launched_tensor_map (the runtime's tensor map lives on its
  /// stack only during the launch) and whether it was 64-byte aligned.
  int tensor_map_param = -1;
  unsigned char launched_tensor_map[128] = {};
  bool launched_tensor_map_aligned = false;
  // (New fields go last: python/tests mirror a prefix of this struct.)
  /// Launches through cuLaunchKernelEx (counted in `launches` too).
  int launches_ex = 0;
  /// Whether the last launch (either call) carried
  /// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION with a non-zero
  /// value, and how many launch attributes it had.
  bool last_launch_programmatic = false;
  unsigned last_launch_attributes = 0;
  /// The calling thread's capture mode (CUstreamCaptureMode; 0: global) as
  /// cuThreadExchangeStreamCaptureMode sets it, and the unloads refused:
  /// while `capturing`, cuModuleUnload fails with
  /// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED unless the mode is relaxed (2),
  /// as a real driver does in the global mode.
  int thread_capture_mode = 0;
  int unloads_refused = 0;
};

/// The fake hands out this many distinct modules (the n-th load gets module
/// n % kFakeModules), each with its own functions, so that kernels of the
/// same name in two modules are two CUfunctions.
inline constexpr int kFakeModules = 16;

/// Exported by the fake library: its state, for the test to inspect.
extern "C" FakeCudaState *attnc_fake_cuda_state();
/// Exported too, for tests that do not mirror the struct (Python): the
/// launch counts and whether the last launch was programmatic.
extern "C" void attnc_fake_cuda_launches(int *launches, int *launches_ex,
                                         int *last_programmatic);

#ifdef ATTNC_FAKE_CUDA_PATH
#include <dlfcn.h>

/// The fake library's state as the tests see it: the instance the runtime
/// dlopen'ed (loaded here if it has not been yet); null if it cannot load.
inline FakeCudaState *fakeCudaState() {
  void *handle = ::dlopen(ATTNC_FAKE_CUDA_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (!handle)
    handle = ::dlopen(ATTNC_FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  auto state = handle ? reinterpret_cast<FakeCudaState *(*)()>(
                            ::dlsym(handle, "attnc_fake_cuda_state"))
                      : nullptr;
  return state ? state() : nullptr;
}
#endif

#endif // ATTNC_TEST_RUNTIME_FAKECUDA_H
