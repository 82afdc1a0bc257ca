//===- Json.cpp - Strict JSON reading helpers -----------------------------===//

#include "Json.h"

#include <algorithm>
#include <optional>

namespace attnc::runtime::json_util {

namespace {

/// Finds the first syntax error with its position (json::parse without
/// exceptions only says "discarded") and bounds the nesting depth.
class SyntaxCheck : public nlohmann::json_sax<json> {
public:
  std::optional<std::string> problem;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool key(string_t &) override { return true; }
  bool start_object(std::size_t) override { return enter(); }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override { return leave(); }

  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    // Strip nlohmann's "[json.exception.parse_error.101] " tag.
    std::string message = ex.what();
    if (!message.empty() && message[0] == '[') {
      std::size_t close = message.find("] ");
      if (close != std::string::npos)
        message = message.substr(close + 2);
    }
    if (message.find("line ") == std::string::npos)
      message = "at byte " + std::to_string(position) + ": " + message;
    problem = "not valid JSON: " + message;
    return false;
  }

private:
  static constexpr std::size_t kMaxDepth = 64;
  bool enter() {
    if (++depth_ > kMaxDepth) {
      problem =
          "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    return true;
  }
  bool leave() {
    --depth_;
    return true;
  }
  std::size_t depth_ = 0;
};

} // namespace

Result<json> parseObject(std::string_view text, const std::string &what) {
  bool blank = std::all_of(text.begin(), text.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  });
  if (blank)
    return Status(StatusCode::InvalidArgument, what,
                  "empty input (expected a JSON object)");
  SyntaxCheck check;
  if (!json::sax_parse(text.data(), text.data() + text.size(), &check) ||
      check.problem)
    return Status(StatusCode::InvalidArgument, what,
                  check.problem.value_or("not valid JSON"));
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
