//===- LaunchPlan.cpp - Prepared kernels and launch plans -----------------===//

#include "attnc/Runtime/LaunchPlan.h"

#include "DriverSymbols.h"
#include "attnc/Runtime/Context.h"
#include "attnc/Runtime/KernelSet.h"

#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace attnc::runtime {

namespace {
constexpr uint64_t kMaxGridX = (uint64_t(1) << 31) - 1;
constexpr uint64_t kMaxGridYZ = 65535;
using CuLaunchKernel = decltype(&::cuLaunchKernel);
using CuLaunchKernelEx = decltype(&::cuLaunchKernelEx);
using CuTensorMapEncodeTiled = decltype(&::cuTensorMapEncodeTiled);

/// Reads a grid operand; false when its argument is NULL or it is negative.
inline bool readOperand(const GridProgram::Operand &operand,
                        void *const *args, const int64_t *launch_scalars,
                        uint64_t &out) noexcept {
  int64_t value;
  switch (operand.source) {
  case GridProgram::Source::None:
    out = 0;
    return true;
  case GridProgram::Source::ParamI32: {
    const void *arg = args[operand.index];
    if (!arg)
      return false;
    int32_t v;
    std::memcpy(&v, arg, sizeof(v));
    value = v;
    break;
  }
  case GridProgram::Source::ParamI64: {
    const void *arg = args[operand.index];
    if (!arg)
      return false;
    std::memcpy(&value, arg, sizeof(value));
    break;
  }
  case GridProgram::Source::LaunchScalar:
    if (!launch_scalars)
      return false;
    value = launch_scalars[operand.index];
    break;
  default:
    return false;
  }
  if (value < 0)
    return false;
  out = uint64_t(value);
  return true;
}

/// Where the value of `symbol` (an i32/i64 parameter or a launch scalar)
/// comes from at launch; None for an empty symbol.
GridProgram::Operand symbolOperand(const KernelAbi &abi, const std::string &symbol) {
  GridProgram::Operand result;
  if (symbol.empty())
    return result;
  int param = abi.paramIndex(symbol);
  if (param >= 0) {
    result.source = abi.params[size_t(param)].kind == ParamKind::I32
                        ? GridProgram::Source::ParamI32
                        : GridProgram::Source::ParamI64;
    result.index = uint32_t(param);
  } else {
    result.source = GridProgram::Source::LaunchScalar;
    result.index = uint32_t(abi.launchScalarIndex(symbol));
  }
  return result;
}
} // namespace

GridProgram GridProgram::compile(const KernelAbi &abi) {
  GridProgram program;
  for (size_t d = 0; d < 3; ++d) {
    const GridDimRule &rule = abi.grid[d];
    Axis &axis = program.axes[d];
    axis.limit = d == 0 ? kMaxGridX : kMaxGridYZ;
    axis.constant = uint32_t(rule.constant);
    axis.value = symbolOperand(abi, rule.value);
    axis.plus = symbolOperand(abi, rule.plus);
    axis.multiplier = uint64_t(rule.multiplier);
    axis.divisor = uint64_t(rule.divisor);
  }
  return program;
}

bool GridProgram::evaluate(void *const *args, const int64_t *launch_scalars,
                           uint32_t grid[3]) const noexcept {
  for (int d = 0; d < 3; ++d) {
    const Axis &axis = axes[d];
    if (axis.value.source == Source::None) {
      grid[d] = axis.constant;
      continue;
    }
    uint64_t value, plus;
    if (!readOperand(axis.value, args, launch_scalars, value) ||
        !readOperand(axis.plus, args, launch_scalars, plus))
      return false;
    // value < 2^63 and multiplier < 2^31: no overflow in 128 bits.
    unsigned __int128 blocks =
        ((unsigned __int128)value * axis.multiplier + axis.divisor - 1) /
            axis.divisor +
        plus;
    if (blocks > axis.limit)
      return false;
    grid[d] = uint32_t(blocks);
  }
  return true;
}

namespace {
CUtensorMapDataType tensorMapDataType(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case ElementType::F16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case ElementType::BF16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case ElementType::I32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case ElementType::I64:
    return CU_TENSOR_MAP_DATA_TYPE_INT64;
  case ElementType::Fp8E4M3:
  case ElementType::Fp8E5M2:
  case ElementType::I8:
  case ElementType::U8:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8; // bytes: the kernel reads them as what they are
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

CUtensorMapSwizzle tensorMapSwizzle(int64_t bytes) {
  switch (bytes) {
  case 32:
    return CU_TENSOR_MAP_SWIZZLE_32B;
  case 64:
    return CU_TENSOR_MAP_SWIZZLE_64B;
  case 128:
    return CU_TENSOR_MAP_SWIZZLE_128B;
  default:
    return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}
} // namespace

TensorMapProgram TensorMapProgram::compile(const KernelAbi &abi) {
  TensorMapProgram program;
  for (size_t i = 0; i < abi.params.size(); ++i) {
    const KernelParam &param = abi.params[i];
    if (param.kind != ParamKind::TensorMap || !param.tensor_map)
      continue; // (validateKernelAbi guarantees the spec and its tensor)
    const TensorMapSpec &spec = *param.tensor_map;
    const KernelParam &tensor = abi.params[size_t(abi.paramIndex(spec.tensor))];
    Map map;
    map.param = uint32_t(i);
    map.tensor = uint32_t(abi.paramIndex(spec.tensor));
    map.rank = uint32_t(tensor.shape->size());
    map.data_type = uint32_t(tensorMapDataType(tensor.dtype));
    map.swizzle = uint32_t(tensorMapSwizzle(spec.swizzle));
    map.element_bytes = uint32_t(elementSize(tensor.dtype));
    for (uint32_t d = 0; d < map.rank; ++d) {
      size_t from = map.rank - 1 - d; // innermost first
      auto value = [&](const ShapeDim &dim) {
        Value v;
        if (dim.isSymbolic())
          v.operand = symbolOperand(abi, dim.symbol);
        else
          v.constant = dim.size;
        return v;
      };
      map.dims[d] = value((*tensor.shape)[from]);
      map.strides[d] = value((*tensor.strides)[from]);
      map.box[d] = uint32_t(spec.box[from]);
    }
    program.maps.push_back(map);
  }
  return program;
}

int TensorMapProgram::encode(const Map &map, void (*encode_tiled)(), void *const *args,
                             const int64_t *launch_scalars, void *out) const noexcept {
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], element_strides[5];
  for (uint32_t d = 0; d < map.rank; ++d) {
    uint64_t dim, stride;
    const Value &dv = map.dims[d], &sv = map.strides[d];
    if (dv.operand.source == GridProgram::Source::None)
      dim = uint64_t(dv.constant);
    else if (!readOperand(dv.operand, args, launch_scalars, dim))
      return kBadValue;
    if (sv.operand.source == GridProgram::Source::None)
      stride = uint64_t(sv.constant);
    else if (!readOperand(sv.operand, args, launch_scalars, stride))
      return kBadValue;
    // A map of an empty tensor is never read; the driver takes no zero dims.
    dims[d] = dim == 0 ? 1 : dim;
    if (d > 0) {
      strides[d - 1] = stride * map.element_bytes;
      if (strides[d - 1] % 16 != 0)
        return kBadValue;
    }
    box[d] = map.box[d];
    element_strides[d] = 1;
  }
  const void *arg = args[map.tensor];
  if (!arg)
    return kBadValue;
  void *address;
  std::memcpy(&address, arg, sizeof(address));
  return int(reinterpret_cast<CuTensorMapEncodeTiled>(encode_tiled)(
      static_cast<CUtensorMap *>(out), CUtensorMapDataType(map.data_type), map.rank, address,
      dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CUtensorMapSwizzle(map.swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
}

bool programmaticLaunchSwitch(const char *value) {
  if (!value)
    return true;
  for (const char *off : {"0", "false", "off", "no"})
    if (::strcasecmp(value, off) == 0)
      return false;
  return true;
}

bool programmaticLaunchFromEnvironment() {
  static const bool enabled = programmaticLaunchSwitch(std::getenv("ATTNC_PDL"));
  return enabled;
}

LaunchPlan::LaunchPlan(const CudaDriver &driver, CUcontext context, int device,
                       CUfunction function, const KernelAbi &abi, bool programmatic)
    : driver_(&driver), context_(context), device_(device),
      function_(function), abi_(&abi),
      cu_launch_kernel_(
          reinterpret_cast<LaunchFunction>(driver.symbols().cuLaunchKernel)),
      cu_launch_kernel_ex_(programmatic ? reinterpret_cast<LaunchFunction>(
                                              driver.symbols().cuLaunchKernelEx)
                                        : nullptr),
      cu_tensor_map_encode_tiled_(reinterpret_cast<LaunchFunction>(
          driver.symbols().cuTensorMapEncodeTiled)),
      block_(abi.block), shared_memory_bytes_(abi.dynamic_shared_memory_bytes),
      grid_(GridProgram::compile(abi)), tensor_maps_(TensorMapProgram::compile(abi)) {}

namespace {
/// Room for the tensor maps and arguments of one launch with tensor maps.
constexpr size_t kLaunchTensorMaps = kMaxTensorMaps;
constexpr size_t kLaunchArgs = kMaxParamsWithTensorMaps;
static_assert(sizeof(CUtensorMap) == kTensorMapBytes, "a CUtensorMap is 128 bytes");
} // namespace

int LaunchPlan::launch(const uint32_t grid[3], CUstream stream, void *const *args,
                       const int64_t *launch_scalars) const noexcept {
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return 0; // nothing to do (CUDA rejects empty grids)
  void *const *launch_args = args;
  void *with_maps[kLaunchArgs];
  CUtensorMap maps[kLaunchTensorMaps];
  if (!tensor_maps_.maps.empty()) {
    size_t count = abi_->params.size();
    if (count > kLaunchArgs || tensor_maps_.maps.size() > kLaunchTensorMaps)
      return kBadTensorMap;
    std::memcpy(with_maps, args, count * sizeof(void *));
    for (size_t m = 0; m < tensor_maps_.maps.size(); ++m) {
      const TensorMapProgram::Map &map = tensor_maps_.maps[m];
      if (tensor_maps_.encode(map, cu_tensor_map_encode_tiled_, args, launch_scalars,
                              &maps[m]) != 0)
        return kBadTensorMap;
      with_maps[map.param] = &maps[m];
    }
    launch_args = with_maps;
  }
  if (cu_launch_kernel_ex_) {
    // The kernel waits (griddepcontrol.wait) before it touches global
    // memory, so it may start while its predecessor on the stream finishes.
    CUlaunchAttribute attribute;
    std::memset(&attribute, 0, sizeof(attribute));
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config;
    config.gridDimX = grid[0];
    config.gridDimY = grid[1];
    config.gridDimZ = grid[2];
    config.blockDimX = block_[0];
    config.blockDimY = block_[1];
    config.blockDimZ = block_[2];
    config.sharedMemBytes = shared_memory_bytes_;
    config.hStream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    return int(reinterpret_cast<CuLaunchKernelEx>(cu_launch_kernel_ex_)(
        &config, function_, const_cast<void **>(launch_args), nullptr));
  }
  return int(reinterpret_cast<CuLaunchKernel>(cu_launch_kernel_)(
      function_, grid[0], grid[1], grid[2], block_[0], block_[1], block_[2],
      shared_memory_bytes_, stream, const_cast<void **>(launch_args), nullptr));
}

int LaunchPlan::tryRun(CUstream stream, void *const *args,
                       const int64_t *launch_scalars) const noexcept {
  if (!args && !abi_->params.empty())
    return kBadGrid;
  uint32_t grid[3];
  if (!grid_.evaluate(args, launch_scalars, grid))
    return kBadGrid;
  return launch(grid, stream, args, launch_scalars);
}

Status LaunchPlan::failure(int code, void *const *args,
                           const int64_t *launch_scalars) const {
  if (code == kBadTensorMap)
    return tensorMapFailure(args, launch_scalars);
  if (code != kBadGrid)
    return driver_->check(code, programmaticLaunch() ? "cuLaunchKernelEx" : "cuLaunchKernel",
                          __FILE__, __LINE__);
  if (!args && !abi_->params.empty())
    return Status(StatusCode::InvalidArgument, "args",
                  "NULL argument array for kernel '" + abi_->name + "'");
  // The slow path has every message; it fails where the fast one did. A
  // NULL launch_scalars is only wrong when the grid reads one.
  std::vector<int64_t> no_scalars;
  if (!launch_scalars) {
    for (const GridProgram::Axis &axis : grid_.axes)
      if (axis.value.source == GridProgram::Source::LaunchScalar ||
          axis.plus.source == GridProgram::Source::LaunchScalar)
        return Status(StatusCode::InvalidArgument, "launch_scalars",
                      "null array");
    no_scalars.assign(abi_->launch_scalars.size(), 0);
    launch_scalars = no_scalars.data();
  }
  auto geometry = computeLaunchGeometry(*abi_, args, abi_->params.size(),
                                        launch_scalars,
                                        abi_->launch_scalars.size());
  if (!geometry)
    return geometry.status();
  return Status(StatusCode::Internal, "grid",
                "the grid program and the grid rule disagree");
}

Status LaunchPlan::tensorMapFailure(void *const *args,
                                   const int64_t *launch_scalars) const {
  if (abi_->params.size() > kLaunchArgs || tensor_maps_.maps.size() > kLaunchTensorMaps)
    return Status(StatusCode::InvalidArgument, "params",
                  "kernel '" + abi_->name + "' has more than " + std::to_string(kLaunchArgs) +
                      " parameters or " + std::to_string(kLaunchTensorMaps) +
                      " tensor maps, more than a launch with tensor maps takes");
  for (const TensorMapProgram::Map &map : tensor_maps_.maps) {
    CUtensorMap bytes;
    int code = tensor_maps_.encode(map, cu_tensor_map_encode_tiled_, args, launch_scalars,
                                   &bytes);
    if (code == 0)
      continue;
    const std::string &name = abi_->params[map.param].name;
    const std::string &tensor = abi_->params[map.tensor].name;
    if (code == TensorMapProgram::kBadValue)
      return Status(StatusCode::InvalidArgument, name,
                    "cannot map '" + tensor +
                        "': its pointer, a dim or a stride is missing or negative, or a "
                        "stride is not a multiple of 16 bytes (the tensor memory "
                        "accelerator's rule)");
    Status driver = driver_->check(code, "cuTensorMapEncodeTiled", __FILE__, __LINE__);
    return Status(StatusCode::InvalidArgument, name,
                  "cannot map '" + tensor +
                      "' (its address must be 16-byte aligned, its strides multiples of 16 "
                      "bytes and below 2^40): " +
                      driver.message());
  }
  return Status(StatusCode::Internal, "tensor_map",
                "a tensor map failed to encode, and then did not");
}

Status LaunchPlan::run(CUstream stream, void *const *args,
                       const int64_t *launch_scalars) const {
  int code = tryRun(stream, args, launch_scalars);
  return code == 0 ? Status() : failure(code, args, launch_scalars);
}

KernelLauncher::KernelLauncher(Context &context, const KernelSet &set,
                               const KernelAbi &abi)
    : context_(context), set_(set), abi_(&abi), checker_(abi),
      grid_(GridProgram::compile(abi)) {}

KernelLauncher::~KernelLauncher() = default;

Result<const CudaDriver *> KernelLauncher::driver() {
  if (const CudaDriver *driver = driver_.load(std::memory_order_acquire))
    return driver;
  auto driver = CudaDriver::get(context_.options().cuda_driver_library);
  if (!driver)
    return driver.status();
  driver_.store(*driver, std::memory_order_release);
  return *driver;
}

const LaunchPlan *KernelLauncher::findPlan(CUcontext context) const noexcept {
  for (const auto &slot : slots_) {
    const LaunchPlan *plan = slot.load(std::memory_order_acquire);
    if (!plan)
      return nullptr; // slots fill in order
    if (plan->context() == context)
      return plan;
  }
  return nullptr;
}

Result<const LaunchPlan *>
KernelLauncher::preparePlan(const CudaDriver &driver, CUcontext context) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &plan : plans_)
    if (plan->context() == context)
      return static_cast<const LaunchPlan *>(plan.get());
  auto device = driver.currentDevice();
  if (!device)
    return device.status();
  auto capability = driver.computeCapability(*device);
  if (!capability)
    return capability.status();
  const KernelBinary *binary = selectBinaryForDevice(
      set_.binaries(), (*capability)[0], (*capability)[1]);
  if (!binary) {
    std::string archs;
    for (const KernelBinary &b : set_.binaries())
      archs += (archs.empty() ? "" : ", ") + b.arch;
    return Status(StatusCode::NotFound, "arch",
                  "no binary in this set runs on the current device (compute "
                  "capability " +
                      std::to_string((*capability)[0]) + "." +
                      std::to_string((*capability)[1]) + "; the set has " +
                      archs + ")");
  }
  auto function = context_.cache().getFunction(
      driver, context, binary->key, binary->cubin, abi_->name,
      abi_->dynamic_shared_memory_bytes);
  if (!function)
    return function.status();
  // Programmatic dependent launch: griddepcontrol exists from sm_90 on.
  bool programmatic = abi_->programmatic_dependent_launch && (*capability)[0] >= 9 &&
                      !context_.options().disable_pdl &&
                      programmaticLaunchFromEnvironment() &&
                      driver.hasProgrammaticLaunch();
  plans_.push_back(std::make_unique<LaunchPlan>(driver, context, *device, *function,
                                                *abi_, programmatic));
  const LaunchPlan *plan = plans_.back().get();
  for (auto &slot : slots_) {
    if (slot.load(std::memory_order_relaxed))
      continue;
    slot.store(plan, std::memory_order_release);
    break;
  }
  return plan;
}

Result<const LaunchPlan *>
KernelLauncher::planForCurrentContext(const CudaDriver &driver) {
  CUcontext context = nullptr;
  if (int result = driver.currentContextRaw(&context))
    return driver.check(result, "cuCtxGetCurrent", __FILE__, __LINE__);
  if (!context)
    return Status(StatusCode::InvalidArgument, "context",
                  "no current CUDA context on this thread (make one current "
                  "first, e.g. cudaSetDevice or cuCtxSetCurrent)");
  if (const LaunchPlan *plan = findPlan(context))
    return plan;
  return preparePlan(driver, context);
}

Result<const LaunchPlan *> KernelLauncher::currentPlan() {
  auto driver = this->driver();
  if (!driver)
    return driver.status();
  return planForCurrentContext(**driver);
}

Status KernelLauncher::launch(void *stream, void *const *args, size_t num_args,
                              const int64_t *launch_scalars,
                              size_t num_launch_scalars) {
  const KernelAbi &abi = *abi_;
  bool counts_ok = num_args == abi.params.size() &&
                   (num_args == 0 || args) &&
                   num_launch_scalars == abi.launch_scalars.size() &&
                   (num_launch_scalars == 0 || launch_scalars);
  for (size_t i = 0; counts_ok && i < num_args; ++i)
    counts_ok = args[i] != nullptr || abi.params[i].kind == ParamKind::TensorMap;
  uint32_t grid[3];
  if (!counts_ok || !grid_.evaluate(args, launch_scalars, grid)) {
    auto geometry = computeLaunchGeometry(abi, args, num_args, launch_scalars,
                                          num_launch_scalars);
    return geometry ? Status(StatusCode::Internal, "grid",
                             "the grid program and the grid rule disagree")
                    : geometry.status();
  }
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return Status(); // nothing to launch, no driver needed
  auto driver = this->driver();
  if (!driver)
    return driver.status();
  auto plan = planForCurrentContext(**driver);
  if (!plan)
    return plan.status();
  if (int code = (*plan)->launch(grid, static_cast<CUstream>(stream), args,
                                 launch_scalars))
    return (*plan)->failure(code, args, launch_scalars);
  return Status();
}

namespace {
/// One parameter's value as cuLaunchKernel reads it.
union ParamValue {
  void *pointer;
  int32_t i32;
  int64_t i64;
};
constexpr size_t kStackParams = 64;
} // namespace

Status KernelLauncher::launchChecked(void *stream, const TensorView *tensors,
                                     size_t num_tensors,
                                     const SymbolValue *symbols,
                                     size_t num_symbols) {
  const KernelAbi &abi = *abi_;
  size_t count = abi.params.size();
  int64_t stack_numbers[kStackParams];
  ParamValue stack_values[kStackParams];
  void *stack_args[kStackParams];
  int64_t stack_scalars[kStackParams];
  std::vector<int64_t> heap_numbers, heap_scalars;
  std::vector<ParamValue> heap_values;
  std::vector<void *> heap_args;
  int64_t *numbers = stack_numbers, *scalars = stack_scalars;
  ParamValue *values = stack_values;
  void **args = stack_args;
  if (count > kStackParams) {
    heap_numbers.resize(count);
    heap_values.resize(count);
    heap_args.resize(count);
    numbers = heap_numbers.data();
    values = heap_values.data();
    args = heap_args.data();
  }
  if (abi.launch_scalars.size() > kStackParams) {
    heap_scalars.resize(abi.launch_scalars.size());
    scalars = heap_scalars.data();
  }
  int device = -1;
  if (Status s = checker_.check(tensors, num_tensors, symbols, num_symbols,
                                numbers, count, scalars,
                                abi.launch_scalars.size(), &device);
      !s)
    return s;
  const std::vector<uint32_t> &pointers = checker_.pointerParams();
  for (size_t i = 0; i < count; ++i) {
    if (abi.params[i].kind == ParamKind::I32)
      values[i].i32 = int32_t(numbers[i]);
    else
      values[i].i64 = numbers[i];
    args[i] = &values[i];
  }
  for (size_t t = 0; t < pointers.size(); ++t)
    values[pointers[t]].pointer = tensors[t].data;

  uint32_t grid[3];
  if (!grid_.evaluate(args, scalars, grid)) {
    auto geometry = computeLaunchGeometry(abi, args, count, scalars,
                                          abi.launch_scalars.size());
    return geometry ? Status(StatusCode::Internal, "grid",
                             "the grid program and the grid rule disagree")
                    : geometry.status();
  }
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return Status();
  auto driver = this->driver();
  if (!driver)
    return driver.status();
  auto plan = planForCurrentContext(**driver);
  if (!plan)
    return plan.status();
  if (device >= 0 && device != (*plan)->device()) {
    for (size_t t = 0; t < pointers.size(); ++t)
      if (tensors[t].device >= 0 && tensors[t].device != (*plan)->device())
        return Status(StatusCode::InvalidArgument, abi.params[pointers[t]].name,
                      "is on cuda:" + std::to_string(tensors[t].device) +
                          ", but the current CUDA context is on cuda:" +
                          std::to_string((*plan)->device()) +
                          " (make the tensors' device current first)");
  }
  if (int code = (*plan)->launch(grid, static_cast<CUstream>(stream), args, scalars))
    return (*plan)->failure(code, args, scalars);
  return Status();
}

} // namespace attnc::runtime
