//===- Json.cpp - Strict JSON reading helpers -----------------------------===//

#include "Json.h"

#include "attnc/Model/JsonSyntax.h"

#include <algorithm>
#include <optional>

namespace attnc::runtime::json_util {

namespace {

/// JSON nesting deeper than this is refused before the DOM is built.
constexpr std::size_t kMaxDepth = 64;

} // namespace

Result<json> parseObject(std::string_view text, const std::string &what) {
  if (std::optional<JsonSyntaxProblem> problem =
          checkJsonDocument(text, kMaxDepth))
    return Status(StatusCode::InvalidArgument, what, problem->message);
  json document = json::parse(text.data(), text.data() + text.size(), nullptr,
                              /*allow_exceptions=*/false);
  if (document.is_discarded())
    return Status(StatusCode::InvalidArgument, what, "not valid JSON");
  if (!document.is_object())
    return Status(StatusCode::InvalidArgument, what,
                  "top level must be a JSON object (got " + describe(document) +
                      ")");
  return document;
}

std::string describe(const json &value) {
  switch (value.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  case json::value_t::number_float:
    return "a floating-point number";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array of " + std::to_string(value.size()) + " entries";
  case json::value_t::object:
    return "an object";
  default:
    return "an unsupported value";
  }
}

Status checkKnownFields(const json &object,
                        std::initializer_list<const char *> allowed) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known =
        std::any_of(allowed.begin(), allowed.end(),
                    [&](const char *name) { return it.key() == name; });
    if (known)
      continue;
    std::string expected;
    for (const char *name : allowed)
      expected += (expected.empty() ? "" : ", ") + std::string(name);
    return Status(StatusCode::InvalidArgument, it.key(),
                  "unknown field (expected one of " + expected + ")");
  }
  return Status();
}

Result<const json *> required(const json &object, const char *key) {
  auto it = object.find(key);
  if (it == object.end())
    return Status(StatusCode::InvalidArgument, key, "missing required field");
  return &*it;
}

Result<int64_t> readInteger(const json &value, const std::string &field,
                            int64_t min, int64_t max) {
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (v > uint64_t(max))
      return Status(StatusCode::InvalidArgument, field,
                    "must be at most " + std::to_string(max) + " (got " +
                        std::to_string(v) + ")");
    if (int64_t(v) < min)
      return Status(StatusCode::InvalidArgument, field,
                    "must be at least " + std::to_string(min) + " (got " +
                        std::to_string(v) + ")");
    return int64_t(v);
  }
  if (!value.is_number_integer())
    return Status(StatusCode::InvalidArgument, field,
                  "must be an integer (got " + describe(value) + ")");
  int64_t v = value.get<int64_t>();
  if (v < min)
    return Status(StatusCode::InvalidArgument, field,
                  "must be at least " + std::to_string(min) + " (got " +
                      std::to_string(v) + ")");
  if (v > max)
    return Status(StatusCode::InvalidArgument, field,
                  "must be at most " + std::to_string(max) + " (got " +
                      std::to_string(v) + ")");
  return v;
}

Result<std::string> readString(const json &value, const std::string &field) {
  if (!value.is_string())
    return Status(StatusCode::InvalidArgument, field,
                  "must be a string (got " + describe(value) + ")");
  return value.get<std::string>();
}

bool isIdentifier(std::string_view name) {
  if (name.empty())
    return false;
  auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!alpha(name[0]))
    return false;
  return std::all_of(name.begin() + 1, name.end(), [&](char c) {
    return alpha(c) || (c >= '0' && c <= '9');
  });
}

} // namespace attnc::runtime::json_util
