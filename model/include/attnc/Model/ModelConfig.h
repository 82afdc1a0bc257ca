//===- ModelConfig.h - Attention description of a model ---------*- C++ -*-===//
//
// What attnc needs to know about a model's attention layers, read from a
// Hugging Face config.json or an attnc spec file (the same fields spelled
// out). A model has one or more layer kinds (e.g. full and sliding-window
// layers, each with its own head counts); each kind becomes one function in
// the `attn` dialect and one set of kernels.
//
// Optional features are explicit values here (NormStyle::None,
// RopeStyle::None, GateLayout::None, sliding_window == 0, sinks == false),
// never null pointers at run time.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MODEL_MODELCONFIG_H
#define ATTNC_MODEL_MODELCONFIG_H

#include "attnc/Plan/Layout.h"
#include "attnc/Support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnc {

/// The q/k norm's formula.
enum class NormStyle {
  None,       ///< no q/k norm in this model
  Plain,      ///< x * rsqrt(mean(x^2) + eps) * w           (Qwen3)
  Gemma,      ///< x * rsqrt(mean(x^2) + eps) * (1 + w)     (Gemma 3)
  Unweighted, ///< x * rsqrt(mean(x^2) + eps), no weight    (Llama 4 L2Norm)
  LayerNorm,  ///< (x - mean) * rsqrt(var + eps) * w [+ b]  (Cohere, StableLM,
              ///< Phi, Persimmon); var is the biased variance
};
/// "none", "rms", "gemma", "unweighted", "layernorm"
const char *normStyleName(NormStyle style);

/// What the q/k norm's mean (and variance) are taken over, and the weight's
/// shape.
enum class NormScope {
  Head,        ///< each head's Dqk values; one weight [Dqk] for all heads
  HeadWeights, ///< each head's Dqk values; weight [H, Dqk], a row per head
               ///< (Cohere use_qk_norm, StableLM qk_layernorm)
  Projection,  ///< all H * Dqk values of the token's q (k) together; weight
               ///< [H * Dqk] (OLMo-2/3, OLMoE, MiniMax-M2). Needs every head
               ///< of the projection on one rank: tp > 1 is refused.
};
/// "head", "head_weights", "projection"
const char *normScopeName(NormScope scope);

/// Rotary embedding style.
enum class RopeStyle {
  None, ///< no rotary embedding
  Neox, ///< rotate halves: (x[i], x[i + rotary_dim/2])
  Gptj, ///< rotate interleaved pairs: (x[2i], x[2i+1])
};
const char *ropeStyleName(RopeStyle style); ///< "none", "neox", "gptj"

enum class RopeScalingKind { None, Linear, Llama3, Yarn, DynamicNtk, LongRope };
/// "none", "linear", "llama3", "yarn", "dynamic", "longrope"
const char *ropeScalingKindName(RopeScalingKind kind);

/// Rotary frequency scaling; which fields matter depends on `kind`.
struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::None;
  double factor = 1.0;                   ///< linear, llama3, yarn, dynamic
  int64_t original_max_position = 0;     ///< llama3, yarn, dynamic
  double low_freq_factor = 1.0;          ///< llama3
  double high_freq_factor = 4.0;         ///< llama3
  double beta_fast = 32.0;               ///< yarn
  double beta_slow = 1.0;                ///< yarn
  double mscale = 1.0;                   ///< yarn (DeepSeek form)
  double mscale_all_dim = 0.0;           ///< yarn (DeepSeek form); 0 = absent
  bool truncate = true;                  ///< yarn (gpt-oss: false)
  /// longrope (Phi-3): per-frequency divisors, rotary_dim / 2 each. A
  /// position below original_max_position rotates with short_factor, one at
  /// or past it with long_factor (per position, as vLLM does; Hugging Face
  /// picks one list per forward call from the longest sequence, which agrees
  /// for every sequence that stays on one side).
  std::vector<double> short_factor, long_factor;
  /// Factor on cos and sin (both q and k, so scores scale by its square):
  /// 0 = the kind's default (yarn: from mscale; longrope:
  /// sqrt(1 + ln(factor) / ln(original_max_position)), 1 when factor <= 1).
  double attention_factor = 0.0;
};

struct RopeConfig {
  RopeStyle style = RopeStyle::None;
  /// Dims of Dqk that rotate; even; rotary_offset + rotary_dim <= Dqk;
  /// 0 iff style == None.
  int64_t rotary_dim = 0;
  /// First rotated dim: 0 for ordinary models (partial rotary rotates the
  /// leading dims), qk_nope_head_dim for MLA (the rope part comes last).
  int64_t rotary_offset = 0;
  double theta = 10000.0;
  RopeScaling scaling;
};

/// Multi-head latent attention (MLA: DeepSeek-V2/V3, Kimi-K2, GLM-4.x-Flash,
/// Mistral 4, LongCat-Flash): the kind caches one latent row per token,
/// [c_kv | k_pe] of kv_lora_rank + qk_rope_head_dim values (one head; V is
/// the first kv_lora_rank values of the same row), decodes in the absorbed
/// form and prefills in the decompressed one. The decompressed heads are
/// the kind's `heads` (Hkv = Hq, Dqk = qk_nope_head_dim + qk_rope_head_dim,
/// Dv = v_head_dim) and its rope (rotary_offset = qk_nope_head_dim,
/// rotary_dim = qk_rope_head_dim: the rope part comes last), so nothing
/// here repeats them.
struct MlaConfig {
  /// R: the latent c_kv's width (DeepSeek-V3: 512).
  int64_t kv_lora_rank = 0;
  /// kv_a_layernorm's eps (transformers builds that RMSNorm without an eps
  /// argument in every MLA family, so 1e-6 whatever rms_norm_eps says).
  double kv_norm_eps = 1e-6;
  /// Factor on the normalised c_kv (LongCat: sqrt(hidden_size /
  /// kv_lora_rank)); 1 elsewhere.
  double latent_scale = 1.0;
  /// gptj rotation with the rotated values written in halves order (Hugging
  /// Face's apply_rotary_pos_emb_interleave: DeepSeek-V3 with
  /// rope_interleave, LongCat); false: in place (DeepSeek-V2).
  bool rope_deinterleave = false;
  /// Tokens per latent-cache block (page): 64 or 16.
  int64_t block_size = 64;
};

/// One kind of attention layer of a model.
struct LayerKind {
  /// "full_attention", "sliding_attention", ... (a valid identifier).
  std::string name;
  /// Indices of the model's layers of this kind, ascending.
  std::vector<int64_t> layers;
  HeadShape heads;
  NormStyle qk_norm = NormStyle::None;
  NormScope qk_norm_scope = NormScope::Head;
  /// LayerNorm only: a bias of the weight's shape follows the weight.
  bool qk_norm_bias = false;
  double norm_eps = 1e-6;
  /// Norm before rope (most families); false: after it (Hunyuan, Llama 4).
  /// Always true without a q/k norm or without rope.
  bool norm_before_rope = true;
  RopeConfig rope;
  /// Keys visible to a query: 0 = unlimited, else the window size.
  int64_t sliding_window = 0;
  /// Chunked attention (Llama 4's attention_chunk_size on its RoPE layers):
  /// a query at position p sees only the keys of its chunk,
  /// [p - p % attention_chunk, p]. 0 = none.
  int64_t attention_chunk = 0;
  /// Per-head learned attention-sink logits (gpt-oss, MiMo sliding layers).
  bool sinks = false;
  /// Softmax scale applied to q.k (default 1/sqrt(Dqk)).
  double softmax_scale = 0.0;
  /// tanh soft-cap of the logits; 0 = none.
  double logit_softcap = 0.0;
  /// Multiplier applied to V (MiMo-V2-Flash's attention_value_scale); 1 = none.
  double value_scale = 1.0;
  /// Llama 4's attention temperature (attn_temperature_tuning, on its NoPE
  /// layers): q is multiplied by log(floor((pos + 1) / floor_scale) + 1) *
  /// scale + 1 before attention. floor_scale 0 = none.
  struct QueryTemperature {
    double floor_scale = 0.0;
    double scale = 0.0;
  } query_temperature;
  /// Present for an MLA kind (latent cache, absorbed decode, decompressed
  /// prefill); absent for every other attention.
  std::optional<MlaConfig> mla;
};

/// The attention description of a whole model.
struct ModelConfig {
  std::string model_type;       ///< as in config.json ("qwen3", ...)
  std::string dtype = "bf16";   ///< activation dtype: "bf16" | "fp16" | "fp32"
  int64_t num_layers = 0;
  int64_t max_position_embeddings = 0;
  std::vector<LayerKind> kinds; ///< at least one; names unique
};

/// Reads a Hugging Face config.json or an attnc spec (JSON text). Errors name
/// the field (dotted path) and the rule; never throws.
Result<ModelConfig> importModelConfig(std::string_view json_text);

/// Reads a file then importModelConfig; an unreadable or empty file is an
/// error naming the path.
Result<ModelConfig> importModelConfigFile(const std::string &path);

/// Whether the model's layers can be split over `tp` tensor-parallel ranks
/// as far as the attention math goes (the head counts are the layout
/// library's rule, computeRankShard). A q/k norm over the whole projection
/// (NormScope::Projection) needs every head on one rank, so tp > 1 is refused
/// naming the kind and the feature; the error's field is "tp".
/// An MLA kind shards its query heads (Hq / tp per rank) and never its
/// latent: every rank caches the whole [c_kv | k_pe] row.
Status checkTensorParallel(const ModelConfig &config, int64_t tp);

/// Serialises to the attnc spec form (JSON text, every field spelled out);
/// importModelConfig(toSpecJson(c)) reproduces c.
std::string toSpecJson(const ModelConfig &config);

} // namespace attnc

#endif // ATTNC_MODEL_MODELCONFIG_H
