//===- FakeCudaDriver.cpp - A libcuda stand-in for GPU-free tests ---------===//
//
// Built three times: as attnc-fake-cuda (a working device of compute
// capability 9.0); with ATTNC_FAKE_CUDA_NO_DEVICE, as
// attnc-fake-cuda-nodevice (cuInit fails with CUDA_ERROR_NO_DEVICE, as on a
// machine whose driver sees no GPU); and with ATTNC_FAKE_CUDA_NO_LAUNCH_EX,
// as attnc-fake-cuda-nolaunchex (a driver older than cuLaunchKernelEx). Including cuda.h makes every definition below carry the real
// signature and, where cuda.h maps a name to a versioned one
// (cuDevicePrimaryCtxRelease -> _v2), the versioned symbol name -- so the
// runtime only loads this library if its X-macro table resolves the same
// names it would in the real driver.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cuda.h>

#include <cstring>

// cuda.h only declares these; the fake handles point at real objects.
struct CUctx_st {
  int unused;
};
struct CUmod_st {
  int unused;
};
struct CUfunc_st {
  int unused;
};

namespace {
FakeCudaState state;
CUctx_st fake_context;
CUmod_st fake_modules[kFakeModules];
/// Per module, attnc_test_s* and the other test kernels.
CUfunc_st fake_functions[kFakeModules][2];

/// An error the fake can describe, as cuGetErrorName and cuGetErrorString
/// give it; they fail with CUDA_ERROR_INVALID_VALUE for any other.
struct KnownError {
  CUresult code;
  const char *name;
  const char *text;
};
constexpr KnownError kKnownErrors[] = {
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
};

const KnownError *knownError(CUresult error) {
  for (const KnownError &known : kKnownErrors)
    if (known.code == error)
      return &known;
  return nullptr;
}
} // namespace

extern "C" {

__attribute__((visibility("default"))) FakeCudaState *attnc_fake_cuda_state() {
  return &state;
}

__attribute__((visibility("default"))) void
attnc_fake_cuda_launches(int *launches, int *launches_ex, int *last_programmatic) {
  *launches = state.launches;
  *launches_ex = state.launches_ex;
  *last_programmatic = state.last_launch_programmatic ? 1 : 0;
}

CUresult CUDAAPI cuInit(unsigned int) {
  ++state.init_calls;
#ifdef ATTNC_FAKE_CUDA_NO_DEVICE
  return CUDA_ERROR_NO_DEVICE;
#else
  return CUDA_SUCCESS;
#endif
}

CUresult CUDAAPI cuDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **name) {
  const KnownError *known = knownError(error);
  *name = known ? known->name : nullptr;
  return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **text) {
  const KnownError *known = knownError(error);
  *text = known ? known->text : nullptr;
  return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  ++state.queries;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                      CUdevice) {
  ++state.queries;
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = state.major;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *value = state.minor;
  else
    *value = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice) {
  *context = &fake_context;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *context) {
  ++state.queries;
  *context = state.has_context ? &fake_context : nullptr;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device) {
  ++state.queries;
  *device = state.device;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  // A real driver takes a cubin (ELF) or NUL-terminated PTX.
  if (std::memcmp(image,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  *module = &fake_modules[state.modules_loaded % kFakeModules];
  ++state.modules_loaded;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule) {
  if (state.capturing && state.thread_capture_mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
    ++state.unloads_refused;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  ++state.modules_unloaded;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
  const int previous = state.thread_capture_mode;
  state.thread_capture_mode = *mode;
  *mode = static_cast<CUstreamCaptureMode>(previous);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module,
                                     const char *name) {
  ++state.functions_got;
  // The test kernels are called attnc_test_*; anything else is absent.
  if (std::strncmp(name, "attnc_test_", 11) != 0)
    return CUDA_ERROR_NOT_FOUND;
  *function = &fake_functions[module - fake_modules][name[11] == 's' ? 0 : 1];
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction, CUfunction_attribute attribute,
                                    int value) {
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    state.max_dynamic_shared_memory_set = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream, CUstreamCaptureStatus *status) {
  ++state.capture_queries;
  *status = state.capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                            : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned grid_x, unsigned grid_y,
                                unsigned grid_z, unsigned block_x,
                                unsigned block_y, unsigned block_z,
                                unsigned shared_memory_bytes, CUstream stream,
                                void **params, void **) {
  ++state.launches;
  state.function = function;
  state.grid[0] = grid_x;
  state.grid[1] = grid_y;
  state.grid[2] = grid_z;
  state.block[0] = block_x;
  state.block[1] = block_y;
  state.block[2] = block_z;
  state.shared_memory_bytes = shared_memory_bytes;
  state.stream = stream;
  state.params = params;
  state.last_launch_programmatic = false;
  state.last_launch_attributes = 0;
  if (state.tensor_map_param >= 0) {
    const void *map = params[state.tensor_map_param];
    std::memcpy(state.launched_tensor_map, map, sizeof(state.launched_tensor_map));
    state.launched_tensor_map_aligned = reinterpret_cast<uintptr_t>(map) % 64 == 0;
  }
  return CUDA_SUCCESS;
}

#ifndef ATTNC_FAKE_CUDA_NO_LAUNCH_EX
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function,
                                  void **params, void **extra) {
  CUresult result = cuLaunchKernel(
      function, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
      config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream, params,
      extra);
  ++state.launches_ex;
  state.last_launch_attributes = config->numAttrs;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      state.last_launch_programmatic =
          config->attrs[i].value.programmaticStreamSerializationAllowed != 0;
  return result;
}
#endif

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType data_type,
                                        cuuint32_t rank, void *address, const cuuint64_t *dims,
                                        const cuuint64_t *strides, const cuuint32_t *box,
                                        const cuuint32_t *, CUtensorMapInterleave,
                                        CUtensorMapSwizzle swizzle, CUtensorMapL2promotion,
                                        CUtensorMapFloatOOBfill) {
  ++state.tensor_maps_encoded;
  FakeCudaState::TensorMapRequest &r = state.last_tensor_map;
  r = FakeCudaState::TensorMapRequest{};
  r.data_type = int(data_type);
  r.rank = rank;
  r.address = address;
  for (cuuint32_t d = 0; d < rank && d < 5; ++d) {
    r.dims[d] = dims[d];
    r.box[d] = box[d];
    if (d > 0)
      r.strides[d - 1] = strides[d - 1];
  }
  r.swizzle = int(swizzle);
  if (state.tensor_map_result != 0)
    return CUresult(state.tensor_map_result);
  std::memset(map, 0, sizeof(*map));
  std::memcpy(reinterpret_cast<unsigned char *>(map), &address, sizeof(address));
  std::memcpy(reinterpret_cast<unsigned char *>(map) + 8, &rank, sizeof(rank));
  return CUDA_SUCCESS;
}

} // extern "C"
