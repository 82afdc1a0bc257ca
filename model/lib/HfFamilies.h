//===- HfFamilies.h - What a Hugging Face config does not say ---*- C++ -*-===//
//
// A Hugging Face config.json does not say everything attnc needs: whether q
// and k are normalised and how, the rotary style, which layers are NoPE or
// slide, attention sinks, the output gate and the defaults a save_pretrained
// config leaves out are properties of the model's Python code, not of its
// config. FamilyRules holds that knowledge for one family.
//
// The table itself is data: model/families/hf-families.json, embedded into
// the library at build time (HfFamilyTable.cpp, generated) and parsed and
// validated once, on first use. docs/config-import.md documents its schema.
// For a model type not in the table the config must spell the features out,
// because guessing would silently compile the wrong attention.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MODEL_LIB_HFFAMILIES_H
#define ATTNC_MODEL_LIB_HFFAMILIES_H

#include "attnc/Model/ModelConfig.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnc::config_import {

/// What one model layer is, for attnc.
enum class Slot {
  Skip,    ///< not softmax attention (linear attention, Mamba, convolution)
  Full,    ///< "full_attention"
  Sliding, ///< "sliding_attention"
  Chunked, ///< "chunked_attention": attends within its chunk (Llama 4)
};

/// The config keys that give one layer kind's heads.
struct HeadKeys {
  std::string num_heads, num_kv_heads, head_dim, v_head_dim;
  /// Whether head_dim may be derived from hidden_size / num_heads and MLA
  /// keys apply (the main attention's keys only).
  bool main = true;
};
/// num_attention_heads, num_key_value_heads, head_dim, v_head_dim.
const HeadKeys &mainHeadKeys();

/// A feature switched by a config key. The feature is on when the key is a
/// true boolean, equals `equals` (when set), or, for any other non-null
/// value, is present; an absent (or null) key gives `default_value`.
struct Switch {
  std::string key;
  std::optional<std::string> equals;
  bool default_value = false;
};

/// How a family assigns its layers to slots when the config has no
/// layer_types list (which, where present and `layer_types` is true, wins).
enum class LayerPattern {
  AllFull,             ///< every layer is full attention
  AllSkip,             ///< every layer is linear (granitemoehybrid default)
  AllSlidingWithWindow,///< a non-null sliding_window slides every layer
  SlideFromLayer,      ///< layers >= N slide (N from `key`, default)
  EvenSlideBelow,      ///< even layers < N slide (qwen2_moe)
  EveryNthFull,        ///< (i + 1) % N == 0 full, the others `other`; N from
                       ///< `key` (a number or an L/G string), default
  FirstOfNFull,        ///< i % N == 0 full, the others `other`
  Alternate,           ///< even layers `even`, odd layers `odd`
  PatternList,         ///< `key` required: 0 full / 1 sliding per layer
  IndexList,           ///< `key` lists the full layers (from `base`), the
                       ///< others `other`; absent: `fallback`
  NopeLayersSlide,     ///< the NoPE layers slide (smollm3)
};

struct LayerRule {
  LayerPattern pattern = LayerPattern::AllFull;
  std::string key;
  int64_t default_n = 0;
  Slot other = Slot::Sliding;
  Slot even = Slot::Full, odd = Slot::Full;
  int64_t base = 0;
  /// IndexList without its key: "all_full" or "kimi" (i > 0, i % 4 == 0).
  std::string fallback;
  /// Alternate: a per-layer list (1 full, 0 linear) read before the rule.
  std::string list_key;
  /// Whether the config's layer_types list is read.
  bool layer_types = true;
  /// Without it (when set) no layer slides.
  std::optional<Switch> enabled_by;
};

/// Which layers have no rotary embedding.
enum class NopeRule {
  None,
  FullLayers,   ///< full-attention layers (when `when_key` is set, only
                ///< while the config has that key)
  NoRopeLayers, ///< `key` lists 1 (rope) / 0 (NoPE) per layer; absent:
                ///< every `interval`-th layer is NoPE
};

struct FamilyNorm {
  NormStyle style = NormStyle::None;
  NormScope scope = NormScope::Head;
  bool bias = false;
  bool before_rope = true;
  std::optional<Switch> enabled_by;
  /// The eps key; empty: rms_norm_eps, else layernorm_epsilon.
  std::string eps_key;
  /// Only the layers with rope have the norm (Llama 4).
  bool rope_layers_only = false;
};

struct FamilyRope {
  RopeStyle style = RopeStyle::Neox;
  /// A boolean key choosing gptj (true) or neox (false).
  std::optional<Switch> interleave;
  /// Without it (when set) no layer has rope.
  std::optional<Switch> enabled_by;
  /// Used when the config has neither rotary_dim nor partial_rotary_factor.
  double partial_rotary_factor = 0.0;
  /// Whether a `rotary_dim` key is read.
  bool rotary_dim_key = true;
  double theta = 10000.0;
  /// "dynamic" scaling with an `alpha` key is a fixed base,
  /// theta * alpha^(Dqk / (Dqk - 2)) (Hunyuan's NTK alpha).
  bool ntk_alpha = false;
  /// The rope_parameters the config class sets when config.json has none
  /// (no rope_parameters, rope_scaling or rope_theta); null: none.
  nlohmann::json default_parameters;
  NopeRule nope = NopeRule::None;
  std::string nope_when_key;
  std::string nope_key, nope_interval_key;
  int64_t nope_interval = 0;
};

/// Whether a family's layers have per-head attention sinks.
enum class SinkPattern { None, Always, PerKindFlag };
struct SinkRule {
  SinkPattern pattern = SinkPattern::None;
  std::string full_key, sliding_key;
};

struct GateRule {
  GateLayout layout = GateLayout::None;
  std::optional<Switch> enabled_by;
};

/// What differs for sliding-window layers.
struct SlidingRules {
  /// Their own head keys, all required where set; else the main heads'.
  std::optional<HeadKeys> heads;
  /// A key counting the previous tokens a query sees: the window is its
  /// value + 1 (the query itself too), and it wins over sliding_window.
  std::string window_size_key;
  /// Their own rope base key and its default; else rope_theta.
  std::string theta_key;
  double theta = 10000.0;
  /// No rope scaling on sliding layers (with theta_key: unless
  /// rope_parameters is keyed by layer type).
  bool unscaled_rope = false;
};

enum class ScalePattern {
  HeadDim,        ///< 1/sqrt(Dqk)
  InverseSqrtKey, ///< 1/sqrt(key)
  Key,            ///< the key's value itself
};
struct ScaleRule {
  ScalePattern pattern = ScalePattern::HeadDim;
  std::string key;
  double default_value = 0.0;
  /// MLA: times sqrt(hidden_size / q_lora_rank) (LongCat).
  bool q_lora_scale = false;
};

/// The latent (MLA) form of a family whose configs have qk_nope_head_dim and
/// qk_rope_head_dim; families without the rule import such configs in the
/// decompressed form.
struct MlaRule {
  bool present = false;
  /// gptj rotation writes halves order (apply_rotary_pos_emb_interleave).
  bool rope_deinterleave = false;
  /// The normalised c_kv times sqrt(hidden_size / kv_lora_rank) (LongCat).
  bool kv_lora_scale = false;
};

struct QueryTemperatureRule {
  bool present = false;
  std::optional<Switch> enabled_by;
  std::string floor_scale_key, scale_key;
  double floor_scale = 0.0, scale = 0.0;
};

/// A feature the kernels lack: the family (or the family with `keys`) is
/// refused naming it.
struct Refusal {
  enum class When { Always, True, Present, Nonzero } when = When::Always;
  std::vector<std::string> keys; ///< dotted paths in the text config
  std::string feature;
};

/// Everything attnc knows about one family of model types.
struct FamilyRules {
  std::vector<std::string> model_types;
  int64_t head_dim_default = 0; ///< 0: head_dim key, else hidden / heads
  bool head_dim_forced = false; ///< hidden / heads, head_dim key ignored
  std::string num_layers_key = "num_hidden_layers";
  int64_t num_layers_multiplier = 1;
  bool falcon_kv_heads = false;
  /// canonical key -> legacy key read in its place
  std::vector<std::pair<std::string, std::string>> key_aliases;
  FamilyNorm norm;
  FamilyRope rope;
  GateRule gate;
  LayerRule layers;
  int64_t default_window = 0;
  /// The chunk size key: where the config has it, the full-attention
  /// layers with rope attend within chunks (Llama 4's attention_chunk_size).
  std::string chunk_key;
  SinkRule sinks;
  SlidingRules sliding;
  ScaleRule scale;
  std::string softcap_key;
  double softcap_default = 0.0;
  std::string value_scale_key;
  QueryTemperatureRule query_temperature;
  MlaRule mla;
  int64_t default_max_positions = 0;
  std::vector<Refusal> refusals;
};

/// Parses and validates a family table (the JSON text of
/// hf-families.json). Errors name the row and the key
/// ("families[3].rope.style: ...").
Result<std::vector<FamilyRules>> parseFamilyTable(std::string_view text);

/// The embedded table, parsed once (thread-safe); its error if the embedded
/// text is malformed.
const Result<std::vector<FamilyRules>> &familyTable();

/// The embedded JSON text.
std::string_view familyTableText();

/// The rules for `model_type`, or null for a type not in the table (or a
/// malformed table; importers report familyTable()'s error first).
const FamilyRules *familyOf(const std::string &model_type);

} // namespace attnc::config_import

#endif // ATTNC_MODEL_LIB_HFFAMILIES_H
