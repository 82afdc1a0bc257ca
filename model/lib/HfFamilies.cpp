//===- HfFamilies.cpp - The family table ----------------------------------===//
//
// One entry per family whose attention attnc knows (docs/config-import.md
// documents each, with its sources). The columns, in FamilyRules' order:
// model types, q/k norm, rope style, gate, layer pattern, sinks, defaults,
// sliding-layer rules, softmax scale.
//
//===----------------------------------------------------------------------===//

#include "HfFamilies.h"

namespace attnc::config_import {

const HeadKeys kMainHeadKeys{"num_attention_heads", "num_key_value_heads",
                             "head_dim", "v_head_dim", /*main=*/true};

namespace {

/// MiMo-V2-Flash's sliding-window layers have their own head counts.
const HeadKeys kMiMoSlidingHeadKeys{"swa_num_attention_heads",
                                    "swa_num_key_value_heads", "swa_head_dim",
                                    "swa_v_head_dim", /*main=*/false};

// The common column values, named so that every row spells all nine columns.
const LayerRule kAllFull{};
const SinkRule kNoSinks{};
const FamilyDefaults kNoDefaults{};
const SlidingRules kLikeFullLayers{};
const ScaleRule kScaleByHeadDim{};

const std::vector<FamilyRules> &familyTable() {
  // One row per family, its columns bin-packed.
  // clang-format off
  static const std::vector<FamilyRules> table = {
      // Llama: no q/k norm, every layer full attention.
      {{"llama"}, NormStyle::None, RopeStyle::Neox, GateRule::None, kAllFull,
       kNoSinks, kNoDefaults, kLikeFullLayers, kScaleByHeadDim},

      // Mistral applies a non-null sliding_window to every layer.
      {{"mistral"}, NormStyle::None, RopeStyle::Neox, GateRule::None,
       {LayerPattern::AllSlideWithWindow, nullptr, 0, Slot::Sliding}, kNoSinks,
       kNoDefaults, kLikeFullLayers, kScaleByHeadDim},

      // Qwen3: per-head RMSNorm. Qwen3Config: with use_sliding_window,
      // layers from max_window_layers on slide; otherwise sliding_window is
      // ignored.
      {{"qwen3", "qwen3_moe"}, NormStyle::Plain, RopeStyle::Neox,
       GateRule::None,
       {LayerPattern::SlideFromLayer, "max_window_layers", 28, Slot::Sliding},
       kNoSinks, kNoDefaults, kLikeFullLayers, kScaleByHeadDim},

      // Qwen3-Next / Qwen3.5 (Gated DeltaNet hybrids): zero-centred norm
      // weights (Qwen3-Next's RMSNorm computes x * (1 + w)); q_proj emits
      // each head's query followed by its gate (vLLM reads attn_output_gate
      // with default true, and Qwen3-Next's config does not carry it); every
      // full_attention_interval-th layer is gated full attention, the rest
      // linear.
      {{"qwen3_next", "qwen3_5", "qwen3_5_text"}, NormStyle::Gemma,
       RopeStyle::Neox, GateRule::InterleavedUnlessDisabled,
       {LayerPattern::EveryNthFull, "full_attention_interval", 4, Slot::Skip},
       kNoSinks, kNoDefaults, kLikeFullLayers, kScaleByHeadDim},

      // Gemma 3: Gemma-style norm. Gemma3TextConfig: layer i is global iff
      // (i + 1) % sliding_window_pattern == 0; its defaults fill what
      // save_pretrained leaves out (the 27B config.json has no
      // max_position_embeddings); the local layers have their own rope base
      // and no scaling (HF builds a separate rotary embedding for them from
      // rope_local_base_freq); the scale is 1/sqrt(query_pre_attn_scalar)
      // (168 for 27B), not 1/sqrt(head_dim).
      {{"gemma3", "gemma3_text"}, NormStyle::Gemma, RopeStyle::Neox,
       GateRule::None,
       {LayerPattern::EveryNthFull, "sliding_window_pattern", 6, Slot::Sliding},
       kNoSinks,
       {/*max_position_embeddings=*/131072, /*head_dim=*/256,
        /*rope_theta=*/1e6},
       {/*heads=*/nullptr, /*window_alias=*/nullptr, /*default_window=*/4096,
        /*theta_key=*/"rope_local_base_freq", /*default_theta=*/10000.0,
        /*unscaled_rope=*/true},
       {"query_pre_attn_scalar", 256.0}},

      // DeepSeek-V3 / Kimi K2 (MLA): DeepSeek's apply_rotary_pos_emb
      // de-interleaves pairs, so GPT-J style. MLA itself is recognised by
      // its keys (qk_nope_head_dim, qk_rope_head_dim), not by the family.
      {{"deepseek_v3", "kimi_k2"}, NormStyle::None, RopeStyle::Gptj,
       GateRule::None, kAllFull, kNoSinks, kNoDefaults, kLikeFullLayers,
       kScaleByHeadDim},

      // gpt-oss: GptOssConfig's default layer_types (even layers slide),
      // learned sinks on every layer.
      {{"gpt_oss"}, NormStyle::None, RopeStyle::Neox, GateRule::None,
       {LayerPattern::EvenLayersSlide, nullptr, 0, Slot::Sliding},
       {SinkPattern::Always, nullptr, nullptr},
       {/*max_position_embeddings=*/0, /*head_dim=*/0,
        /*rope_theta=*/150000.0},
       kLikeFullLayers, kScaleByHeadDim},

      // MiMo-V2-Flash: hybrid_layer_pattern (0 full, 1 sliding); the
      // sliding layers have their own heads, window key and rope base (any
      // rope_scaling applies to both kinds; the file we know has none); sinks
      // per kind.
      {{"mimo_v2_flash"}, NormStyle::None, RopeStyle::Neox, GateRule::None,
       {LayerPattern::PatternList, "hybrid_layer_pattern", 0, Slot::Sliding},
       {SinkPattern::PerKindFlag, "add_full_attention_sink_bias",
        "add_swa_attention_sink_bias"},
       kNoDefaults,
       {&kMiMoSlidingHeadKeys, /*window_alias=*/"sliding_window_size",
        /*default_window=*/0, /*theta_key=*/"swa_rope_theta",
        /*default_theta=*/10000.0, /*unscaled_rope=*/false},
       kScaleByHeadDim},
  };
  // clang-format on
  return table;
}

} // namespace

const FamilyRules *familyOf(const std::string &model_type) {
  for (const FamilyRules &family : familyTable())
    for (const std::string &name : family.model_types)
      if (model_type == name)
        return &family;
  return nullptr;
}

} // namespace attnc::config_import
