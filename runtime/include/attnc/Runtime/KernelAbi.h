//===- KernelAbi.h - A kernel's calling convention as data ------*- C++ -*-===//
//
// The code generator emits, beside each CUDA source, a description of every
// kernel in it: the ordered parameter list, the block size, how the grid
// follows from the launch's values, and the dynamic shared memory. The
// runtime launches any generated kernel from this description alone, without
// knowing its family. A bundle's manifest.json holds one per kernel.
//
// JSON form of one kernel (every field except launch_scalars, hints and the
// per-parameter dtype/shape is required; unknown fields are errors, so a typo
// cannot silently drop a setting):
//
//   {
//     "name": "fused_preprocess",             // extern "C" entry point
//     "params": [
//       {"name": "qkv", "kind": "pointer", "dtype": "bf16",
//        "shape": ["num_tokens", 8192]},      // optional; ints or symbols
//       {"name": "k_cache", "kind": "pointer", "dtype": "bf16",
//        "shape": ["num_blocks", 16, 8, 128],
//        "strides": ["k_cache_block_stride", "k_cache_token_stride",
//                    "k_cache_head_stride", 1], // optional, in elements
//        "writes": true},                     // optional: the kernel writes it
//       {"name": "num_tokens", "kind": "i32"},
//       {"name": "eps", "kind": "f32"}
//     ],
//     "launch_scalars": ["num_sequences"],    // values given at launch that
//                                             // are not kernel parameters
//     "block": [128, 1, 1],
//     "grid": [{"value": "num_tokens", "multiplier": 1, "divisor": 4}, 32, 1],
//     "dynamic_shared_memory_bytes": 0,
//     "hints": {"target_ctas": 264},          // optional
//     "programmatic_dependent_launch": true   // optional, omitted when false
//   }
//
// A grid entry is a constant or ceil_div(value * multiplier, divisor), where
// value names an i32/i64 parameter or a launch scalar; multiplier and divisor
// default to 1. An entry may add a second symbol after the division,
//   {"value": "num_tokens", "multiplier": 8, "divisor": 64, "plus": "num_seqs"}
// giving ceil_div(num_tokens * 8, 64) + num_seqs; "plus" names an i32/i64
// parameter or a launch scalar like "value" (omitted when there is none).
//
// "strides" (optional; pointer parameters with a shape only, one entry per
// dim, in elements) says which layouts the kernel reads: a constant must be
// the tensor's stride exactly, a symbol names an i64 parameter that the
// launcher sets to the tensor's stride (so the kernel takes engine-owned
// views such as the K half of a [num_blocks, 2, block_size, heads, dim]
// allocation). Without "strides" the tensor must be C-contiguous. Strides of
// dims of size 1 never matter (they are not checked, and a symbol there is
// bound to the contiguous stride).
//
// A "tensor_map" parameter is a CUtensorMap (128 bytes, passed by value as
// a `const __grid_constant__` kernel parameter) that the runtime encodes at
// every launch for the tensor behind another parameter, so the kernel can
// copy boxes of it with the tensor memory accelerator (cp.async.bulk.tensor):
//       {"name": "latent_cache_map", "kind": "tensor_map",
//        "tensor": "latent_cache", "box": [1, 64, 64], "swizzle": 128}
// "tensor" names a pointer parameter with a shape and strides whose symbols
// are all i32/i64 parameters or launch scalars (the encoding needs their
// values at launch) and whose innermost stride is 1; the map's element type
// is that parameter's dtype, its dims and strides are the tensor's. "box"
// is the box one copy moves, one entry per dim (outermost first, each 1 to
// 256); "swizzle" is the shared-memory swizzle in bytes (0, 32, 64 or 128;
// with a swizzle the box's innermost row is at most that many bytes). The
// caller passes nothing for it: the argument given at its position in
// attnc_kernel_launch is ignored (NULL is fine), and the checked launches
// skip it.
//
// "programmatic_dependent_launch" (optional, omitted when false) says the
// kernel is PDL-aware: its device code executes griddepcontrol.wait
// (attnc::grid_dependency_wait) before its first access of global memory
// and only after it griddepcontrol.launch_dependents. The runtime then
// launches it with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, so
// its launch and prologue overlap the previous kernel's tail on the stream
// (CUDA graphs captured from the stream keep the edge). Without the flag a
// kernel is launched plainly (it would read its predecessor's outputs too
// early otherwise).
//
// "hints" (optional, omitted when empty) are named integer facts about the
// kernel that a launcher may use to pick values it passes, e.g. the CTA
// count that fills the GPU ("target_ctas") or the largest value a parameter
// may take ("max_kv_splits"). Names are C identifiers; the runtime itself
// does not interpret them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_KERNELABI_H
#define ATTNC_RUNTIME_KERNELABI_H

#include "attnc/Support/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnc::runtime {

/// How a parameter is passed to the kernel.
enum class ParamKind {
  Pointer, ///< a device pointer (8 bytes)
  I32,     ///< int32_t by value
  I64,     ///< int64_t by value
  F32,     ///< float by value
  TensorMap, ///< a CUtensorMap the runtime encodes (128 bytes, 64-aligned)
};
/// "pointer", "i32", "i64", "f32", "tensor_map".
const char *paramKindName(ParamKind kind);

/// Element type of the tensor behind a pointer parameter.
enum class ElementType { F32, F16, BF16, Fp8E4M3, Fp8E5M2, I8, U8, I32, I64 };
/// "f32", "f16", "bf16", "fp8_e4m3", "fp8_e5m2", "i8", "u8", "i32", "i64".
const char *elementTypeName(ElementType type);
/// Bytes of one element of `type`.
int64_t elementSize(ElementType type);

/// One dimension of an expected tensor shape: a constant, or a symbol (a
/// parameter or launch-scalar name, or any other name the launcher binds) so
/// that a launch can check shapes later.
struct ShapeDim {
  std::string symbol; ///< empty for a constant
  int64_t size = 0;   ///< the constant, when symbol is empty

  static ShapeDim constant(int64_t size) { return {"", size}; }
  static ShapeDim named(std::string symbol) { return {std::move(symbol), 0}; }
  bool isSymbolic() const { return !symbol.empty(); }
  bool operator==(const ShapeDim &other) const {
    return symbol == other.symbol && size == other.size;
  }
};

/// What a tensor-map parameter maps (see the file comment).
struct TensorMapSpec {
  std::string tensor;         ///< the pointer parameter it views
  std::vector<int64_t> box;   ///< one entry per dim, outermost first
  int64_t swizzle = 0;        ///< 0, 32, 64 or 128 bytes
  bool operator==(const TensorMapSpec &other) const {
    return tensor == other.tensor && box == other.box && swizzle == other.swizzle;
  }
};

/// Bytes and alignment of a CUtensorMap.
constexpr size_t kTensorMapBytes = 128;
constexpr size_t kTensorMapAlignment = 64;
/// At most this many tensor maps, and parameters in all, in a kernel with
/// tensor maps (validateKernelAbi).
constexpr size_t kMaxTensorMaps = 4;
constexpr size_t kMaxParamsWithTensorMaps = 64;

/// One kernel parameter, in declaration order.
struct KernelParam {
  std::string name;
  ParamKind kind = ParamKind::Pointer;
  /// Pointers only: the element type behind the pointer.
  ElementType dtype = ElementType::F32;
  /// Pointers only, optional: the expected shape.
  std::optional<std::vector<ShapeDim>> shape;
  /// Pointers with a shape only, optional: the accepted strides (in
  /// elements), one per dim; a symbol names an i64 parameter bound to the
  /// tensor's stride. Absent: C-contiguous.
  std::optional<std::vector<ShapeDim>> strides;
  /// Pointers only: the kernel writes through it (outputs, caches,
  /// workspaces), so the checked launch refuses a read-only tensor there.
  /// JSON "writes": true, omitted when false.
  bool writes = false;
  /// Tensor maps only: what the runtime encodes.
  std::optional<TensorMapSpec> tensor_map;

  /// Bytes the parameter occupies in the kernel's parameter buffer.
  size_t byteSize() const;
  bool operator==(const KernelParam &other) const;
};

/// One grid dimension: `constant`, or ceil_div(value * multiplier, divisor)
/// [+ plus] where `value` (and `plus`, when set) names an i32/i64 parameter
/// or a launch scalar.
struct GridDimRule {
  std::string value;    ///< empty for a constant dimension
  int64_t constant = 1; ///< used when value is empty
  int64_t multiplier = 1;
  int64_t divisor = 1;
  /// Optional: a symbol whose value is added after the ceil_div (empty for
  /// none; only on non-constant dimensions).
  std::string plus;

  static GridDimRule fixed(int64_t constant) {
    return {"", constant, 1, 1, ""};
  }
  static GridDimRule ceilDiv(std::string value, int64_t multiplier,
                             int64_t divisor) {
    return {std::move(value), 1, multiplier, divisor, ""};
  }
  /// ceil_div(value * multiplier, divisor) + plus.
  static GridDimRule ceilDivPlus(std::string value, int64_t multiplier,
                                 int64_t divisor, std::string plus) {
    return {std::move(value), 1, multiplier, divisor, std::move(plus)};
  }
  bool isConstant() const { return value.empty(); }
  bool hasPlus() const { return !plus.empty(); }
  bool operator==(const GridDimRule &other) const;
};

/// The calling convention of one generated kernel.
struct KernelAbi {
  /// The extern "C" entry point name.
  std::string name;
  std::vector<KernelParam> params;
  /// Values the launcher passes besides the parameters (in this order), for
  /// grid rules that depend on something the kernel does not take.
  std::vector<std::string> launch_scalars;
  std::array<uint32_t, 3> block = {1, 1, 1};
  std::array<GridDimRule, 3> grid = {
      GridDimRule::fixed(1), GridDimRule::fixed(1), GridDimRule::fixed(1)};
  uint32_t dynamic_shared_memory_bytes = 0;
  /// Named integer facts for the launcher (e.g. "target_ctas"), by name.
  std::map<std::string, int64_t, std::less<>> hints;
  /// The kernel waits (griddepcontrol.wait) before touching global memory,
  /// so it may be launched with programmatic stream serialization (see the
  /// file comment). JSON "programmatic_dependent_launch": true, omitted
  /// when false.
  bool programmatic_dependent_launch = false;

  /// The hint called `name`, if the ABI has it.
  std::optional<int64_t> hint(std::string_view name) const;
  /// Index of the parameter called `name`, or -1.
  int paramIndex(std::string_view name) const;
  /// Index of the launch scalar called `name`, or -1.
  int launchScalarIndex(std::string_view name) const;
  bool operator==(const KernelAbi &other) const;
};

/// Checks the rules the JSON reader enforces (identifiers, unique names,
/// dtype only on pointers, strides only with a shape of the same rank and
/// naming i64 parameters, grid values and pluses that name an i32/i64
/// parameter or a launch scalar, positive multipliers/divisors, block limits,
/// hint names that are identifiers). Errors name the field
/// ("params[1].name", "grid[0].value", "grid[0].plus", "hints").
Status validateKernelAbi(const KernelAbi &abi);

/// One kernel as a JSON object (pretty-printed with `indent` spaces, or
/// compact when indent < 0).
std::string kernelAbiToJson(const KernelAbi &abi, int indent = 2);
/// Reads and validates one kernel object. InvalidArgument errors name the
/// field, e.g. "params[2].dtype: unknown element type 'bf32' (expected ...)".
Result<KernelAbi> kernelAbiFromJson(std::string_view json);

/// The ABI document of one CUDA source: {"kernels": [<kernel>, ...]}.
std::string kernelAbiListToJson(const std::vector<KernelAbi> &kernels,
                                int indent = 2);
/// Reads {"kernels": [...]}: at least one kernel, names unique.
Result<std::vector<KernelAbi>> kernelAbiListFromJson(std::string_view json);

/// Grid, block and shared memory of one launch.
struct LaunchGeometry {
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t dynamic_shared_memory_bytes = 0;
  /// True when a grid dimension is 0 (e.g. no tokens): there is nothing to
  /// do and the launcher skips the launch (CUDA rejects empty grids).
  bool empty() const { return grid[0] == 0 || grid[1] == 0 || grid[2] == 0; }
};

/// Applies the ABI's grid rule to a launch's arguments. `args[i]` points to
/// the value of params[i] (as for cuLaunchKernel); `launch_scalars[j]` is the
/// value of abi.launch_scalars[j]. Checks the counts, null arguments,
/// negative values (of `value` and `plus`) and the CUDA grid limits
/// (x < 2^31, y and z < 2^16).
Result<LaunchGeometry> computeLaunchGeometry(const KernelAbi &abi,
                                             void *const *args, size_t num_args,
                                             const int64_t *launch_scalars,
                                             size_t num_launch_scalars);

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_KERNELABI_H
