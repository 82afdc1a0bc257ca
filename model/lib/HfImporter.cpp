//===- HfImporter.cpp - Hugging Face config.json to ModelConfig -----------===//
//
// The model type selects a family's rules (HfFamilies.h); the config gives
// the layers, heads, window and rope. For a model type not in the table the
// config must spell out q/k norm and rope style (and gate and sinks, which
// default to none). The first broken rule is reported; later ones would
// usually be consequences of it.
//
//===----------------------------------------------------------------------===//

#include "HfImporter.h"

#include "attnc/Support/FloatConstant.h"

#include <algorithm>
#include <cmath>

namespace attnc::config_import {

namespace {

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

} // namespace

Result<ModelConfig> importHfConfig(const json &document) {
  return HfImporter(document).run();
}

Result<ModelConfig> HfImporter::run() {
  // Multimodal checkpoints (Gemma 3, Qwen3.5) nest the language model's
  // config; its attention is what we compile.
  text_ = root_;
  if (const json *text_config = root_.get("text_config")) {
    if (!text_config->is_object())
      return Status("text_config",
                    "must be an object (got " + describe(*text_config) + ")");
    text_ = Node{text_config, "text_config"};
  }

  std::optional<std::string> outer_type = r_.optString(root_, "model_type");
  std::optional<std::string> inner_type;
  if (text_.value != root_.value)
    inner_type = r_.optString(text_, "model_type");
  if (r_.failed())
    return r_.error();
  if (!outer_type && !inner_type)
    return Status("model_type", "required field is missing");
  // The checkpoint's identity is the outer type ("gemma3"); the attention
  // family is the text model's ("gemma3_text") when it has one.
  config_.model_type = outer_type ? *outer_type : *inner_type;
  family_name_ = inner_type ? *inner_type : *outer_type;
  family_field_ = inner_type ? text_.at("model_type") : "model_type";
  family_ = familyOf(family_name_);
  // A wrapper type we know around a text type we do not (or the reverse)
  // still identifies the family.
  if (!family_ && inner_type && outer_type && familyOf(*outer_type)) {
    family_name_ = *outer_type;
    family_field_ = "model_type";
    family_ = familyOf(*outer_type);
  }

  readDtype();
  config_.num_layers = r_.reqInt(text_, "num_hidden_layers", 1, kMaxLayers);
  int64_t default_positions =
      family_ ? family_->defaults.max_position_embeddings : 0;
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
    return Status(layout_field_,
                  "no softmax attention layers in the model (every layer is "
                  "linear attention)");
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
/// sinks. Known families say them in the table; unknown ones must spell them
/// out.
void HfImporter::readFamilyFeatures() {
  if (!family_) {
    readExplicitFeatures();
    return;
  }
  norm_ = family_->qk_norm;
  rope_style_ = family_->rope_style;
  if (family_->gate == GateRule::InterleavedUnlessDisabled) {
    const Node &owner = ownerOf("attn_output_gate");
    bool gated = r_.optBool(owner, "attn_output_gate").value_or(true);
    gate_ = gated ? GateLayout::InterleavedWithQ : GateLayout::None;
  }
}

void HfImporter::readExplicitFeatures() {
  // q/k norm and rope style are properties of every attention layer with no
  // safe default (families split both ways), so they are required. Gate and
  // sinks are rare; absent means "none", as every family known to have one
  // is in the table.
  rope_style_ = RopeStyle::Neox;
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
  const LayerRule rule = family_ ? family_->layers : LayerRule{};

  if (rule.pattern == LayerPattern::PatternList) {
    readLayerPatternList(slots);
    return slots;
  }
  if (const json *types = r_.optArray(text_, "layer_types")) {
    readLayerTypes(*types, slots);
    return slots;
  }
  if (r_.failed())
    return slots;

  if (!family_) {
    // Whether a sliding_window applies to all layers (Mistral), some (Qwen)
    // or none is family code; layer_types says it explicitly.
    if (text_.has("sliding_window") &&
        r_.optBool(text_, "use_sliding_window").value_or(true))
      r_.fail(text_.at("sliding_window"),
              unknownPrefix() + "which layers use the window is ambiguous; "
                                "set \"layer_types\" or remove "
                                "\"sliding_window\"");
    return slots;
  }

  switch (rule.pattern) {
  case LayerPattern::AllFull:
  case LayerPattern::PatternList:
    return slots;
  case LayerPattern::EveryNthFull: {
    layout_field_ = text_.at(rule.key);
    int64_t every = r_.optInt(text_, rule.key, 1).value_or(rule.default_n);
    for (int64_t i = 0; i < n; ++i)
      slots[i] = (i + 1) % every == 0 ? Slot::Full : rule.other;
    return slots;
  }
  case LayerPattern::EvenLayersSlide:
    for (int64_t i = 0; i < n; ++i)
      slots[i] = i % 2 == 0 ? Slot::Sliding : Slot::Full;
    return slots;
  case LayerPattern::SlideFromLayer: {
    if (!r_.optBool(text_, "use_sliding_window").value_or(false))
      return slots;
    int64_t first =
        r_.optInt(text_, rule.key, 0, kMaxLayers).value_or(rule.default_n);
    for (int64_t i = first; i < n; ++i)
      slots[i] = Slot::Sliding;
    return slots;
  }
  case LayerPattern::AllSlideWithWindow:
    if (text_.has("sliding_window"))
      std::fill(slots.begin(), slots.end(), Slot::Sliding);
    return slots;
  }
  return slots;
}

/// The family's per-layer list (MiMo's hybrid_layer_pattern): 0 = full
/// attention, 1 = sliding window.
bool HfImporter::readLayerPatternList(std::vector<Slot> &slots) {
  const char *key = family_->layers.key;
  layout_field_ = text_.at(key);
  const json *pattern = r_.optArray(text_, key);
  if (!pattern) {
    r_.fail(layout_field_, "required field is missing");
    return false;
  }
  if (pattern->size() != slots.size()) {
    r_.fail(layout_field_,
            "must have num_hidden_layers (" + std::to_string(slots.size()) +
                ") entries (got " + std::to_string(pattern->size()) + ")");
    return false;
  }
  for (std::size_t i = 0; i < slots.size(); ++i) {
    std::optional<int64_t> value =
        r_.asInt((*pattern)[i], indexPath(layout_field_, i), 0, 1);
    if (!value)
      return false;
    slots[i] = *value == 0 ? Slot::Full : Slot::Sliding;
  }
  return true;
}

bool HfImporter::readLayerTypes(const json &types, std::vector<Slot> &slots) {
  layout_field_ = text_.at("layer_types");
  if (types.size() != slots.size()) {
    r_.fail(layout_field_,
            "must have num_hidden_layers (" + std::to_string(slots.size()) +
                ") entries (got " + std::to_string(types.size()) + ")");
    return false;
  }
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const json &type = types[i];
    std::string path = indexPath(layout_field_, i);
    if (!type.is_string()) {
      r_.fail(path, "must be a string (got " + describe(type) + ")");
      return false;
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
      return false;
    }
  }
  return true;
}

int64_t HfImporter::readWindow(const std::vector<Slot> &slots) {
  if (std::find(slots.begin(), slots.end(), Slot::Sliding) == slots.end())
    return 0;
  const SlidingRules sliding = family_ ? family_->sliding : SlidingRules{};
  std::optional<int64_t> window =
      r_.optInt(text_, "sliding_window", 1, kMaxPositions);
  if (sliding.window_alias) {
    std::optional<int64_t> size =
        r_.optInt(text_, sliding.window_alias, 1, kMaxPositions);
    if (window && size && *window != *size) {
      r_.fail(text_.at(sliding.window_alias),
              "disagrees with sliding_window (" + std::to_string(*size) +
                  " != " + std::to_string(*window) + ")");
      return 0;
    }
    if (!window)
      window = size;
  }
  if (sliding.default_window != 0 && !window && !r_.failed())
    window = sliding.default_window;
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
  // The family's default (Gemma 3: 256), not hidden / heads.
  if (!head_dim && keys.main && family_ && family_->defaults.head_dim != 0)
    head_dim = family_->defaults.head_dim;
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

/// Whether this kind's layers have attention sinks.
bool HfImporter::readSinks(bool sliding) {
  if (!family_)
    return explicit_sinks_;
  const SinkRule &rule = family_->sinks;
  switch (rule.pattern) {
  case SinkPattern::None:
    return false;
  case SinkPattern::Always:
    return true;
  case SinkPattern::PerKindFlag:
    return r_.optBool(text_, sliding ? rule.sliding_key : rule.full_key)
        .value_or(false);
  }
  return false;
}

std::optional<LayerKind>
HfImporter::buildKind(Slot slot, std::vector<int64_t> layers, int64_t window) {
  const bool sliding = slot == Slot::Sliding;
  LayerKind kind;
  kind.name = sliding ? "sliding_attention" : "full_attention";
  kind.layers = std::move(layers);

  const HeadKeys &keys = sliding && family_ && family_->sliding.heads
                             ? *family_->sliding.heads
                             : kMainHeadKeys;
  if (!keys.main) {
    // Separate sliding-layer head counts have no sensible default: require
    // them.
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
  kind.sinks = readSinks(sliding);

  double scale = 1.0 / std::sqrt(static_cast<double>(kind.heads.qk_head_dim));
  if (family_ && family_->scale.key) {
    double scalar =
        r_.positive(text_, family_->scale.key, family_->scale.fallback);
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
  // Inputs are float32-range numbers, but the product above is not bound
  // by them (an mscale_all_dim of 1e30): the derived scale, and its log2(e)
  // multiple that the kernel takes, must be float constants too.
  if (!isKernelFloat(scale) || !isKernelFloat(scale * M_LOG2E)) {
    r_.fail(family_ && family_->scale.key ? text_.at(family_->scale.key)
                                          : text_.at("rope_scaling"),
            std::string("gives a softmax scale that ") + kKernelFloatRule +
                " (got " + formatNumber(scale) + ")");
    return std::nullopt;
  }
  kind.softmax_scale = scale;
  kind.logit_softcap = r_.nonNegative(text_, "attn_logit_softcapping", 0.0);
  kind.value_scale = r_.positive(text_, "attention_value_scale", 1.0);
  if (r_.failed())
    return std::nullopt;
  return kind;
}

} // namespace attnc::config_import
