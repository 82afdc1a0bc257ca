//===- LaunchPlan.h - Prepared kernels and launch plans ---------*- C++ -*-===//
//
// The fast launch path. A kernel is prepared once per CUDA context (its
// module loaded, the function found, its dynamic shared memory allowed);
// the result is a LaunchPlan: the CUfunction, block, shared memory, the grid
// rule compiled to parameter indices and kinds (no strings), and
// cuLaunchKernel as a function pointer. Running a plan reads the grid
// symbols from the arguments and calls the driver: no locks, allocation,
// names or strings unless it fails.
//
// Programmatic dependent launch: a plan of a kernel whose ABI says
// "programmatic_dependent_launch" launches through cuLaunchKernelEx with
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 1, unless the
// switch is off (ATTNC_PDL=0 in the environment, read once per process, or
// the context's disable_pdl), the device is older than sm_90, or the driver
// has no cuLaunchKernelEx (then plain cuLaunchKernel: correct, without the
// overlap). LaunchPlan::programmaticLaunch() says which.
//
// A KernelLauncher is one kernel's launch state across CUDA contexts: the
// plans it has prepared, found by CUcontext without a lock (a few atomic
// slots), the launch checks (LaunchChecks.h), and the checked and unchecked
// launches the C API offers.
//
// Thread safety: LaunchPlan is immutable; KernelLauncher's methods may be
// called from any number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_LAUNCHPLAN_H
#define ATTNC_RUNTIME_LAUNCHPLAN_H

#include "attnc/Runtime/Driver.h"
#include "attnc/Runtime/KernelAbi.h"
#include "attnc/Runtime/LaunchChecks.h"
#include "attnc/Support/Status.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace attnc::runtime {

class Context;
class KernelSet;

/// A kernel's grid rule over parameter indices: per axis a constant or
/// ceil_div(value * multiplier, divisor) [+ plus], each operand an i32 or
/// i64 parameter (read through args[index]) or a launch scalar.
struct GridProgram {
  enum class Source : uint8_t { None, ParamI32, ParamI64, LaunchScalar };
  struct Operand {
    Source source = Source::None;
    uint32_t index = 0;
  };
  struct Axis {
    uint32_t constant = 1; ///< when value is None
    Operand value;
    Operand plus;
    uint64_t multiplier = 1;
    uint64_t divisor = 1;
    uint64_t limit = 0; ///< CUDA's largest grid dimension on this axis
  };
  std::array<Axis, 3> axes;

  static GridProgram compile(const KernelAbi &abi);
  /// The grid for these arguments; false when an argument it reads is NULL,
  /// a value is negative or the grid is over CUDA's limits (then
  /// computeLaunchGeometry says which).
  bool evaluate(void *const *args, const int64_t *launch_scalars,
                uint32_t grid[3]) const noexcept;
};

/// A kernel ready to launch in one CUDA context.
/// The tensor_map parameters of an ABI (KernelAbi.h), resolved once: where
/// each map's tensor, dims and strides come from at launch. LaunchPlan
/// encodes them (cuTensorMapEncodeTiled) for every launch.
struct TensorMapProgram {
  /// A dim or stride: a constant, or an i32/i64 parameter or launch scalar.
  struct Value {
    GridProgram::Operand operand; ///< Source::None: the constant
    int64_t constant = 0;
  };
  struct Map {
    uint32_t param = 0;  ///< the tensor_map parameter
    uint32_t tensor = 0; ///< the pointer parameter it maps
    uint32_t rank = 0;
    uint32_t data_type = 0; ///< CUtensorMapDataType
    uint32_t swizzle = 0;   ///< CUtensorMapSwizzle
    uint32_t element_bytes = 0;
    /// Innermost first, as the driver takes them; strides in elements.
    std::array<Value, 5> dims{}, strides{};
    std::array<uint32_t, 5> box{};
  };
  std::vector<Map> maps;

  static TensorMapProgram compile(const KernelAbi &abi);
  /// Encodes `map` for these arguments into `out` (128 bytes, 64-aligned)
  /// through `encode_tiled` (the driver's cuTensorMapEncodeTiled). Returns
  /// 0, kBadValue when a dim or stride is NULL or negative or a stride is
  /// not a multiple of 16 bytes, or the driver's CUresult.
  static constexpr int kBadValue = -2;
  int encode(const Map &map, void (*encode_tiled)(), void *const *args,
             const int64_t *launch_scalars, void *out) const noexcept;
};

/// The ATTNC_PDL switch's reading of `value` (the variable's text, null when
/// unset): false for "0", "false", "off" or "no" (any case), true otherwise.
bool programmaticLaunchSwitch(const char *value);
/// programmaticLaunchSwitch(getenv("ATTNC_PDL")), read once per process.
bool programmaticLaunchFromEnvironment();

class LaunchPlan {
public:
  /// `programmatic`: launch with programmatic stream serialization (the
  /// caller has checked the ABI's flag, the switches and the device); it is
  /// dropped when the driver has no cuLaunchKernelEx.
  LaunchPlan(const CudaDriver &driver, CUcontext context, int device,
             CUfunction function, const KernelAbi &abi,
             bool programmatic = false);

  CUcontext context() const { return context_; }
  /// The device of the plan's context.
  int device() const { return device_; }
  CUfunction function() const { return function_; }
  const KernelAbi &abi() const { return *abi_; }
  /// Whether launches carry CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_-
  /// SERIALIZATION (through cuLaunchKernelEx).
  bool programmaticLaunch() const { return cu_launch_kernel_ex_ != nullptr; }

  /// The hot path: the grid from the rule, then cuLaunchKernel (nothing for
  /// an empty grid). Returns 0 when launched or empty, kBadGrid when the
  /// rule fails on these arguments, else cuLaunchKernel's CUresult.
  static constexpr int kBadGrid = -1;
  int tryRun(CUstream stream, void *const *args,
             const int64_t *launch_scalars) const noexcept;
  /// cuLaunchKernel with a grid already computed, after encoding the
  /// ABI's tensor maps into the argument list (the caller's arguments at
  /// their positions are ignored). Returns 0, kBadTensorMap or the
  /// CUresult.
  int launch(const uint32_t grid[3], CUstream stream, void *const *args,
             const int64_t *launch_scalars) const noexcept;
  /// A tensor map could not be encoded (launch's code; failure() says which
  /// and why).
  static constexpr int kBadTensorMap = -3;
  /// The Status of a failed tryRun/launch `code` (messages built here).
  Status failure(int code, void *const *args,
                 const int64_t *launch_scalars) const;
  /// tryRun as a Status.
  Status run(CUstream stream, void *const *args,
             const int64_t *launch_scalars) const;

private:
  /// failure() for kBadTensorMap: which map, and why.
  Status tensorMapFailure(void *const *args, const int64_t *launch_scalars) const;
  using LaunchFunction = void (*)();
  const CudaDriver *driver_;
  CUcontext context_;
  int device_;
  CUfunction function_;
  const KernelAbi *abi_;
  LaunchFunction cu_launch_kernel_;
  /// cuLaunchKernelEx when launches are programmatic, else null.
  LaunchFunction cu_launch_kernel_ex_;
  LaunchFunction cu_tensor_map_encode_tiled_;
  std::array<uint32_t, 3> block_;
  uint32_t shared_memory_bytes_;
  GridProgram grid_;
  TensorMapProgram tensor_maps_;
};

/// One kernel's launch state. `context`, `set` and `abi` must outlive it
/// (the C API's kernel handle owns it beside them).
class KernelLauncher {
public:
  KernelLauncher(Context &context, const KernelSet &set, const KernelAbi &abi);
  ~KernelLauncher();
  KernelLauncher(const KernelLauncher &) = delete;
  KernelLauncher &operator=(const KernelLauncher &) = delete;

  const KernelAbi &abi() const { return *abi_; }
  const LaunchChecker &checker() const { return checker_; }

  /// The plan for the calling thread's current CUDA context, preparing the
  /// kernel there on first use (module, function, shared memory). NoDriver
  /// without a driver; InvalidArgument without a current context.
  Result<const LaunchPlan *> currentPlan();

  /// attnc_kernel_launch: counts, NULLs and the grid checked, then
  /// launched through the current context's plan.
  Status launch(void *stream, void *const *args, size_t num_args,
                const int64_t *launch_scalars, size_t num_launch_scalars);
  /// attnc_kernel_launch_checked: the checks, the current context's device,
  /// then the launch. Nothing is launched on any error.
  Status launchChecked(void *stream, const TensorView *tensors,
                       size_t num_tensors, const SymbolValue *symbols,
                       size_t num_symbols);

private:
  static constexpr int kSlots = 8;
  Result<const CudaDriver *> driver();
  /// The plan for `context`, if prepared: lock-free.
  const LaunchPlan *findPlan(CUcontext context) const noexcept;
  Result<const LaunchPlan *> preparePlan(const CudaDriver &driver,
                                         CUcontext context);
  /// The driver, the current context and its plan (slow path included).
  Result<const LaunchPlan *> planForCurrentContext(const CudaDriver &driver);

  Context &context_;
  const KernelSet &set_;
  const KernelAbi *abi_;
  LaunchChecker checker_;
  GridProgram grid_;
  std::atomic<const CudaDriver *> driver_{nullptr};
  /// Prepared plans, published for lock-free lookup (the first kSlots
  /// contexts); all of them, owned, in plans_.
  std::array<std::atomic<const LaunchPlan *>, kSlots> slots_{};
  std::mutex mutex_;
  std::vector<std::unique_ptr<LaunchPlan>> plans_;
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_LAUNCHPLAN_H
