//===- ConfigReader.cpp - JSON to config fields, with paths ---------------===//

#include "ConfigReader.h"

#include "attnc/Plan/KernelLimits.h"
#include "attnc/Support/FloatConstant.h"

#include <algorithm>

namespace attnc::config_import {

namespace {

/// JSON nesting deeper than this is refused before the DOM is built.
constexpr std::size_t kMaxDepth = 256;

} // namespace

Result<json> parseConfigJson(std::string_view text) {
  return json_util::parseObject(text, "<json>", kMaxDepth);
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

std::optional<int64_t> Reader::asInt(const json &value, const std::string &path,
                                     int64_t min, int64_t max) {
  Result<int64_t> result = json_util::readInteger(value, path, min, max);
  if (!result) {
    fail(result.status());
    return std::nullopt;
  }
  return *result;
}

std::optional<double> Reader::asNumber(const json &value,
                                       const std::string &path) {
  Result<double> result = json_util::readNumber(value, path);
  if (!result) {
    fail(result.status());
    return std::nullopt;
  }
  // Every number a config gives (eps, scales, softcap, rope parameters)
  // ends up as a float constant or a float computed from one.
  if (!isKernelFloat(*result)) {
    fail(path, std::string(kKernelFloatRule) + ", got " +
                   formatNumber(*result));
    return std::nullopt;
  }
  return *result;
}

std::optional<int64_t> Reader::optInt(const Node &node, const std::string &key,
                                      int64_t min, int64_t max) {
  const json *value = node.get(key);
  return value ? asInt(*value, node.at(key), min, max) : std::nullopt;
}

int64_t Reader::reqInt(const Node &node, const std::string &key, int64_t min,
                       int64_t max, const std::string &why) {
  const json *value = node.get(key);
  if (!value) {
    fail(node.at(key), "required field is missing" + why);
    return 0;
  }
  return asInt(*value, node.at(key), min, max).value_or(0);
}

std::optional<double> Reader::optNumber(const Node &node,
                                        const std::string &key) {
  const json *value = node.get(key);
  return value ? asNumber(*value, node.at(key)) : std::nullopt;
}

double Reader::positive(const Node &node, const std::string &key,
                        double fallback) {
  std::optional<double> value = optNumber(node, key);
  if (!value)
    return fallback;
  if (!(*value > 0)) {
    fail(node.at(key), "must be > 0 (got " + formatNumber(*value) + ")");
    return fallback;
  }
  return *value;
}

double Reader::nonNegative(const Node &node, const std::string &key,
                           double fallback) {
  std::optional<double> value = optNumber(node, key);
  if (!value)
    return fallback;
  if (*value < 0) {
    fail(node.at(key), "must be >= 0 (got " + formatNumber(*value) + ")");
    return fallback;
  }
  return *value;
}

std::optional<bool> Reader::optBool(const Node &node, const std::string &key) {
  const json *value = node.get(key);
  if (!value)
    return std::nullopt;
  Result<bool> result = json_util::readBool(*value, node.at(key));
  if (!result) {
    fail(result.status());
    return std::nullopt;
  }
  return *result;
}

std::optional<std::string> Reader::optString(const Node &node,
                                             const std::string &key) {
  const json *value = node.get(key);
  if (!value)
    return std::nullopt;
  Result<std::string> result = json_util::readString(*value, node.at(key));
  if (!result) {
    fail(result.status());
    return std::nullopt;
  }
  return *result;
}

Node Reader::optObject(const Node &node, const std::string &key) {
  Node child{nullptr, node.at(key)};
  const json *value = node.get(key);
  if (!value)
    return child;
  if (!value->is_object()) {
    fail(node.at(key), "must be an object (got " + describe(*value) + ")");
    return child;
  }
  child.value = value;
  return child;
}

const json *Reader::optArray(const Node &node, const std::string &key) {
  const json *value = node.get(key);
  if (!value)
    return nullptr;
  if (!value->is_array()) {
    fail(node.at(key), "must be an array (got " + describe(*value) + ")");
    return nullptr;
  }
  return value;
}

std::optional<std::vector<double>>
Reader::optPositiveList(const Node &node, const std::string &key) {
  const json *list = optArray(node, key);
  if (!list)
    return std::nullopt;
  std::vector<double> values;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string path = indexPath(node.at(key), i);
    std::optional<double> value = asNumber((*list)[i], path);
    if (!value)
      return std::nullopt;
    if (!(*value > 0)) {
      fail(path, "must be > 0 (got " + formatNumber(*value) + ")");
      return std::nullopt;
    }
    values.push_back(*value);
  }
  return values;
}

void Reader::onlyKeys(const Node &node,
                      std::initializer_list<const char *> allowed) {
  if (!node.value)
    return;
  if (Status known = json_util::checkKnownKeys(*node.value, node.path, allowed,
                                               /*underscore_comments=*/true);
      !known)
    fail(known);
}

//===----------------------------------------------------------------------===//
// Names and head shapes
//===----------------------------------------------------------------------===//

std::optional<NormStyle> parseNormStyle(const std::string &name) {
  for (NormStyle style : {NormStyle::None, NormStyle::Plain, NormStyle::Gemma,
                          NormStyle::Unweighted, NormStyle::LayerNorm})
    if (name == normStyleName(style))
      return style;
  return std::nullopt;
}

std::optional<RopeStyle> parseRopeStyle(const std::string &name) {
  for (RopeStyle style : {RopeStyle::None, RopeStyle::Neox, RopeStyle::Gptj})
    if (name == ropeStyleName(style))
      return style;
  return std::nullopt;
}

std::optional<RopeScalingKind> parseScalingKind(const std::string &name) {
  for (RopeScalingKind kind :
       {RopeScalingKind::None, RopeScalingKind::Linear, RopeScalingKind::Llama3,
        RopeScalingKind::Yarn, RopeScalingKind::DynamicNtk,
        RopeScalingKind::LongRope})
    if (name == ropeScalingKindName(kind))
      return kind;
  return std::nullopt;
}

std::optional<NormScope> parseNormScope(const std::string &name) {
  for (NormScope scope :
       {NormScope::Head, NormScope::HeadWeights, NormScope::Projection})
    if (name == normScopeName(scope))
      return scope;
  return std::nullopt;
}

bool checkHeadShape(Reader &reader, const HeadShape &shape,
                    const HeadFieldNames &names) {
  Result<HeadShape> valid = validateHeadShape(shape);
  Status error = valid.status();
  // A shape the layout takes must also be one the kernels take, checked
  // here so that the error names the config field, before any work.
  if (error.ok())
    error = plan::checkHeadDim("qk_head_dim", shape.qk_head_dim);
  if (error.ok())
    error = plan::checkHeadDim("v_head_dim", shape.v_head_dim);
  if (error.ok())
    return true;
  std::string field = error.field;
  if (field == "num_q_heads")
    field = names.num_q_heads;
  else if (field == "num_kv_heads")
    field = names.num_kv_heads;
  else if (field == "qk_head_dim")
    field = names.qk_head_dim;
  else if (field == "v_head_dim")
    field = names.v_head_dim;
  else if (field == "gate")
    field = names.gate;
  reader.fail(field, error.rule);
  return false;
}

} // namespace attnc::config_import
