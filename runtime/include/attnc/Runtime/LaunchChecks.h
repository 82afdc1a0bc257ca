//===- LaunchChecks.h - A launch's tensors checked against the ABI -*- C++ -*-===//
//
// The checked launch's rules, in one place for the C API
// (attnc_kernel_check_tensors, attnc_kernel_launch_checked), the Context and
// so every binding: each pointer parameter gets a tensor (data pointer,
// dtype, device, shape, strides), checked against its ABI entry, and the
// i32/i64 parameters and launch scalars take the values the tensors' shapes
// bind (never values from the caller, except symbols no tensor carries).
//
// Rules, per tensor in ABI order (errors name the parameter as the field):
// - dtype equals the ABI's; rank and every dim match the ABI shape, whose
//   symbols are bound by the first tensor that has them and must agree
//   everywhere after (the message says where the binding came from); the
//   derived symbol num_seqs_plus_one is num_seqs + 1; shape [] accepts []
//   or [1]; a "workspace" parameter's constant 1-D shape [W] is a minimum;
// - strides: without an ABI "strides" entry the tensor is C-contiguous (dims
//   of size 1 ignored); with one, a constant must match and a symbol names
//   the i64 parameter that gets the tensor's stride (size-1 dims are not
//   checked and bind the contiguous stride), the innermost stride must be 1
//   and every other stride of a dim of size > 1 a positive multiple of
//   16 bytes;
// - the data pointer is 16-byte aligned and not NULL when there are
//   elements; a read-only tensor is refused where the kernel writes
//   (KernelParam::writes); every known device is the same.
// Then: num_tokens > 0 needs num_seqs > 0 (named seq_lens); i32 values fit
// int32; for split-KV kernels (a num_kv_splits parameter, hints target_ctas
// and max_kv_splits) num_kv_splits is the split rule's count, or the
// caller's "num_kv_splits" symbol checked (plan/SplitKv.h).
//
// A LaunchChecker precomputes from the ABI what it can (parameter indices,
// the symbol table, derived-symbol partners, the split-KV facts), so a
// check that passes builds no string and allocates nothing (for kernels of
// up to kMaxCheckedSymbols symbols).
//
// Thread safety: a LaunchChecker is immutable; check() may run concurrently.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_LAUNCHCHECKS_H
#define ATTNC_RUNTIME_LAUNCHCHECKS_H

#include "attnc/Plan/SplitKv.h"
#include "attnc/Runtime/KernelAbi.h"
#include "attnc/Support/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnc::runtime {

/// The most dims a checked tensor has.
inline constexpr int kMaxTensorDims = 8;
/// The symbols a check keeps on the stack; kernels with more allocate.
inline constexpr size_t kMaxCheckedSymbols = 48;
/// The alignment of every data pointer and of strided layouts, in bytes.
inline constexpr int64_t kTensorAlignment = 16;

/// One tensor argument; layout-identical to the C API's attnc_tensor_t.
struct TensorView {
  void *data = nullptr;  ///< device pointer; NULL only without elements
  int32_t dtype = 0;     ///< an ElementType value
  int32_t device = -1;   ///< CUDA device ordinal; < 0: unknown (not checked)
  int32_t ndim = 0;      ///< 0..kMaxTensorDims
  int32_t readonly = 0;  ///< non-zero: the kernel may not write it
  int64_t shape[kMaxTensorDims] = {};
  int64_t strides[kMaxTensorDims] = {}; ///< in elements
};

/// A value for a symbol no tensor carries; layout-identical to
/// attnc_symbol_t.
struct SymbolValue {
  const char *name = nullptr;
  int64_t value = 0;
};

class LaunchChecker {
public:
  /// Precomputes the checks of `abi`, which must outlive the checker. Never
  /// fails: an ABI the checked launch cannot serve (an f32 parameter, a
  /// split-KV kernel without its hints) fails each check() instead.
  explicit LaunchChecker(const KernelAbi &abi);

  const KernelAbi &abi() const { return *abi_; }
  /// Parameter index of each pointer parameter (tensor i is parameter
  /// pointerParams()[i]).
  const std::vector<uint32_t> &pointerParams() const { return pointers_; }

  /// Checks `tensors` (one per pointer parameter, in ABI order) with the
  /// caller's `symbols`. On success `out_params[i]` is parameter i's value
  /// when it is an i32/i64 scalar (0 for pointers; num_params must be the
  /// parameter count), `out_launch_scalars` the launch scalars and
  /// `*out_device` (when not null) the tensors' device (-1 if none is
  /// known). InvalidArgument naming the parameter and the rule otherwise.
  Status check(const TensorView *tensors, size_t num_tensors,
               const SymbolValue *symbols, size_t num_symbols,
               int64_t *out_params, size_t num_params,
               int64_t *out_launch_scalars, size_t num_launch_scalars,
               int *out_device = nullptr) const;

private:
  /// A shape or stride entry: a constant or an index into symbols_.
  struct DimRule {
    int32_t symbol = -1; ///< -1: constant
    int64_t constant = 0;
  };
  struct TensorRule {
    uint32_t param = 0;
    ElementType dtype = ElementType::F32;
    int32_t rank = -1;        ///< -1: the ABI gives no shape
    int64_t at_least = -1;    ///< >= 0: a workspace of at least this many
    bool has_strides = false; ///< the ABI's "strides"
    bool writes = false;
    std::vector<DimRule> dims;
    std::vector<DimRule> strides;
  };
  struct Symbol {
    std::string name;
    int32_t partner = -1; ///< value = partner's value + offset
    int64_t offset = 0;
    bool from_strides = false; ///< bound by a tensor's stride
  };
  /// A grid axis over symbols (for the split-KV base and busy counts).
  struct AxisRule {
    int32_t value = -1; ///< -1: constant
    int32_t plus = -1;
    int64_t constant = 1;
    int64_t multiplier = 1;
    int64_t divisor = 1;
  };
  struct State;

  int32_t symbolIndex(const std::string &name);
  Status checkTensor(State &state, size_t slot, const TensorView &tensor) const;
  Status splitKv(State &state, std::optional<int64_t> requested,
                 int32_t requested_from) const;
  std::string sourceText(const State &state, int32_t symbol) const;
  std::string abiShapeText(const std::vector<DimRule> &dims) const;

  const KernelAbi *abi_;
  std::vector<uint32_t> pointers_;
  std::vector<TensorRule> tensors_;
  std::vector<Symbol> symbols_;
  /// Per parameter: its symbol (i32/i64), -1 for pointers.
  std::vector<int32_t> param_symbols_;
  std::vector<int32_t> launch_scalar_symbols_;
  int32_t num_tokens_ = -1;
  int32_t num_seqs_ = -1;
  int32_t num_kv_splits_ = -1; ///< the symbol, when the kernel takes it
  /// Why the checked launch cannot serve this kernel (empty if it can).
  Status unsupported_;
  /// Split-KV: the hints, the base grid axes, and an ABI error if any.
  plan::SplitKvLimits split_limits_;
  std::array<AxisRule, 3> grid_;
  std::vector<int> base_axes_;
  std::string base_axes_text_;
  Status split_error_;
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_LAUNCHCHECKS_H
