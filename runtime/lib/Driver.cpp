//===- Driver.cpp - The CUDA driver, loaded at run time -------------------===//

#include "attnc/Runtime/Driver.h"

#include "DriverSymbols.h"

#include <dlfcn.h>
#include <map>
#include <mutex>
#include <vector>

// Every driver call goes through this: the Status names the call, the CUDA
// error and this file's line.
#define ATTNC_CU_CHECK(call)                                                   \
  check(int(symbols_->call), #call, __FILE__, __LINE__)

namespace attnc::runtime {

CudaDriver::~CudaDriver() = default;

Result<const CudaDriver *> CudaDriver::get(const std::string &library) {
  // Loaded once per library name, success or failure, for the whole process.
  static std::mutex mutex;
  static std::map<std::string, Result<const CudaDriver *>> loaded;
  // Owned for the life of the process and never destroyed, not even at exit:
  // a Context destroyed during static destruction may still unload modules.
  static auto *owned = new std::vector<std::unique_ptr<CudaDriver>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(library); it != loaded.end())
    return it->second;

  auto attempt = [&]() -> Result<const CudaDriver *> {
    dlerror();
    void *handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      return Status(StatusCode::NoDriver, "",
                    "CUDA driver not available: dlopen " + library +
                        " failed: " + (why ? why : "unknown error"));
    }
    std::unique_ptr<CudaDriver> driver(new CudaDriver());
    driver->library_ = library;
    driver->symbols_ = std::make_unique<DriverSymbols>();
    DriverSymbols &symbols = *driver->symbols_;
    symbols.handle = handle;
#define ATTNC_CU_SYMBOL(name)                                                  \
  symbols.name = reinterpret_cast<decltype(symbols.name)>(                     \
      ::dlsym(handle, ATTNC_STRINGIFY_EXPANDED(name)));                        \
  if (!symbols.name)                                                           \
    return Status(StatusCode::NoDriver, "",                                    \
                  "CUDA driver not usable: " + library +                       \
                      " has no symbol " ATTNC_STRINGIFY_EXPANDED(              \
                          name) " (driver too old, or not libcuda)");
#define ATTNC_CU_OPTIONAL_SYMBOL(name)                                         \
  symbols.name = reinterpret_cast<decltype(symbols.name)>(                     \
      ::dlsym(handle, ATTNC_STRINGIFY_EXPANDED(name)));
#include "DriverSymbols.def"
#undef ATTNC_CU_OPTIONAL_SYMBOL
#undef ATTNC_CU_SYMBOL

    const CudaDriver &d = *driver;
    if (Status s =
            d.check(int(symbols.cuInit(0)), "cuInit(0)", __FILE__, __LINE__);
        !s)
      return s;
    if (Status s = d.check(int(symbols.cuDriverGetVersion(&driver->version_)),
                           "cuDriverGetVersion", __FILE__, __LINE__);
        !s)
      return s;
    owned->push_back(std::move(driver));
    return static_cast<const CudaDriver *>(owned->back().get());
  };
  auto result = attempt();
  loaded.emplace(library, result);
  return result;
}

Status CudaDriver::check(int result, const char *call, const char *file,
                         int line) const {
  if (result == CUDA_SUCCESS)
    return Status();
  const char *name = nullptr;
  const char *text = nullptr;
  if (symbols_->cuGetErrorName)
    symbols_->cuGetErrorName(CUresult(result), &name);
  if (symbols_->cuGetErrorString)
    symbols_->cuGetErrorString(CUresult(result), &text);
  std::string where = file;
  if (size_t slash = where.rfind('/'); slash != std::string::npos)
    where = where.substr(slash + 1);
  std::string call_name = call;
  if (size_t paren = call_name.find('('); paren != std::string::npos)
    call_name = call_name.substr(0, paren);
  return Status(
      StatusCode::CudaError, "",
      where + ":" + std::to_string(line) + ": " + call_name +
          " failed: " + (name ? name : "CUDA error " + std::to_string(result)) +
          (text ? std::string(" (") + text + ")" : ""));
}

Result<CUcontext> CudaDriver::currentContext() const {
  CUcontext context = nullptr;
  if (Status s = ATTNC_CU_CHECK(cuCtxGetCurrent(&context)); !s)
    return s;
  return context;
}

bool CudaDriver::hasProgrammaticLaunch() const {
  return symbols_->cuLaunchKernelEx != nullptr;
}

int CudaDriver::currentContextRaw(CUcontext *context) const noexcept {
  *context = nullptr;
  return int(symbols_->cuCtxGetCurrent(context));
}

Result<bool> CudaDriver::isCapturing(CUstream stream) const {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (Status s = ATTNC_CU_CHECK(cuStreamIsCapturing(stream, &status)); !s)
    return s;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

Result<int> CudaDriver::currentDevice() const {
  CUdevice device = 0;
  if (Status s = ATTNC_CU_CHECK(cuCtxGetDevice(&device)); !s)
    return s;
  return int(device);
}

Result<std::array<int, 2>> CudaDriver::computeCapability(int device) const {
  CUdevice handle = 0;
  if (Status s = ATTNC_CU_CHECK(cuDeviceGet(&handle, device)); !s)
    return s;
  std::array<int, 2> capability = {0, 0};
  if (Status s = ATTNC_CU_CHECK(cuDeviceGetAttribute(
          &capability[0], CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
          handle));
      !s)
    return s;
  if (Status s = ATTNC_CU_CHECK(cuDeviceGetAttribute(
          &capability[1], CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
          handle));
      !s)
    return s;
  return capability;
}

Result<CUmodule> CudaDriver::loadModule(const std::string &image) const {
  CUmodule module = nullptr;
  if (Status s = ATTNC_CU_CHECK(cuModuleLoadData(&module, image.data())); !s)
    return s;
  return module;
}

Status CudaDriver::unloadModule(CUcontext context, CUmodule module) const {
  CUcontext previous = nullptr;
  if (Status s = ATTNC_CU_CHECK(cuCtxGetCurrent(&previous)); !s)
    return s;
  if (previous != context)
    if (Status s = ATTNC_CU_CHECK(cuCtxSetCurrent(context)); !s)
      return s;
  // A module is unloaded when its context or kernel set goes (Python's
  // garbage collector may do that at any time), possibly while another
  // stream captures a CUDA graph: in the default (global) capture mode that
  // call would be refused and invalidate the capture. The module is in no
  // graph being captured (its owners are gone), so the unload runs in the
  // relaxed mode, restored after.
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool exchanged = symbols_->cuThreadExchangeStreamCaptureMode != nullptr &&
                   symbols_->cuThreadExchangeStreamCaptureMode(&mode) ==
                       CUDA_SUCCESS;
  Status unloaded = ATTNC_CU_CHECK(cuModuleUnload(module));
  if (exchanged)
    symbols_->cuThreadExchangeStreamCaptureMode(&mode);
  if (previous != context)
    if (Status s = ATTNC_CU_CHECK(cuCtxSetCurrent(previous)); !s && unloaded)
      return s;
  return unloaded;
}

Result<CUfunction> CudaDriver::getFunction(CUmodule module,
                                           const std::string &name) const {
  CUfunction function = nullptr;
  CUresult result =
      symbols_->cuModuleGetFunction(&function, module, name.c_str());
  if (result == CUDA_ERROR_NOT_FOUND)
    return Status(StatusCode::NotFound, name,
                  "no such kernel in the loaded module (is it extern \"C\" "
                  "__global__?)");
  if (Status s = check(int(result), "cuModuleGetFunction", __FILE__, __LINE__);
      !s)
    return s;
  return function;
}

Status CudaDriver::setMaxDynamicSharedMemory(CUfunction function,
                                             uint32_t bytes) const {
  return ATTNC_CU_CHECK(cuFuncSetAttribute(
      function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(bytes)));
}

Status CudaDriver::launch(CUfunction function,
                          const std::array<uint32_t, 3> &grid,
                          const std::array<uint32_t, 3> &block,
                          uint32_t dynamic_shared_memory_bytes, CUstream stream,
                          void **args) const {
  return ATTNC_CU_CHECK(cuLaunchKernel(
      function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
      dynamic_shared_memory_bytes, stream, args, nullptr));
}

} // namespace attnc::runtime
