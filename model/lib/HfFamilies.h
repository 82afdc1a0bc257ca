//===- HfFamilies.h - What a Hugging Face config does not say ---*- C++ -*-===//
//
// A Hugging Face config.json does not say everything attnc needs: whether q
// and k are RMS-normalised per head, the rotary style, attention sinks, the
// output gate and the layout of sliding-window layers are properties of the
// model's Python code, not of its config, and so are the defaults a
// save_pretrained config leaves out. FamilyRules holds that knowledge for one
// family; HfFamilies.cpp has the table (model_type -> rules), which
// docs/config-import.md documents. For any model type not in the table the
// config must spell the features out, because guessing would silently
// compile the wrong attention.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MODEL_LIB_HFFAMILIES_H
#define ATTNC_MODEL_LIB_HFFAMILIES_H

#include "attnc/Model/ModelConfig.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnc::config_import {

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
/// num_attention_heads, num_key_value_heads, head_dim, v_head_dim.
extern const HeadKeys kMainHeadKeys;

/// How a family assigns its layers to slots when the config has no
/// layer_types list (which, where present, wins, except for PatternList).
enum class LayerPattern {
  AllFull,            ///< every layer is full attention
  PatternList,        ///< `key` is required: one 0 (full) / 1 (sliding) per
                      ///< layer, read even where layer_types exists
  EveryNthFull,       ///< layer i is full iff (i + 1) % N == 0, the others
                      ///< are `other`; N from `key`, default `default_n`
  EvenLayersSlide,    ///< even layers slide, odd ones are full
  SlideFromLayer,     ///< only with use_sliding_window: layers from N on
                      ///< slide; N from `key`, default `default_n`
  AllSlideWithWindow, ///< a non-null sliding_window applies to every layer
};

struct LayerRule {
  LayerPattern pattern = LayerPattern::AllFull;
  const char *key = nullptr;
  int64_t default_n = 0;
  Slot other = Slot::Sliding;
};

/// Where a family's output gate comes from.
enum class GateRule {
  None,
  /// q_proj emits each head's query followed by its gate unless
  /// attn_output_gate is false (absent means true).
  InterleavedUnlessDisabled,
};

/// Whether a family's layers have per-head attention sinks.
enum class SinkPattern {
  None,
  Always,
  /// A boolean per layer kind (default false): `full_key` for full layers,
  /// `sliding_key` for sliding ones.
  PerKindFlag,
};

struct SinkRule {
  SinkPattern pattern = SinkPattern::None;
  const char *full_key = nullptr;
  const char *sliding_key = nullptr;
};

/// Values the family's config class has as defaults, so a config.json that
/// leaves them out still reads right. 0 means no default.
struct FamilyDefaults {
  int64_t max_position_embeddings = 0;
  /// The main heads' head_dim (instead of hidden_size / num_heads).
  int64_t head_dim = 0;
  double rope_theta = 10000.0;
};

/// What differs for sliding-window layers.
struct SlidingRules {
  /// Their own head keys, all required where set; else the main heads'.
  const HeadKeys *heads = nullptr;
  /// A second key for the window size, which must agree with sliding_window
  /// and stands in for it when that is absent.
  const char *window_alias = nullptr;
  /// The window when no key gives one.
  int64_t default_window = 0;
  /// Their own rope base key and its default; else rope_theta.
  const char *theta_key = nullptr;
  double default_theta = 10000.0;
  /// No rope scaling on sliding layers (with theta_key: unless
  /// rope_parameters is keyed by layer type).
  bool unscaled_rope = false;
};

/// The softmax scale 1/sqrt(x) with x from `key` (default `fallback`)
/// instead of the qk head dim, where `key` is set.
struct ScaleRule {
  const char *key = nullptr;
  double fallback = 0.0;
};

/// Everything attnc knows about one family of model types.
struct FamilyRules {
  std::vector<std::string> model_types;
  NormStyle qk_norm = NormStyle::None;
  RopeStyle rope_style = RopeStyle::Neox;
  GateRule gate = GateRule::None;
  LayerRule layers;
  SinkRule sinks;
  FamilyDefaults defaults;
  SlidingRules sliding;
  ScaleRule scale;
};

/// The rules for `model_type`, or null for a type not in the table.
const FamilyRules *familyOf(const std::string &model_type);

} // namespace attnc::config_import

#endif // ATTNC_MODEL_LIB_HFFAMILIES_H
