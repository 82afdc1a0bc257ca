//===- ConfigReader.h - JSON to config fields, with paths -------*- C++ -*-===//
//
// The reading layer shared by the Hugging Face importer and the attnc spec
// importer (private to the model library): a JSON object together with its
// dotted path, and a reader that does typed, range-checked access and keeps
// the first broken rule, so every error names the field exactly
// ("text_config.rope_parameters.rope_theta: must be > 0 (got 0)").
//
// The wording comes from attnc/Support/Json.h, which the runtime uses too.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MODEL_LIB_CONFIGREADER_H
#define ATTNC_MODEL_LIB_CONFIGREADER_H

#include "attnc/Model/ModelConfig.h"
#include "attnc/Support/Json.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace attnc::config_import {

using json = nlohmann::json;
using json_util::describe;
using json_util::formatNumber;
using json_util::indexPath;
using json_util::inQuotes;
using json_util::printable;

/// Upper bound for head counts and head dims. Real models are far below it;
/// the bound keeps products such as Hq * Dqk comfortably inside int64 for the
/// layout code downstream, so a hostile config cannot cause overflow there.
constexpr int64_t kMaxCount = int64_t(1) << 20;
/// Upper bound for num_hidden_layers: we allocate per-layer vectors.
constexpr int64_t kMaxLayers = int64_t(1) << 16;
/// Upper bound for positions and window sizes (far beyond any real context).
constexpr int64_t kMaxPositions = int64_t(1) << 40;

/// Parses config text: a JSON object nesting at most 256 levels (so no
/// recursive code can run out of stack). Errors are on the field "<json>".
Result<json> parseConfigJson(std::string_view text);

/// A JSON object together with its dotted path. `value` is null for an
/// absent object, which reads as having no members.
struct Node {
  const json *value = nullptr;
  std::string path;

  /// The member `key`, or nullptr when it is absent or JSON null: Hugging
  /// Face writes null for optional fields that are unset ("sliding_window":
  /// null), so null and absent must mean the same thing.
  const json *get(const std::string &key) const {
    if (!value || !value->is_object())
      return nullptr;
    auto it = value->find(key);
    if (it == value->end() || it->is_null())
      return nullptr;
    return &*it;
  }
  bool has(const std::string &key) const { return get(key) != nullptr; }
  /// The path of the member `key`.
  std::string at(const std::string &key) const {
    return json_util::memberPath(path, key);
  }
};

/// Typed, range-checked access that records the first broken rule. Accessors
/// return std::nullopt for an absent or invalid value; callers check failed()
/// before computing with what they read.
class Reader {
public:
  bool failed() const { return error_.has_value(); }
  const Status &error() const { return *error_; }

  /// Keeps the first error only: later ones are usually its consequences.
  void fail(std::string field, std::string rule) {
    if (!error_)
      error_ = Status(std::move(field), std::move(rule));
  }
  void fail(const Status &status) {
    if (!error_)
      error_ = status;
  }

  std::optional<int64_t> asInt(const json &value, const std::string &path,
                               int64_t min, int64_t max);
  std::optional<double> asNumber(const json &value, const std::string &path);

  std::optional<int64_t> optInt(const Node &node, const std::string &key,
                                int64_t min, int64_t max = kMaxCount);
  /// `why` explains, where it is not obvious, why the field is required.
  int64_t reqInt(const Node &node, const std::string &key, int64_t min,
                 int64_t max = kMaxCount, const std::string &why = "");
  std::optional<double> optNumber(const Node &node, const std::string &key);
  /// A number > 0, or `fallback` when absent.
  double positive(const Node &node, const std::string &key, double fallback);
  /// A number >= 0, or `fallback` when absent.
  double nonNegative(const Node &node, const std::string &key, double fallback);
  std::optional<bool> optBool(const Node &node, const std::string &key);
  std::optional<std::string> optString(const Node &node,
                                       const std::string &key);
  /// The member object `key`; a Node with value == nullptr when absent.
  Node optObject(const Node &node, const std::string &key);
  const json *optArray(const Node &node, const std::string &key);
  /// The array `key` of numbers > 0 (longrope's factors); std::nullopt when
  /// absent or invalid (failed() tells which).
  std::optional<std::vector<double>> optPositiveList(const Node &node,
                                                     const std::string &key);

  /// Refuses keys outside `allowed` (spec form only: a misspelt optional key
  /// would otherwise silently take its default). Keys starting with '_' are
  /// comments.
  void onlyKeys(const Node &node, std::initializer_list<const char *> allowed);

private:
  std::optional<Status> error_;
};

std::optional<NormStyle> parseNormStyle(const std::string &name);
std::optional<RopeStyle> parseRopeStyle(const std::string &name);
std::optional<RopeScalingKind> parseScalingKind(const std::string &name);
std::optional<NormScope> parseNormScope(const std::string &name);

/// The field names the input used for each part of a HeadShape, so that a
/// validateHeadShape error is reported under them (e.g. "num_kv_heads" ->
/// "text_config.num_key_value_heads").
struct HeadFieldNames {
  std::string num_q_heads, num_kv_heads, qk_head_dim, v_head_dim, gate;
};

/// validateHeadShape, failing `reader` under the input's field names.
bool checkHeadShape(Reader &reader, const HeadShape &shape,
                    const HeadFieldNames &names);

} // namespace attnc::config_import

#endif // ATTNC_MODEL_LIB_CONFIGREADER_H
