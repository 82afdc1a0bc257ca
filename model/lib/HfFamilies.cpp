//===- HfFamilies.cpp - The family table, read from its data file ---------===//
//
// Parses model/families/hf-families.json (embedded by HfFamilyTable.cpp)
// into FamilyRules. Every key is checked: an unknown key, a wrong type or an
// unknown enum spelling is an error naming the row and the key, so a typo in
// the table fails the tests instead of silently taking a default.
//
//===----------------------------------------------------------------------===//

#include "HfFamilies.h"

#include "ConfigReader.h"

#include <set>

namespace attnc::config_import {

const HeadKeys &mainHeadKeys() {
  static const HeadKeys keys{"num_attention_heads", "num_key_value_heads",
                             "head_dim", "v_head_dim", /*main=*/true};
  return keys;
}

namespace {

class TableParser {
public:
  Result<std::vector<FamilyRules>> run(std::string_view text);

private:
  std::optional<FamilyRules> readRow(const Node &row);
  std::optional<Switch> readSwitch(const Node &parent, const char *key);
  std::string str(const Node &node, const char *key,
                  const std::string &fallback = "") {
    return r_.optString(node, key).value_or(fallback);
  }
  /// `key` spelled as one of `names` (index into `values`).
  template <typename T>
  T choice(const Node &node, const char *key,
           std::initializer_list<std::pair<const char *, T>> values,
           T fallback) {
    std::optional<std::string> name = r_.optString(node, key);
    if (!name)
      return fallback;
    std::string expected;
    for (const auto &[spelling, value] : values) {
      if (*name == spelling)
        return value;
      expected += std::string(expected.empty() ? "" : ", ") + "\"" +
                  spelling + "\"";
    }
    r_.fail(node.at(key), "must be one of " + expected + " (got " +
                              inQuotes(*name) + ")");
    return fallback;
  }
  Slot slot(const Node &node, const char *key, Slot fallback) {
    return choice<Slot>(node, key,
                        {{"full", Slot::Full},
                         {"sliding", Slot::Sliding},
                         {"skip", Slot::Skip}},
                        fallback);
  }

  Reader r_;
};

Result<std::vector<FamilyRules>> TableParser::run(std::string_view text) {
  Result<json> document = parseConfigJson(text);
  if (!document)
    return document.status();
  Node root{&*document, ""};
  r_.onlyKeys(root, {"families"});
  const json *rows = r_.optArray(root, "families");
  if (r_.failed())
    return r_.error();
  if (!rows || rows->empty())
    return Status("families", "required: a non-empty array of rows");
  std::vector<FamilyRules> table;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < rows->size(); ++i) {
    std::string path = indexPath("families", i);
    if (!(*rows)[i].is_object())
      return Status(path, "must be an object (got " + describe((*rows)[i]) +
                              ")");
    std::optional<FamilyRules> family = readRow(Node{&(*rows)[i], path});
    if (!family)
      return r_.error();
    for (const std::string &type : family->model_types)
      if (!seen.insert(type).second)
        return Status(json_util::memberPath(path, "model_types"),
                      "model type " + inQuotes(type) +
                          " is already in an earlier row");
    table.push_back(std::move(*family));
  }
  return table;
}

std::optional<Switch> TableParser::readSwitch(const Node &parent,
                                              const char *key) {
  Node node = r_.optObject(parent, key);
  if (!node.value)
    return std::nullopt;
  r_.onlyKeys(node, {"key", "equals", "default"});
  Switch s;
  s.key = str(node, "key");
  if (s.key.empty() && !r_.failed())
    r_.fail(node.at("key"), "required field is missing");
  s.equals = r_.optString(node, "equals");
  s.default_value = r_.optBool(node, "default").value_or(false);
  return s;
}

std::optional<FamilyRules> TableParser::readRow(const Node &row) {
  r_.onlyKeys(row, {"model_types", "head_dim", "num_layers", "kv_heads",
                    "key_aliases", "qk_norm", "rope", "gate", "layers",
                    "window", "chunk_key", "sinks", "sliding", "scale",
                    "softcap",
                    "value_scale_key", "query_temperature", "mla",
                    "defaults", "refuse"});
  FamilyRules f;
  const json *types = r_.optArray(row, "model_types");
  if (r_.failed())
    return std::nullopt;
  if (!types || types->empty()) {
    r_.fail(row.at("model_types"), "required: a non-empty array of strings");
    return std::nullopt;
  }
  for (std::size_t i = 0; i < types->size(); ++i) {
    if (!(*types)[i].is_string()) {
      r_.fail(indexPath(row.at("model_types"), i),
              "must be a string (got " + describe((*types)[i]) + ")");
      return std::nullopt;
    }
    f.model_types.push_back((*types)[i].get<std::string>());
  }

  Node head = r_.optObject(row, "head_dim");
  r_.onlyKeys(head, {"default", "forced"});
  f.head_dim_default = r_.optInt(head, "default", 1).value_or(0);
  f.head_dim_forced = r_.optBool(head, "forced").value_or(false);

  Node layers_count = r_.optObject(row, "num_layers");
  r_.onlyKeys(layers_count, {"key", "multiplier"});
  f.num_layers_key = str(layers_count, "key", "num_hidden_layers");
  f.num_layers_multiplier =
      r_.optInt(layers_count, "multiplier", 1, 16).value_or(1);

  std::string kv = str(row, "kv_heads");
  if (!kv.empty() && kv != "falcon")
    r_.fail(row.at("kv_heads"),
            "must be \"falcon\" (got " + inQuotes(kv) + ")");
  f.falcon_kv_heads = kv == "falcon";

  Node aliases = r_.optObject(row, "key_aliases");
  if (aliases.value)
    for (const auto &[canonical, alias] : aliases.value->items()) {
      if (!alias.is_string()) {
        r_.fail(aliases.at(canonical),
                "must be a string (got " + describe(alias) + ")");
        return std::nullopt;
      }
      f.key_aliases.emplace_back(canonical, alias.get<std::string>());
    }

  Node norm = r_.optObject(row, "qk_norm");
  r_.onlyKeys(norm, {"style", "scope", "bias", "before_rope", "enabled_by",
                     "eps_key", "rope_layers_only"});
  if (norm.value && !norm.has("style") && !r_.failed())
    r_.fail(norm.at("style"), "required field is missing");
  f.norm.style = choice<NormStyle>(norm, "style",
                                   {{"none", NormStyle::None},
                                    {"rms", NormStyle::Plain},
                                    {"gemma", NormStyle::Gemma},
                                    {"unweighted", NormStyle::Unweighted},
                                    {"layernorm", NormStyle::LayerNorm}},
                                   NormStyle::None);
  f.norm.scope = choice<NormScope>(norm, "scope",
                                   {{"head", NormScope::Head},
                                    {"head_weights", NormScope::HeadWeights},
                                    {"projection", NormScope::Projection}},
                                   NormScope::Head);
  f.norm.bias = r_.optBool(norm, "bias").value_or(false);
  if (f.norm.bias && f.norm.style != NormStyle::LayerNorm && !r_.failed())
    r_.fail(norm.at("bias"), "a q/k norm bias needs style \"layernorm\"");
  f.norm.before_rope = r_.optBool(norm, "before_rope").value_or(true);
  f.norm.enabled_by = readSwitch(norm, "enabled_by");
  f.norm.eps_key = str(norm, "eps_key");
  f.norm.rope_layers_only = r_.optBool(norm, "rope_layers_only").value_or(false);

  Node rope = r_.optObject(row, "rope");
  r_.onlyKeys(rope, {"style", "interleave_key", "enabled_by",
                     "partial_rotary_factor", "rotary_dim_key", "theta",
                     "ntk_alpha", "nope", "default_parameters"});
  if (rope.value && !rope.has("style") && !r_.failed())
    r_.fail(rope.at("style"), "required field is missing");
  f.rope.style = choice<RopeStyle>(rope, "style",
                                   {{"none", RopeStyle::None},
                                    {"neox", RopeStyle::Neox},
                                    {"gptj", RopeStyle::Gptj}},
                                   RopeStyle::Neox);
  f.rope.interleave = readSwitch(rope, "interleave_key");
  f.rope.enabled_by = readSwitch(rope, "enabled_by");
  f.rope.partial_rotary_factor =
      r_.optNumber(rope, "partial_rotary_factor").value_or(0.0);
  if (!(f.rope.partial_rotary_factor >= 0 &&
        f.rope.partial_rotary_factor <= 1) &&
      !r_.failed())
    r_.fail(rope.at("partial_rotary_factor"), "must be in (0, 1]");
  f.rope.rotary_dim_key = r_.optBool(rope, "rotary_dim_key").value_or(true);
  f.rope.theta = r_.positive(rope, "theta", 10000.0);
  f.rope.ntk_alpha = r_.optBool(rope, "ntk_alpha").value_or(false);
  Node rope_defaults = r_.optObject(rope, "default_parameters");
  if (rope_defaults.value)
    f.rope.default_parameters = *rope_defaults.value;
  Node nope = r_.optObject(rope, "nope");
  r_.onlyKeys(nope, {"rule", "when_key", "key", "interval_key", "interval"});
  if (nope.value) {
    f.rope.nope = choice<NopeRule>(nope, "rule",
                                   {{"full_layers", NopeRule::FullLayers},
                                    {"no_rope_layers", NopeRule::NoRopeLayers}},
                                   NopeRule::None);
    if (f.rope.nope == NopeRule::None && !r_.failed())
      r_.fail(nope.at("rule"), "required field is missing");
    f.rope.nope_when_key = str(nope, "when_key");
    f.rope.nope_key = str(nope, "key");
    f.rope.nope_interval_key = str(nope, "interval_key");
    f.rope.nope_interval = r_.optInt(nope, "interval", 1).value_or(0);
    if (f.rope.nope == NopeRule::NoRopeLayers &&
        (f.rope.nope_key.empty() || f.rope.nope_interval == 0) && !r_.failed())
      r_.fail(nope.path, "rule \"no_rope_layers\" needs \"key\" and "
                         "\"interval\"");
  }

  Node gate = r_.optObject(row, "gate");
  r_.onlyKeys(gate, {"layout", "enabled_by"});
  if (gate.value) {
    std::string layout = str(gate, "layout");
    std::optional<GateLayout> parsed = parseGateLayout(layout);
    if (!parsed && !r_.failed())
      r_.fail(gate.at("layout"),
              "must be \"none\", \"qkvg\", \"interleaved\" or \"head_scalar\" "
              "(got " + inQuotes(layout) + ")");
    f.gate.layout = parsed.value_or(GateLayout::None);
    f.gate.enabled_by = readSwitch(gate, "enabled_by");
  }

  Node layers = r_.optObject(row, "layers");
  r_.onlyKeys(layers, {"rule", "key", "default", "other", "even", "odd",
                       "base", "fallback", "list_key", "layer_types",
                       "enabled_by"});
  if (layers.value && !layers.has("rule") && !r_.failed())
    r_.fail(layers.at("rule"), "required field is missing");
  LayerRule &l = f.layers;
  l.pattern = choice<LayerPattern>(
      layers, "rule",
      {{"all_full", LayerPattern::AllFull},
       {"all_skip", LayerPattern::AllSkip},
       {"all_sliding_with_window", LayerPattern::AllSlidingWithWindow},
       {"slide_from_layer", LayerPattern::SlideFromLayer},
       {"even_slide_below", LayerPattern::EvenSlideBelow},
       {"every_nth_full", LayerPattern::EveryNthFull},
       {"first_of_n_full", LayerPattern::FirstOfNFull},
       {"alternate", LayerPattern::Alternate},
       {"pattern_list", LayerPattern::PatternList},
       {"index_list", LayerPattern::IndexList},
       {"nope_layers_slide", LayerPattern::NopeLayersSlide}},
      LayerPattern::AllFull);
  l.key = str(layers, "key");
  l.default_n = r_.optInt(layers, "default", 1, kMaxLayers).value_or(0);
  l.other = slot(layers, "other", Slot::Sliding);
  l.even = slot(layers, "even", Slot::Full);
  l.odd = slot(layers, "odd", Slot::Full);
  l.base = r_.optInt(layers, "base", 0, 1).value_or(0);
  l.fallback = str(layers, "fallback");
  if (!l.fallback.empty() && l.fallback != "all_full" && l.fallback != "kimi" &&
      !r_.failed())
    r_.fail(layers.at("fallback"), "must be \"all_full\" or \"kimi\" (got " +
                                       inQuotes(l.fallback) + ")");
  l.list_key = str(layers, "list_key");
  l.layer_types = r_.optBool(layers, "layer_types").value_or(true);
  l.enabled_by = readSwitch(layers, "enabled_by");
  const bool needs_n = l.pattern == LayerPattern::SlideFromLayer ||
                       l.pattern == LayerPattern::EvenSlideBelow ||
                       l.pattern == LayerPattern::EveryNthFull ||
                       l.pattern == LayerPattern::FirstOfNFull;
  if (needs_n && l.default_n == 0 && !r_.failed())
    r_.fail(layers.at("default"), "required by this rule");
  if ((l.pattern == LayerPattern::PatternList ||
       l.pattern == LayerPattern::IndexList) &&
      l.key.empty() && !r_.failed())
    r_.fail(layers.at("key"), "required by this rule");
  if (l.pattern == LayerPattern::NopeLayersSlide &&
      f.rope.nope != NopeRule::NoRopeLayers && !r_.failed())
    r_.fail(layers.at("rule"),
            "\"nope_layers_slide\" needs rope.nope rule \"no_rope_layers\"");

  Node window = r_.optObject(row, "window");
  r_.onlyKeys(window, {"default"});
  f.default_window = r_.optInt(window, "default", 1, kMaxPositions).value_or(0);
  f.chunk_key = str(row, "chunk_key");

  Node sinks = r_.optObject(row, "sinks");
  r_.onlyKeys(sinks, {"rule", "full_key", "sliding_key"});
  if (sinks.value) {
    f.sinks.pattern = choice<SinkPattern>(
        sinks, "rule",
        {{"always", SinkPattern::Always}, {"per_kind", SinkPattern::PerKindFlag}},
        SinkPattern::None);
    f.sinks.full_key = str(sinks, "full_key");
    f.sinks.sliding_key = str(sinks, "sliding_key");
    if (f.sinks.pattern == SinkPattern::None && !r_.failed())
      r_.fail(sinks.at("rule"), "required field is missing");
  }

  Node sliding = r_.optObject(row, "sliding");
  r_.onlyKeys(sliding, {"heads", "window_size_key", "theta_key", "theta",
                        "unscaled_rope"});
  Node sliding_heads = r_.optObject(sliding, "heads");
  r_.onlyKeys(sliding_heads,
              {"num_heads", "num_kv_heads", "head_dim", "v_head_dim"});
  if (sliding_heads.value) {
    HeadKeys keys{str(sliding_heads, "num_heads"),
                  str(sliding_heads, "num_kv_heads"),
                  str(sliding_heads, "head_dim"),
                  str(sliding_heads, "v_head_dim"), /*main=*/false};
    if ((keys.num_heads.empty() || keys.num_kv_heads.empty() ||
         keys.head_dim.empty() || keys.v_head_dim.empty()) &&
        !r_.failed())
      r_.fail(sliding_heads.path, "needs num_heads, num_kv_heads, head_dim "
                                  "and v_head_dim");
    f.sliding.heads = keys;
  }
  f.sliding.window_size_key = str(sliding, "window_size_key");
  f.sliding.theta_key = str(sliding, "theta_key");
  f.sliding.theta = r_.positive(sliding, "theta", 10000.0);
  f.sliding.unscaled_rope = r_.optBool(sliding, "unscaled_rope").value_or(false);

  Node scale = r_.optObject(row, "scale");
  r_.onlyKeys(scale, {"rule", "key", "default", "q_lora_scale"});
  f.scale.pattern = choice<ScalePattern>(
      scale, "rule",
      {{"head_dim", ScalePattern::HeadDim},
       {"inverse_sqrt_key", ScalePattern::InverseSqrtKey},
       {"key", ScalePattern::Key}},
      ScalePattern::HeadDim);
  f.scale.key = str(scale, "key");
  f.scale.default_value = r_.positive(scale, "default", 1.0);
  f.scale.q_lora_scale = r_.optBool(scale, "q_lora_scale").value_or(false);
  if (f.scale.pattern != ScalePattern::HeadDim && f.scale.key.empty() &&
      !r_.failed())
    r_.fail(scale.at("key"), "required by this rule");

  Node softcap = r_.optObject(row, "softcap");
  r_.onlyKeys(softcap, {"key", "default"});
  f.softcap_key = str(softcap, "key");
  f.softcap_default = r_.nonNegative(softcap, "default", 0.0);
  f.value_scale_key = str(row, "value_scale_key");

  Node temperature = r_.optObject(row, "query_temperature");
  r_.onlyKeys(temperature, {"enabled_by", "floor_scale_key", "floor_scale",
                            "scale_key", "scale"});
  if (temperature.value) {
    QueryTemperatureRule &t = f.query_temperature;
    t.present = true;
    t.enabled_by = readSwitch(temperature, "enabled_by");
    t.floor_scale_key = str(temperature, "floor_scale_key");
    t.scale_key = str(temperature, "scale_key");
    t.floor_scale = r_.positive(temperature, "floor_scale", 1.0);
    t.scale = r_.positive(temperature, "scale", 1.0);
    if (f.rope.nope == NopeRule::None && !r_.failed())
      r_.fail(temperature.path, "applies to NoPE layers: needs rope.nope");
  }

  Node mla = r_.optObject(row, "mla");
  r_.onlyKeys(mla, {"rope_deinterleave", "kv_lora_scale"});
  if (mla.value) {
    f.mla.present = true;
    f.mla.rope_deinterleave =
        r_.optBool(mla, "rope_deinterleave").value_or(false);
    f.mla.kv_lora_scale = r_.optBool(mla, "kv_lora_scale").value_or(false);
  }

  Node defaults = r_.optObject(row, "defaults");
  r_.onlyKeys(defaults, {"max_position_embeddings"});
  f.default_max_positions =
      r_.optInt(defaults, "max_position_embeddings", 1, kMaxPositions)
          .value_or(0);

  if (const json *refusals = r_.optArray(row, "refuse")) {
    for (std::size_t i = 0; i < refusals->size(); ++i) {
      std::string path = indexPath(row.at("refuse"), i);
      if (!(*refusals)[i].is_object()) {
        r_.fail(path, "must be an object");
        break;
      }
      Node item{&(*refusals)[i], path};
      r_.onlyKeys(item, {"when", "keys", "feature"});
      Refusal refusal;
      refusal.when = choice<Refusal::When>(
          item, "when",
          {{"always", Refusal::When::Always},
           {"true", Refusal::When::True},
           {"present", Refusal::When::Present},
           {"nonzero", Refusal::When::Nonzero}},
          Refusal::When::Always);
      refusal.feature = str(item, "feature");
      if (refusal.feature.empty() && !r_.failed())
        r_.fail(item.at("feature"), "required field is missing");
      if (const json *keys = r_.optArray(item, "keys"))
        for (const json &key : *keys)
          if (key.is_string())
            refusal.keys.push_back(key.get<std::string>());
      if (refusal.when != Refusal::When::Always && refusal.keys.empty() &&
          !r_.failed())
        r_.fail(item.at("keys"), "required unless \"when\" is \"always\"");
      f.refusals.push_back(std::move(refusal));
    }
  }
  if (r_.failed())
    return std::nullopt;
  return f;
}

} // namespace

Result<std::vector<FamilyRules>> parseFamilyTable(std::string_view text) {
  return TableParser().run(text);
}

const Result<std::vector<FamilyRules>> &familyTable() {
  // A function-local static: initialised once, thread-safe (C++11).
  static const Result<std::vector<FamilyRules>> table =
      parseFamilyTable(familyTableText());
  return table;
}

const FamilyRules *familyOf(const std::string &model_type) {
  const Result<std::vector<FamilyRules>> &table = familyTable();
  if (!table)
    return nullptr;
  for (const FamilyRules &family : *table)
    for (const std::string &name : family.model_types)
      if (model_type == name)
        return &family;
  return nullptr;
}

} // namespace attnc::config_import
