//===- KernelAbi.cpp - Kernel ABI validation, JSON, launch geometry -------===//

#include "attnc/Runtime/KernelAbi.h"

#include "AbiJson.h"
#include "attnc/Support/Json.h"

#include <cstring>
#include <limits>
#include <optional>
#include <set>

namespace attnc::runtime {

using json_util::json;
using nlohmann::ordered_json;

namespace {

constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxFactor = (int64_t(1) << 31) - 1;
constexpr const char *kAxis[3] = {"x", "y", "z"};

Status invalid(std::string field, std::string rule) {
  return Status(StatusCode::InvalidArgument, std::move(field), std::move(rule));
}

std::string indexed(const char *field, size_t index) {
  return std::string(field) + "[" + std::to_string(index) + "]";
}

constexpr ParamKind kAllKinds[] = {ParamKind::Pointer, ParamKind::I32,
                                   ParamKind::I64, ParamKind::F32,
                                   ParamKind::TensorMap};
constexpr ElementType kAllTypes[] = {
    ElementType::F32,     ElementType::F16,     ElementType::BF16,
    ElementType::Fp8E4M3, ElementType::Fp8E5M2, ElementType::I8,
    ElementType::U8,      ElementType::I32,     ElementType::I64};

template <typename Enum, size_t N>
std::string nameList(const Enum (&values)[N], const char *(*name)(Enum)) {
  std::string list;
  for (Enum value : values)
    list += (list.empty() ? "" : ", ") + std::string(name(value));
  return list;
}

/// The one of `values` that `name` calls `text`, if any.
template <typename Enum, size_t N>
std::optional<Enum> named(const Enum (&values)[N], const char *(*name)(Enum),
                          const std::string &text) {
  for (Enum value : values)
    if (text == name(value))
      return value;
  return std::nullopt;
}

} // namespace

const char *paramKindName(ParamKind kind) {
  switch (kind) {
  case ParamKind::Pointer:
    return "pointer";
  case ParamKind::I32:
    return "i32";
  case ParamKind::I64:
    return "i64";
  case ParamKind::F32:
    return "f32";
  case ParamKind::TensorMap:
    return "tensor_map";
  }
  return "unknown";
}

const char *elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  case ElementType::Fp8E4M3:
    return "fp8_e4m3";
  case ElementType::Fp8E5M2:
    return "fp8_e5m2";
  case ElementType::I8:
    return "i8";
  case ElementType::U8:
    return "u8";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  }
  return "unknown";
}

size_t KernelParam::byteSize() const {
  switch (kind) {
  case ParamKind::Pointer:
  case ParamKind::I64:
    return 8;
  case ParamKind::I32:
  case ParamKind::F32:
    return 4;
  case ParamKind::TensorMap:
    return kTensorMapBytes;
  }
  return 0;
}

bool KernelParam::operator==(const KernelParam &other) const {
  if (name != other.name || kind != other.kind)
    return false;
  if (kind == ParamKind::TensorMap)
    return tensor_map == other.tensor_map;
  if (kind != ParamKind::Pointer)
    return true; // dtype and shape mean nothing for scalars
  return dtype == other.dtype && shape == other.shape &&
         strides == other.strides && writes == other.writes;
}

bool GridDimRule::operator==(const GridDimRule &other) const {
  if (isConstant() != other.isConstant())
    return false;
  if (isConstant())
    return constant == other.constant;
  return value == other.value && multiplier == other.multiplier &&
         divisor == other.divisor && plus == other.plus;
}

std::optional<int64_t> KernelAbi::hint(std::string_view wanted) const {
  auto it = hints.find(wanted);
  if (it == hints.end())
    return std::nullopt;
  return it->second;
}

int KernelAbi::paramIndex(std::string_view wanted) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == wanted)
      return int(i);
  return -1;
}

int KernelAbi::launchScalarIndex(std::string_view wanted) const {
  for (size_t i = 0; i < launch_scalars.size(); ++i)
    if (launch_scalars[i] == wanted)
      return int(i);
  return -1;
}

bool KernelAbi::operator==(const KernelAbi &other) const {
  return name == other.name && params == other.params &&
         launch_scalars == other.launch_scalars && block == other.block &&
         grid == other.grid &&
         dynamic_shared_memory_bytes == other.dynamic_shared_memory_bytes &&
         hints == other.hints &&
         programmatic_dependent_launch == other.programmatic_dependent_launch;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

namespace {

/// A grid rule's `value` or `plus` must name an i32/i64 parameter or a
/// launch scalar; `field` is e.g. "grid[0].plus".
Status checkGridSymbol(const KernelAbi &abi, const std::string &symbol,
                       const std::string &field) {
  int param = abi.paramIndex(symbol);
  if (param >= 0) {
    ParamKind kind = abi.params[size_t(param)].kind;
    if (kind != ParamKind::I32 && kind != ParamKind::I64)
      return invalid(field, "parameter '" + symbol + "' is " +
                                paramKindName(kind) +
                                "; a grid rule needs an i32 or i64 value");
  } else if (abi.launchScalarIndex(symbol) < 0) {
    return invalid(field, "'" + symbol +
                              "' is neither an i32/i64 parameter nor a "
                              "launch scalar of kernel '" +
                              abi.name + "'");
  }
  return Status();
}

/// The rules of a tensor-map parameter (and that no other parameter has a
/// tensor-map spec): see KernelAbi.h.
Status checkTensorMap(const KernelAbi &abi, size_t index) {
  const KernelParam &param = abi.params[index];
  std::string field = indexed("params", index);
  if (param.kind != ParamKind::TensorMap) {
    if (param.tensor_map)
      return invalid(field + ".tensor", "only tensor_map parameters map a tensor (this one is " +
                                            std::string(paramKindName(param.kind)) + ")");
    return Status();
  }
  if (!param.tensor_map)
    return invalid(field + ".tensor", "required field is missing (a tensor_map names the "
                                      "pointer parameter it maps)");
  const TensorMapSpec &spec = *param.tensor_map;
  int source = abi.paramIndex(spec.tensor);
  if (source < 0 || abi.params[size_t(source)].kind != ParamKind::Pointer)
    return invalid(field + ".tensor", "'" + spec.tensor + "' must name a pointer parameter");
  const KernelParam &tensor = abi.params[size_t(source)];
  if (!tensor.shape || !tensor.strides)
    return invalid(field + ".tensor", "'" + spec.tensor +
                                          "' must have a shape and strides (the map's dims and "
                                          "strides are the tensor's)");
  size_t rank = tensor.shape->size();
  if (rank < 1 || rank > 5)
    return invalid(field + ".tensor", "'" + spec.tensor + "' has " + std::to_string(rank) +
                                          " dims; a tensor map has 1 to 5");
  if (tensor.strides->back().isSymbolic() || tensor.strides->back().size != 1)
    return invalid(field + ".tensor", "'" + spec.tensor +
                                          "' must have an innermost stride of 1 (a tensor map's "
                                          "innermost dim is contiguous)");
  for (const std::vector<ShapeDim> *list : {&*tensor.shape, &*tensor.strides})
    for (const ShapeDim &dim : *list) {
      if (!dim.isSymbolic())
        continue;
      int p = abi.paramIndex(dim.symbol);
      bool known = p >= 0 ? (abi.params[size_t(p)].kind == ParamKind::I32 ||
                             abi.params[size_t(p)].kind == ParamKind::I64)
                          : abi.launchScalarIndex(dim.symbol) >= 0;
      if (!known)
        return invalid(field + ".tensor",
                       "'" + spec.tensor + "' has the dim or stride '" + dim.symbol +
                           "', which is neither an i32/i64 parameter nor a launch scalar "
                           "(the runtime encodes the map from their values at launch)");
    }
  if (spec.box.size() != rank)
    return invalid(field + ".box", "has " + std::to_string(spec.box.size()) +
                                       " entries, but '" + spec.tensor + "' has " +
                                       std::to_string(rank) + " dims");
  for (size_t d = 0; d < rank; ++d)
    if (spec.box[d] < 1 || spec.box[d] > 256)
      return invalid(indexed((field + ".box").c_str(), d),
                     "must be in [1, 256] (got " + std::to_string(spec.box[d]) + ")");
  if (spec.swizzle != 0 && spec.swizzle != 32 && spec.swizzle != 64 && spec.swizzle != 128)
    return invalid(field + ".swizzle",
                   "must be 0, 32, 64 or 128 (got " + std::to_string(spec.swizzle) + ")");
  int64_t row = spec.box.back() * elementSize(tensor.dtype);
  if (row % 16 != 0)
    return invalid(field + ".box", "the innermost box row is " + std::to_string(row) +
                                       " bytes; it must be a multiple of 16");
  if (spec.swizzle != 0 && row > spec.swizzle)
    return invalid(field + ".box", "the innermost box row is " + std::to_string(row) +
                                       " bytes, more than the " + std::to_string(spec.swizzle) +
                                       "-byte swizzle span");
  for (size_t d = 0; d + 1 < rank; ++d) {
    const ShapeDim &stride = (*tensor.strides)[d];
    if (!stride.isSymbolic() && stride.size * elementSize(tensor.dtype) % 16 != 0)
      return invalid(field + ".tensor", "'" + spec.tensor + "' has stride " +
                                            std::to_string(stride.size) + " in dim " +
                                            std::to_string(d) +
                                            "; a tensor map's strides are multiples of 16 bytes");
  }
  return Status();
}

} // namespace

int64_t elementSize(ElementType type) {
  switch (type) {
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::Fp8E4M3:
  case ElementType::Fp8E5M2:
  case ElementType::I8:
  case ElementType::U8:
    return 1;
  case ElementType::I64:
    return 8;
  }
  return 1;
}

Status validateKernelAbi(const KernelAbi &abi) {
  using json_util::isIdentifier;
  if (!isIdentifier(abi.name))
    return invalid("name", "'" + abi.name +
                               "' is not a C identifier (the kernel must be "
                               "an extern \"C\" entry point)");

  std::set<std::string> names;
  for (size_t i = 0; i < abi.params.size(); ++i) {
    const KernelParam &param = abi.params[i];
    std::string field = indexed("params", i);
    if (!isIdentifier(param.name))
      return invalid(field + ".name",
                     "'" + param.name + "' is not a C identifier");
    if (!names.insert(param.name).second)
      return invalid(field + ".name",
                     "duplicate parameter name '" + param.name + "'");
    if (param.shape && param.kind != ParamKind::Pointer)
      return invalid(field + ".shape",
                     "only pointer parameters have a shape (this one is " +
                         std::string(paramKindName(param.kind)) + ")");
    if (param.writes && param.kind != ParamKind::Pointer)
      return invalid(field + ".writes",
                     "only pointer parameters are written through (this one "
                     "is " +
                         std::string(paramKindName(param.kind)) + ")");
    if (param.strides) {
      if (!param.shape)
        return invalid(field + ".strides",
                       "only parameters with a shape have strides");
      if (param.strides->size() != param.shape->size())
        return invalid(field + ".strides",
                       "has " + std::to_string(param.strides->size()) +
                           " entries, but the shape has " +
                           std::to_string(param.shape->size()) + " dims");
      for (size_t d = 0; d < param.strides->size(); ++d) {
        const ShapeDim &stride = (*param.strides)[d];
        std::string stride_field = field + ".strides[" + std::to_string(d) + "]";
        if (!stride.isSymbolic()) {
          if (stride.size < 0)
            return invalid(stride_field, "must be >= 0 (got " +
                                             std::to_string(stride.size) + ")");
          continue;
        }
        int index = abi.paramIndex(stride.symbol);
        if (index < 0 || abi.params[size_t(index)].kind != ParamKind::I64)
          return invalid(stride_field,
                         "'" + stride.symbol +
                             "' must name an i64 parameter (the launcher "
                             "passes the tensor's stride there)");
      }
    }
    if (param.shape) {
      for (size_t d = 0; d < param.shape->size(); ++d) {
        const ShapeDim &dim = (*param.shape)[d];
        std::string dim_field =
            field + ".shape" + "[" + std::to_string(d) + "]";
        if (dim.isSymbolic() && !isIdentifier(dim.symbol))
          return invalid(dim_field,
                         "'" + dim.symbol + "' is not a C identifier");
        if (!dim.isSymbolic() && dim.size < 0)
          return invalid(dim_field,
                         "must be >= 0 (got " + std::to_string(dim.size) + ")");
      }
    }
  }

  for (size_t i = 0; i < abi.launch_scalars.size(); ++i) {
    const std::string &scalar = abi.launch_scalars[i];
    std::string field = indexed("launch_scalars", i);
    if (!isIdentifier(scalar))
      return invalid(field, "'" + scalar + "' is not a C identifier");
    if (!names.insert(scalar).second)
      return invalid(field, "'" + scalar +
                                "' is already a parameter or launch scalar");
  }

  size_t maps = 0;
  for (size_t i = 0; i < abi.params.size(); ++i) {
    if (Status s = checkTensorMap(abi, i); !s)
      return s;
    maps += abi.params[i].kind == ParamKind::TensorMap;
  }
  if (maps > kMaxTensorMaps || (maps > 0 && abi.params.size() > kMaxParamsWithTensorMaps))
    return invalid("params", "a kernel with tensor maps takes at most " +
                                 std::to_string(kMaxTensorMaps) + " of them and " +
                                 std::to_string(kMaxParamsWithTensorMaps) +
                                 " parameters in all (the launch encodes them on its stack)");

  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    uint32_t size = abi.block[d];
    std::string field = indexed("block", size_t(d));
    uint32_t limit = d == 2 ? 64 : 1024; // CUDA's per-axis block limits
    if (size < 1 || size > limit)
      return invalid(field, "must be in [1, " + std::to_string(limit) +
                                "] (got " + std::to_string(size) + ")");
    threads *= size;
  }
  if (threads > 1024)
    return invalid("block", "at most 1024 threads per block (got " +
                                std::to_string(threads) + ")");

  for (int d = 0; d < 3; ++d) {
    const GridDimRule &rule = abi.grid[d];
    std::string field = indexed("grid", size_t(d));
    if (rule.isConstant()) {
      int64_t limit = d == 0 ? kMaxGridX : kMaxGridYZ;
      if (rule.constant < 1 || rule.constant > limit)
        return invalid(field, "constant must be in [1, " +
                                  std::to_string(limit) + "] (got " +
                                  std::to_string(rule.constant) + ")");
      if (rule.hasPlus())
        return invalid(field + ".plus",
                       "a constant grid dimension has no plus (got '" +
                           rule.plus + "')");
      continue;
    }
    if (Status s = checkGridSymbol(abi, rule.value, field + ".value"); !s)
      return s;
    if (rule.hasPlus())
      if (Status s = checkGridSymbol(abi, rule.plus, field + ".plus"); !s)
        return s;
    if (rule.multiplier < 1 || rule.multiplier > kMaxFactor)
      return invalid(field + ".multiplier",
                     "must be in [1, " + std::to_string(kMaxFactor) +
                         "] (got " + std::to_string(rule.multiplier) + ")");
    if (rule.divisor < 1 || rule.divisor > kMaxFactor)
      return invalid(field + ".divisor",
                     "must be in [1, " + std::to_string(kMaxFactor) +
                         "] (got " + std::to_string(rule.divisor) + ")");
  }

  for (const auto &[name, value] : abi.hints) {
    (void)value; // any int64 is a valid fact
    if (!isIdentifier(name))
      return invalid("hints", "'" + name + "' is not a C identifier");
  }
  return Status();
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

ordered_json kernelAbiToJsonValue(const KernelAbi &abi) {
  ordered_json out;
  out["name"] = abi.name;
  ordered_json params = ordered_json::array();
  for (const KernelParam &param : abi.params) {
    ordered_json p;
    p["name"] = param.name;
    p["kind"] = paramKindName(param.kind);
    if (param.kind == ParamKind::Pointer) {
      p["dtype"] = elementTypeName(param.dtype);
      if (param.shape) {
        ordered_json shape = ordered_json::array();
        for (const ShapeDim &dim : *param.shape) {
          if (dim.isSymbolic())
            shape.push_back(dim.symbol);
          else
            shape.push_back(dim.size);
        }
        p["shape"] = shape;
      }
      if (param.strides) {
        ordered_json strides = ordered_json::array();
        for (const ShapeDim &dim : *param.strides) {
          if (dim.isSymbolic())
            strides.push_back(dim.symbol);
          else
            strides.push_back(dim.size);
        }
        p["strides"] = strides;
      }
      if (param.writes)
        p["writes"] = true;
    }
    if (param.tensor_map) {
      p["tensor"] = param.tensor_map->tensor;
      p["box"] = param.tensor_map->box;
      p["swizzle"] = param.tensor_map->swizzle;
    }
    params.push_back(p);
  }
  out["params"] = params;
  if (!abi.launch_scalars.empty())
    out["launch_scalars"] = abi.launch_scalars;
  out["block"] = abi.block;
  ordered_json grid = ordered_json::array();
  for (const GridDimRule &rule : abi.grid) {
    if (rule.isConstant()) {
      grid.push_back(rule.constant);
      continue;
    }
    ordered_json r;
    r["value"] = rule.value;
    r["multiplier"] = rule.multiplier;
    r["divisor"] = rule.divisor;
    if (rule.hasPlus())
      r["plus"] = rule.plus;
    grid.push_back(r);
  }
  out["grid"] = grid;
  out["dynamic_shared_memory_bytes"] = abi.dynamic_shared_memory_bytes;
  if (!abi.hints.empty()) {
    ordered_json hints = ordered_json::object();
    for (const auto &[name, value] : abi.hints)
      hints[name] = value;
    out["hints"] = hints;
  }
  if (abi.programmatic_dependent_launch)
    out["programmatic_dependent_launch"] = true;
  return out;
}

namespace {

/// The member `key` of `object`, which must exist and be a string.
Result<std::string> requiredString(const json &object, const char *key) {
  auto value = json_util::required(object, "", key);
  if (!value)
    return value.status();
  return json_util::readString(**value, key);
}

Result<KernelParam> paramFromJson(const json &value) {
  if (!value.is_object())
    return invalid("", "must be an object (got " + json_util::describe(value) +
                           ")");
  if (Status s = json_util::checkKnownKeys(value, "",
                                           {"name", "kind", "dtype", "shape",
                                            "strides", "writes", "tensor", "box",
                                            "swizzle"});
      !s)
    return s;
  KernelParam param;
  auto name_text = requiredString(value, "name");
  if (!name_text)
    return name_text.status();
  param.name = *name_text;

  auto kind_text = requiredString(value, "kind");
  if (!kind_text)
    return kind_text.status();
  std::optional<ParamKind> kind = named(kAllKinds, paramKindName, *kind_text);
  if (!kind)
    return invalid("kind", "unknown parameter kind '" + *kind_text +
                               "' (expected one of " +
                               nameList(kAllKinds, paramKindName) + ")");
  param.kind = *kind;

  auto dtype = value.find("dtype");
  if (param.kind != ParamKind::Pointer) {
    if (dtype != value.end())
      return invalid("dtype", "only pointer parameters have a dtype (this "
                              "one is " +
                                  *kind_text + ")");
  } else {
    if (dtype == value.end())
      return invalid("dtype", "required field is missing (pointer parameters "
                              "name their element type)");
    auto dtype_text = json_util::readString(*dtype, "dtype");
    if (!dtype_text)
      return dtype_text.status();
    std::optional<ElementType> type =
        named(kAllTypes, elementTypeName, *dtype_text);
    if (!type)
      return invalid("dtype", "unknown element type '" + *dtype_text +
                                  "' (expected one of " +
                                  nameList(kAllTypes, elementTypeName) + ")");
    param.dtype = *type;
  }

  if (auto writes = value.find("writes"); writes != value.end()) {
    if (!writes->is_boolean())
      return invalid("writes", "must be true or false (got " +
                                   json_util::describe(*writes) + ")");
    if (param.kind != ParamKind::Pointer)
      return invalid("writes", "only pointer parameters are written through "
                               "(this one is " +
                                   *kind_text + ")");
    param.writes = writes->get<bool>();
  }

  bool has_map_field = false;
  for (const char *key : {"tensor", "box", "swizzle"})
    has_map_field |= value.find(key) != value.end();
  if (has_map_field && param.kind != ParamKind::TensorMap)
    return invalid("tensor", "only tensor_map parameters have tensor, box and swizzle "
                             "(this one is " +
                                 *kind_text + ")");
  if (param.kind == ParamKind::TensorMap) {
    TensorMapSpec spec;
    auto tensor = requiredString(value, "tensor");
    if (!tensor)
      return tensor.status();
    spec.tensor = *tensor;
    auto box = json_util::required(value, "", "box");
    if (!box)
      return box.status();
    if (!(*box)->is_array())
      return invalid("box", "must be an array of integers (got " +
                                json_util::describe(**box) + ")");
    for (size_t d = 0; d < (*box)->size(); ++d) {
      auto size = json_util::readInteger((**box)[d], indexed("box", d), 1, 256);
      if (!size)
        return size.status();
      spec.box.push_back(*size);
    }
    auto swizzle = json_util::required(value, "", "swizzle");
    if (!swizzle)
      return swizzle.status();
    auto swizzle_value = json_util::readInteger(**swizzle, "swizzle", 0, 128);
    if (!swizzle_value)
      return swizzle_value.status();
    spec.swizzle = *swizzle_value;
    param.tensor_map = std::move(spec);
  }

  for (const char *key : {"shape", "strides"}) {
    auto list = value.find(key);
    if (list == value.end())
      continue;
    if (!list->is_array())
      return invalid(key, "must be an array of integers and names (got " +
                              json_util::describe(*list) + ")");
    std::vector<ShapeDim> dims;
    for (size_t d = 0; d < list->size(); ++d) {
      const json &dim = (*list)[d];
      std::string field = indexed(key, d);
      if (dim.is_string()) {
        dims.push_back(ShapeDim::named(dim.get<std::string>()));
        continue;
      }
      auto size = json_util::readInteger(dim, field, 0,
                                         std::numeric_limits<int64_t>::max());
      if (!size)
        return invalid(field, "must be a non-negative integer or a symbol "
                              "name (got " +
                                  json_util::describe(dim) + ")");
      dims.push_back(ShapeDim::constant(*size));
    }
    (std::string_view(key) == "shape" ? param.shape : param.strides) =
        std::move(dims);
  }
  return param;
}

Result<GridDimRule> gridDimFromJson(const json &value, int axis) {
  int64_t limit = axis == 0 ? kMaxGridX : kMaxGridYZ;
  if (value.is_number()) {
    auto constant = json_util::readInteger(value, "", 1, limit);
    if (!constant)
      return constant.status();
    return GridDimRule::fixed(*constant);
  }
  if (!value.is_object())
    return invalid("", "must be a constant or {\"value\", \"multiplier\", "
                       "\"divisor\", \"plus\"} (got " +
                           json_util::describe(value) + ")");
  if (Status s = json_util::checkKnownKeys(
          value, "", {"value", "multiplier", "divisor", "plus"});
      !s)
    return s;
  GridDimRule rule;
  auto name_text = requiredString(value, "value");
  if (!name_text)
    return name_text.status();
  if (name_text->empty())
    return invalid("value", "must name an i32/i64 parameter or a launch "
                            "scalar (got an empty string)");
  rule.value = *name_text;
  for (const char *key : {"multiplier", "divisor"}) {
    auto it = value.find(key);
    if (it == value.end())
      continue; // both default to 1
    auto factor = json_util::readInteger(*it, key, 1, kMaxFactor);
    if (!factor)
      return factor.status();
    (std::strcmp(key, "multiplier") == 0 ? rule.multiplier : rule.divisor) =
        *factor;
  }
  auto plus = value.find("plus");
  if (plus != value.end()) {
    auto plus_text = json_util::readString(*plus, "plus");
    if (!plus_text)
      return plus_text.status();
    if (plus_text->empty())
      return invalid("plus", "must name an i32/i64 parameter or a launch "
                             "scalar (got an empty string; omit the field "
                             "for no plus)");
    rule.plus = *plus_text;
  }
  return rule;
}

/// The "hints" object: name -> integer.
Result<std::map<std::string, int64_t, std::less<>>>
hintsFromJson(const json &value) {
  if (!value.is_object())
    return invalid("hints", "must be an object of name -> integer (got " +
                                json_util::describe(value) + ")");
  std::map<std::string, int64_t, std::less<>> hints;
  for (const auto &[name, entry] : value.items()) {
    if (!json_util::isIdentifier(name))
      return invalid("hints", "'" + name + "' is not a C identifier");
    auto number = json_util::readInteger(
        entry, "hints." + name, std::numeric_limits<int64_t>::min(),
        std::numeric_limits<int64_t>::max());
    if (!number)
      return number.status();
    hints.emplace(name, *number);
  }
  return hints;
}

} // namespace

Result<KernelAbi> kernelAbiFromJsonValue(const json &value) {
  if (!value.is_object())
    return invalid("", "a kernel must be a JSON object (got " +
                           json_util::describe(value) + ")");
  if (Status s = json_util::checkKnownKeys(
          value, "",
          {"name", "params", "launch_scalars", "block", "grid",
           "dynamic_shared_memory_bytes", "hints",
           "programmatic_dependent_launch"});
      !s)
    return s;
  KernelAbi abi;

  auto name_text = requiredString(value, "name");
  if (!name_text)
    return name_text.status();
  abi.name = *name_text;

  auto params = json_util::required(value, "", "params");
  if (!params)
    return params.status();
  if (!(*params)->is_array())
    return invalid("params", "must be an array (got " +
                                 json_util::describe(**params) + ")");
  for (size_t i = 0; i < (*params)->size(); ++i) {
    auto param = paramFromJson((**params)[i]);
    if (!param)
      return Status(param.status()).inField(indexed("params", i));
    abi.params.push_back(std::move(*param));
  }

  auto scalars = value.find("launch_scalars");
  if (scalars != value.end()) {
    if (!scalars->is_array())
      return invalid("launch_scalars", "must be an array of names (got " +
                                           json_util::describe(*scalars) + ")");
    for (size_t i = 0; i < scalars->size(); ++i) {
      auto scalar =
          json_util::readString((*scalars)[i], indexed("launch_scalars", i));
      if (!scalar)
        return scalar.status();
      abi.launch_scalars.push_back(*scalar);
    }
  }

  auto block = json_util::required(value, "", "block");
  if (!block)
    return block.status();
  if (!(*block)->is_array() || (*block)->size() != 3)
    return invalid("block", "must be an array of 3 integers [x, y, z] (got " +
                                json_util::describe(**block) + ")");
  for (size_t d = 0; d < 3; ++d) {
    auto size = json_util::readInteger((**block)[d], indexed("block", d), 1,
                                       d == 2 ? 64 : 1024);
    if (!size)
      return size.status();
    abi.block[d] = uint32_t(*size);
  }

  auto grid = json_util::required(value, "", "grid");
  if (!grid)
    return grid.status();
  if (!(*grid)->is_array() || (*grid)->size() != 3)
    return invalid("grid", "must be an array of 3 entries [x, y, z] (got " +
                               json_util::describe(**grid) + ")");
  for (size_t d = 0; d < 3; ++d) {
    auto rule = gridDimFromJson((**grid)[d], int(d));
    if (!rule)
      return Status(rule.status()).inField(indexed("grid", d));
    abi.grid[d] = std::move(*rule);
  }

  auto shared = json_util::required(value, "", "dynamic_shared_memory_bytes");
  if (!shared)
    return shared.status();
  auto shared_bytes =
      json_util::readInteger(**shared, "dynamic_shared_memory_bytes", 0,
                             std::numeric_limits<uint32_t>::max());
  if (!shared_bytes)
    return shared_bytes.status();
  abi.dynamic_shared_memory_bytes = uint32_t(*shared_bytes);

  auto hints = value.find("hints");
  if (hints != value.end()) {
    auto read = hintsFromJson(*hints);
    if (!read)
      return read.status();
    abi.hints = std::move(*read);
  }

  if (auto pdl = value.find("programmatic_dependent_launch"); pdl != value.end()) {
    if (!pdl->is_boolean())
      return invalid("programmatic_dependent_launch",
                     "must be true or false (got " + json_util::describe(*pdl) + ")");
    abi.programmatic_dependent_launch = pdl->get<bool>();
  }

  if (Status s = validateKernelAbi(abi); !s)
    return s;
  return abi;
}

Result<std::vector<KernelAbi>> kernelAbiArrayFromJsonValue(const json &value) {
  if (!value.is_array() || value.empty())
    return invalid("", "must be a non-empty array of kernel objects (got " +
                           json_util::describe(value) + ")");
  std::vector<KernelAbi> kernels;
  std::set<std::string> names;
  for (size_t i = 0; i < value.size(); ++i) {
    auto abi = kernelAbiFromJsonValue(value[i]);
    if (!abi)
      return Status(abi.status()).inField("[" + std::to_string(i) + "]");
    if (!names.insert(abi->name).second)
      return invalid("[" + std::to_string(i) + "].name",
                     "duplicate kernel name '" + abi->name + "'");
    kernels.push_back(std::move(*abi));
  }
  return kernels;
}

std::string kernelAbiToJson(const KernelAbi &abi, int indent) {
  return kernelAbiToJsonValue(abi).dump(indent);
}

Result<KernelAbi> kernelAbiFromJson(std::string_view text) {
  auto document =
      json_util::parseObject(text, "<kernel ABI JSON>", kMaxJsonDepth);
  if (!document)
    return document.status();
  return kernelAbiFromJsonValue(*document);
}

std::string kernelAbiListToJson(const std::vector<KernelAbi> &kernels,
                                int indent) {
  ordered_json out;
  out["kernels"] = ordered_json::array();
  for (const KernelAbi &abi : kernels)
    out["kernels"].push_back(kernelAbiToJsonValue(abi));
  return out.dump(indent);
}

Result<std::vector<KernelAbi>> kernelAbiListFromJson(std::string_view text) {
  auto document =
      json_util::parseObject(text, "<kernel ABI JSON>", kMaxJsonDepth);
  if (!document)
    return document.status();
  if (Status s = json_util::checkKnownKeys(*document, "", {"kernels"}); !s)
    return s;
  auto kernels = json_util::required(*document, "", "kernels");
  if (!kernels)
    return kernels.status();
  auto list = kernelAbiArrayFromJsonValue(**kernels);
  if (!list)
    return Status(list.status()).inField("kernels");
  return list;
}

//===----------------------------------------------------------------------===//
// Launch geometry
//===----------------------------------------------------------------------===//

namespace {

/// The launch's value of a grid symbol (an i32/i64 parameter or a launch
/// scalar); the counts and nulls are checked by the caller.
Result<int64_t> gridSymbolValue(const KernelAbi &abi, const std::string &symbol,
                                void *const *args,
                                const int64_t *launch_scalars,
                                const std::string &field) {
  int param = abi.paramIndex(symbol);
  if (param >= 0) {
    // The argument points to the parameter's value, typed per the ABI;
    // memcpy because the caller's storage need not be aligned for it.
    if (abi.params[size_t(param)].kind == ParamKind::I32) {
      int32_t v;
      std::memcpy(&v, args[param], sizeof(v));
      return int64_t(v);
    }
    int64_t v;
    std::memcpy(&v, args[param], sizeof(v));
    return v;
  }
  int scalar = abi.launchScalarIndex(symbol);
  if (scalar < 0) // validateKernelAbi rules this out
    return invalid(field, "'" + symbol + "' is not a parameter or scalar");
  return launch_scalars[scalar];
}

} // namespace

Result<LaunchGeometry> computeLaunchGeometry(const KernelAbi &abi,
                                             void *const *args, size_t num_args,
                                             const int64_t *launch_scalars,
                                             size_t num_launch_scalars) {
  if (num_args != abi.params.size()) {
    std::string names;
    for (const KernelParam &param : abi.params)
      names += (names.empty() ? "" : ", ") + param.name;
    return invalid("args", "kernel '" + abi.name + "' takes " +
                               std::to_string(abi.params.size()) +
                               " parameters (" + names + ") but " +
                               std::to_string(num_args) +
                               " arguments were given");
  }
  if (num_args > 0 && args == nullptr)
    return invalid("args", "null argument array for kernel '" + abi.name + "'");
  for (size_t i = 0; i < num_args; ++i)
    if (args[i] == nullptr && abi.params[i].kind != ParamKind::TensorMap)
      return invalid(indexed("args", i),
                     "null; each argument points to the value of parameter '" +
                         abi.params[i].name + "' (" +
                         paramKindName(abi.params[i].kind) + ")");
  if (num_launch_scalars != abi.launch_scalars.size())
    return invalid("launch_scalars",
                   "kernel '" + abi.name + "' takes " +
                       std::to_string(abi.launch_scalars.size()) +
                       " launch scalars but " +
                       std::to_string(num_launch_scalars) + " were given");
  if (num_launch_scalars > 0 && launch_scalars == nullptr)
    return invalid("launch_scalars", "null array");

  LaunchGeometry geometry;
  geometry.block = abi.block;
  geometry.dynamic_shared_memory_bytes = abi.dynamic_shared_memory_bytes;
  for (int d = 0; d < 3; ++d) {
    const GridDimRule &rule = abi.grid[d];
    std::string field = indexed("grid", size_t(d));
    if (rule.isConstant()) {
      geometry.grid[d] = uint32_t(rule.constant);
      continue;
    }
    // The rule's symbol `role` ("value" or "plus"), which must not be
    // negative.
    auto operand = [&](const std::string &symbol,
                       const char *role) -> Result<int64_t> {
      auto result = gridSymbolValue(abi, symbol, args, launch_scalars,
                                    field + "." + role);
      if (!result)
        return result.status();
      if (*result < 0)
        return invalid(field, std::string(role) + " '" + symbol +
                                  "' is negative (" + std::to_string(*result) +
                                  ")");
      return *result;
    };
    auto value = operand(rule.value, "value");
    if (!value)
      return value.status();
    int64_t plus = 0;
    if (rule.hasPlus()) {
      auto plus_value = operand(rule.plus, "plus");
      if (!plus_value)
        return plus_value.status();
      plus = *plus_value;
    }
    // value < 2^63 and multiplier < 2^31: the product fits in 128 bits, and
    // so does the quotient plus a value < 2^63.
    unsigned __int128 product =
        (unsigned __int128)uint64_t(*value) * uint64_t(rule.multiplier);
    unsigned __int128 blocks =
        (product + uint64_t(rule.divisor) - 1) / uint64_t(rule.divisor) +
        uint64_t(plus);
    int64_t limit = d == 0 ? kMaxGridX : kMaxGridYZ;
    if (blocks > (unsigned __int128)limit)
      return invalid(field, "ceil_div(" + rule.value + " (" +
                                std::to_string(*value) + ") * " +
                                std::to_string(rule.multiplier) + ", " +
                                std::to_string(rule.divisor) + ")" +
                                (rule.hasPlus() ? " + " + rule.plus + " (" +
                                                      std::to_string(plus) + ")"
                                                : std::string()) +
                                " exceeds the CUDA grid limit " +
                                std::to_string(limit) + " along " + kAxis[d]);
    geometry.grid[d] = uint32_t(blocks);
  }
  return geometry;
}

} // namespace attnc::runtime
