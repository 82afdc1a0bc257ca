//===- LaunchChecks.cpp - A launch's tensors checked against the ABI ------===//
//
// The rules of python/attnc/_launch.py's check_argument / prepare_launch,
// moved here so every caller of the C API gets them. Messages are built
// only on failure.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/LaunchChecks.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace attnc::runtime {

namespace {

/// Symbols whose value follows from another: name = base + offset.
struct DerivedSymbol {
  const char *name;
  const char *base;
  int64_t offset;
};
constexpr DerivedSymbol kDerivedSymbols[] = {{"num_seqs_plus_one", "num_seqs", 1}};

constexpr const char *kKvSplits = "num_kv_splits";
constexpr const char *kWorkspace = "workspace";
constexpr const char *kAxis[3] = {"x", "y", "z"};
constexpr ElementType kLastElementType = ElementType::I64;

Status invalid(const std::string &field, const std::string &rule) {
  return Status(StatusCode::InvalidArgument, field, rule);
}

std::string listText(const int64_t *values, int32_t count) {
  std::string text = "[";
  for (int32_t i = 0; i < count; ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::string shapeText(const TensorView &t) { return listText(t.shape, t.ndim); }
std::string stridesText(const TensorView &t) {
  return listText(t.strides, t.ndim);
}

std::string dtypeText(int32_t dtype) {
  if (dtype < 0 || dtype > int32_t(kLastElementType))
    return std::to_string(dtype) + " (not an attnc_dtype_t)";
  return elementTypeName(ElementType(dtype));
}

/// Row-major strides of `t`'s shape (size-0 dims count as 1).
void contiguousStrides(const TensorView &t, int64_t *out) {
  int64_t step = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    out[d] = step;
    step *= t.shape[d] > 1 ? t.shape[d] : 1;
  }
}

// Source encoding of a binding: kind << 24 | a << 8 | b.
enum SourceKind : uint32_t {
  kUnbound = 0,
  kShapeDim = 1,     // tensor slot a, dim b
  kStride = 2,       // tensor slot a, stride b
  kCallerSymbol = 3, // symbols[a]
  kSplitRule = 4,
};
constexpr uint32_t source(SourceKind kind, uint32_t a, uint32_t b = 0) {
  return uint32_t(kind) << 24 | (a & 0xffff) << 8 | (b & 0xff);
}

} // namespace

struct LaunchChecker::State {
  const TensorView *tensors = nullptr;
  int64_t *values = nullptr;
  uint32_t *sources = nullptr;
  int64_t stack_values[kMaxCheckedSymbols];
  uint32_t stack_sources[kMaxCheckedSymbols];
  std::vector<int64_t> heap_values;
  std::vector<uint32_t> heap_sources;

  State(size_t count) {
    if (count <= kMaxCheckedSymbols) {
      values = stack_values;
      sources = stack_sources;
    } else {
      heap_values.resize(count);
      heap_sources.resize(count);
      values = heap_values.data();
      sources = heap_sources.data();
    }
    std::memset(sources, 0, count * sizeof(uint32_t));
  }
  bool bound(int32_t symbol) const { return sources[symbol] != kUnbound; }
  void bind(int32_t symbol, int64_t value, uint32_t from) {
    values[symbol] = value;
    sources[symbol] = from;
  }
};

int32_t LaunchChecker::symbolIndex(const std::string &name) {
  for (size_t i = 0; i < symbols_.size(); ++i)
    if (symbols_[i].name == name)
      return int32_t(i);
  symbols_.push_back(Symbol{name, -1, 0, false});
  int32_t index = int32_t(symbols_.size() - 1);
  for (const DerivedSymbol &derived : kDerivedSymbols) {
    bool is_derived = name == derived.name, is_base = name == derived.base;
    if (!is_derived && !is_base)
      continue;
    int32_t partner = symbolIndex(is_derived ? derived.base : derived.name);
    symbols_[size_t(index)].partner = partner;
    symbols_[size_t(index)].offset = is_derived ? derived.offset : -derived.offset;
    symbols_[size_t(partner)].partner = index;
    symbols_[size_t(partner)].offset = is_derived ? -derived.offset : derived.offset;
  }
  return index;
}

LaunchChecker::LaunchChecker(const KernelAbi &abi) : abi_(&abi) {
  param_symbols_.assign(abi.params.size(), -1);
  for (size_t i = 0; i < abi.params.size(); ++i) {
    const KernelParam &param = abi.params[i];
    if (param.kind == ParamKind::Pointer || param.kind == ParamKind::TensorMap)
      continue; // (the launch encodes tensor maps itself)
    if (param.kind == ParamKind::F32 && unsupported_.ok())
      unsupported_ = invalid(
          param.name, "kernel " + abi.name +
                          " takes an f32 parameter, which the checked launch "
                          "cannot fill (launch it with attnc_kernel_launch)");
    param_symbols_[i] = symbolIndex(param.name);
  }
  for (const std::string &scalar : abi.launch_scalars)
    launch_scalar_symbols_.push_back(symbolIndex(scalar));

  for (size_t i = 0; i < abi.params.size(); ++i) {
    const KernelParam &param = abi.params[i];
    if (param.kind != ParamKind::Pointer)
      continue;
    pointers_.push_back(uint32_t(i));
    TensorRule rule;
    rule.param = uint32_t(i);
    rule.dtype = param.dtype;
    rule.writes = param.writes;
    if (param.shape) {
      rule.rank = int32_t(param.shape->size());
      for (const ShapeDim &dim : *param.shape)
        rule.dims.push_back(dim.isSymbolic()
                                ? DimRule{symbolIndex(dim.symbol), 0}
                                : DimRule{-1, dim.size});
      if (param.name == kWorkspace && rule.rank == 1 && rule.dims[0].symbol < 0)
        rule.at_least = rule.dims[0].constant;
    }
    if (param.strides) {
      rule.has_strides = true;
      for (const ShapeDim &stride : *param.strides) {
        DimRule entry{-1, stride.size};
        if (stride.isSymbolic()) {
          entry.symbol = symbolIndex(stride.symbol);
          symbols_[size_t(entry.symbol)].from_strides = true;
        }
        rule.strides.push_back(entry);
      }
    }
    tensors_.push_back(std::move(rule));
  }

  for (int d = 0; d < 3; ++d) {
    const GridDimRule &dim = abi.grid[size_t(d)];
    AxisRule &axis = grid_[size_t(d)];
    axis.constant = dim.constant;
    axis.multiplier = dim.multiplier;
    axis.divisor = dim.divisor;
    if (!dim.isConstant())
      axis.value = symbolIndex(dim.value);
    if (dim.hasPlus())
      axis.plus = symbolIndex(dim.plus);
  }

  for (size_t i = 0; i < symbols_.size(); ++i) {
    if (symbols_[i].name == "num_tokens")
      num_tokens_ = int32_t(i);
    else if (symbols_[i].name == "num_seqs")
      num_seqs_ = int32_t(i);
  }

  // The split-KV contract, as _launch.SplitKv reads it.
  int kv_splits_param = abi.paramIndex(kKvSplits);
  if (kv_splits_param >= 0 &&
      abi.params[size_t(kv_splits_param)].kind != ParamKind::Pointer) {
    num_kv_splits_ = param_symbols_[size_t(kv_splits_param)];
    std::optional<int64_t> target = abi.hint("target_ctas");
    std::optional<int64_t> most = abi.hint("max_kv_splits");
    if (!target || !most) {
      std::string missing = !target ? "target_ctas" : "";
      if (!most)
        missing += std::string(missing.empty() ? "" : " / ") + "max_kv_splits";
      split_error_ = invalid(kKvSplits, "kernel " + abi.name + " takes " +
                                            kKvSplits +
                                            ", but its ABI has no hint " +
                                            missing + " to choose it with");
    } else if (*target < 1 || *most < 1) {
      split_error_ = invalid(
          kKvSplits, "kernel " + abi.name + ": hints target_ctas (" +
                         std::to_string(*target) + ") and max_kv_splits (" +
                         std::to_string(*most) + ") must be >= 1");
    } else {
      split_limits_ = plan::SplitKvLimits{*target, *most};
    }
    for (int d = 0; d < 3; ++d) {
      const AxisRule &axis = grid_[size_t(d)];
      if (axis.value == num_kv_splits_ || axis.plus == num_kv_splits_)
        continue;
      base_axes_.push_back(d);
      base_axes_text_ +=
          std::string(base_axes_text_.empty() ? "" : " * ") + kAxis[d];
    }
  }
}

std::string LaunchChecker::abiShapeText(const std::vector<DimRule> &dims) const {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + (dims[i].symbol >= 0
                                   ? symbols_[size_t(dims[i].symbol)].name
                                   : std::to_string(dims[i].constant));
  return text + "]";
}

std::string LaunchChecker::sourceText(const State &state, int32_t symbol) const {
  auto direct = [&](int32_t s) -> std::string {
    uint32_t from = state.sources[s];
    uint32_t kind = from >> 24, a = (from >> 8) & 0xffff, b = from & 0xff;
    const std::string tensor =
        kind == kShapeDim || kind == kStride
            ? abi_->params[tensors_[a].param].name
            : std::string();
    switch (kind) {
    case kShapeDim:
      return tensor + " dim " + std::to_string(b);
    case kStride:
      return tensor + " stride " + std::to_string(b);
    case kCallerSymbol:
      return "symbols[" + std::to_string(a) + "]";
    case kSplitRule:
      return "the split rule";
    }
    return "?";
  };
  if (state.bound(symbol))
    return direct(symbol);
  const Symbol &entry = symbols_[size_t(symbol)];
  if (entry.partner >= 0 && state.bound(entry.partner)) {
    const std::string &partner = symbols_[size_t(entry.partner)].name;
    return partner + (entry.offset >= 0 ? " + " : " - ") +
           std::to_string(entry.offset >= 0 ? entry.offset : -entry.offset) +
           ", " + partner + " from " + direct(entry.partner);
  }
  return "?";
}

namespace {
/// The value of `symbol` in `state`: bound, or derived from its partner.
template <typename Symbols, typename StateT>
bool lookup(const Symbols &symbols, const StateT &state, int32_t symbol,
            int64_t &value) {
  if (state.bound(symbol)) {
    value = state.values[symbol];
    return true;
  }
  int32_t partner = symbols[size_t(symbol)].partner;
  if (partner >= 0 && state.bound(partner)) {
    value = state.values[partner] + symbols[size_t(symbol)].offset;
    return true;
  }
  return false;
}
} // namespace

Status LaunchChecker::checkTensor(State &state, size_t slot,
                                  const TensorView &t) const {
  const TensorRule &rule = tensors_[slot];
  const std::string &name = abi_->params[rule.param].name;
  if (t.ndim < 0 || t.ndim > kMaxTensorDims)
    return invalid(name, "ndim is " + std::to_string(t.ndim) + ", must be 0.." +
                             std::to_string(kMaxTensorDims));
  if (t.dtype != int32_t(rule.dtype))
    return invalid(name, "dtype is " + dtypeText(t.dtype) + ", expected " +
                             elementTypeName(rule.dtype));
  int64_t elements = 1;
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (t.shape[d] < 0)
      return invalid(name, "shape " + shapeText(t) + ": dim " +
                               std::to_string(d) + " is negative");
    elements *= t.shape[d];
  }

  if (rule.at_least >= 0) {
    if (t.ndim != 1 || t.shape[0] < rule.at_least)
      return invalid(name, "expected 1 dim of at least " +
                               std::to_string(rule.at_least) + " elements (" +
                               abiShapeText(rule.dims) + "), got shape " +
                               shapeText(t));
  } else if (rule.rank == 0) {
    if (!(t.ndim == 0 || (t.ndim == 1 && t.shape[0] == 1)))
      return invalid(name, "must be a scalar tensor (shape [] or [1]), got "
                           "shape " +
                               shapeText(t));
  } else if (rule.rank > 0) {
    if (t.ndim != rule.rank)
      return invalid(name, "expected " + std::to_string(rule.rank) + " dims " +
                               abiShapeText(rule.dims) + ", got " +
                               std::to_string(t.ndim) + " dims " +
                               shapeText(t));
    for (int32_t d = 0; d < t.ndim; ++d) {
      const DimRule &want = rule.dims[size_t(d)];
      int64_t got = t.shape[d];
      if (want.symbol < 0) {
        if (got != want.constant)
          return invalid(name, "shape " + shapeText(t) + " does not match " +
                                   abiShapeText(rule.dims) + ": dim " +
                                   std::to_string(d) + " is " +
                                   std::to_string(got) + ", expected " +
                                   std::to_string(want.constant));
        continue;
      }
      int64_t bound = 0;
      if (lookup(symbols_, state, want.symbol, bound)) {
        if (bound != got)
          return invalid(name, "shape " + shapeText(t) + " does not match " +
                                   abiShapeText(rule.dims) + ": dim " +
                                   std::to_string(d) + " is " +
                                   std::to_string(got) + ", but " +
                                   symbols_[size_t(want.symbol)].name + " is " +
                                   std::to_string(bound) + " (from " +
                                   sourceText(state, want.symbol) + ")");
        continue;
      }
      const Symbol &symbol = symbols_[size_t(want.symbol)];
      if (symbol.partner >= 0 && symbol.offset > 0 && got - symbol.offset < 0)
        return invalid(name, "dim " + std::to_string(d) + " (" + symbol.name +
                                 ") is " + std::to_string(got) +
                                 ", must be >= " +
                                 std::to_string(symbol.offset));
      state.bind(want.symbol, got, source(kShapeDim, uint32_t(slot), uint32_t(d)));
    }
  }

  int64_t contiguous[kMaxTensorDims];
  contiguousStrides(t, contiguous);
  if (rule.has_strides && t.ndim == int32_t(rule.strides.size())) {
    int64_t element = elementSize(rule.dtype);
    // Strides must be multiples of the kernels' copy granule: 16 bytes, or
    // for rows (the innermost dim) that are not whole 16-byte chunks the
    // largest power of two dividing the row's bytes (such rows are copied in
    // smaller pieces), so contiguous caches of any head dim stay accepted.
    int64_t row_bytes = (t.ndim > 0 ? t.shape[t.ndim - 1] : 1) * element;
    int64_t granule = kTensorAlignment;
    if (row_bytes > 0 && row_bytes % kTensorAlignment != 0)
      granule = std::min<int64_t>(kTensorAlignment, row_bytes & -row_bytes);
    for (int32_t d = 0; d < t.ndim; ++d) {
      const DimRule &want = rule.strides[size_t(d)];
      bool counts = t.shape[d] != 1 && elements > 0;
      int64_t got = counts ? t.strides[d] : contiguous[d];
      if (want.symbol < 0) {
        if (counts && got != want.constant)
          return invalid(name, "stride " + std::to_string(d) + " is " +
                                   std::to_string(got) + ", expected " +
                                   std::to_string(want.constant) +
                                   " (strides " + stridesText(t) +
                                   " for shape " + shapeText(t) + ")");
      } else {
        int64_t bound = 0;
        if (!lookup(symbols_, state, want.symbol, bound))
          state.bind(want.symbol, got,
                     source(kStride, uint32_t(slot), uint32_t(d)));
        else if (counts && bound != got)
          return invalid(name, "stride " + std::to_string(d) + " is " +
                                   std::to_string(got) + ", but " +
                                   symbols_[size_t(want.symbol)].name +
                                   " is " + std::to_string(bound) + " (from " +
                                   sourceText(state, want.symbol) + ")");
      }
      if (!counts)
        continue;
      if (d == t.ndim - 1) {
        if (got != 1)
          return invalid(name, "innermost stride is " + std::to_string(got) +
                                   ", must be 1 (strides " + stridesText(t) +
                                   " for shape " + shapeText(t) + ")");
      } else if (got <= 0 || (got * element) % granule != 0) {
        return invalid(name, "stride " + std::to_string(d) + " is " +
                                 std::to_string(got) + " elements (" +
                                 std::to_string(got * element) +
                                 " bytes), must be a positive multiple of " +
                                 std::to_string(granule) +
                                 " bytes (strides " + stridesText(t) +
                                 " for shape " + shapeText(t) + ")");
      } else if (want.symbol >= 0 && got > INT32_MAX) {
        return invalid(name, "stride " + std::to_string(d) + " is " +
                                 std::to_string(got) +
                                 " elements, more than the kernels' 32-bit "
                                 "strides hold (2^31 - 1) (strides " +
                                 stridesText(t) + " for shape " +
                                 shapeText(t) + ")");
      }
    }
  } else if (elements > 0) {
    for (int32_t d = 0; d < t.ndim; ++d)
      if (t.shape[d] != 1 && t.strides[d] != contiguous[d])
        return invalid(name, "must be C-contiguous: strides " +
                                 stridesText(t) + " (in elements) for shape " +
                                 shapeText(t) + ", expected " +
                                 listText(contiguous, t.ndim));
  }

  uintptr_t address = reinterpret_cast<uintptr_t>(t.data);
  if (address % uintptr_t(kTensorAlignment) != 0) {
    char text[32];
    std::snprintf(text, sizeof(text), "%#llx", (unsigned long long)address);
    return invalid(name, std::string("data pointer ") + text + " is not " +
                             std::to_string(kTensorAlignment) +
                             "-byte aligned (the kernels use 16-byte vector "
                             "accesses; a sliced view?)");
  }
  if (!t.data && elements > 0)
    return invalid(name, "data pointer is NULL");
  if (rule.writes && t.readonly)
    return invalid(name, "is read-only, but the kernel writes it");
  return Status();
}

Status LaunchChecker::splitKv(State &state, std::optional<int64_t> requested,
                              int32_t requested_from) const {
  if (!split_error_.ok())
    return split_error_;
  auto operand = [&](int32_t symbol, int axis, int64_t &value) -> Status {
    if (!lookup(symbols_, state, symbol, value))
      return invalid(symbols_[size_t(symbol)].name,
                     std::string("the grid rule of axis ") + kAxis[axis] +
                         " needs " + symbols_[size_t(symbol)].name +
                         ", which no argument gives");
    if (value < 0)
      return invalid(symbols_[size_t(symbol)].name,
                     "is negative (" + std::to_string(value) +
                         "); grid axis " + kAxis[axis] + " needs it");
    return Status();
  };
  // base: the product of the grid axes without num_kv_splits; busy: the same
  // with an axis of a "plus" rule counted as max(ceil_div(...), plus).
  int64_t base = 1, busy = 1;
  for (int d : base_axes_) {
    const AxisRule &axis = grid_[size_t(d)];
    int64_t blocks = axis.constant, busy_blocks = axis.constant;
    if (axis.value >= 0) {
      int64_t value = 0, plus = 0;
      if (Status s = operand(axis.value, d, value); !s)
        return s;
      if (axis.plus >= 0)
        if (Status s = operand(axis.plus, d, plus); !s)
          return s;
      int64_t rows = (value * axis.multiplier + axis.divisor - 1) / axis.divisor;
      blocks = rows + plus;
      busy_blocks = axis.plus >= 0 ? std::max(rows, plus) : blocks;
    }
    base *= blocks;
    busy *= busy_blocks;
  }
  int64_t splits = 0;
  if (!requested) {
    splits = plan::chooseKvSplits(split_limits_, busy);
  } else {
    Result<int64_t> checked = plan::checkKvSplits(
        split_limits_, base, *requested, base_axes_text_.empty() ? "1" : base_axes_text_);
    if (!checked)
      return invalid(checked.error().field, checked.error().rule);
    splits = *checked;
  }
  state.bind(num_kv_splits_, splits,
             requested ? source(kCallerSymbol, uint32_t(requested_from))
                       : source(kSplitRule, 0));
  return Status();
}

Status LaunchChecker::check(const TensorView *tensors, size_t num_tensors,
                            const SymbolValue *symbols, size_t num_symbols,
                            int64_t *out_params, size_t num_params,
                            int64_t *out_launch_scalars,
                            size_t num_launch_scalars, int *out_device) const {
  const KernelAbi &abi = *abi_;
  if (num_tensors != pointers_.size()) {
    std::string names;
    for (uint32_t p : pointers_)
      names += (names.empty() ? "" : ", ") + abi.params[p].name;
    return invalid("tensors", "kernel " + abi.name + " takes " +
                                  std::to_string(pointers_.size()) +
                                  " pointer parameters (" + names + ") but " +
                                  std::to_string(num_tensors) +
                                  " tensors were given");
  }
  if (num_tensors > 0 && !tensors)
    return invalid("tensors", "NULL array with a non-zero count");
  if (num_params != abi.params.size())
    return invalid("out_params", "kernel " + abi.name + " has " +
                                     std::to_string(abi.params.size()) +
                                     " parameters but num_params is " +
                                     std::to_string(num_params));
  if (num_params > 0 && !out_params)
    return invalid("out_params", "NULL");
  if (num_launch_scalars != abi.launch_scalars.size())
    return invalid("out_launch_scalars",
                   "kernel " + abi.name + " has " +
                       std::to_string(abi.launch_scalars.size()) +
                       " launch scalars but num_launch_scalars is " +
                       std::to_string(num_launch_scalars));
  if (num_launch_scalars > 0 && !out_launch_scalars)
    return invalid("out_launch_scalars", "NULL");
  if (num_symbols > 0 && !symbols)
    return invalid("symbols", "NULL array with a non-zero count");
  if (!unsupported_.ok())
    return unsupported_;

  State state(symbols_.size());
  state.tensors = tensors;

  // The caller's symbols: values no tensor carries (num_kv_splits: the
  // requested count, checked after the tensors).
  std::optional<int64_t> requested_splits;
  int32_t requested_from = -1;
  for (size_t i = 0; i < num_symbols; ++i) {
    const char *name = symbols[i].name;
    auto field = [i] { return "symbols[" + std::to_string(i) + "]"; };
    if (!name)
      return invalid(field() + ".name", "NULL");
    int32_t index = -1;
    for (size_t s = 0; s < symbols_.size(); ++s)
      if (symbols_[s].name == name) {
        index = int32_t(s);
        break;
      }
    if (index < 0) {
      if (std::strcmp(name, kKvSplits) == 0)
        return invalid(kKvSplits, "this kernel has no split-KV (" + abi.name +
                                      " takes no " + kKvSplits +
                                      "); do not pass it");
      std::string known;
      for (const Symbol &symbol : symbols_)
        if (!symbol.from_strides)
          known += (known.empty() ? "" : ", ") + symbol.name;
      return invalid(field(), "unknown symbol '" + std::string(name) +
                                "' (kernel " + abi.name + " knows " +
                                (known.empty() ? "none" : known) + ")");
    }
    if (symbols_[size_t(index)].from_strides)
      return invalid(field(), "'" + std::string(name) +
                                "' is set from a tensor's stride; do not pass "
                                "it");
    if (state.bound(index) || (index == num_kv_splits_ && requested_splits))
      return invalid(field(), "'" + std::string(name) + "' is given twice");
    if (index == num_kv_splits_) {
      requested_splits = symbols[i].value;
      requested_from = int32_t(i);
      continue;
    }
    state.bind(index, symbols[i].value, source(kCallerSymbol, uint32_t(i)));
  }

  int device = -1;
  size_t device_slot = 0;
  for (size_t slot = 0; slot < tensors_.size(); ++slot) {
    const TensorView &t = tensors[slot];
    if (Status s = checkTensor(state, slot, t); !s)
      return s;
    if (t.device < 0)
      continue;
    if (device < 0) {
      device = t.device;
      device_slot = slot;
    } else if (t.device != device) {
      return invalid(abi.params[tensors_[slot].param].name,
                     "is on cuda:" + std::to_string(t.device) + ", but " +
                         abi.params[tensors_[device_slot].param].name +
                         " is on cuda:" + std::to_string(device) +
                         "; all tensors must be on one device");
    }
  }

  // A derived symbol bound directly and its base too: they must agree.
  for (size_t s = 0; s < symbols_.size(); ++s) {
    const Symbol &symbol = symbols_[s];
    if (symbol.partner < 0 || symbol.offset <= 0 || !state.bound(int32_t(s)) ||
        !state.bound(symbol.partner))
      continue;
    int64_t derived = state.values[s], base = state.values[symbol.partner];
    if (derived == base + symbol.offset)
      continue;
    uint32_t from = state.sources[s];
    std::string where = from >> 24 == kShapeDim || from >> 24 == kStride
                            ? abi.params[tensors_[(from >> 8) & 0xffff].param].name
                            : symbol.name;
    const std::string &base_name = symbols_[size_t(symbol.partner)].name;
    return invalid(where, symbol.name + " is " + std::to_string(derived) +
                              ", but " + base_name + " is " +
                              std::to_string(base) + " (from " +
                              sourceText(state, symbol.partner) +
                              "); expected " + base_name + " + " +
                              std::to_string(symbol.offset));
  }

  int64_t tokens = 0, seqs = 0;
  if (num_tokens_ >= 0 && num_seqs_ >= 0 &&
      lookup(symbols_, state, num_tokens_, tokens) &&
      lookup(symbols_, state, num_seqs_, seqs) && tokens > 0 && seqs == 0)
    // The kernel finds each row's sequence in query_start_loc[0..num_seqs].
    return invalid("seq_lens", "no sequences (num_seqs is 0), but there are " +
                                   std::to_string(tokens) + " query rows");

  if (num_kv_splits_ >= 0)
    if (Status s = splitKv(state, requested_splits, requested_from); !s)
      return s;

  // The scalars, with a message built only for a failure.
  auto valueError = [&](int32_t symbol, bool found, int64_t value) {
    const std::string &name = symbols_[size_t(symbol)].name;
    if (!found)
      return invalid(name, "cannot be derived from the tensors (no argument "
                           "has a dim of that name)");
    return invalid(name, std::to_string(value) +
                             " does not fit the kernel's int32");
  };
  for (size_t i = 0; i < abi.params.size(); ++i) {
    out_params[i] = 0;
    int32_t symbol = param_symbols_[i];
    if (symbol < 0)
      continue;
    int64_t v = 0;
    bool found = lookup(symbols_, state, symbol, v);
    if (!found || (abi.params[i].kind == ParamKind::I32 &&
                   (v > std::numeric_limits<int32_t>::max() ||
                    v < std::numeric_limits<int32_t>::min())))
      return valueError(symbol, found, v);
    out_params[i] = v;
  }
  for (size_t i = 0; i < launch_scalar_symbols_.size(); ++i) {
    int32_t symbol = launch_scalar_symbols_[i];
    if (!lookup(symbols_, state, symbol, out_launch_scalars[i]))
      return valueError(symbol, false, 0);
  }
  if (out_device)
    *out_device = device;
  return Status();
}

} // namespace attnc::runtime
