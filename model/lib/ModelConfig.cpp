//===- ModelConfig.cpp - Import a model's attention description -----------===//
//
// Reads a Hugging Face config.json or an attnc spec file into a ModelConfig.
//
// A Hugging Face config does not say everything attnc needs: whether q and k
// are RMS-normalised per head, the rotary style, attention sinks and the
// output gate are properties of the model's Python code, not of its config.
// Those come from a table of known families (keyed by model_type); for any
// other model type the config must spell them out, because guessing would
// silently compile the wrong attention. The spec form spells out every field
// of ModelConfig and needs no family knowledge; toSpecJson writes it.
//
// Nothing here throws: JSON is syntax-checked with a SAX pass (which reports
// the position of the first error without exceptions) and then parsed with
// exceptions disabled; every access checks the type first. The first broken
// rule is reported; later ones would usually be consequences of it.
//
//===----------------------------------------------------------------------===//

#include "attnc/Model/ModelConfig.h"
#include "attnc/Model/JsonSyntax.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <set>

namespace attnc {

const char *normStyleName(NormStyle style) {
  switch (style) {
  case NormStyle::None:
    return "none";
  case NormStyle::Plain:
    return "rms";
  case NormStyle::Gemma:
    return "gemma";
  }
  return "unknown";
}

const char *ropeStyleName(RopeStyle style) {
  switch (style) {
  case RopeStyle::None:
    return "none";
  case RopeStyle::Neox:
    return "neox";
  case RopeStyle::Gptj:
    return "gptj";
  }
  return "unknown";
}

const char *ropeScalingKindName(RopeScalingKind kind) {
  switch (kind) {
  case RopeScalingKind::None:
    return "none";
  case RopeScalingKind::Linear:
    return "linear";
  case RopeScalingKind::Llama3:
    return "llama3";
  case RopeScalingKind::Yarn:
    return "yarn";
  case RopeScalingKind::DynamicNtk:
    return "dynamic";
  }
  return "unknown";
}

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

/// Upper bound for head counts and head dims. Real models are far below it;
/// the bound keeps products such as Hq * Dqk comfortably inside int64 for the
/// layout code downstream, so a hostile config cannot cause overflow there.
constexpr int64_t kMaxCount = int64_t(1) << 20;
/// Upper bound for num_hidden_layers: we allocate per-layer vectors.
constexpr int64_t kMaxLayers = int64_t(1) << 16;
/// Upper bound for positions and window sizes (far beyond any real context).
constexpr int64_t kMaxPositions = int64_t(1) << 40;
/// JSON nesting deeper than this is refused before the DOM is built, so no
/// recursive code (parser, destructor) can run out of stack.
constexpr std::size_t kMaxDepth = 256;
/// Config files are kilobytes; refuse anything absurd instead of reading it.
constexpr std::size_t kMaxFileBytes = std::size_t(64) << 20;

constexpr int kSpecVersion = 1;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

/// Shortest decimal form that reads back as the same double, so messages show
/// "0.334", not "0.33400000000000002".
std::string formatNumber(double value) {
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  return buffer;
}

/// `text` safe to print on one line: control bytes (and, with `ascii_only`,
/// every non-ASCII byte, for text that may not be valid UTF-8) become \xNN.
std::string printable(const std::string &text, bool ascii_only = false) {
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

/// A user-supplied string quoted for a message, cut (on a UTF-8 character
/// boundary) if long.
std::string inQuotes(const std::string &text) {
  constexpr std::size_t kMaxShown = 40;
  if (text.size() <= kMaxShown)
    return "\"" + printable(text) + "\"";
  std::size_t cut = kMaxShown;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return "\"" + printable(text.substr(0, cut)) + "...\"";
}

/// A JSON value as an error message shows it: its type where that is what is
/// wrong ("string \"32\"", "true", "an array"), else its value.
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
    // dump() keeps "32.0" distinguishable from "32".
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "an unsupported value";
  }
}

std::string joinPath(const std::string &base, const std::string &key) {
  return base.empty() ? key : base + "." + key;
}

std::string indexPath(const std::string &base, std::size_t index) {
  return base + "[" + std::to_string(index) + "]";
}

/// A JSON object together with its dotted path, so every error can name the
/// field exactly ("text_config.rope_parameters.rope_theta"). `value` is null
/// for an absent object, which reads as having no members.
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
  std::string at(const std::string &key) const { return joinPath(path, key); }
};

/// Typed, range-checked access that records the first broken rule. Accessors
/// return std::nullopt for an absent or invalid value; callers check failed()
/// before computing with what they read.
class Reader {
public:
  bool failed() const { return error_.has_value(); }
  const Error &error() const { return *error_; }

  /// Keeps the first error only: later ones are usually its consequences.
  void fail(std::string field, std::string rule) {
    if (!error_)
      error_ = Error{std::move(field), std::move(rule)};
  }

  std::optional<int64_t> asInt(const json &value, const std::string &path,
                               int64_t min, int64_t max) {
    // Booleans are not numbers in nlohmann::json, and a float such as 32.5 or
    // 32.0 is refused: a count written as a float is a broken config.
    if (!value.is_number_integer()) {
      fail(path, "must be an integer (got " + describe(value) + ")");
      return std::nullopt;
    }
    int64_t result;
    if (value.is_number_unsigned()) {
      uint64_t unsigned_value = value.get<uint64_t>();
      if (unsigned_value > static_cast<uint64_t>(max)) {
        fail(path, "must be <= " + std::to_string(max) + " (got " +
                       std::to_string(unsigned_value) + ")");
        return std::nullopt;
      }
      result = static_cast<int64_t>(unsigned_value);
    } else {
      result = value.get<int64_t>();
    }
    if (result < min) {
      fail(path, "must be >= " + std::to_string(min) + " (got " +
                     std::to_string(result) + ")");
      return std::nullopt;
    }
    if (result > max) {
      fail(path, "must be <= " + std::to_string(max) + " (got " +
                     std::to_string(result) + ")");
      return std::nullopt;
    }
    return result;
  }

  std::optional<double> asNumber(const json &value, const std::string &path) {
    if (!value.is_number()) {
      fail(path, "must be a number (got " + describe(value) + ")");
      return std::nullopt;
    }
    double result = value.get<double>();
    if (!std::isfinite(result)) {
      fail(path, "must be finite (got " + describe(value) + ")");
      return std::nullopt;
    }
    return result;
  }

  std::optional<int64_t> optInt(const Node &node, const std::string &key,
                                int64_t min, int64_t max = kMaxCount) {
    const json *value = node.get(key);
    return value ? asInt(*value, node.at(key), min, max) : std::nullopt;
  }

  /// `why` explains, where it is not obvious, why the field is required.
  int64_t reqInt(const Node &node, const std::string &key, int64_t min,
                 int64_t max = kMaxCount, const std::string &why = "") {
    const json *value = node.get(key);
    if (!value) {
      fail(node.at(key), "required field is missing" + why);
      return 0;
    }
    return asInt(*value, node.at(key), min, max).value_or(0);
  }

  std::optional<double> optNumber(const Node &node, const std::string &key) {
    const json *value = node.get(key);
    return value ? asNumber(*value, node.at(key)) : std::nullopt;
  }

  /// A number > 0, or `fallback` when absent.
  double positive(const Node &node, const std::string &key, double fallback) {
    std::optional<double> value = optNumber(node, key);
    if (!value)
      return fallback;
    if (!(*value > 0)) {
      fail(node.at(key), "must be > 0 (got " + formatNumber(*value) + ")");
      return fallback;
    }
    return *value;
  }

  /// A number >= 0, or `fallback` when absent.
  double nonNegative(const Node &node, const std::string &key,
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

  std::optional<bool> optBool(const Node &node, const std::string &key) {
    const json *value = node.get(key);
    if (!value)
      return std::nullopt;
    if (!value->is_boolean()) {
      fail(node.at(key),
           "must be true or false (got " + describe(*value) + ")");
      return std::nullopt;
    }
    return value->get<bool>();
  }

  std::optional<std::string> optString(const Node &node,
                                       const std::string &key) {
    const json *value = node.get(key);
    if (!value)
      return std::nullopt;
    if (!value->is_string()) {
      fail(node.at(key), "must be a string (got " + describe(*value) + ")");
      return std::nullopt;
    }
    return value->get<std::string>();
  }

  /// The member object `key`; a Node with value == nullptr when absent.
  Node optObject(const Node &node, const std::string &key) {
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

  const json *optArray(const Node &node, const std::string &key) {
    const json *value = node.get(key);
    if (!value)
      return nullptr;
    if (!value->is_array()) {
      fail(node.at(key), "must be an array (got " + describe(*value) + ")");
      return nullptr;
    }
    return value;
  }

  /// Refuses keys outside `allowed` (spec form only: a misspelt optional key
  /// would otherwise silently take its default). Keys starting with '_' are
  /// comments.
  void onlyKeys(const Node &node, std::initializer_list<const char *> allowed) {
    if (!node.value || !node.value->is_object())
      return;
    for (auto it = node.value->begin(); it != node.value->end(); ++it) {
      const std::string &key = it.key();
      if (!key.empty() && key[0] == '_')
        continue;
      bool known = std::any_of(allowed.begin(), allowed.end(),
                               [&](const char *name) { return key == name; });
      if (!known) {
        std::string expected;
        for (const char *name : allowed)
          expected += (expected.empty() ? "" : ", ") + std::string(name);
        fail(node.at(printable(key)),
             "unknown key (expected one of: " + expected + ")");
        return;
      }
    }
  }

private:
  std::optional<Error> error_;
};

std::optional<NormStyle> parseNormStyle(const std::string &name) {
  for (NormStyle style : {NormStyle::None, NormStyle::Plain, NormStyle::Gemma})
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
        RopeScalingKind::Yarn, RopeScalingKind::DynamicNtk})
    if (name == ropeScalingKindName(kind))
      return kind;
  return std::nullopt;
}

/// Maps a Hugging Face / torch dtype spelling to attnc's.
std::optional<std::string> normaliseDtype(const std::string &name) {
  if (name == "bfloat16" || name == "bf16")
    return std::string("bf16");
  if (name == "float16" || name == "fp16" || name == "half")
    return std::string("fp16");
  if (name == "float32" || name == "fp32" || name == "float")
    return std::string("fp32");
  return std::nullopt;
}

/// YaRN's attention temperature as DeepSeek computes it (yarn_get_mscale).
double yarnMscale(double factor, double mscale) {
  if (factor <= 1)
    return 1.0;
  return 0.1 * mscale * std::log(factor) + 1.0;
}

/// Layer-kind names are used as IR symbol names.
bool isIdentifier(const std::string &name) {
  if (name.empty() ||
      !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// Reports a validateHeadShape error under the field name the input used
/// (e.g. "num_kv_heads" -> "text_config.num_key_value_heads").
struct HeadFieldNames {
  std::string num_q_heads, num_kv_heads, qk_head_dim, v_head_dim, gate;
};

bool checkHeadShape(Reader &reader, const HeadShape &shape,
                    const HeadFieldNames &names) {
  Expected<HeadShape> valid = validateHeadShape(shape);
  if (valid)
    return true;
  const Error &error = valid.error();
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

//===----------------------------------------------------------------------===//
// JSON text -> DOM
//===----------------------------------------------------------------------===//

/// The SAX consumer of checkJsonDocument: builds nothing, stops at the first
/// syntax error (keeping its position) or at nesting deeper than the limit.
class SyntaxCheck : public nlohmann::json_sax<json> {
public:
  explicit SyntaxCheck(std::size_t max_depth) : max_depth_(max_depth) {}

  std::optional<JsonSyntaxProblem> problem;

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
    problem = JsonSyntaxProblem{false, "not valid JSON: " + message};
    return false;
  }

private:
  bool enter() {
    if (++depth_ > max_depth_) {
      problem =
          JsonSyntaxProblem{true, "JSON nested deeper than " +
                                      std::to_string(max_depth_) + " levels"};
      return false;
    }
    return true;
  }
  bool leave() {
    --depth_;
    return true;
  }
  std::size_t max_depth_;
  std::size_t depth_ = 0;
};

} // namespace

std::optional<JsonSyntaxProblem> checkJsonDocument(std::string_view text,
                                                   std::size_t max_depth) {
  bool blank = std::all_of(text.begin(), text.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  });
  if (blank)
    return JsonSyntaxProblem{false, "empty input (expected a JSON object)"};
  SyntaxCheck check(max_depth);
  bool parsed = json::sax_parse(text.data(), text.data() + text.size(), &check);
  if (check.problem)
    return check.problem;
  if (!parsed)
    return JsonSyntaxProblem{false, "not valid JSON"};
  return std::nullopt;
}

namespace {

Expected<json> parseJson(std::string_view text) {
  // A syntax error quotes the input, which may be invalid UTF-8.
  if (std::optional<JsonSyntaxProblem> problem =
          checkJsonDocument(text, kMaxDepth))
    return Error{"<json>",
                 std::string(problem->too_deep ? "not supported: " : "") +
                     printable(problem->message, /*ascii_only=*/true)};

  const char *begin = text.data();
  const char *end = text.data() + text.size();
  json document = json::parse(begin, end, /*cb=*/nullptr,
                              /*allow_exceptions=*/false);
  if (document.is_discarded()) // cannot happen after the SAX pass; be safe
    return Error{"<json>", "not valid JSON"};
  if (!document.is_object())
    return Error{"<json>", "top level must be a JSON object (got " +
                               describe(document) + ")"};
  return document;
}

//===----------------------------------------------------------------------===//
// Hugging Face config.json
//===----------------------------------------------------------------------===//

/// Families whose attention attnc knows; see docs/config-import.md.
enum class Family {
  Llama,       ///< llama
  Mistral,     ///< mistral
  Qwen3,       ///< qwen3, qwen3_moe
  QwenHybrid,  ///< qwen3_next, qwen3_5, qwen3_5_text (Gated DeltaNet hybrid)
  Gemma3,      ///< gemma3, gemma3_text
  DeepSeekMla, ///< deepseek_v3, kimi_k2
  GptOss,      ///< gpt_oss
  MiMo,        ///< mimo_v2_flash
  Unknown,
};

Family familyOf(const std::string &model_type) {
  static const std::pair<const char *, Family> kTable[] = {
      {"llama", Family::Llama},
      {"mistral", Family::Mistral},
      {"qwen3", Family::Qwen3},
      {"qwen3_moe", Family::Qwen3},
      {"qwen3_next", Family::QwenHybrid},
      {"qwen3_5", Family::QwenHybrid},
      {"qwen3_5_text", Family::QwenHybrid},
      {"gemma3", Family::Gemma3},
      {"gemma3_text", Family::Gemma3},
      {"deepseek_v3", Family::DeepSeekMla},
      {"kimi_k2", Family::DeepSeekMla},
      {"gpt_oss", Family::GptOss},
      {"mimo_v2_flash", Family::MiMo},
  };
  for (const auto &[name, family] : kTable)
    if (model_type == name)
      return family;
  return Family::Unknown;
}

/// What one model layer is, for attnc.
enum class Slot {
  Skip,    ///< not softmax attention (Gated DeltaNet linear attention)
  Full,    ///< "full_attention"
  Sliding, ///< "sliding_attention"
};

/// The config keys that give one layer kind's heads.
struct HeadKeys {
  const char *num_heads, *num_kv_heads, *head_dim, *v_head_dim;
  /// Whether head_dim may be derived from hidden_size / num_heads and MLA
  /// keys apply (the main attention's keys only).
  bool main;
};
constexpr HeadKeys kMainKeys{"num_attention_heads", "num_key_value_heads",
                             "head_dim", "v_head_dim", true};
/// MiMo-V2-Flash's sliding-window layers have their own head counts.
constexpr HeadKeys kSwaKeys{"swa_num_attention_heads",
                            "swa_num_key_value_heads", "swa_head_dim",
                            "swa_v_head_dim", false};

/// Head geometry read from the config, plus the MLA split of Dqk.
struct Geometry {
  HeadShape shape;
  HeadFieldNames names;
  bool mla = false;
  int64_t nope_dim = 0; ///< MLA: qk_nope_head_dim
  int64_t rope_dim = 0; ///< MLA: qk_rope_head_dim
};

class HfImporter {
public:
  explicit HfImporter(const json &root) : root_{&root, ""} {}
  Expected<ModelConfig> run();

private:
  /// `key` in the text config if there, else at the top level, else (for
  /// messages) the text config.
  const Node &ownerOf(const std::string &key) const {
    if (text_.has(key) || !root_.has(key))
      return text_;
    return root_;
  }
  std::string unknownPrefix() const {
    return "unknown model type '" + printable(family_name_) + "': ";
  }

  void readDtype();
  void readFamilyFeatures();
  std::vector<Slot> assignLayers();
  int64_t readWindow(const std::vector<Slot> &slots);
  std::optional<LayerKind> buildKind(Slot slot, std::vector<int64_t> layers,
                                     int64_t window);
  Geometry readHeads(const HeadKeys &keys);
  RopeConfig readRope(const std::string &kind_name, const Geometry &geometry,
                      bool sliding);
  int64_t readRotaryDim(const Geometry &geometry, const Node &rope_params);
  RopeScaling readScaling(const Node &source, bool from_rope_parameters);

  Reader r_;
  Node root_;
  Node text_;
  Family family_ = Family::Unknown;
  std::string family_name_;  ///< model_type that selected the family
  std::string family_field_; ///< where it came from
  NormStyle norm_ = NormStyle::None;
  RopeStyle rope_style_ = RopeStyle::None;
  GateLayout gate_ = GateLayout::None;
  bool explicit_sinks_ = false; ///< unknown families: the "sinks" key
  std::string layout_field_;    ///< the key that decided the layer kinds
  ModelConfig config_;
};

Expected<ModelConfig> HfImporter::run() {
  // Multimodal checkpoints (Gemma 3, Qwen3.5) nest the language model's
  // config; its attention is what we compile.
  text_ = root_;
  if (const json *text_config = root_.get("text_config")) {
    if (!text_config->is_object())
      return Error{"text_config",
                   "must be an object (got " + describe(*text_config) + ")"};
    text_ = Node{text_config, "text_config"};
  }

  std::optional<std::string> outer_type = r_.optString(root_, "model_type");
  std::optional<std::string> inner_type;
  if (text_.value != root_.value)
    inner_type = r_.optString(text_, "model_type");
  if (r_.failed())
    return r_.error();
  if (!outer_type && !inner_type)
    return Error{"model_type", "required field is missing"};
  // The checkpoint's identity is the outer type ("gemma3"); the attention
  // family is the text model's ("gemma3_text") when it has one.
  config_.model_type = outer_type ? *outer_type : *inner_type;
  family_name_ = inner_type ? *inner_type : *outer_type;
  family_field_ = inner_type ? text_.at("model_type") : "model_type";
  family_ = familyOf(family_name_);
  // A wrapper type we know around a text type we do not (or the reverse)
  // still identifies the family.
  if (family_ == Family::Unknown && inner_type && outer_type &&
      familyOf(*outer_type) != Family::Unknown) {
    family_name_ = *outer_type;
    family_field_ = "model_type";
    family_ = familyOf(*outer_type);
  }

  readDtype();
  config_.num_layers = r_.reqInt(text_, "num_hidden_layers", 1, kMaxLayers);
  // Gemma3TextConfig's default; save_pretrained omits values equal to the
  // class default, so the 27B config.json has no such key.
  int64_t default_positions = family_ == Family::Gemma3 ? 131072 : 0;
  config_.max_position_embeddings =
      r_.optInt(text_, "max_position_embeddings", 1, kMaxPositions)
          .value_or(default_positions);
  if (r_.failed())
    return r_.error();

  readFamilyFeatures();
  if (r_.failed())
    return r_.error();

  std::vector<Slot> slots = assignLayers();
  if (r_.failed())
    return r_.error();
  int64_t window = readWindow(slots);
  if (r_.failed())
    return r_.error();

  for (Slot slot : {Slot::Full, Slot::Sliding}) {
    std::vector<int64_t> layers;
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i] == slot)
        layers.push_back(static_cast<int64_t>(i));
    if (layers.empty())
      continue;
    std::optional<LayerKind> kind = buildKind(slot, std::move(layers), window);
    if (!kind)
      return r_.error();
    config_.kinds.push_back(std::move(*kind));
  }
  if (config_.kinds.empty())
    return Error{layout_field_,
                 "no softmax attention layers in the model (every layer is "
                 "linear attention)"};
  return config_;
}

void HfImporter::readDtype() {
  // Newer transformers write "dtype", older "torch_dtype"; a multimodal
  // wrapper may carry it outside text_config.
  for (const Node *node : {&text_, &root_}) {
    for (const char *key : {"dtype", "torch_dtype"}) {
      std::optional<std::string> name = r_.optString(*node, key);
      if (r_.failed())
        return;
      if (!name)
        continue;
      std::optional<std::string> dtype = normaliseDtype(*name);
      if (!dtype) {
        r_.fail(node->at(key), "unsupported dtype " + inQuotes(*name) +
                                   " (expected bfloat16, float16 or float32)");
        return;
      }
      config_.dtype = *dtype;
      return;
    }
  }
  config_.dtype = "bf16";
}

/// The features a config has no key for: q/k norm, rotary style, output gate,
/// sinks. Known families say them here; unknown ones must spell them out.
void HfImporter::readFamilyFeatures() {
  rope_style_ = RopeStyle::Neox;
  switch (family_) {
  case Family::Llama:
  case Family::Mistral:
  case Family::GptOss:
  case Family::MiMo:
    norm_ = NormStyle::None;
    return;
  case Family::Qwen3:
    norm_ = NormStyle::Plain;
    return;
  case Family::QwenHybrid: {
    // Zero-centred weights: Qwen3-Next's RMSNorm computes x * (1 + w).
    norm_ = NormStyle::Gemma;
    // q_proj emits each head's query followed by its gate; vLLM reads the
    // key with default true, and Qwen3-Next's config does not carry it.
    const Node &owner = ownerOf("attn_output_gate");
    bool gated = r_.optBool(owner, "attn_output_gate").value_or(true);
    gate_ = gated ? GateLayout::InterleavedWithQ : GateLayout::None;
    return;
  }
  case Family::Gemma3:
    norm_ = NormStyle::Gemma;
    return;
  case Family::DeepSeekMla:
    // DeepSeek's apply_rotary_pos_emb de-interleaves pairs: GPT-J style.
    norm_ = NormStyle::None;
    rope_style_ = RopeStyle::Gptj;
    return;
  case Family::Unknown:
    break;
  }

  // Unknown family. q/k norm and rope style are properties of every attention
  // layer with no safe default (families split both ways), so they are
  // required. Gate and sinks are rare; absent means "none", as every family
  // known to have one is in the table above.
  const Node &norm_owner = ownerOf("qk_norm");
  std::optional<std::string> norm = r_.optString(norm_owner, "qk_norm");
  if (r_.failed())
    return;
  if (!norm) {
    r_.fail(family_field_,
            unknownPrefix() + "q/k norm presence is ambiguous; set \"qk_norm\" "
                              "(\"none\"|\"rms\"|\"gemma\")");
    return;
  }
  std::optional<NormStyle> norm_style = parseNormStyle(*norm);
  if (!norm_style) {
    r_.fail(norm_owner.at("qk_norm"), "must be \"none\", \"rms\" or \"gemma\" "
                                      "(got " +
                                          inQuotes(*norm) + ")");
    return;
  }
  norm_ = *norm_style;

  const Node &rope_owner = ownerOf("rope_style");
  std::optional<std::string> rope = r_.optString(rope_owner, "rope_style");
  if (r_.failed())
    return;
  if (!rope) {
    r_.fail(family_field_, unknownPrefix() +
                               "rope style is ambiguous; set \"rope_style\" "
                               "(\"none\"|\"neox\"|\"gptj\")");
    return;
  }
  std::optional<RopeStyle> rope_style = parseRopeStyle(*rope);
  if (!rope_style) {
    r_.fail(rope_owner.at("rope_style"), "must be \"none\", \"neox\" or "
                                         "\"gptj\" (got " +
                                             inQuotes(*rope) + ")");
    return;
  }
  rope_style_ = *rope_style;

  const Node &gate_owner = ownerOf("gate");
  if (std::optional<std::string> gate = r_.optString(gate_owner, "gate")) {
    std::optional<GateLayout> layout = parseGateLayout(*gate);
    if (!layout) {
      r_.fail(gate_owner.at("gate"),
              "must be \"none\", \"qkvg\" or \"interleaved\" (got " +
                  inQuotes(*gate) + ")");
      return;
    }
    gate_ = *layout;
  } else if (r_.optBool(ownerOf("attn_output_gate"), "attn_output_gate")
                 .value_or(false)) {
    // A gate exists, but whether q_proj interleaves it or it is a separate
    // projection is not in the config.
    r_.fail(ownerOf("attn_output_gate").at("attn_output_gate"),
            unknownPrefix() + "the gate layout is ambiguous; set \"gate\" "
                              "(\"qkvg\"|\"interleaved\")");
    return;
  }
  explicit_sinks_ = r_.optBool(ownerOf("sinks"), "sinks").value_or(false);
}

std::vector<Slot> HfImporter::assignLayers() {
  const int64_t n = config_.num_layers;
  std::vector<Slot> slots(static_cast<std::size_t>(n), Slot::Full);
  auto checkLength = [&](const json &array, const std::string &path) {
    if (static_cast<int64_t>(array.size()) != n)
      r_.fail(path, "must have num_hidden_layers (" + std::to_string(n) +
                        ") entries (got " + std::to_string(array.size()) + ")");
    return !r_.failed();
  };

  if (family_ == Family::MiMo) {
    // 0 = full attention, 1 = sliding window.
    layout_field_ = text_.at("hybrid_layer_pattern");
    const json *pattern = r_.optArray(text_, "hybrid_layer_pattern");
    if (!pattern) {
      r_.fail(layout_field_, "required field is missing");
      return slots;
    }
    if (!checkLength(*pattern, layout_field_))
      return slots;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      std::optional<int64_t> value =
          r_.asInt((*pattern)[i], indexPath(layout_field_, i), 0, 1);
      if (!value)
        return slots;
      slots[i] = *value == 0 ? Slot::Full : Slot::Sliding;
    }
    return slots;
  }

  if (const json *types = r_.optArray(text_, "layer_types")) {
    layout_field_ = text_.at("layer_types");
    if (!checkLength(*types, layout_field_))
      return slots;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const json &type = (*types)[i];
      std::string path = indexPath(layout_field_, i);
      if (!type.is_string()) {
        r_.fail(path, "must be a string (got " + describe(type) + ")");
        return slots;
      }
      const std::string name = type.get<std::string>();
      if (name == "full_attention") {
        slots[i] = Slot::Full;
      } else if (name == "sliding_attention") {
        slots[i] = Slot::Sliding;
      } else if (name == "linear_attention") {
        // Gated DeltaNet (Qwen3-Next / Qwen3.5): not softmax attention, so
        // not a layer kind of ours.
        slots[i] = Slot::Skip;
      } else {
        r_.fail(path, "unsupported layer type " + inQuotes(name) +
                          " (expected full_attention, sliding_attention or "
                          "linear_attention)");
        return slots;
      }
    }
    return slots;
  }
  if (r_.failed())
    return slots;

  switch (family_) {
  case Family::Gemma3: {
    // Gemma3TextConfig: layer i is global iff (i + 1) % pattern == 0.
    layout_field_ = text_.at("sliding_window_pattern");
    int64_t pattern = r_.optInt(text_, "sliding_window_pattern", 1).value_or(6);
    for (int64_t i = 0; i < n; ++i)
      slots[i] = (i + 1) % pattern == 0 ? Slot::Full : Slot::Sliding;
    return slots;
  }
  case Family::QwenHybrid: {
    // Every interval-th layer is gated full attention, the rest linear.
    layout_field_ = text_.at("full_attention_interval");
    int64_t interval =
        r_.optInt(text_, "full_attention_interval", 1).value_or(4);
    for (int64_t i = 0; i < n; ++i)
      slots[i] = (i + 1) % interval == 0 ? Slot::Full : Slot::Skip;
    return slots;
  }
  case Family::GptOss:
    // GptOssConfig's default layer_types: even layers slide.
    for (int64_t i = 0; i < n; ++i)
      slots[i] = i % 2 == 0 ? Slot::Sliding : Slot::Full;
    return slots;
  case Family::Qwen3: {
    // Qwen3Config: with use_sliding_window, layers from max_window_layers on
    // slide; otherwise sliding_window is ignored.
    if (!r_.optBool(text_, "use_sliding_window").value_or(false))
      return slots;
    int64_t first =
        r_.optInt(text_, "max_window_layers", 0, kMaxLayers).value_or(28);
    for (int64_t i = first; i < n; ++i)
      slots[i] = Slot::Sliding;
    return slots;
  }
  case Family::Mistral:
    // Mistral applies a non-null sliding_window to every layer.
    if (text_.has("sliding_window"))
      std::fill(slots.begin(), slots.end(), Slot::Sliding);
    return slots;
  case Family::Unknown:
    // Whether a sliding_window applies to all layers (Mistral), some (Qwen)
    // or none is family code; layer_types says it explicitly.
    if (text_.has("sliding_window") &&
        r_.optBool(text_, "use_sliding_window").value_or(true))
      r_.fail(text_.at("sliding_window"),
              unknownPrefix() + "which layers use the window is ambiguous; "
                                "set \"layer_types\" or remove "
                                "\"sliding_window\"");
    return slots;
  case Family::Llama:
  case Family::DeepSeekMla:
  case Family::MiMo:
    return slots;
  }
  return slots;
}

int64_t HfImporter::readWindow(const std::vector<Slot> &slots) {
  if (std::find(slots.begin(), slots.end(), Slot::Sliding) == slots.end())
    return 0;
  std::optional<int64_t> window =
      r_.optInt(text_, "sliding_window", 1, kMaxPositions);
  if (family_ == Family::MiMo) {
    std::optional<int64_t> size =
        r_.optInt(text_, "sliding_window_size", 1, kMaxPositions);
    if (window && size && *window != *size) {
      r_.fail(text_.at("sliding_window_size"),
              "disagrees with sliding_window (" + std::to_string(*size) +
                  " != " + std::to_string(*window) + ")");
      return 0;
    }
    if (!window)
      window = size;
  }
  if (family_ == Family::Gemma3 && !window && !r_.failed())
    window = 4096; // Gemma3TextConfig default
  if (r_.failed())
    return 0;
  if (!window) {
    r_.fail(text_.at("sliding_window"),
            "required field is missing (the model has sliding_attention "
            "layers)");
    return 0;
  }
  return *window;
}

Geometry HfImporter::readHeads(const HeadKeys &keys) {
  Geometry g;
  g.names = {text_.at(keys.num_heads), text_.at(keys.num_kv_heads),
             text_.at(keys.head_dim), text_.at(keys.v_head_dim),
             text_.at("attn_output_gate")};
  HeadShape &shape = g.shape;
  shape.num_q_heads = r_.reqInt(text_, keys.num_heads, 1);
  std::optional<int64_t> kv_heads = r_.optInt(text_, keys.num_kv_heads, 1);
  if (r_.failed())
    return g;

  std::optional<int64_t> nope, rope;
  if (keys.main) {
    nope = r_.optInt(text_, "qk_nope_head_dim", 0);
    rope = r_.optInt(text_, "qk_rope_head_dim", 1);
    if (r_.failed())
      return g;
  }
  if (nope || rope) {
    // MLA (DeepSeek): q/k heads are [nope | rope]. The kernels see the
    // decompressed form, where every query head has its own k/v head, so
    // Hkv = Hq whatever num_key_value_heads says (DeepSeek's attention
    // ignores it). head_dim is ignored too: DeepseekV3Config sets it to
    // qk_rope_head_dim, which is not the q/k head size.
    if (!nope) {
      r_.fail(text_.at("qk_nope_head_dim"),
              "required field is missing (qk_rope_head_dim is set, so this "
              "is an MLA model)");
      return g;
    }
    if (!rope) {
      r_.fail(text_.at("qk_rope_head_dim"),
              "required field is missing (qk_nope_head_dim is set, so this "
              "is an MLA model)");
      return g;
    }
    g.mla = true;
    g.nope_dim = *nope;
    g.rope_dim = *rope;
    g.names.qk_head_dim = text_.at("qk_rope_head_dim");
    shape.num_kv_heads = shape.num_q_heads;
    shape.qk_head_dim = *nope + *rope;
    shape.v_head_dim =
        r_.reqInt(text_, keys.v_head_dim, 1, kMaxCount,
                  " (MLA models have no default value head size)");
    return g;
  }

  shape.num_kv_heads = kv_heads.value_or(shape.num_q_heads);
  if (shape.num_q_heads % shape.num_kv_heads != 0) {
    r_.fail(text_.at(keys.num_kv_heads),
            std::string("must divide ") + keys.num_heads + " (" +
                std::to_string(shape.num_q_heads) + " % " +
                std::to_string(shape.num_kv_heads) + " != 0)");
    return g;
  }

  std::optional<int64_t> head_dim = r_.optInt(text_, keys.head_dim, 1);
  if (r_.failed())
    return g;
  if (!head_dim && family_ == Family::Gemma3 && keys.main)
    head_dim = 256; // Gemma3TextConfig default, not hidden / heads
  if (!head_dim && keys.main) {
    std::optional<int64_t> hidden =
        r_.optInt(text_, "hidden_size", 1, kMaxCount * kMaxCount);
    if (r_.failed())
      return g;
    if (!hidden) {
      r_.fail(text_.at(keys.head_dim),
              "required field is missing (and there is no hidden_size to "
              "derive it from)");
      return g;
    }
    if (*hidden % shape.num_q_heads != 0) {
      r_.fail(text_.at(keys.head_dim),
              "required field is missing, and hidden_size " +
                  std::to_string(*hidden) + " is not divisible by " +
                  keys.num_heads + " " + std::to_string(shape.num_q_heads) +
                  " to derive it");
      return g;
    }
    head_dim = *hidden / shape.num_q_heads;
    if (*head_dim > kMaxCount) {
      r_.fail(text_.at(keys.head_dim),
              "must be <= " + std::to_string(kMaxCount) + " (got " +
                  std::to_string(*head_dim) + " = hidden_size / " +
                  keys.num_heads + ")");
      return g;
    }
  }
  if (!head_dim) {
    r_.fail(text_.at(keys.head_dim), "required field is missing");
    return g;
  }
  shape.qk_head_dim = *head_dim;
  shape.v_head_dim =
      r_.optInt(text_, keys.v_head_dim, 1).value_or(shape.qk_head_dim);
  return g;
}

int64_t HfImporter::readRotaryDim(const Geometry &geometry,
                                  const Node &rope_params) {
  const int64_t qk_dim = geometry.shape.qk_head_dim;
  int64_t dim = qk_dim;
  std::string field;
  std::string origin; // how dim was computed, for messages
  if (geometry.mla) {
    dim = geometry.rope_dim;
    field = text_.at("qk_rope_head_dim");
  } else if (std::optional<int64_t> explicit_dim =
                 r_.optInt(text_, "rotary_dim", 0)) {
    dim = *explicit_dim;
    field = text_.at("rotary_dim");
  } else {
    if (r_.failed())
      return 0;
    const Node &owner = text_.has("partial_rotary_factor") ||
                                !rope_params.has("partial_rotary_factor")
                            ? text_
                            : rope_params;
    std::optional<double> factor = r_.optNumber(owner, "partial_rotary_factor");
    if (r_.failed())
      return 0;
    if (factor) {
      field = owner.at("partial_rotary_factor");
      if (!(*factor > 0)) {
        r_.fail(field, "must be > 0 (got " + formatNumber(*factor) + ")");
        return 0;
      }
      // Checked before the cast: a huge factor would overflow int64.
      if (*factor > 1) {
        r_.fail(field, "rotary dim must be <= the qk head dim " +
                           std::to_string(qk_dim) + " (got factor " +
                           formatNumber(*factor) + ")");
        return 0;
      }
      // int(head_dim * partial_rotary_factor), truncating as Hugging Face
      // does (MiMo: int(192 * 0.334) = 64).
      dim = static_cast<int64_t>(static_cast<double>(qk_dim) * *factor);
      origin = " = int(" + std::to_string(qk_dim) + " * " +
               formatNumber(*factor) + ")";
    } else {
      // Whole-head rotary: an odd head dim is what is wrong.
      field = geometry.names.qk_head_dim;
    }
  }
  std::string got = " (got " + std::to_string(dim) + origin + ")";
  if (dim < 2)
    r_.fail(field, "rotary dim must be >= 2" + got);
  else if (dim % 2 != 0)
    r_.fail(field, "rotary dim must be even" + got);
  else if (dim > qk_dim)
    r_.fail(field, "rotary dim must be <= the qk head dim " +
                       std::to_string(qk_dim) + got);
  return dim;
}

RopeConfig HfImporter::readRope(const std::string &kind_name,
                                const Geometry &geometry, bool sliding) {
  RopeConfig rope;
  rope.style = rope_style_;
  if (rope.style == RopeStyle::None)
    return rope;

  // transformers v5 moves theta and scaling into rope_parameters, which for
  // models with per-layer-type rope (Gemma 3) is keyed by layer type.
  Node params = r_.optObject(text_, "rope_parameters");
  Node kind_params = params;
  bool per_kind = false;
  if (const json *sub = params.get(kind_name)) {
    if (sub->is_object()) {
      kind_params = Node{sub, params.at(kind_name)};
      per_kind = true;
    }
  }
  if (r_.failed())
    return rope;

  rope.rotary_dim = readRotaryDim(geometry, kind_params);
  // MLA's rope part is the last qk_rope_head_dim dims of each head.
  rope.rotary_offset = geometry.mla ? geometry.nope_dim : 0;
  if (r_.failed())
    return rope;

  double default_theta = 10000.0;
  if (family_ == Family::Gemma3)
    default_theta = 1e6;
  else if (family_ == Family::GptOss)
    default_theta = 150000.0;

  Node scaling_source;
  bool from_params = false;
  Node theta_owner = text_;
  std::string theta_key = "rope_theta";
  if (per_kind) {
    theta_owner = kind_params;
    if (family_ == Family::Gemma3 && sliding)
      default_theta = 10000.0;
    scaling_source = kind_params;
    from_params = true;
  } else if (family_ == Family::Gemma3 && sliding) {
    // Gemma 3's local layers have their own base and no scaling: HF builds a
    // separate rotary embedding for them from rope_local_base_freq.
    theta_key = "rope_local_base_freq";
    default_theta = 10000.0;
  } else {
    if (family_ == Family::MiMo && sliding) {
      // MiMo's SWA layers use swa_rope_theta; any rope_scaling is applied
      // to both kinds (the file we know has none).
      theta_key = "swa_rope_theta";
      default_theta = 10000.0;
    } else if (!text_.has("rope_theta") && params.has("rope_theta")) {
      theta_owner = params;
    }
    Node rope_scaling = r_.optObject(text_, "rope_scaling");
    if (rope_scaling.value) {
      scaling_source = rope_scaling;
    } else {
      scaling_source = params;
      from_params = true;
    }
  }
  rope.theta = r_.positive(theta_owner, theta_key, default_theta);
  if (r_.failed())
    return rope;
  rope.scaling = readScaling(scaling_source, from_params);
  return rope;
}

RopeScaling HfImporter::readScaling(const Node &source,
                                    bool from_rope_parameters) {
  RopeScaling scaling;
  if (!source.value)
    return scaling;
  std::string type_key = source.has("rope_type") ? "rope_type" : "type";
  std::optional<std::string> type = r_.optString(source, type_key);
  if (r_.failed())
    return scaling;
  if (!type) {
    // rope_parameters may hold only rope_theta; a rope_scaling object
    // without a type is malformed.
    if (!from_rope_parameters)
      r_.fail(source.at("rope_type"), "required field is missing");
    return scaling;
  }
  const std::string type_path = source.at(type_key);
  if (*type == "default" || *type == "mrope") {
    // mrope (Qwen2-VL, Qwen3.5 mrope_section) rotates different dim sections
    // by the temporal/height/width position ids; for text tokens all three
    // equal the token position, so it is ordinary rope.
    return scaling;
  }
  if (*type == "linear")
    scaling.kind = RopeScalingKind::Linear;
  else if (*type == "llama3")
    scaling.kind = RopeScalingKind::Llama3;
  else if (*type == "yarn")
    scaling.kind = RopeScalingKind::Yarn;
  else if (*type == "dynamic")
    scaling.kind = RopeScalingKind::DynamicNtk;
  else {
    r_.fail(type_path, "unsupported rope scaling type " + inQuotes(*type) +
                           " (supported: default, linear, llama3, yarn, "
                           "dynamic)");
    return scaling;
  }

  if (!source.has("factor")) {
    r_.fail(source.at("factor"),
            "required field is missing (rope scaling " + *type + ")");
    return scaling;
  }
  scaling.factor = r_.positive(source, "factor", 1.0);
  std::optional<int64_t> original =
      r_.optInt(source, "original_max_position_embeddings", 1, kMaxPositions);
  if (r_.failed())
    return scaling;

  switch (scaling.kind) {
  case RopeScalingKind::Llama3:
    if (!original) {
      r_.fail(source.at("original_max_position_embeddings"),
              "required field is missing (rope scaling llama3)");
      return scaling;
    }
    scaling.original_max_position = *original;
    scaling.low_freq_factor = r_.positive(source, "low_freq_factor", 1.0);
    scaling.high_freq_factor = r_.positive(source, "high_freq_factor", 4.0);
    // Llama 3 interpolates between the two; equal values divide by zero.
    if (!r_.failed() && !(scaling.high_freq_factor > scaling.low_freq_factor))
      r_.fail(source.at("high_freq_factor"),
              "must be > low_freq_factor (" +
                  formatNumber(scaling.high_freq_factor) +
                  " <= " + formatNumber(scaling.low_freq_factor) + ")");
    return scaling;
  case RopeScalingKind::Yarn:
  case RopeScalingKind::DynamicNtk:
    // Both default to the model's context length, as HF does.
    scaling.original_max_position =
        original.value_or(config_.max_position_embeddings);
    if (scaling.original_max_position == 0) {
      r_.fail(source.at("original_max_position_embeddings"),
              "required field is missing (and max_position_embeddings is "
              "absent)");
      return scaling;
    }
    if (scaling.kind == RopeScalingKind::DynamicNtk)
      return scaling;
    scaling.beta_fast = r_.positive(source, "beta_fast", 32.0);
    scaling.beta_slow = r_.positive(source, "beta_slow", 1.0);
    scaling.mscale = r_.positive(source, "mscale", 1.0);
    scaling.mscale_all_dim = r_.nonNegative(source, "mscale_all_dim", 0.0);
    scaling.truncate = r_.optBool(source, "truncate").value_or(true);
    // An explicit attention_factor overrides the mscale-derived one; the
    // kernels do not model it, and ignoring it would change the numerics.
    if (source.has("attention_factor"))
      r_.fail(source.at("attention_factor"),
              "not supported (the yarn attention factor is derived from "
              "mscale / mscale_all_dim)");
    return scaling;
  default:
    return scaling;
  }
}

std::optional<LayerKind>
HfImporter::buildKind(Slot slot, std::vector<int64_t> layers, int64_t window) {
  const bool sliding = slot == Slot::Sliding;
  LayerKind kind;
  kind.name = sliding ? "sliding_attention" : "full_attention";
  kind.layers = std::move(layers);

  const HeadKeys &keys =
      family_ == Family::MiMo && sliding ? kSwaKeys : kMainKeys;
  if (!keys.main) {
    // MiMo's SWA head counts have no sensible default: require them.
    for (const char *key : {keys.num_heads, keys.head_dim})
      if (!text_.has(key)) {
        r_.fail(text_.at(key), "required field is missing (the model has "
                               "sliding_attention layers)");
        return std::nullopt;
      }
  }
  Geometry geometry = readHeads(keys);
  if (r_.failed())
    return std::nullopt;
  kind.heads = geometry.shape;
  kind.heads.gate = gate_;
  if (!checkHeadShape(r_, kind.heads, geometry.names))
    return std::nullopt;

  kind.qk_norm = norm_;
  // eps matters only with a q/k norm, but it is recorded for every kind so
  // the spec is complete.
  if (text_.has("rms_norm_eps"))
    kind.norm_eps = r_.positive(text_, "rms_norm_eps", 1e-6);
  else
    kind.norm_eps = r_.positive(text_, "layernorm_epsilon", 1e-6);
  kind.norm_before_rope = true;
  kind.rope = readRope(kind.name, geometry, sliding);
  if (r_.failed())
    return std::nullopt;
  kind.sliding_window = sliding ? window : 0;

  switch (family_) {
  case Family::GptOss:
    kind.sinks = true;
    break;
  case Family::MiMo:
    kind.sinks = r_.optBool(text_, sliding ? "add_swa_attention_sink_bias"
                                           : "add_full_attention_sink_bias")
                     .value_or(false);
    break;
  case Family::Unknown:
    kind.sinks = explicit_sinks_;
    break;
  default:
    kind.sinks = false;
    break;
  }

  double scale = 1.0 / std::sqrt(static_cast<double>(kind.heads.qk_head_dim));
  if (family_ == Family::Gemma3) {
    // Gemma scales by query_pre_attn_scalar (168 for 27B), not head_dim.
    double scalar = r_.positive(text_, "query_pre_attn_scalar", 256.0);
    scale = 1.0 / std::sqrt(scalar);
  }
  const RopeScaling &scaling = kind.rope.scaling;
  if (geometry.mla && scaling.kind == RopeScalingKind::Yarn &&
      scaling.mscale_all_dim != 0 && scaling.factor > 1) {
    // DeepSeek folds YaRN's attention temperature into the softmax scale
    // (softmax_scale * mscale * mscale), not into cos/sin.
    double m = yarnMscale(scaling.factor, scaling.mscale_all_dim);
    scale *= m * m;
  }
  kind.softmax_scale = scale;
  kind.logit_softcap = r_.nonNegative(text_, "attn_logit_softcapping", 0.0);
  kind.value_scale = r_.positive(text_, "attention_value_scale", 1.0);
  if (r_.failed())
    return std::nullopt;
  return kind;
}

//===----------------------------------------------------------------------===//
// attnc spec
//===----------------------------------------------------------------------===//

class SpecImporter {
public:
  explicit SpecImporter(const json &root) : root_{&root, ""} {}
  Expected<ModelConfig> run();

private:
  std::optional<LayerKind> readKind(const Node &node,
                                    std::vector<int> &layer_owner, int index);
  RopeConfig readRope(const Node &node, int64_t qk_head_dim);

  Reader r_;
  Node root_;
  ModelConfig config_;
};

Expected<ModelConfig> SpecImporter::run() {
  r_.onlyKeys(root_, {"attnc_spec", "model_type", "dtype", "num_layers",
                      "max_position_embeddings", "layer_kinds"});
  int64_t version = r_.reqInt(root_, "attnc_spec", 0, 1000000);
  if (r_.failed())
    return r_.error();
  if (version != kSpecVersion)
    return Error{"attnc_spec", "unsupported spec version " +
                                   std::to_string(version) +
                                   " (this build reads " +
                                   std::to_string(kSpecVersion) + ")"};

  config_.model_type = r_.optString(root_, "model_type").value_or("");
  std::string dtype = r_.optString(root_, "dtype").value_or("bf16");
  if (r_.failed())
    return r_.error();
  if (dtype != "bf16" && dtype != "fp16" && dtype != "fp32")
    return Error{"dtype", "must be \"bf16\", \"fp16\" or \"fp32\" (got " +
                              inQuotes(dtype) + ")"};
  config_.dtype = dtype;
  config_.num_layers = r_.reqInt(root_, "num_layers", 1, kMaxLayers);
  config_.max_position_embeddings =
      r_.optInt(root_, "max_position_embeddings", 0, kMaxPositions).value_or(0);
  const json *kinds = r_.optArray(root_, "layer_kinds");
  if (r_.failed())
    return r_.error();
  if (!kinds)
    return Error{"layer_kinds", "required field is missing"};
  if (kinds->empty())
    return Error{"layer_kinds", "must have at least one layer kind"};

  // Which kind owns each layer, so no layer is claimed twice.
  std::vector<int> layer_owner(static_cast<std::size_t>(config_.num_layers),
                               -1);
  std::set<std::string> names;
  for (std::size_t i = 0; i < kinds->size(); ++i) {
    std::string path = indexPath("layer_kinds", i);
    const json &item = (*kinds)[i];
    if (!item.is_object())
      return Error{path, "must be an object (got " + describe(item) + ")"};
    std::optional<LayerKind> kind =
        readKind(Node{&item, path}, layer_owner, static_cast<int>(i));
    if (!kind)
      return r_.error();
    if (!names.insert(kind->name).second)
      return Error{joinPath(path, "name"),
                   "duplicate layer kind name " + inQuotes(kind->name)};
    config_.kinds.push_back(std::move(*kind));
  }
  return config_;
}

std::optional<LayerKind> SpecImporter::readKind(const Node &node,
                                                std::vector<int> &layer_owner,
                                                int index) {
  r_.onlyKeys(node, {"name", "layers", "num_q_heads", "num_kv_heads",
                     "qk_head_dim", "v_head_dim", "gate", "qk_norm", "norm_eps",
                     "norm_before_rope", "rope", "sliding_window", "sinks",
                     "softmax_scale", "logit_softcap", "value_scale"});
  if (r_.failed())
    return std::nullopt;
  LayerKind kind;
  std::optional<std::string> name = r_.optString(node, "name");
  if (r_.failed())
    return std::nullopt;
  if (!name) {
    r_.fail(node.at("name"), "required field is missing");
    return std::nullopt;
  }
  if (!isIdentifier(*name)) {
    r_.fail(node.at("name"),
            "must be an identifier ([A-Za-z_][A-Za-z0-9_]*) (got " +
                inQuotes(*name) + ")");
    return std::nullopt;
  }
  kind.name = *name;

  const json *layers = r_.optArray(node, "layers");
  if (r_.failed())
    return std::nullopt;
  if (!layers) {
    r_.fail(node.at("layers"), "required field is missing");
    return std::nullopt;
  }
  if (layers->empty()) {
    r_.fail(node.at("layers"), "must list at least one layer");
    return std::nullopt;
  }
  for (std::size_t i = 0; i < layers->size(); ++i) {
    std::string path = indexPath(node.at("layers"), i);
    std::optional<int64_t> layer =
        r_.asInt((*layers)[i], path, 0, config_.num_layers - 1);
    if (!layer)
      return std::nullopt;
    if (!kind.layers.empty() && *layer <= kind.layers.back()) {
      r_.fail(path, "layers must be strictly ascending (" +
                        std::to_string(*layer) + " after " +
                        std::to_string(kind.layers.back()) + ")");
      return std::nullopt;
    }
    int &owner = layer_owner[static_cast<std::size_t>(*layer)];
    if (owner >= 0) {
      r_.fail(path, "layer " + std::to_string(*layer) +
                        " is already in layer_kinds[" + std::to_string(owner) +
                        "]");
      return std::nullopt;
    }
    owner = index;
    kind.layers.push_back(*layer);
  }

  HeadShape &heads = kind.heads;
  heads.num_q_heads = r_.reqInt(node, "num_q_heads", 1);
  heads.num_kv_heads =
      r_.optInt(node, "num_kv_heads", 1).value_or(heads.num_q_heads);
  heads.qk_head_dim = r_.reqInt(node, "qk_head_dim", 1);
  heads.v_head_dim =
      r_.optInt(node, "v_head_dim", 1).value_or(heads.qk_head_dim);
  std::string gate = r_.optString(node, "gate").value_or("none");
  if (r_.failed())
    return std::nullopt;
  std::optional<GateLayout> layout = parseGateLayout(gate);
  if (!layout) {
    r_.fail(node.at("gate"),
            "must be \"none\", \"qkvg\" or \"interleaved\" (got " +
                inQuotes(gate) + ")");
    return std::nullopt;
  }
  heads.gate = *layout;
  HeadFieldNames names{node.at("num_q_heads"), node.at("num_kv_heads"),
                       node.at("qk_head_dim"), node.at("v_head_dim"),
                       node.at("gate")};
  if (!checkHeadShape(r_, heads, names))
    return std::nullopt;

  // Required even here: "no q/k norm" must be said, not implied.
  std::optional<std::string> norm = r_.optString(node, "qk_norm");
  if (r_.failed())
    return std::nullopt;
  if (!norm) {
    r_.fail(node.at("qk_norm"),
            "required field is missing (\"none\"|\"rms\"|\"gemma\")");
    return std::nullopt;
  }
  std::optional<NormStyle> norm_style = parseNormStyle(*norm);
  if (!norm_style) {
    r_.fail(node.at("qk_norm"), "must be \"none\", \"rms\" or \"gemma\" (got " +
                                    inQuotes(*norm) + ")");
    return std::nullopt;
  }
  kind.qk_norm = *norm_style;
  kind.norm_eps = r_.positive(node, "norm_eps", 1e-6);
  kind.norm_before_rope = r_.optBool(node, "norm_before_rope").value_or(true);

  Node rope = r_.optObject(node, "rope");
  if (r_.failed())
    return std::nullopt;
  if (!rope.value) {
    r_.fail(node.at("rope"), "required field is missing");
    return std::nullopt;
  }
  kind.rope = readRope(rope, heads.qk_head_dim);
  if (r_.failed())
    return std::nullopt;

  kind.sliding_window =
      r_.optInt(node, "sliding_window", 0, kMaxPositions).value_or(0);
  kind.sinks = r_.optBool(node, "sinks").value_or(false);
  // 0 keeps the header's meaning "default 1/sqrt(Dqk)"; absent writes the
  // effective value so the imported config is explicit.
  kind.softmax_scale =
      r_.nonNegative(node, "softmax_scale",
                     1.0 / std::sqrt(static_cast<double>(heads.qk_head_dim)));
  kind.logit_softcap = r_.nonNegative(node, "logit_softcap", 0.0);
  kind.value_scale = r_.positive(node, "value_scale", 1.0);
  if (r_.failed())
    return std::nullopt;
  return kind;
}

RopeConfig SpecImporter::readRope(const Node &node, int64_t qk_head_dim) {
  RopeConfig rope;
  r_.onlyKeys(node,
              {"style", "rotary_dim", "rotary_offset", "theta", "scaling"});
  std::optional<std::string> style = r_.optString(node, "style");
  if (r_.failed())
    return rope;
  if (!style) {
    r_.fail(node.at("style"),
            "required field is missing (\"none\"|\"neox\"|\"gptj\")");
    return rope;
  }
  std::optional<RopeStyle> parsed = parseRopeStyle(*style);
  if (!parsed) {
    r_.fail(node.at("style"), "must be \"none\", \"neox\" or \"gptj\" (got " +
                                  inQuotes(*style) + ")");
    return rope;
  }
  rope.style = *parsed;
  rope.rotary_offset = r_.optInt(node, "rotary_offset", 0).value_or(0);
  if (r_.failed())
    return rope;
  int64_t default_dim =
      rope.style == RopeStyle::None
          ? 0
          : std::max<int64_t>(qk_head_dim - rope.rotary_offset, 0);
  rope.rotary_dim = r_.optInt(node, "rotary_dim", 0).value_or(default_dim);
  rope.theta = r_.positive(node, "theta", 10000.0);
  if (r_.failed())
    return rope;
  const std::string dim_path = node.at("rotary_dim");
  const std::string got = " (got " + std::to_string(rope.rotary_dim) + ")";
  if (rope.style == RopeStyle::None && rope.rotary_dim != 0)
    r_.fail(dim_path, "must be 0 when style is \"none\"" + got);
  else if (rope.style != RopeStyle::None && rope.rotary_dim < 2)
    r_.fail(dim_path, "rotary dim must be >= 2" + got);
  else if (rope.rotary_dim % 2 != 0)
    r_.fail(dim_path, "rotary dim must be even" + got);
  else if (rope.rotary_offset + rope.rotary_dim > qk_head_dim)
    r_.fail(dim_path, "rotary_offset + rotary dim must be <= the qk head dim " +
                          std::to_string(qk_head_dim) + " (got " +
                          std::to_string(rope.rotary_offset) + " + " +
                          std::to_string(rope.rotary_dim) + ")");
  if (r_.failed())
    return rope;

  Node scaling = r_.optObject(node, "scaling");
  if (r_.failed() || !scaling.value)
    return rope;
  r_.onlyKeys(scaling, {"kind", "factor", "original_max_position",
                        "low_freq_factor", "high_freq_factor", "beta_fast",
                        "beta_slow", "mscale", "mscale_all_dim", "truncate"});
  RopeScaling &s = rope.scaling;
  std::string kind = r_.optString(scaling, "kind").value_or("none");
  if (r_.failed())
    return rope;
  std::optional<RopeScalingKind> scaling_kind = parseScalingKind(kind);
  if (!scaling_kind) {
    r_.fail(scaling.at("kind"),
            "must be \"none\", \"linear\", \"llama3\", \"yarn\" or "
            "\"dynamic\" (got " +
                inQuotes(kind) + ")");
    return rope;
  }
  // Every field is read whatever the kind, so a spec round-trips exactly.
  s.kind = *scaling_kind;
  s.factor = r_.positive(scaling, "factor", 1.0);
  s.original_max_position =
      r_.optInt(scaling, "original_max_position", 0, kMaxPositions).value_or(0);
  s.low_freq_factor = r_.positive(scaling, "low_freq_factor", 1.0);
  s.high_freq_factor = r_.positive(scaling, "high_freq_factor", 4.0);
  s.beta_fast = r_.positive(scaling, "beta_fast", 32.0);
  s.beta_slow = r_.positive(scaling, "beta_slow", 1.0);
  s.mscale = r_.positive(scaling, "mscale", 1.0);
  s.mscale_all_dim = r_.nonNegative(scaling, "mscale_all_dim", 0.0);
  s.truncate = r_.optBool(scaling, "truncate").value_or(true);
  if (r_.failed())
    return rope;
  if (s.kind == RopeScalingKind::Llama3 &&
      !(s.high_freq_factor > s.low_freq_factor))
    r_.fail(scaling.at("high_freq_factor"),
            "must be > low_freq_factor (" + formatNumber(s.high_freq_factor) +
                " <= " + formatNumber(s.low_freq_factor) + ")");
  else if ((s.kind == RopeScalingKind::Llama3 ||
            s.kind == RopeScalingKind::Yarn ||
            s.kind == RopeScalingKind::DynamicNtk) &&
           s.original_max_position < 1)
    r_.fail(scaling.at("original_max_position"),
            std::string("required for rope scaling ") + kind +
                " (must be >= 1)");
  return rope;
}

/// nlohmann's pretty printer puts every array element on its own line; a
/// 62-entry layer list is easier to read on one. Collapses whitespace inside
/// arrays that hold only numbers, skipping string contents.
std::string compactNumberArrays(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      // Copy the string verbatim, honouring escapes.
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != '"')
        j += text[j] == '\\' ? 2 : 1;
      out.append(text, i, std::min(j, text.size() - 1) - i + 1);
      i = std::min(j, text.size() - 1);
      continue;
    }
    if (c == '[') {
      std::size_t close = text.find(']', i);
      if (close != std::string::npos) {
        std::string_view inner(text.data() + i + 1, close - i - 1);
        bool numeric =
            inner.find_first_not_of("0123456789-+.eE, \n") ==
                std::string_view::npos &&
            inner.find_first_of("0123456789") != std::string_view::npos;
        if (numeric) {
          out += '[';
          bool space = false;
          for (char d : inner) {
            if (d == ' ' || d == '\n') {
              space = true;
              continue;
            }
            if (space && out.back() == ',')
              out += ' ';
            space = false;
            out += d;
          }
          out += ']';
          i = close;
          continue;
        }
      }
    }
    out += c;
  }
  return out;
}

Expected<ModelConfig> importParsed(const json &document) {
  // The spec form announces itself; anything else is a Hugging Face config.
  if (document.contains("attnc_spec"))
    return SpecImporter(document).run();
  return HfImporter(document).run();
}

} // namespace

Expected<ModelConfig> importModelConfig(std::string_view json_text) {
#if defined(__cpp_exceptions)
  // Nothing below is meant to throw; this only keeps a library bug or an
  // allocation failure from crossing the API as an exception.
  try {
#endif
    Expected<json> document = parseJson(json_text);
    if (!document)
      return document.error();
    return importParsed(*document);
#if defined(__cpp_exceptions)
  } catch (const std::exception &ex) {
    return Error{"<json>", std::string("internal error: ") + ex.what()};
  } catch (...) {
    return Error{"<json>", "internal error"};
  }
#endif
}

Expected<ModelConfig> importModelConfigFile(const std::string &path) {
  const std::string field = path.empty() ? "<path>" : path;
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return Error{field,
                 std::string("cannot read file: ") + std::strerror(errno)};
  std::string text;
  char buffer[1 << 16];
  bool too_large = false;
  std::size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    text.append(buffer, got);
    if (text.size() > kMaxFileBytes) {
      too_large = true;
      break;
    }
  }
  // fopen succeeds on a directory; the read is what fails (EISDIR).
  int read_errno = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (read_errno != 0)
    return Error{field,
                 std::string("cannot read file: ") + std::strerror(read_errno)};
  if (too_large)
    return Error{field, "file is larger than " +
                            std::to_string(kMaxFileBytes >> 20) +
                            " MiB; not a config"};
  if (text.empty())
    return Error{field, "file is empty"};
  return importModelConfig(text);
}

std::string toSpecJson(const ModelConfig &config) {
  ordered_json spec;
  spec["attnc_spec"] = kSpecVersion;
  spec["model_type"] = config.model_type;
  spec["dtype"] = config.dtype;
  spec["num_layers"] = config.num_layers;
  spec["max_position_embeddings"] = config.max_position_embeddings;
  ordered_json kinds = ordered_json::array();
  for (const LayerKind &kind : config.kinds) {
    ordered_json k;
    k["name"] = kind.name;
    k["layers"] = kind.layers;
    k["num_q_heads"] = kind.heads.num_q_heads;
    k["num_kv_heads"] = kind.heads.num_kv_heads;
    k["qk_head_dim"] = kind.heads.qk_head_dim;
    k["v_head_dim"] = kind.heads.v_head_dim;
    k["gate"] = gateLayoutName(kind.heads.gate);
    k["qk_norm"] = normStyleName(kind.qk_norm);
    k["norm_eps"] = kind.norm_eps;
    k["norm_before_rope"] = kind.norm_before_rope;
    const RopeConfig &rope = kind.rope;
    const RopeScaling &s = rope.scaling;
    ordered_json scaling;
    scaling["kind"] = ropeScalingKindName(s.kind);
    scaling["factor"] = s.factor;
    scaling["original_max_position"] = s.original_max_position;
    scaling["low_freq_factor"] = s.low_freq_factor;
    scaling["high_freq_factor"] = s.high_freq_factor;
    scaling["beta_fast"] = s.beta_fast;
    scaling["beta_slow"] = s.beta_slow;
    scaling["mscale"] = s.mscale;
    scaling["mscale_all_dim"] = s.mscale_all_dim;
    scaling["truncate"] = s.truncate;
    ordered_json r;
    r["style"] = ropeStyleName(rope.style);
    r["rotary_dim"] = rope.rotary_dim;
    r["rotary_offset"] = rope.rotary_offset;
    r["theta"] = rope.theta;
    r["scaling"] = std::move(scaling);
    k["rope"] = std::move(r);
    k["sliding_window"] = kind.sliding_window;
    k["sinks"] = kind.sinks;
    k["softmax_scale"] = kind.softmax_scale;
    k["logit_softcap"] = kind.logit_softcap;
    k["value_scale"] = kind.value_scale;
    kinds.push_back(std::move(k));
  }
  spec["layer_kinds"] = std::move(kinds);
  // Replace, not throw, should a hand-built config hold invalid UTF-8.
  return compactNumberArrays(
             spec.dump(2, ' ', false, ordered_json::error_handler_t::replace)) +
         "\n";
}

} // namespace attnc
