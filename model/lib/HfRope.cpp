//===- HfRope.cpp - Hugging Face rotary embedding -------------------------===//
//
// Rotary dim (explicit, partial_rotary_factor, or MLA's qk_rope_head_dim),
// theta and scaling, from rope_theta / rope_scaling (transformers v4) or
// rope_parameters (v5, keyed by layer type for per-layer-type rope).
//
//===----------------------------------------------------------------------===//

#include "HfImporter.h"

#include "attnc/Support/FloatConstant.h"

#include <cmath>

namespace attnc::config_import {

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
                 !family_ || family_->rope.rotary_dim_key
                     ? r_.optInt(text_, "rotary_dim", 0)
                     : std::nullopt) {
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
    // The config class's default (Qwen3-Next 0.25, GLM 0.5, ...).
    if (!factor && family_ && family_->rope.partial_rotary_factor > 0)
      factor = family_->rope.partial_rotary_factor;
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
  // A config class that fills rope_parameters in when config.json says
  // nothing of rope (CWM: llama3 scaling) gives its default here.
  if (!params.value && !text_.has("rope_scaling") && !text_.has("rope_theta") &&
      family_ && family_->rope.default_parameters.is_object())
    params = Node{&family_->rope.default_parameters,
                  "rope_parameters (the family's default)"};
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

  double default_theta = family_ ? family_->rope.theta : 10000.0;
  // Sliding layers with their own rope base (Gemma 3's local layers, MiMo's
  // SWA layers).
  const SlidingRules rules = family_ ? family_->sliding : SlidingRules{};
  const bool own_base = sliding && !rules.theta_key.empty();

  Node scaling_source;
  bool from_params = false;
  Node theta_owner = text_;
  std::string theta_key = "rope_theta";
  if (per_kind) {
    theta_owner = kind_params;
    if (own_base)
      default_theta = rules.theta;
    scaling_source = kind_params;
    from_params = true;
  } else if (own_base && rules.unscaled_rope) {
    // Gemma 3's local layers have their own base and no scaling: HF builds a
    // separate rotary embedding for them from rope_local_base_freq.
    theta_key = rules.theta_key;
    default_theta = rules.theta;
  } else {
    if (own_base) {
      // MiMo's SWA layers use swa_rope_theta; any rope_scaling is applied
      // to both kinds.
      theta_key = rules.theta_key;
      default_theta = rules.theta;
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
  rope.scaling = readScaling(scaling_source, from_params, rope.rotary_dim);
  if (rope.scaling.kind == RopeScalingKind::DynamicNtk && family_ &&
      family_->rope.ntk_alpha && scaling_source.has("alpha") && !r_.failed()) {
    // Hunyuan labels it "dynamic", but a fixed alpha only moves the base:
    // theta * alpha^(d / (d - 2)) with d the head dim.
    double alpha = r_.positive(scaling_source, "alpha", 1.0);
    double d = static_cast<double>(geometry.shape.qk_head_dim);
    double theta = rope.theta * std::pow(alpha, d / (d - 2));
    if (!r_.failed() && !isKernelFloat(theta))
      r_.fail(scaling_source.at("alpha"),
              "gives a rope base that " + std::string(kKernelFloatRule) +
                  " (got " + formatNumber(theta) + ")");
    rope.theta = theta;
    rope.scaling = RopeScaling{};
  }
  return rope;
}

RopeScaling HfImporter::readScaling(const Node &source,
                                    bool from_rope_parameters,
                                    int64_t rotary_dim) {
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
  else if (*type == "longrope" || *type == "su") {
    // "su" is Phi-3's early name for longrope.
    scaling.kind = RopeScalingKind::LongRope;
    readLongRope(source, scaling, rotary_dim);
    return scaling;
  } else {
    r_.fail(type_path, "unsupported rope scaling type " + inQuotes(*type) +
                           " (supported: default, linear, llama3, yarn, "
                           "dynamic, longrope)");
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
    // Llama 3 interpolates between the two. Equal values (Llama 4) make the
    // interpolation band empty: a step from scaled to unscaled frequencies.
    if (!r_.failed() &&
        !(scaling.high_freq_factor >= scaling.low_freq_factor))
      r_.fail(source.at("high_freq_factor"),
              "must be >= low_freq_factor (" +
                  formatNumber(scaling.high_freq_factor) +
                  " < " + formatNumber(scaling.low_freq_factor) + ")");
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
    // An explicit attention_factor replaces the mscale-derived one.
    scaling.attention_factor = r_.positive(source, "attention_factor", 0.0);
    return scaling;
  default:
    return scaling;
  }
}

/// LongRoPE (Phi-3, PhiMoE, MiniCPM3): per-frequency divisors for short and
/// long contexts, and an attention factor on cos and sin.
void HfImporter::readLongRope(const Node &source, RopeScaling &scaling,
                              int64_t rotary_dim) {
  // Phi-3 keeps original_max_position_embeddings at the top level, which
  // transformers lets override the nested one.
  std::optional<int64_t> original =
      r_.optInt(text_, "original_max_position_embeddings", 1, kMaxPositions);
  std::string original_field = text_.at("original_max_position_embeddings");
  if (!original && !r_.failed()) {
    original = r_.optInt(source, "original_max_position_embeddings", 1,
                         kMaxPositions);
    original_field = source.at("original_max_position_embeddings");
  }
  if (r_.failed())
    return;
  scaling.original_max_position =
      original.value_or(config_.max_position_embeddings);
  if (scaling.original_max_position == 0) {
    r_.fail(original_field, "required field is missing (rope scaling "
                            "longrope, and max_position_embeddings is absent)");
    return;
  }
  // factor: given, else max_position_embeddings / original (transformers).
  std::optional<double> factor = r_.optNumber(source, "factor");
  if (r_.failed())
    return;
  if (factor && !(*factor > 0)) {
    r_.fail(source.at("factor"),
            "must be > 0 (got " + formatNumber(*factor) + ")");
    return;
  }
  scaling.factor =
      factor ? *factor
             : static_cast<double>(config_.max_position_embeddings) /
                   static_cast<double>(scaling.original_max_position);
  if (!(scaling.factor > 0))
    scaling.factor = 1.0;
  for (auto [key, values] :
       {std::pair<const char *, std::vector<double> *>{"short_factor",
                                                       &scaling.short_factor},
        {"long_factor", &scaling.long_factor}}) {
    std::optional<std::vector<double>> list = r_.optPositiveList(source, key);
    if (r_.failed())
      return;
    const std::string path = source.at(key);
    if (!list) {
      r_.fail(path, "required field is missing (rope scaling longrope)");
      return;
    }
    if (static_cast<int64_t>(list->size()) != rotary_dim / 2) {
      r_.fail(path, "must have rotary_dim / 2 = " +
                        std::to_string(rotary_dim / 2) + " entries (got " +
                        std::to_string(list->size()) + ")");
      return;
    }
    *values = std::move(*list);
  }
  scaling.attention_factor = r_.positive(source, "attention_factor", 0.0);
  // PhiMoE: short_mscale / long_mscale replace the attention factor, per
  // regime; one value for both is one attention factor.
  std::optional<double> short_m = r_.optNumber(source, "short_mscale");
  std::optional<double> long_m = r_.optNumber(source, "long_mscale");
  if (r_.failed() || (!short_m && !long_m))
    return;
  if (!short_m || !long_m || *short_m != *long_m || !(*short_m > 0)) {
    r_.fail(source.at("long_mscale"),
            "a longrope attention factor that differs between short and "
            "long contexts (short_mscale != long_mscale) is not supported");
    return;
  }
  scaling.attention_factor = *short_m;
}

} // namespace attnc::config_import

