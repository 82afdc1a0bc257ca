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
  if (const Result<std::vector<FamilyRules>> &table = familyTable(); !table)
    return Status("<family table>", "the embedded hf-families.json is "
                                    "malformed: " + table.status().field +
                                        ": " + table.status().rule);
  // Multimodal checkpoints (Gemma 3, Qwen3.5, Llama 4) nest the language
  // model's config; its attention is what we compile.
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

  checkRefusals();
  if (r_.failed())
    return r_.error();
  applyAliases();

  readDtype();
  const std::string layers_key =
      family_ ? family_->num_layers_key : "num_hidden_layers";
  const int64_t multiplier = family_ ? family_->num_layers_multiplier : 1;
  config_.num_layers =
      r_.reqInt(text_, layers_key, 1, kMaxLayers / multiplier) * multiplier;
  int64_t default_positions = family_ ? family_->default_max_positions : 0;
  config_.max_position_embeddings =
      r_.optInt(text_, "max_position_embeddings", 1, kMaxPositions)
          .value_or(default_positions);
  if (r_.failed())
    return r_.error();

  readFamilyFeatures();
  if (r_.failed())
    return r_.error();

  nope_ = assignNope();
  if (r_.failed())
    return r_.error();
  std::vector<Slot> slots = assignLayers();
  if (r_.failed())
    return r_.error();
  // Llama 4: with attention_chunk_size, the full layers with rope attend
  // within chunks (its layer_types says "chunked_attention" for them).
  if (family_ && !family_->chunk_key.empty() &&
      text_.has(family_->chunk_key))
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i] == Slot::Full && !nope_[i])
        slots[i] = Slot::Chunked;
  if (family_ && family_->rope.nope == NopeRule::FullLayers &&
      rope_style_ != RopeStyle::None &&
      (family_->rope.nope_when_key.empty() ||
       text_.has(family_->rope.nope_when_key)))
    for (std::size_t i = 0; i < slots.size(); ++i)
      nope_[i] = slots[i] == Slot::Full;
  int64_t window = readWindow(slots);
  if (r_.failed())
    return r_.error();

  // Kinds in a fixed order: full, sliding, chunked, each with rope before
  // its NoPE layers (named <kind>_nope).
  int64_t chunk = 0;
  if (std::find(slots.begin(), slots.end(), Slot::Chunked) != slots.end()) {
    const std::string key =
        family_ && !family_->chunk_key.empty() ? family_->chunk_key
                                               : "attention_chunk_size";
    chunk = r_.optInt(text_, key, 1, kMaxPositions).value_or(0);
    if (!r_.failed() && chunk == 0)
      r_.fail(text_.at(key), "required field is missing (the model has "
                             "chunked_attention layers)");
    if (r_.failed())
      return r_.error();
  }
  for (Slot slot : {Slot::Full, Slot::Sliding, Slot::Chunked}) {
    for (bool nope : {false, true}) {
      std::vector<int64_t> layers;
      for (std::size_t i = 0; i < slots.size(); ++i)
        if (slots[i] == slot && nope_[i] == nope)
          layers.push_back(static_cast<int64_t>(i));
      if (layers.empty())
        continue;
      std::optional<LayerKind> kind =
          buildKind(slot, nope, std::move(layers), window);
      if (kind && slot == Slot::Chunked)
        kind->attention_chunk = chunk;
      if (!kind)
        return r_.error();
      config_.kinds.push_back(std::move(*kind));
    }
  }
  if (config_.kinds.empty())
    return Status(layout_field_.empty() ? text_.at("layer_types")
                                        : layout_field_,
                  "no softmax attention layers in the model (every layer is "
                  "linear attention, Mamba or convolution)");
  return config_;
}

const json *HfImporter::atPath(const std::string &dotted) const {
  Node node = text_;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = dotted.find('.', start);
    std::string key = dotted.substr(start, dot - start);
    const json *value = node.get(key);
    if (dot == std::string::npos || !value)
      return value;
    if (!value->is_object())
      return nullptr;
    node = Node{value, node.at(key)};
    start = dot + 1;
  }
}

bool HfImporter::isOn(const Switch &s) {
  const Node &owner = ownerOf(s.key);
  const json *value = owner.get(s.key);
  if (!value)
    return s.default_value;
  if (s.equals)
    return value->is_string() && value->get<std::string>() == *s.equals;
  if (value->is_boolean())
    return value->get<bool>();
  return true;
}

/// Families the kernels cannot run are refused, naming the feature; never
/// imported as something close.
void HfImporter::checkRefusals() {
  if (!family_)
    return;
  for (const Refusal &refusal : family_->refusals) {
    if (refusal.when == Refusal::When::Always) {
      r_.fail(family_field_, printable(family_name_) + ": " +
                                 refusal.feature + " is not supported");
      return;
    }
    for (const std::string &key : refusal.keys) {
      const json *value = atPath(key);
      bool refused = false;
      switch (refusal.when) {
      case Refusal::When::Always:
        break;
      case Refusal::When::Present:
        refused = value != nullptr;
        break;
      case Refusal::When::True:
        refused = value && value->is_boolean() && value->get<bool>();
        break;
      case Refusal::When::Nonzero:
        refused = value && !(value->is_number() && value->get<double>() == 0);
        break;
      }
      if (refused) {
        r_.fail(family_field_, printable(family_name_) + " with " + key +
                                   ": " + refusal.feature +
                                   " is not supported");
        return;
      }
    }
  }
}

/// Legacy key names (gpt_neox's rotary_pct, falcon's n_head) read as the
/// canonical ones: a copy of the text config with the alias copied in.
void HfImporter::applyAliases() {
  if (!family_ || family_->key_aliases.empty())
    return;
  aliased_ = *text_.value;
  for (const auto &[canonical, alias] : family_->key_aliases)
    if (!text_.has(canonical) && text_.has(alias))
      aliased_[canonical] = *text_.get(alias);
  const bool text_is_root = text_.value == root_.value;
  text_ = Node{&aliased_, text_.path};
  if (text_is_root)
    root_ = text_;
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
  const FamilyRules &f = *family_;
  norm_ = f.norm.style;
  if (f.norm.enabled_by && !isOn(*f.norm.enabled_by))
    norm_ = NormStyle::None;
  rope_style_ = f.rope.style;
  if (f.rope.interleave) {
    bool interleaved = isOn(*f.rope.interleave);
    rope_style_ = interleaved ? RopeStyle::Gptj : RopeStyle::Neox;
  }
  if (f.rope.enabled_by && !isOn(*f.rope.enabled_by))
    rope_style_ = RopeStyle::None;
  gate_ = f.gate.layout;
  if (f.gate.enabled_by && !isOn(*f.gate.enabled_by))
    gate_ = GateLayout::None;
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
                              "(\"none\"|\"rms\"|\"gemma\"|\"unweighted\"|"
                              "\"layernorm\")");
    return;
  }
  std::optional<NormStyle> norm_style = parseNormStyle(*norm);
  if (!norm_style) {
    r_.fail(norm_owner.at("qk_norm"), "must be \"none\", \"rms\", \"gemma\", "
                                      "\"unweighted\" or \"layernorm\" (got " +
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
              "must be \"none\", \"qkvg\", \"interleaved\" or "
              "\"head_scalar\" (got " +
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
  if (rule.layer_types) {
    if (const json *types = r_.optArray(text_, "layer_types")) {
      readLayerTypes(*types, slots);
      return slots;
    }
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

  // A switch that turns sliding off (qwen2's use_sliding_window, exaone4's
  // sliding_window) leaves every attention layer full.
  const bool sliding_on = !rule.enabled_by || isOn(*rule.enabled_by);
  auto slide = [&](Slot s) {
    return s == Slot::Sliding && !sliding_on ? Slot::Full : s;
  };
  switch (rule.pattern) {
  case LayerPattern::AllFull:
  case LayerPattern::PatternList:
    return slots;
  case LayerPattern::AllSkip:
    layout_field_ = text_.at("layer_types");
    std::fill(slots.begin(), slots.end(), Slot::Skip);
    return slots;
  case LayerPattern::AllSlidingWithWindow:
    if (sliding_on && text_.has("sliding_window"))
      std::fill(slots.begin(), slots.end(), Slot::Sliding);
    return slots;
  case LayerPattern::SlideFromLayer: {
    if (!sliding_on)
      return slots;
    int64_t first =
        r_.optInt(text_, rule.key, 0, kMaxLayers).value_or(rule.default_n);
    for (int64_t i = first; i < n; ++i)
      slots[i] = Slot::Sliding;
    return slots;
  }
  case LayerPattern::EvenSlideBelow: {
    if (!sliding_on)
      return slots;
    int64_t below =
        r_.optInt(text_, rule.key, 0, kMaxLayers).value_or(rule.default_n);
    for (int64_t i = 0; i < n; ++i)
      if (i % 2 == 0 && i < below)
        slots[i] = Slot::Sliding;
    return slots;
  }
  case LayerPattern::EveryNthFull: {
    layout_field_ = text_.at(rule.key.empty() ? "layer_types" : rule.key);
    if (rule.other == Slot::Sliding && !sliding_on)
      return slots;
    // EXAONE 4 also spells the pattern as a string, "LLLG": L local
    // (sliding), G global (full), repeating.
    const json *value = rule.key.empty() ? nullptr : text_.get(rule.key);
    if (value && value->is_string()) {
      const std::string pattern = value->get<std::string>();
      if (pattern.empty() ||
          pattern.find_first_not_of("LG") != std::string::npos) {
        r_.fail(layout_field_, "must be a number or a string of L (local) "
                               "and G (global) (got " +
                                   inQuotes(pattern) + ")");
        return slots;
      }
      for (int64_t i = 0; i < n; ++i)
        slots[i] = pattern[i % pattern.size()] == 'G' ? Slot::Full
                                                       : slide(rule.other);
      return slots;
    }
    int64_t every = rule.key.empty() ? rule.default_n
                                     : r_.optInt(text_, rule.key, 1)
                                           .value_or(rule.default_n);
    for (int64_t i = 0; i < n; ++i)
      slots[i] = (i + 1) % every == 0 ? Slot::Full : slide(rule.other);
    return slots;
  }
  case LayerPattern::FirstOfNFull:
    for (int64_t i = 0; i < n; ++i)
      slots[i] = i % rule.default_n == 0 ? Slot::Full : slide(rule.other);
    return slots;
  case LayerPattern::Alternate:
    if (!rule.list_key.empty() && text_.has(rule.list_key)) {
      // MiniMax-Text-01's attn_type_list: 1 softmax attention, 0 lightning.
      layout_field_ = text_.at(rule.list_key);
      const json *list = r_.optArray(text_, rule.list_key);
      if (!list)
        return slots;
      if (list->size() != slots.size()) {
        r_.fail(layout_field_, "must have num_hidden_layers (" +
                                   std::to_string(n) + ") entries (got " +
                                   std::to_string(list->size()) + ")");
        return slots;
      }
      for (std::size_t i = 0; i < slots.size(); ++i) {
        std::optional<int64_t> v =
            r_.asInt((*list)[i], indexPath(layout_field_, i), 0, 1);
        if (!v)
          return slots;
        slots[i] = *v == 1 ? Slot::Full : Slot::Skip;
      }
      return slots;
    }
    layout_field_ = text_.at("layer_types");
    for (int64_t i = 0; i < n; ++i)
      slots[i] = slide(i % 2 == 0 ? rule.even : rule.odd);
    return slots;
  case LayerPattern::IndexList:
    readIndexList(slots);
    return slots;
  case LayerPattern::NopeLayersSlide:
    if (!sliding_on || !text_.has("sliding_window"))
      return slots;
    for (int64_t i = 0; i < n; ++i)
      if (nope_[i])
        slots[i] = Slot::Sliding;
    return slots;
  }
  return slots;
}

/// The full-attention layers listed by index (LFM2's full_attn_idxs, Kimi
/// Linear's linear_attn_config.full_attn_layers, 1-based); the others are
/// `other`.
bool HfImporter::readIndexList(std::vector<Slot> &slots) {
  const LayerRule &rule = family_->layers;
  std::string path = text_.path;
  for (std::size_t start = 0;;) {
    std::size_t dot = rule.key.find('.', start);
    path = json_util::memberPath(path, rule.key.substr(start, dot - start));
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  layout_field_ = path;
  const json *list = atPath(rule.key);
  const int64_t n = static_cast<int64_t>(slots.size());
  if (!list) {
    for (int64_t i = 0; i < n; ++i)
      slots[i] = rule.fallback == "kimi" && !(i > 0 && i % 4 == 0)
                     ? rule.other
                     : Slot::Full;
    return true;
  }
  if (!list->is_array()) {
    r_.fail(path, "must be an array (got " + describe(*list) + ")");
    return false;
  }
  std::fill(slots.begin(), slots.end(), rule.other);
  for (std::size_t i = 0; i < list->size(); ++i) {
    std::optional<int64_t> index = r_.asInt(
        (*list)[i], indexPath(path, i), rule.base, n - 1 + rule.base);
    if (!index)
      return false;
    slots[static_cast<std::size_t>(*index - rule.base)] = Slot::Full;
  }
  return true;
}

/// Which layers have no rotary embedding: Cohere 2, EXAONE 4 and AFMoE rotate
/// only on sliding layers; SmolLM3 and Llama 4 list them (no_rope_layers,
/// where 1 means rope).
std::vector<bool> HfImporter::assignNope() {
  const int64_t n = config_.num_layers;
  std::vector<bool> nope(static_cast<std::size_t>(n), false);
  if (!family_ || rope_style_ == RopeStyle::None)
    return nope;
  const FamilyRope &rope = family_->rope;
  switch (rope.nope) {
  case NopeRule::None:
  case NopeRule::FullLayers: // assigned once the slots are known
    return nope;
  case NopeRule::NoRopeLayers: {
    const json *list = r_.optArray(text_, rope.nope_key);
    if (r_.failed())
      return nope;
    // Llama 4 treats an empty list as absent.
    if (list && !list->empty()) {
      const std::string path = text_.at(rope.nope_key);
      if (list->size() != nope.size()) {
        r_.fail(path, "must have num_hidden_layers (" + std::to_string(n) +
                          ") entries (got " + std::to_string(list->size()) +
                          ")");
        return nope;
      }
      for (std::size_t i = 0; i < nope.size(); ++i) {
        std::optional<int64_t> v = r_.asInt((*list)[i], indexPath(path, i), 0, 1);
        if (!v)
          return nope;
        nope[i] = *v == 0;
      }
      return nope;
    }
    int64_t interval = r_.optInt(text_, rope.nope_interval_key, 1)
                           .value_or(rope.nope_interval);
    for (int64_t i = 0; i < n; ++i)
      nope[i] = (i + 1) % interval == 0;
    return nope;
  }
  }
  return nope;
}

/// The family's per-layer list (MiMo's hybrid_layer_pattern): 0 = full
/// attention, 1 = sliding window.
bool HfImporter::readLayerPatternList(std::vector<Slot> &slots) {
  const std::string &key = family_->layers.key;
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
    // "attention" and "mamba" are the legacy names transformers remaps.
    if (name == "full_attention" || name == "attention") {
      slots[i] = Slot::Full;
    } else if (name == "sliding_attention") {
      slots[i] = Slot::Sliding;
    } else if (name == "linear_attention" || name == "mamba" ||
               name == "conv") {
      // Gated DeltaNet, lightning attention, Mamba, short convolutions:
      // not softmax attention, so not a layer kind of ours.
      slots[i] = Slot::Skip;
    } else if (name == "chunked_attention") {
      slots[i] = Slot::Chunked;
    } else if (name == "indexed_attention" ||
               name == "deepseek_sparse_attention") {
      r_.fail(path, "layer type " + inQuotes(name) +
                        ": sparse indexed attention is not supported");
      return false;
    } else {
      r_.fail(path, "unsupported layer type " + inQuotes(name) +
                        " (expected full_attention, sliding_attention, "
                        "chunked_attention, linear_attention, mamba, conv or "
                        "attention)");
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
  if (!sliding.window_size_key.empty()) {
    // MiMo: sliding_window_size counts the previous tokens; the query sees
    // them and itself, so the window is size + 1 and wins over
    // sliding_window (transformers' MiMoV2FlashConfig, after SGLang). A
    // sliding_window that is neither is a contradiction, not a choice.
    std::optional<int64_t> size =
        r_.optInt(text_, sliding.window_size_key, 1, kMaxPositions - 1);
    if (window && size && *window != *size && *window != *size + 1) {
      r_.fail(text_.at(sliding.window_size_key),
              "disagrees with sliding_window (" + std::to_string(*window) +
                  " is neither " + std::to_string(*size) + " nor " +
                  std::to_string(*size + 1) + ")");
      return 0;
    }
    if (size)
      window = *size + 1;
  }
  const int64_t default_window = family_ ? family_->default_window : 0;
  if (default_window != 0 && !window && !r_.failed())
    window = default_window;
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
  if (keys.main && family_ && family_->falcon_kv_heads) {
    // FalconAttention: num_kv_heads with new_decoder_architecture or
    // without multi_query; multi_query (the default) means one KV head.
    bool new_arch =
        r_.optBool(text_, "new_decoder_architecture").value_or(false);
    bool multi_query = r_.optBool(text_, "multi_query").value_or(true);
    kv_heads = new_arch || !multi_query
                   ? r_.optInt(text_, "num_kv_heads", 1)
                   : std::optional<int64_t>(1);
    g.names.num_kv_heads = text_.at(new_arch || !multi_query ? "num_kv_heads"
                                                             : "multi_query");
    if (r_.failed())
      return g;
  }

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

  // Cohere 2 and Falcon compute hidden_size / heads whatever head_dim says.
  const bool forced = keys.main && family_ && family_->head_dim_forced;
  std::optional<int64_t> head_dim =
      forced ? std::nullopt : r_.optInt(text_, keys.head_dim, 1);
  if (r_.failed())
    return g;
  // The family's default (Gemma 3: 256), not hidden / heads.
  if (!head_dim && !forced && keys.main && family_ &&
      family_->head_dim_default != 0)
    head_dim = family_->head_dim_default;
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

double HfImporter::readScale(const LayerKind &kind, const Geometry &geometry) {
  double scale = 1.0 / std::sqrt(static_cast<double>(kind.heads.qk_head_dim));
  std::string field = text_.at("rope_scaling");
  if (family_) {
    const ScaleRule &rule = family_->scale;
    switch (rule.pattern) {
    case ScalePattern::HeadDim:
      break;
    case ScalePattern::InverseSqrtKey:
      field = text_.at(rule.key);
      scale = 1.0 / std::sqrt(r_.positive(text_, rule.key, rule.default_value));
      break;
    case ScalePattern::Key:
      // Granite: attention_multiplier is the softmax scale itself.
      field = text_.at(rule.key);
      scale = r_.positive(text_, rule.key, rule.default_value);
      break;
    }
    if (rule.q_lora_scale && geometry.mla) {
      // LongCat multiplies q (both parts) by sqrt(hidden_size /
      // q_lora_rank); on q.k that is a factor on the scale.
      field = text_.at("q_lora_rank");
      double hidden = static_cast<double>(
          r_.reqInt(text_, "hidden_size", 1, kMaxCount * kMaxCount));
      double rank = static_cast<double>(r_.reqInt(
          text_, "q_lora_rank", 1, kMaxCount * kMaxCount,
          " (LongCat scales q by sqrt(hidden_size / q_lora_rank))"));
      if (r_.failed())
        return 0;
      scale *= std::sqrt(hidden / rank);
    }
  }
  const RopeScaling &scaling = kind.rope.scaling;
  if (geometry.mla && scaling.kind == RopeScalingKind::Yarn &&
      scaling.mscale_all_dim != 0 && scaling.factor > 1) {
    // DeepSeek folds YaRN's attention temperature into the softmax scale
    // (softmax_scale * mscale * mscale), not into cos/sin.
    double m = yarnMscale(scaling.factor, scaling.mscale_all_dim);
    scale *= m * m;
  }
  if (r_.failed())
    return 0;
  // Inputs are float32-range numbers, but the product above is not bound
  // by them (an mscale_all_dim of 1e30): the derived scale, and its log2(e)
  // multiple that the kernel takes, must be float constants too.
  if (!isKernelFloat(scale) || !isKernelFloat(scale * M_LOG2E)) {
    r_.fail(field, std::string("gives a softmax scale that ") +
                       kKernelFloatRule + " (got " + formatNumber(scale) + ")");
    return 0;
  }
  return scale;
}

std::optional<LayerKind> HfImporter::buildKind(Slot slot, bool nope,
                                               std::vector<int64_t> layers,
                                               int64_t window) {
  const bool sliding = slot == Slot::Sliding;
  LayerKind kind;
  kind.name = sliding                ? "sliding_attention"
              : slot == Slot::Chunked ? "chunked_attention"
                                      : "full_attention";
  if (nope)
    kind.name += "_nope";
  kind.layers = std::move(layers);

  const HeadKeys &keys = sliding && family_ && family_->sliding.heads
                             ? *family_->sliding.heads
                             : mainHeadKeys();
  if (!keys.main) {
    // Separate sliding-layer head counts have no sensible default: require
    // them.
    for (const std::string &key : {keys.num_heads, keys.head_dim})
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
  if (family_) {
    const FamilyNorm &norm = family_->norm;
    if (nope && norm.rope_layers_only)
      kind.qk_norm = NormStyle::None;
    kind.qk_norm_scope = norm.scope;
    kind.qk_norm_bias = norm.bias;
    kind.norm_before_rope = norm.before_rope;
  }
  if (kind.qk_norm == NormStyle::None) {
    // Nothing to scope or order: keep the defaults, so equal kinds compare
    // equal and the spec stays short.
    kind.qk_norm_scope = NormScope::Head;
    kind.qk_norm_bias = false;
    kind.norm_before_rope = true;
  }
  // eps matters only with a q/k norm, but it is recorded for every kind so
  // the spec is complete.
  // The family's eps key, else the first of the common spellings present.
  std::string eps_key = "rms_norm_eps";
  if (family_ && !family_->norm.eps_key.empty())
    eps_key = family_->norm.eps_key;
  else
    for (const char *key : {"rms_norm_eps", "layernorm_epsilon",
                            "layer_norm_eps", "norm_eps"})
      if (text_.has(key)) {
        eps_key = key;
        break;
      }
  kind.norm_eps = r_.positive(text_, eps_key, 1e-6);
  if (nope) {
    kind.rope = RopeConfig{};
  } else {
    kind.rope = readRope(kind.name, geometry, sliding);
  }
  if (r_.failed())
    return std::nullopt;
  if (kind.rope.style == RopeStyle::None)
    kind.norm_before_rope = true;
  kind.sliding_window = sliding ? window : 0;
  kind.sinks = readSinks(sliding);

  kind.softmax_scale = readScale(kind, geometry);
  if (r_.failed())
    return std::nullopt;
  if (geometry.mla && family_ && family_->mla.present &&
      kind.rope.style != RopeStyle::None) {
    // The latent form: the kind caches [c_kv | k_pe] and keeps its
    // decompressed heads for the prefill.
    MlaConfig mla;
    mla.kv_lora_rank = r_.reqInt(text_, "kv_lora_rank", 1, kMaxCount,
                                 " (an MLA model's latent width)");
    if (r_.failed())
      return std::nullopt;
    mla.rope_deinterleave =
        family_->mla.rope_deinterleave && kind.rope.style == RopeStyle::Gptj;
    if (family_->mla.kv_lora_scale) {
      // LongCat multiplies the normalised c_kv by sqrt(hidden_size /
      // kv_lora_rank) before it is cached.
      double hidden = static_cast<double>(
          r_.reqInt(text_, "hidden_size", 1, kMaxCount * kMaxCount,
                    " (LongCat scales the latent by sqrt(hidden_size / "
                    "kv_lora_rank))"));
      if (r_.failed())
        return std::nullopt;
      mla.latent_scale =
          std::sqrt(hidden / static_cast<double>(mla.kv_lora_rank));
    }
    kind.mla = mla;
  }
  if (!family_) {
    kind.logit_softcap = r_.nonNegative(text_, "attn_logit_softcapping", 0.0);
    kind.value_scale = r_.positive(text_, "attention_value_scale", 1.0);
  } else {
    if (!family_->softcap_key.empty())
      kind.logit_softcap = r_.nonNegative(text_, family_->softcap_key,
                                          family_->softcap_default);
    if (!family_->value_scale_key.empty())
      kind.value_scale = r_.positive(text_, family_->value_scale_key, 1.0);
    const QueryTemperatureRule &t = family_->query_temperature;
    if (nope && t.present && (!t.enabled_by || isOn(*t.enabled_by))) {
      kind.query_temperature.floor_scale =
          r_.positive(text_, t.floor_scale_key, t.floor_scale);
      kind.query_temperature.scale = r_.positive(text_, t.scale_key, t.scale);
    }
  }
  if (r_.failed())
    return std::nullopt;
  return kind;
}

} // namespace attnc::config_import
