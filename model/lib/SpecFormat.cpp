//===- SpecFormat.cpp - The attnc spec: import and export -----------------===//
//
// The spec form spells out every field of ModelConfig and needs no family
// knowledge; toSpecJson writes it and importModelConfig(toSpecJson(c))
// reproduces c exactly (doubles included). Unknown keys are refused, so a
// misspelt optional key cannot silently take its default; keys starting
// with '_' are comments.
//
//===----------------------------------------------------------------------===//

#include "SpecFormat.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace attnc::config_import {

namespace {

using ordered_json = nlohmann::ordered_json;

constexpr int kSpecVersion = 1;

class SpecImporter {
public:
  explicit SpecImporter(const json &root) : root_{&root, ""} {}
  Result<ModelConfig> run();

private:
  std::optional<LayerKind> readKind(const Node &node,
                                    std::vector<int> &layer_owner, int index);
  RopeConfig readRope(const Node &node, int64_t qk_head_dim);
  bool readMla(const Node &node, LayerKind &kind);

  Reader r_;
  Node root_;
  ModelConfig config_;
};

Result<ModelConfig> SpecImporter::run() {
  r_.onlyKeys(root_, {"attnc_spec", "model_type", "dtype", "num_layers",
                      "max_position_embeddings", "layer_kinds"});
  int64_t version = r_.reqInt(root_, "attnc_spec", 0, 1000000);
  if (r_.failed())
    return r_.error();
  if (version != kSpecVersion)
    return Status("attnc_spec", "unsupported spec version " +
                                    std::to_string(version) +
                                    " (this build reads " +
                                    std::to_string(kSpecVersion) + ")");

  config_.model_type = r_.optString(root_, "model_type").value_or("");
  std::string dtype = r_.optString(root_, "dtype").value_or("bf16");
  if (r_.failed())
    return r_.error();
  if (dtype != "bf16" && dtype != "fp16" && dtype != "fp32")
    return Status("dtype", "must be \"bf16\", \"fp16\" or \"fp32\" (got " +
                               inQuotes(dtype) + ")");
  config_.dtype = dtype;
  config_.num_layers = r_.reqInt(root_, "num_layers", 1, kMaxLayers);
  config_.max_position_embeddings =
      r_.optInt(root_, "max_position_embeddings", 0, kMaxPositions).value_or(0);
  const json *kinds = r_.optArray(root_, "layer_kinds");
  if (r_.failed())
    return r_.error();
  if (!kinds)
    return Status("layer_kinds", "required field is missing");
  if (kinds->empty())
    return Status("layer_kinds", "must have at least one layer kind");

  // Which kind owns each layer, so no layer is claimed twice.
  std::vector<int> layer_owner(static_cast<std::size_t>(config_.num_layers),
                               -1);
  std::set<std::string> names;
  for (std::size_t i = 0; i < kinds->size(); ++i) {
    std::string path = indexPath("layer_kinds", i);
    const json &item = (*kinds)[i];
    if (!item.is_object())
      return Status(path, "must be an object (got " + describe(item) + ")");
    std::optional<LayerKind> kind =
        readKind(Node{&item, path}, layer_owner, static_cast<int>(i));
    if (!kind)
      return r_.error();
    if (!names.insert(kind->name).second)
      return Status(json_util::memberPath(path, "name"),
                    "duplicate layer kind name " + inQuotes(kind->name));
    config_.kinds.push_back(std::move(*kind));
  }
  return config_;
}

std::optional<LayerKind> SpecImporter::readKind(const Node &node,
                                                std::vector<int> &layer_owner,
                                                int index) {
  r_.onlyKeys(node, {"name", "layers", "num_q_heads", "num_kv_heads",
                     "qk_head_dim", "v_head_dim", "gate", "qk_norm",
                     "qk_norm_scope", "qk_norm_bias", "norm_eps",
                     "norm_before_rope", "rope", "sliding_window", "sinks",
                     "softmax_scale", "logit_softcap", "value_scale",
                     "attention_chunk", "query_temperature", "mla"});
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
  if (!json_util::isIdentifier(*name)) {
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
    r_.fail(node.at("gate"), "must be \"none\", \"qkvg\", \"interleaved\" or "
                             "\"head_scalar\" (got " +
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
            "required field is missing (\"none\"|\"rms\"|\"gemma\"|"
            "\"unweighted\"|\"layernorm\")");
    return std::nullopt;
  }
  std::optional<NormStyle> norm_style = parseNormStyle(*norm);
  if (!norm_style) {
    r_.fail(node.at("qk_norm"), "must be \"none\", \"rms\", \"gemma\", "
                                "\"unweighted\" or \"layernorm\" (got " +
                                    inQuotes(*norm) + ")");
    return std::nullopt;
  }
  kind.qk_norm = *norm_style;
  std::string scope = r_.optString(node, "qk_norm_scope").value_or("head");
  kind.qk_norm_bias = r_.optBool(node, "qk_norm_bias").value_or(false);
  kind.norm_eps = r_.positive(node, "norm_eps", 1e-6);
  kind.norm_before_rope = r_.optBool(node, "norm_before_rope").value_or(true);
  if (r_.failed())
    return std::nullopt;
  std::optional<NormScope> norm_scope = parseNormScope(scope);
  if (!norm_scope) {
    r_.fail(node.at("qk_norm_scope"),
            "must be \"head\", \"head_weights\" or \"projection\" (got " +
                inQuotes(scope) + ")");
    return std::nullopt;
  }
  kind.qk_norm_scope = *norm_scope;
  if (kind.qk_norm == NormStyle::None && kind.qk_norm_scope != NormScope::Head) {
    r_.fail(node.at("qk_norm_scope"),
            "must be \"head\" when qk_norm is \"none\" (got " +
                inQuotes(scope) + ")");
    return std::nullopt;
  }
  if (kind.qk_norm_bias && kind.qk_norm != NormStyle::LayerNorm) {
    r_.fail(node.at("qk_norm_bias"), "a q/k norm bias needs qk_norm "
                                     "\"layernorm\" (got " +
                                         inQuotes(*norm) + ")");
    return std::nullopt;
  }
  if (kind.qk_norm_scope == NormScope::HeadWeights &&
      kind.qk_norm == NormStyle::Unweighted) {
    r_.fail(node.at("qk_norm_scope"),
            "\"head_weights\" needs a weighted norm (qk_norm is "
            "\"unweighted\")");
    return std::nullopt;
  }

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
  if (!kind.norm_before_rope &&
      (kind.qk_norm == NormStyle::None || kind.rope.style == RopeStyle::None)) {
    r_.fail(node.at("norm_before_rope"),
            "false needs both a q/k norm and a rope (qk_norm is " +
                inQuotes(normStyleName(kind.qk_norm)) + ", rope.style is " +
                inQuotes(ropeStyleName(kind.rope.style)) + ")");
    return std::nullopt;
  }

  kind.sliding_window =
      r_.optInt(node, "sliding_window", 0, kMaxPositions).value_or(0);
  kind.attention_chunk =
      r_.optInt(node, "attention_chunk", 0, kMaxPositions).value_or(0);
  Node temperature = r_.optObject(node, "query_temperature");
  if (r_.failed())
    return std::nullopt;
  if (temperature.value) {
    r_.onlyKeys(temperature, {"floor_scale", "scale"});
    kind.query_temperature.floor_scale =
        r_.positive(temperature, "floor_scale", 8192.0);
    kind.query_temperature.scale = r_.nonNegative(temperature, "scale", 0.1);
    if (r_.failed())
      return std::nullopt;
  }
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
  if (!readMla(node, kind))
    return std::nullopt;
  return kind;
}

/// The optional "mla" object: the latent description of an MLA kind, whose
/// other fields are its decompressed heads. Features the MLA kernels do not
/// have are refused naming the field.
bool SpecImporter::readMla(const Node &node, LayerKind &kind) {
  Node mla = r_.optObject(node, "mla");
  if (r_.failed())
    return false;
  if (!mla.value)
    return true;
  r_.onlyKeys(mla, {"kv_lora_rank", "kv_norm_eps", "latent_scale",
                    "rope_deinterleave", "block_size"});
  MlaConfig m;
  std::optional<int64_t> rank = r_.optInt(mla, "kv_lora_rank", 1);
  m.kv_norm_eps = r_.positive(mla, "kv_norm_eps", 1e-6);
  m.latent_scale = r_.positive(mla, "latent_scale", 1.0);
  m.rope_deinterleave = r_.optBool(mla, "rope_deinterleave").value_or(false);
  m.block_size = r_.optInt(mla, "block_size", 1).value_or(64);
  if (r_.failed())
    return false;
  if (!rank) {
    r_.fail(mla.at("kv_lora_rank"), "required field is missing");
    return false;
  }
  m.kv_lora_rank = *rank;
  const std::string mla_rule = " (an MLA kind: its heads are the "
                               "decompressed form, one k/v head per query "
                               "head, and the rope part comes last)";
  const RopeConfig &rope = kind.rope;
  if (kind.heads.num_kv_heads != kind.heads.num_q_heads) {
    r_.fail(node.at("num_kv_heads"),
            "must equal num_q_heads " +
                std::to_string(kind.heads.num_q_heads) + " (got " +
                std::to_string(kind.heads.num_kv_heads) + ")" + mla_rule);
    return false;
  }
  const Node rope_node{nullptr, node.at("rope")};
  if (rope.style == RopeStyle::None) {
    r_.fail(rope_node.at("style"), "must be \"neox\" or \"gptj\" for an MLA "
                                   "kind (its k_pe is rotated)");
    return false;
  }
  if (rope.rotary_offset + rope.rotary_dim != kind.heads.qk_head_dim) {
    r_.fail(rope_node.at("rotary_offset"),
            "rotary_offset + rotary_dim must equal qk_head_dim " +
                std::to_string(kind.heads.qk_head_dim) + " (got " +
                std::to_string(rope.rotary_offset) + " + " +
                std::to_string(rope.rotary_dim) + ")" + mla_rule);
    return false;
  }
  if (rope.rotary_offset < 1) {
    r_.fail(rope_node.at("rotary_offset"),
            "must be >= 1 for an MLA kind (it is qk_nope_head_dim)");
    return false;
  }
  if (m.rope_deinterleave && rope.style != RopeStyle::Gptj) {
    r_.fail(mla.at("rope_deinterleave"),
            "true needs rope.style \"gptj\" (it reads interleaved pairs), "
            "got \"" + std::string(ropeStyleName(rope.style)) + "\"");
    return false;
  }
  Result<LatentCacheLayout> layout =
      computeLatentCacheLayout(m.kv_lora_rank, rope.rotary_dim, m.block_size);
  if (!layout) {
    const std::string field = layout.status().field;
    r_.fail(field == "rope_head_dim" ? rope_node.at("rotary_dim")
                                     : mla.at(field),
            layout.status().rule);
    return false;
  }
  // What the latent kernels have no form for.
  auto refuse = [&](const char *key, const std::string &what) {
    r_.fail(node.at(key), what + " is not supported in an MLA kind");
    return false;
  };
  if (kind.heads.gate != GateLayout::None)
    return refuse("gate", "an output gate");
  if (kind.qk_norm != NormStyle::None)
    return refuse("qk_norm", "a q/k norm");
  if (kind.sliding_window != 0)
    return refuse("sliding_window", "a sliding window");
  if (kind.attention_chunk != 0)
    return refuse("attention_chunk", "chunked attention");
  if (kind.sinks)
    return refuse("sinks", "attention sinks");
  if (kind.logit_softcap != 0)
    return refuse("logit_softcap", "a logit soft-cap");
  if (kind.value_scale != 1.0)
    return refuse("value_scale", "a value scale");
  if (kind.query_temperature.floor_scale > 0)
    return refuse("query_temperature", "a query temperature");
  kind.mla = m;
  return true;
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
                        "beta_slow", "mscale", "mscale_all_dim", "truncate",
                        "short_factor", "long_factor", "attention_factor"});
  RopeScaling &s = rope.scaling;
  std::string kind = r_.optString(scaling, "kind").value_or("none");
  if (r_.failed())
    return rope;
  std::optional<RopeScalingKind> scaling_kind = parseScalingKind(kind);
  if (!scaling_kind) {
    r_.fail(scaling.at("kind"),
            "must be \"none\", \"linear\", \"llama3\", \"yarn\", "
            "\"dynamic\" or \"longrope\" (got " +
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
  s.attention_factor = r_.nonNegative(scaling, "attention_factor", 0.0);
  // longrope's divisors: rotary_dim / 2 positive numbers each.
  const bool longrope = s.kind == RopeScalingKind::LongRope;
  const std::size_t half = static_cast<std::size_t>(rope.rotary_dim / 2);
  for (auto [key, list] : {std::pair<const char *, std::vector<double> *>{
                               "short_factor", &s.short_factor},
                           {"long_factor", &s.long_factor}}) {
    std::optional<std::vector<double>> values = r_.optPositiveList(scaling, key);
    if (r_.failed())
      return rope;
    *list = values.value_or(std::vector<double>());
    if (!longrope && !list->empty())
      r_.fail(scaling.at(key), "only allowed with kind \"longrope\"");
    else if (longrope && list->size() != half)
      r_.fail(scaling.at(key),
              "longrope needs rotary_dim / 2 = " + std::to_string(half) +
                  " values (got " + std::to_string(list->size()) + ")");
  }
  if (s.attention_factor != 0 && s.kind != RopeScalingKind::Yarn && !longrope)
    r_.fail(scaling.at("attention_factor"),
            "only allowed with kind \"yarn\" or \"longrope\"");
  if (r_.failed())
    return rope;
  if (s.kind == RopeScalingKind::Llama3 &&
      !(s.high_freq_factor >= s.low_freq_factor))
    r_.fail(scaling.at("high_freq_factor"),
            "must be >= low_freq_factor (" + formatNumber(s.high_freq_factor) +
                " < " + formatNumber(s.low_freq_factor) + ")");
  else if ((s.kind == RopeScalingKind::Llama3 ||
            s.kind == RopeScalingKind::Yarn ||
            s.kind == RopeScalingKind::LongRope ||
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

} // namespace

Result<ModelConfig> importSpec(const json &document) {
  return SpecImporter(document).run();
}

} // namespace attnc::config_import

namespace attnc {

std::string toSpecJson(const ModelConfig &config) {
  using config_import::compactNumberArrays;
  using config_import::kSpecVersion;
  using config_import::ordered_json;
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
    // Written only when they differ from their defaults, so earlier specs
    // stay byte for byte as they were.
    if (kind.qk_norm_scope != NormScope::Head)
      k["qk_norm_scope"] = normScopeName(kind.qk_norm_scope);
    if (kind.qk_norm_bias)
      k["qk_norm_bias"] = true;
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
    // Written only where set, so specs of other kinds read as before.
    if (!s.short_factor.empty())
      scaling["short_factor"] = s.short_factor;
    if (!s.long_factor.empty())
      scaling["long_factor"] = s.long_factor;
    if (s.attention_factor != 0)
      scaling["attention_factor"] = s.attention_factor;
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
    // Written only where set: most models have no chunked attention.
    if (kind.attention_chunk != 0)
      k["attention_chunk"] = kind.attention_chunk;
    if (kind.query_temperature.floor_scale > 0)
      k["query_temperature"] = {{"floor_scale", kind.query_temperature.floor_scale},
                                {"scale", kind.query_temperature.scale}};
    // Only on MLA kinds; inside it every field is spelled out.
    if (kind.mla) {
      ordered_json mla;
      mla["kv_lora_rank"] = kind.mla->kv_lora_rank;
      mla["kv_norm_eps"] = kind.mla->kv_norm_eps;
      mla["latent_scale"] = kind.mla->latent_scale;
      mla["rope_deinterleave"] = kind.mla->rope_deinterleave;
      mla["block_size"] = kind.mla->block_size;
      k["mla"] = std::move(mla);
    }
    kinds.push_back(std::move(k));
  }
  spec["layer_kinds"] = std::move(kinds);
  // Replace, not throw, should a hand-built config hold invalid UTF-8.
  return compactNumberArrays(
             spec.dump(2, ' ', false, ordered_json::error_handler_t::replace)) +
         "\n";
}

} // namespace attnc
