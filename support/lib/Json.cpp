//===- Json.cpp - Reading JSON without exceptions -------------------------===//

#include "attnc/Support/Json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <vector>

namespace attnc::json_util {

namespace {

/// The SAX consumer of the syntax pass: builds nothing, stops at the first
/// syntax error (keeping its position) or at nesting deeper than the limit.
class SyntaxCheck : public nlohmann::json_sax<json> {
public:
  explicit SyntaxCheck(std::size_t max_depth) : max_depth_(max_depth) {}

  /// The rule the document broke, once the pass has stopped on it.
  std::optional<std::string> problem;

  /// The field of the problem, when it is a field's (a duplicate key).
  std::optional<std::string> field;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t &) override {
    return value();
  }
  bool string(string_t &) override { return value(); }
  bool binary(binary_t &) override { return value(); }
  /// A key given twice in one object is refused: the DOM would keep one of
  /// them silently, and which one a reader sees is an accident.
  bool key(string_t &name) override {
    Frame &frame = frames_.back();
    if (!frame.keys.insert(name).second) {
      field = pathTo(name);
      problem = "duplicate key: given more than once in one object";
      return false;
    }
    frame.key = name;
    return true;
  }
  bool start_object(std::size_t) override { return enter(true); }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(false); }
  bool end_array() override { return leave(); }

  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    // Strip nlohmann's "[json.exception.parse_error.101] " tag; its message
    // already says "parse error at line L, column C: ..." for syntax errors.
    std::string message = ex.what();
    if (!message.empty() && message[0] == '[') {
      std::size_t close = message.find("] ");
      if (close != std::string::npos)
        message = message.substr(close + 2);
    }
    if (message.find("line ") == std::string::npos)
      message = "at byte " + std::to_string(position) + ": " + message;
    // The message quotes the input, which may be invalid UTF-8.
    problem = printable("not valid JSON: " + message, /*ascii_only=*/true);
    return false;
  }

private:
  /// An open object (its keys so far and the current one) or array (the
  /// index of its next element).
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;
    std::size_t index = 0;
  };

  bool enter(bool object) {
    if (++depth_ > max_depth_) {
      problem = "not supported: JSON nested deeper than " +
                std::to_string(max_depth_) + " levels";
      return false;
    }
    value(); // the object or array is its parent's element
    frames_.push_back(Frame{object, {}, {}, 0});
    return true;
  }
  bool leave() {
    --depth_;
    frames_.pop_back();
    return true;
  }
  /// A scalar (or a container, from enter) took a place in its parent.
  bool value() {
    if (!frames_.empty() && !frames_.back().object)
      ++frames_.back().index;
    return true;
  }
  /// The path of key `name` of the innermost object: "a.b[2].name".
  std::string pathTo(const std::string &name) const {
    std::string path;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame &frame = frames_[i];
      if (frame.object)
        path = memberPath(path, frame.key);
      else
        path += "[" + std::to_string(frame.index - 1) + "]";
    }
    return memberPath(path, name);
  }
  std::size_t max_depth_;
  std::size_t depth_ = 0;
  std::vector<Frame> frames_;
};

Status invalid(const std::string &field, std::string rule) {
  return Status(StatusCode::InvalidArgument, field, std::move(rule));
}

} // namespace

Result<json> parseObject(std::string_view text, const std::string &document,
                         std::size_t max_depth) {
  bool blank = std::all_of(text.begin(), text.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  });
  if (blank)
    return invalid(document, "empty input (expected a JSON object)");
  const char *begin = text.data();
  const char *end = text.data() + text.size();
  SyntaxCheck check(max_depth);
  bool parsed = json::sax_parse(begin, end, &check);
  if (check.problem)
    return invalid(check.field ? *check.field : document, *check.problem);
  if (!parsed)
    return invalid(document, "not valid JSON");

  json value = json::parse(begin, end, /*cb=*/nullptr,
                           /*allow_exceptions=*/false);
  if (value.is_discarded()) // cannot happen after the SAX pass; be safe
    return invalid(document, "not valid JSON");
  if (!value.is_object())
    return invalid(document, "top level must be a JSON object (got " +
                                 describe(value) + ")");
  return value;
}

std::string describe(const json &value) {
  switch (value.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return value.get<bool>() ? "true" : "false";
  case json::value_t::string:
    return "string " + inQuotes(value.get<std::string>());
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
  case json::value_t::number_float:
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "an unsupported value";
  }
}

std::string printable(const std::string &text, bool ascii_only) {
  std::string out;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f || (ascii_only && c >= 0x80)) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string inQuotes(const std::string &text) {
  constexpr std::size_t kMaxShown = 40;
  if (text.size() <= kMaxShown)
    return "\"" + printable(text) + "\"";
  std::size_t cut = kMaxShown;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return "\"" + printable(text.substr(0, cut)) + "...\"";
}

std::string formatNumber(double value) {
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  return buffer;
}

std::string memberPath(const std::string &base, const std::string &key) {
  return base.empty() ? key : base + "." + key;
}

std::string indexPath(const std::string &base, std::size_t index) {
  return base + "[" + std::to_string(index) + "]";
}

Result<int64_t> readInteger(const json &value, const std::string &field,
                            int64_t min, int64_t max) {
  // Booleans are not numbers in nlohmann::json, and a float such as 32.5 or
  // 32.0 is refused: a count written as a float is a broken input.
  if (!value.is_number_integer())
    return invalid(field, "must be an integer (got " + describe(value) + ")");
  int64_t result;
  if (value.is_number_unsigned()) {
    uint64_t unsigned_value = value.get<uint64_t>();
    if (unsigned_value > static_cast<uint64_t>(max))
      return invalid(field, "must be <= " + std::to_string(max) + " (got " +
                                std::to_string(unsigned_value) + ")");
    result = static_cast<int64_t>(unsigned_value);
  } else {
    result = value.get<int64_t>();
  }
  if (result < min)
    return invalid(field, "must be >= " + std::to_string(min) + " (got " +
                              std::to_string(result) + ")");
  if (result > max)
    return invalid(field, "must be <= " + std::to_string(max) + " (got " +
                              std::to_string(result) + ")");
  return result;
}

Result<double> readNumber(const json &value, const std::string &field) {
  if (!value.is_number())
    return invalid(field, "must be a number (got " + describe(value) + ")");
  double result = value.get<double>();
  if (!std::isfinite(result))
    return invalid(field, "must be finite (got " + describe(value) + ")");
  return result;
}

Result<bool> readBool(const json &value, const std::string &field) {
  if (!value.is_boolean())
    return invalid(field,
                   "must be true or false (got " + describe(value) + ")");
  return value.get<bool>();
}

Result<std::string> readString(const json &value, const std::string &field) {
  if (!value.is_string())
    return invalid(field, "must be a string (got " + describe(value) + ")");
  return value.get<std::string>();
}

Result<const json *> required(const json &object, const std::string &path,
                              const char *key) {
  auto it = object.find(key);
  if (it == object.end())
    return invalid(memberPath(path, key), "required field is missing");
  return &*it;
}

Status checkKnownKeys(const json &object, const std::string &path,
                      std::initializer_list<const char *> allowed,
                      bool underscore_comments) {
  if (!object.is_object())
    return Status();
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string &key = it.key();
    if (underscore_comments && !key.empty() && key[0] == '_')
      continue;
    bool known = std::any_of(allowed.begin(), allowed.end(),
                             [&](const char *name) { return key == name; });
    if (known)
      continue;
    std::string expected;
    for (const char *name : allowed)
      expected += (expected.empty() ? "" : ", ") + std::string(name);
    return invalid(memberPath(path, printable(key)),
                   "unknown key (expected one of: " + expected + ")");
  }
  return Status();
}

bool isIdentifier(std::string_view name) {
  auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (name.empty() || !alpha(name[0]))
    return false;
  return std::all_of(name.begin() + 1, name.end(), [&](char c) {
    return alpha(c) || (c >= '0' && c <= '9');
  });
}

} // namespace attnc::json_util
