"""Small Hugging Face configs, one per family, for test_hf_families.py.

Each is derived from a real config.json of the family (named in its
comment; the ten in ../shared/configs and examples/configs are copied
there): head_dim and every attention feature (q/k norm, partial rotary,
rope scaling, sliding window and which layers slide, sinks, soft-cap, gate,
scale rules, layer types) are kept; head counts shrink to a few heads that
keep the GQA shape; layers shrink to a few in which every layer kind
appears; hidden size (where head_dim is explicit), MLP, experts and
vocabulary shrink to what costs nothing. Where head_dim is not a key, it is
hidden_size // num_attention_heads, so hidden_size is heads x head_dim.
Sliding windows shrink to 16 so that the test's 41-token prompt crosses
them.

Only config.json keys are written (what an engine hands attnc); the config
class adds its defaults on the Hugging Face side, and attnc must know them.
"""

from typing import Any, Dict

#: Shrinks that do not change attention.
_SMALL = dict(intermediate_size=128, vocab_size=64, pad_token_id=0, tie_word_embeddings=False)
#: MoE shrinks (each family's own key names are added per row).
_SMALL_MOE = dict(_SMALL, moe_intermediate_size=64, num_experts_per_tok=2)

WINDOW = 16


def _alternate(n: int, every: int):
    """layer_types of n layers where every `every`-th (1-based) is full and
    the others slide."""
    return ["full_attention" if (i + 1) % every == 0 else "sliding_attention"
            for i in range(n)]


FAMILIES: Dict[str, Dict[str, Any]] = {
    # Llama-3.1-8B-Instruct: 32/8 heads -> 8/2, head_dim 128 (= 4096 / 32),
    # llama3 rope scaling.
    "llama": dict(_SMALL, model_type="llama", hidden_size=1024, num_attention_heads=8,
                  num_key_value_heads=2, num_hidden_layers=2, rms_norm_eps=1e-5,
                  rope_theta=500000.0, max_position_embeddings=131072,
                  rope_scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                "original_max_position_embeddings": 8192,
                                "rope_type": "llama3"}),
    # Mistral-7B-v0.1: 32/8 -> 8/2, head_dim 128, sliding_window 4096 -> 16
    # on every layer.
    "mistral": dict(_SMALL, model_type="mistral", hidden_size=1024, num_attention_heads=8,
                    num_key_value_heads=2, num_hidden_layers=2, rms_norm_eps=1e-5,
                    rope_theta=10000.0, sliding_window=WINDOW, max_position_embeddings=32768),
    # Ministral-8B-Instruct-2410: head_dim 128, 32/8 -> 8/2, theta 1e8,
    # sliding window (every layer by the class's default layer_types).
    "ministral": dict(_SMALL, model_type="ministral", hidden_size=512, head_dim=128,
                      num_attention_heads=8, num_key_value_heads=2, num_hidden_layers=2,
                      rope_theta=100000000.0, sliding_window=WINDOW, rms_norm_eps=1e-5),
    # Ministral-3-8B (text): head_dim 128, 32/8 -> 8/2, yarn factor 16.
    "ministral3": dict(_SMALL, model_type="ministral3", hidden_size=512, head_dim=128,
                       num_attention_heads=8, num_key_value_heads=2, num_hidden_layers=2,
                       rms_norm_eps=1e-5, max_position_embeddings=262144,
                       rope_parameters={"rope_type": "yarn", "rope_theta": 1000000.0,
                                        "factor": 16.0,
                                        "original_max_position_embeddings": 16384,
                                        "beta_fast": 32.0, "beta_slow": 1.0,
                                        "mscale": 1.0, "mscale_all_dim": 1.0,
                                        "llama_4_scaling_beta": 0.1}),
    # Mixtral-8x7B: 32/8 -> 8/2, head_dim 128, theta 1e6, 8 experts -> 4.
    "mixtral": dict(_SMALL, model_type="mixtral", hidden_size=1024, num_attention_heads=8,
                    num_key_value_heads=2, num_hidden_layers=2, rope_theta=1000000.0,
                    num_local_experts=4, num_experts_per_tok=2, rms_norm_eps=1e-5,
                    sliding_window=None),
    # Qwen2.5-7B-Instruct: 28/4 -> 7/1, head_dim 128, q/k/v bias,
    # use_sliding_window false.
    "qwen2": dict(_SMALL, model_type="qwen2", hidden_size=896, num_attention_heads=7,
                  num_key_value_heads=1, num_hidden_layers=2, rope_theta=1000000.0,
                  rms_norm_eps=1e-6, sliding_window=131072, use_sliding_window=False,
                  max_window_layers=28, max_position_embeddings=32768),
    # Qwen1.5-MoE-A2.7B: 16/16 -> 4/4 (MHA), head_dim 128, 60 experts -> 4,
    # shared expert.
    "qwen2_moe": dict(_SMALL_MOE, model_type="qwen2_moe", hidden_size=512,
                      num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=2,
                      num_experts=4, shared_expert_intermediate_size=64,
                      rope_theta=1000000.0, use_sliding_window=False, sliding_window=32768,
                      max_window_layers=21, rms_norm_eps=1e-6),
    # Qwen3-8B: 32/8 -> 8/2, head_dim 128, per-head RMSNorm on q and k.
    "qwen3": dict(_SMALL, model_type="qwen3", hidden_size=512, head_dim=128,
                  num_attention_heads=8, num_key_value_heads=2, num_hidden_layers=2,
                  rope_theta=1000000, rms_norm_eps=1e-6, use_sliding_window=False,
                  sliding_window=None, max_window_layers=36, max_position_embeddings=40960),
    # Qwen3-30B-A3B: 32/4 -> 8/1, head_dim 128, q/k RMSNorm, 128 experts -> 4.
    "qwen3_moe": dict(_SMALL_MOE, model_type="qwen3_moe", hidden_size=512, head_dim=128,
                      num_attention_heads=8, num_key_value_heads=1, num_hidden_layers=2,
                      num_experts=4, rope_theta=1000000.0, rms_norm_eps=1e-6,
                      use_sliding_window=False, sliding_window=None, max_window_layers=48,
                      decoder_sparse_step=1, norm_topk_prob=True),
    # Qwen3-Next-80B-A3B: 16/2 -> 4/1 heads of 256, gemma-style q/k norm,
    # partial rotary 0.25, per-head interleaved output gate, every 4th layer
    # full attention (the rest Gated DeltaNet).
    "qwen3_next": dict(_SMALL_MOE, model_type="qwen3_next", hidden_size=256, head_dim=256,
                       num_attention_heads=4, num_key_value_heads=1, num_hidden_layers=4,
                       rope_theta=10000000, partial_rotary_factor=0.25,
                       full_attention_interval=4, num_experts=4,
                       shared_expert_intermediate_size=64, linear_num_key_heads=2,
                       linear_num_value_heads=4, linear_key_head_dim=32,
                       linear_value_head_dim=32, rms_norm_eps=1e-6,
                       max_position_embeddings=262144),
    # Qwen3.5-27B (its text_config): 24/4 -> 6/1 heads of 256, gate,
    # rope_parameters with partial rotary 0.25 and mrope sections.
    "qwen3_5_text": dict(_SMALL, model_type="qwen3_5_text", hidden_size=256, head_dim=256,
                         num_attention_heads=6, num_key_value_heads=1, num_hidden_layers=4,
                         attn_output_gate=True, full_attention_interval=4,
                         layer_types=["linear_attention"] * 3 + ["full_attention"],
                         rope_parameters={"mrope_interleaved": True,
                                          "mrope_section": [11, 11, 10],
                                          "rope_type": "default", "rope_theta": 10000000,
                                          "partial_rotary_factor": 0.25},
                         linear_num_key_heads=2, linear_num_value_heads=4,
                         linear_key_head_dim=32, linear_value_head_dim=32,
                         rms_norm_eps=1e-6, max_position_embeddings=262144),
    # Gemma-7B: 16/16 -> 4/4 heads of 256, plain GQA-free attention.
    "gemma": dict(_SMALL, model_type="gemma", hidden_size=256, head_dim=256,
                  num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=2,
                  rope_theta=10000.0, rms_norm_eps=1e-6),
    # Gemma-2-9B: 16/8 -> 4/2 heads of 256, scale query_pre_attn_scalar^-0.5
    # (256), soft-cap 50, even layers sliding (4096 -> 16).
    "gemma2": dict(_SMALL, model_type="gemma2", hidden_size=256, head_dim=256,
                   num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2,
                   query_pre_attn_scalar=256, attn_logit_softcapping=50.0,
                   final_logit_softcapping=30.0, sliding_window=WINDOW, rope_theta=10000.0,
                   rms_norm_eps=1e-6),
    # Gemma-3-27B (text_config): 32/16 -> 4/2 heads of 128, (1 + w) q/k norm,
    # query_pre_attn_scalar 168, linear scaling 8 on full layers, local base
    # 1e4 and window 1024 -> 16 on sliding layers, every 6th layer full.
    "gemma3_text": dict(_SMALL, model_type="gemma3_text", hidden_size=256, head_dim=128,
                        num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=6,
                        query_pre_attn_scalar=168, sliding_window=WINDOW,
                        rope_scaling={"factor": 8.0, "rope_type": "linear"},
                        rope_theta=1000000.0, rope_local_base_freq=10000.0,
                        sliding_window_pattern=6, rms_norm_eps=1e-6),
    # VaultGemma-1B: 4/4 heads of 256, gemma2's rules (soft-cap, sliding
    # even layers).
    "vaultgemma": dict(_SMALL, model_type="vaultgemma", hidden_size=256, head_dim=256,
                       num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=2,
                       query_pre_attn_scalar=256, attn_logit_softcapping=50.0,
                       sliding_window=WINDOW, rms_norm_eps=1e-6),
    # GLM-4-9B-0414 (glm4): 32/2 -> 8/1 heads of 128, partial rotary 0.5,
    # interleaved (gptj) rope, q/k/v bias.
    "glm4": dict(_SMALL, model_type="glm4", hidden_size=512, head_dim=128,
                 num_attention_heads=8, num_key_value_heads=1, num_hidden_layers=2,
                 partial_rotary_factor=0.5, rope_theta=10000.0, attention_bias=True,
                 rms_norm_eps=1e-5),
    # glm-4-9b-chat-hf (glm): 32/2 -> 8/1 heads of 128, partial rotary 0.5,
    # gptj pairs.
    "glm": dict(_SMALL, model_type="glm", hidden_size=512, head_dim=128,
                num_attention_heads=8, num_key_value_heads=1, num_hidden_layers=2,
                partial_rotary_factor=0.5, rope_theta=10000.0, attention_bias=True,
                rms_norm_eps=1.5625e-07),
    # GLM-4.5-Air: 96/8 -> 12/1 heads of 128, partial rotary 0.5 (neox),
    # use_qk_norm false, 128 experts -> 4.
    "glm4_moe": dict(_SMALL_MOE, model_type="glm4_moe", hidden_size=512, head_dim=128,
                     num_attention_heads=12, num_key_value_heads=1, num_hidden_layers=2,
                     partial_rotary_factor=0.5, rope_theta=1000000, attention_bias=True,
                     use_qk_norm=False, n_routed_experts=4, n_shared_experts=1,
                     first_k_dense_replace=1, n_group=1, topk_group=1, rms_norm_eps=1e-5),
    # Phi-4-mini-instruct: 24/8 -> 6/2 heads of 128 (3072 / 24), partial
    # rotary 0.75, fused qkv_proj. (Its longrope scaling is a separate case
    # once attnc reads longrope.)
    "phi3": dict(_SMALL, model_type="phi3", hidden_size=768, num_attention_heads=6,
                 num_key_value_heads=2, num_hidden_layers=2, partial_rotary_factor=0.75,
                 rope_theta=10000.0, rms_norm_eps=1e-5, sliding_window=262144,
                 max_position_embeddings=131072, original_max_position_embeddings=4096),
    # Phi-3.5-MoE: 32/8 -> 8/2 heads of 128, 16 experts -> 4.
    "phimoe": dict(_SMALL, model_type="phimoe", hidden_size=1024, num_attention_heads=8,
                   num_key_value_heads=2, num_hidden_layers=2, num_local_experts=4,
                   num_experts_per_tok=2, rope_theta=10000.0, sliding_window=None,
                   rms_norm_eps=1e-5, attention_bias=True),
    # phi-2: 32/32 -> 4/4 heads of 80 (2560 / 32), partial rotary 0.4,
    # q/k/v/dense bias, LayerNorm-free attention (qk_layernorm false).
    "phi": dict(_SMALL, model_type="phi", hidden_size=320, num_attention_heads=4,
                num_key_value_heads=4, num_hidden_layers=2, partial_rotary_factor=0.4,
                rope_theta=10000.0, qk_layernorm=False, layer_norm_eps=1e-5),
    # DeepSeek-V3: MLA 128 heads -> 4, q_lora 1536 -> 64, kv_lora 512 -> 64,
    # nope 128 / rope 64 / v 128, yarn factor 40 with mscale_all_dim 1.
    "deepseek_v3": dict(_SMALL_MOE, model_type="deepseek_v3", hidden_size=256,
                        num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=2,
                        q_lora_rank=64, kv_lora_rank=64, qk_nope_head_dim=128,
                        qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=4,
                        n_shared_experts=1, first_k_dense_replace=1, n_group=1, topk_group=1,
                        rope_theta=10000, max_position_embeddings=163840, rms_norm_eps=1e-6,
                        rope_scaling={"beta_fast": 32, "beta_slow": 1, "factor": 40,
                                      "mscale": 1.0, "mscale_all_dim": 1.0,
                                      "original_max_position_embeddings": 4096,
                                      "type": "yarn"}),
    # DeepSeek-V2-Lite: MLA without q_lora (q_proj), 16 heads -> 4,
    # kv_lora 512 -> 64, yarn factor 40 with mscale 0.707.
    "deepseek_v2": dict(_SMALL_MOE, model_type="deepseek_v2", hidden_size=256,
                        num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=2,
                        q_lora_rank=None, kv_lora_rank=64, qk_nope_head_dim=128,
                        qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=4,
                        n_shared_experts=1, first_k_dense_replace=1, rope_theta=10000,
                        max_position_embeddings=163840, rms_norm_eps=1e-6,
                        rope_scaling={"beta_fast": 32, "beta_slow": 1, "factor": 40,
                                      "mscale": 0.707, "mscale_all_dim": 0.707,
                                      "original_max_position_embeddings": 4096,
                                      "type": "yarn"}),
    # GLM-4.7-Flash (glm4_moe_lite): MLA 20 heads -> 4, q_lora 768 -> 64,
    # kv_lora 512 -> 64, nope 192 / rope 64 / v 256.
    "glm4_moe_lite": dict(_SMALL_MOE, model_type="glm4_moe_lite", hidden_size=256,
                          num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=2,
                          q_lora_rank=64, kv_lora_rank=64, qk_nope_head_dim=192,
                          qk_rope_head_dim=64, v_head_dim=256, n_routed_experts=4,
                          n_shared_experts=1, first_k_dense_replace=1, rope_theta=1000000,
                          rms_norm_eps=1e-5),
    # ERNIE-4.5-0.3B: 16/2 -> 8/1 heads of 128 (1024 / 16 = 64 there; kept
    # 128 via head_dim), gptj rope, theta 500000.
    "ernie4_5": dict(_SMALL, model_type="ernie4_5", hidden_size=512, head_dim=128,
                     num_attention_heads=8, num_key_value_heads=1, num_hidden_layers=2,
                     rope_theta=500000, use_bias=False, rms_norm_eps=1e-5),
    # ERNIE-4.5-21B-A3B: 20/4 -> 5/1 heads of 128, gptj rope, 64 experts -> 4.
    "ernie4_5_moe": dict(_SMALL_MOE, model_type="ernie4_5_moe", hidden_size=640,
                         num_attention_heads=5, num_key_value_heads=1, num_hidden_layers=2,
                         rope_theta=500000, moe_num_experts=4, moe_k=2,
                         moe_layer_start_index=1, moe_num_shared_experts=0,
                         use_bias=False, rms_norm_eps=1e-5),
    # gpt-oss-20b: 64/8 -> 8/1 heads of 64, sinks, even layers sliding
    # (128 -> 16), yarn factor 32 (truncate false), attention bias.
    "gpt_oss": dict(_SMALL, model_type="gpt_oss", hidden_size=256, head_dim=64,
                    num_attention_heads=8, num_key_value_heads=1, num_hidden_layers=2,
                    num_local_experts=4, num_experts_per_tok=2, sliding_window=WINDOW,
                    layer_types=["sliding_attention", "full_attention"], rope_theta=150000,
                    rope_scaling={"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                                  "original_max_position_embeddings": 4096,
                                  "rope_type": "yarn", "truncate": False},
                    attention_bias=True, rms_norm_eps=1e-5, max_position_embeddings=131072),
    # OLMo-2-1124-7B: 32/32 -> 4/4 heads of 128, RMSNorm over the whole q
    # (k) projection.
    "olmo2": dict(_SMALL, model_type="olmo2", hidden_size=512, num_attention_heads=4,
                  num_key_value_heads=4, num_hidden_layers=2, rope_theta=500000,
                  rms_norm_eps=1e-6, attention_bias=False),
    # Olmo-3-7B: 32/32 -> 4/4 heads of 128, whole-projection q/k norm,
    # sliding window 4096 -> 16 on 3 of every 4 layers.
    "olmo3": dict(_SMALL, model_type="olmo3", hidden_size=512, num_attention_heads=4,
                  num_key_value_heads=4, num_hidden_layers=4, rope_theta=500000,
                  sliding_window=WINDOW, layer_types=_alternate(4, 4), rms_norm_eps=1e-6),
    # OLMoE-1B-7B: 16/16 -> 4/4 heads of 128, whole-projection q/k norm,
    # 64 experts -> 4.
    "olmoe": dict(_SMALL, model_type="olmoe", hidden_size=512, num_attention_heads=4,
                  num_key_value_heads=4, num_hidden_layers=2, num_experts=4,
                  num_experts_per_tok=2, rope_theta=10000.0, rms_norm_eps=1e-5,
                  clip_qkv=None),
    # c4ai-command-r-v01 (cohere): 64/64 -> 4/4 heads of 128, gptj rope,
    # use_qk_norm (per-head LayerNorm weights) as Command R+ has it.
    "cohere": dict(_SMALL, model_type="cohere", hidden_size=512, num_attention_heads=4,
                   num_key_value_heads=4, num_hidden_layers=2, rope_theta=8000000.0,
                   use_qk_norm=True, layer_norm_eps=1e-5, logit_scale=0.0625),
    # c4ai-command-r7b (cohere2): 32/8 -> 4/1 heads of 128, gptj rope on
    # sliding layers only (window 4096 -> 16), every 4th layer full NoPE.
    "cohere2": dict(_SMALL, model_type="cohere2", hidden_size=512, num_attention_heads=4,
                    num_key_value_heads=1, num_hidden_layers=4, rope_theta=50000,
                    sliding_window=WINDOW, sliding_window_pattern=4, layer_norm_eps=1e-5,
                    logit_scale=0.25),
    # granite-3.3-8b-instruct: 32/8 -> 8/2 heads of 128, softmax scale
    # attention_multiplier 0.0078125.
    "granite": dict(_SMALL, model_type="granite", hidden_size=1024, num_attention_heads=8,
                    num_key_value_heads=2, num_hidden_layers=2, rope_theta=10000000.0,
                    attention_multiplier=0.0078125, embedding_multiplier=12.0,
                    residual_multiplier=0.22, logits_scaling=16.0, rms_norm_eps=1e-5),
    # granite-3.1-3b-a800m (granitemoe): 24/8 -> 6/2 heads of 64,
    # attention_multiplier 0.015625, 40 experts -> 4.
    "granitemoe": dict(_SMALL, model_type="granitemoe", hidden_size=384,
                       num_attention_heads=6, num_key_value_heads=2, num_hidden_layers=2,
                       num_local_experts=4, num_experts_per_tok=2,
                       attention_multiplier=0.015625, rope_theta=10000000.0,
                       rms_norm_eps=1e-6),
    # starcoder2-7b: 36/4 -> 9/1 heads of 128, bias, sliding window 4096 -> 16
    # on every layer.
    "starcoder2": dict(_SMALL, model_type="starcoder2", hidden_size=1152,
                       num_attention_heads=9, num_key_value_heads=1, num_hidden_layers=2,
                       rope_theta=1000000, sliding_window=WINDOW, use_bias=True,
                       norm_epsilon=1e-5),
    # MiniMax-M2: 48/8 -> 8/1 heads of 128, whole-projection q/k RMSNorm,
    # partial rotary 64 of 128 (rotary_dim), 256 experts -> 4.
    "minimax_m2": dict(_SMALL, model_type="minimax_m2", hidden_size=256, head_dim=128,
                       num_attention_heads=8, num_key_value_heads=1, num_hidden_layers=2,
                       rotary_dim=64, partial_rotary_factor=0.5, rope_theta=5000000,
                       use_qk_norm=True, qk_norm_type="per_layer", num_local_experts=4,
                       num_experts_per_tok=2, rms_norm_eps=1e-6),
    # Hunyuan-7B (dense): 32/8 -> 8/2 heads of 128, q/k RMSNorm after rope,
    # rope type "dynamic" with alpha 1000 (a larger base).
    "hunyuan_v1_dense": dict(_SMALL, model_type="hunyuan_v1_dense", hidden_size=1024,
                             head_dim=128, num_attention_heads=8, num_key_value_heads=2,
                             num_hidden_layers=2, rope_theta=10000.0, use_qk_norm=True,
                             rms_norm_eps=1e-5, max_position_embeddings=32768,
                             rope_scaling={"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1,
                                           "factor": 1.0, "mscale": 1.0,
                                           "mscale_all_dim": 1.0, "type": "dynamic"}),
    # Seed-OSS-36B: 80/8 -> 10/1 heads of 128, q/k/v bias, theta 1e7.
    "seed_oss": dict(_SMALL, model_type="seed_oss", hidden_size=512, head_dim=128,
                     num_attention_heads=10, num_key_value_heads=1, num_hidden_layers=2,
                     rope_theta=10000000.0, attention_bias=True, attention_out_bias=False,
                     rms_norm_eps=1e-6),
    # EXAONE-4.0-32B: 40/8 -> 5/1 heads of 128, q/k RMSNorm, 3 sliding layers
    # with rope (window 4096 -> 16), then a full NoPE one, llama3 scaling.
    # Its config.json says sliding_window_pattern "LLLG", which
    # transformers 5.17's Exaone4Config cannot read ((i + 1) % "LLLG"): the
    # same pattern as the integer 4.
    "exaone4": dict(_SMALL, model_type="exaone4", hidden_size=640, head_dim=128,
                    num_attention_heads=5, num_key_value_heads=1, num_hidden_layers=4,
                    sliding_window=WINDOW, sliding_window_pattern=4,
                    rope_theta=1000000.0, rms_norm_eps=1e-5,
                    rope_scaling={"rope_type": "llama3", "factor": 16.0,
                                  "original_max_position_embeddings": 8192,
                                  "low_freq_factor": 1.0, "high_freq_factor": 4.0}),
    # SmolLM3-3B: 16/4 -> 4/1 heads of 128, every 4th layer NoPE
    # (no_rope_layers: 1 = rope).
    "smollm3": dict(_SMALL, model_type="smollm3", hidden_size=512, num_attention_heads=4,
                    num_key_value_heads=1, num_hidden_layers=4, rope_theta=5000000.0,
                    no_rope_layers=[1, 1, 1, 0], use_sliding_window=False,
                    sliding_window=None, rms_norm_eps=1e-6),
    # Llama-4-Scout (text): 40/8 -> 5/1 heads of 128, every 4th layer NoPE,
    # L2 q/k norm on rope layers, attention temperature on NoPE layers,
    # chunked attention (8192 -> 16, so the 19- and 41-token prompts and
    # their decode steps cross chunk boundaries) on rope layers; floor_scale
    # 8192 -> 8, so the temperature grows within the prompts.
    "llama4_text": dict(_SMALL, model_type="llama4_text", hidden_size=640, head_dim=128,
                        num_attention_heads=5, num_key_value_heads=1, num_hidden_layers=4,
                        no_rope_layers=[1, 1, 1, 0], use_qk_norm=True,
                        attn_temperature_tuning=True, floor_scale=8, attn_scale=0.1,
                        rope_theta=500000.0, num_local_experts=4, num_experts_per_tok=1,
                        intermediate_size_mlp=128, interleave_moe_layer_step=1,
                        attention_chunk_size=16,
                        rope_scaling={"factor": 16.0, "high_freq_factor": 1.0,
                                      "low_freq_factor": 1.0,
                                      "original_max_position_embeddings": 8192,
                                      "rope_type": "llama3"}, rms_norm_eps=1e-5),
    # MiMo-V2-Flash: 192/128 head dims, partial rotary 0.334, full layers
    # 64/4 -> 8/1, sliding layers 64/8 -> 8/2 with sinks, value scale 0.707,
    # per-kind rope bases. Window: transformers 5.24 turns the legacy
    # sliding_window_size (128 -> 16) into sliding_window = size + 1, 5.17
    # reads sliding_window alone; both keys as 5.24 writes them (17, 16) give
    # one window in either version.
    "mimo_v2_flash": dict(_SMALL_MOE, model_type="mimo_v2_flash", hidden_size=256,
                          head_dim=192, v_head_dim=128, num_attention_heads=8,
                          num_key_value_heads=1, swa_num_attention_heads=8,
                          swa_num_key_value_heads=2, swa_head_dim=192, swa_v_head_dim=128,
                          num_hidden_layers=2, hybrid_layer_pattern=[0, 1],
                          layer_types=["full_attention", "sliding_attention"],
                          mlp_layer_types=["dense", "dense"], n_routed_experts=4,
                          sliding_window=WINDOW + 1, sliding_window_size=WINDOW,
                          partial_rotary_factor=0.334, rope_theta=5000000,
                          swa_rope_theta=10000, attention_value_scale=0.707,
                          add_full_attention_sink_bias=False, add_swa_attention_sink_bias=True,
                          rms_norm_eps=1e-5, max_position_embeddings=262144),
    # Apertus-8B: 32/8 -> 8/2 heads of 128, q/k RMSNorm, llama3 scaling.
    "apertus": dict(_SMALL, model_type="apertus", hidden_size=1024, num_attention_heads=8,
                    num_key_value_heads=2, num_hidden_layers=2, rope_theta=12000000,
                    qk_norm=True, rms_norm_eps=1e-5,
                    rope_scaling={"factor": 8.0, "high_freq_factor": 4.0,
                                  "low_freq_factor": 1.0,
                                  "original_max_position_embeddings": 8192,
                                  "rope_type": "llama3"}),
    # AFM-4.5B (arcee): 20/4 -> 5/1 heads of 128, yarn factor 20.
    "arcee": dict(_SMALL, model_type="arcee", hidden_size=640, num_attention_heads=5,
                  num_key_value_heads=1, num_hidden_layers=2, rope_theta=10000.0,
                  rope_scaling={"beta_fast": 32.0, "beta_slow": 1.0, "factor": 20.0,
                                "mscale": 1.0, "mscale_all_dim": 0.0,
                                "original_max_position_embeddings": 4096,
                                "rope_type": "yarn"}, rms_norm_eps=1e-5),
    # dots.llm1: 32/32 -> 4/4 heads of 128, q/k RMSNorm, 128 experts -> 4.
    "dots1": dict(_SMALL_MOE, model_type="dots1", hidden_size=512, head_dim=128,
                  num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=2,
                  n_routed_experts=4, n_shared_experts=1, first_k_dense_replace=1,
                  rope_theta=10000000, rms_norm_eps=1e-5),
    # AFMoE (Trinity): 32/4 -> 8/1 heads of 128, q/k RMSNorm, sigmoid output
    # gate (gate_proj, [q|k|v|g]), 3 of 4 layers sliding with rope, the full
    # ones NoPE.
    "afmoe": dict(_SMALL_MOE, model_type="afmoe", hidden_size=512, head_dim=128,
                  num_attention_heads=8, num_key_value_heads=1, num_hidden_layers=4,
                  num_experts=4, num_shared_experts=1, num_dense_layers=1,
                  sliding_window=WINDOW, global_attn_every_n_layers=4, rope_theta=10000,
                  rms_norm_eps=1e-5),
    # StableLM-2-1.6B: 32/32 -> 4/4 heads of 64, partial rotary 0.25, q/k/v
    # bias; per-head LayerNorm q/k norm as stablelm-2-12b has it.
    "stablelm": dict(_SMALL, model_type="stablelm", hidden_size=256, num_attention_heads=4,
                     num_key_value_heads=4, num_hidden_layers=2, partial_rotary_factor=0.25,
                     rope_theta=10000, use_qkv_bias=True, qk_layernorm=True,
                     layer_norm_eps=1e-5),
    # pythia / gpt-neox-20b: 64 heads of 96 -> 4 heads of 96, rotary_pct
    # 0.25, fused per-head [q k v].
    "gpt_neox": dict(_SMALL, model_type="gpt_neox", hidden_size=384, num_attention_heads=4,
                     num_hidden_layers=2, rotary_pct=0.25, rotary_emb_base=10000,
                     use_parallel_residual=True, layer_norm_eps=1e-5),
    # Nemotron-4-Minitron-8B: 48/8 -> 6/1 heads of 128, partial rotary 0.5.
    "nemotron": dict(_SMALL, model_type="nemotron", hidden_size=768, head_dim=128,
                     num_attention_heads=6, num_key_value_heads=1, num_hidden_layers=2,
                     partial_rotary_factor=0.5, rope_theta=10000, norm_eps=1e-5),
    # helium-1-2b: 16/8 -> 4/2 heads of 128, theta 100000.
    "helium": dict(_SMALL, model_type="helium", hidden_size=512, head_dim=128,
                   num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2,
                   rope_theta=100000.0, rms_norm_eps=1e-8),
    # SmolLM2 / persimmon-8b: 64 heads of 64 -> 4, partial rotary 0.5,
    # LayerNorm q/k norm (qk_layernorm true), fused per-head [q k v].
    "persimmon": dict(_SMALL, model_type="persimmon", hidden_size=256, num_attention_heads=4,
                      num_hidden_layers=2, partial_rotary_factor=0.5, rope_theta=25000.0,
                      qk_layernorm=True, layer_norm_eps=1e-5),
    # Falcon-40B: new decoder architecture, 128/8 -> 8/2 heads of 64, fused
    # query_key_value grouped per KV head.
    "falcon": dict(_SMALL, model_type="falcon", hidden_size=512, num_attention_heads=8,
                   num_kv_heads=2, num_hidden_layers=2, new_decoder_architecture=True,
                   parallel_attn=True, bias=False, alibi=False, rope_theta=10000.0,
                   layer_norm_epsilon=1e-5),
    # MiniCPM3-4B: MLA 40 heads -> 4, q_lora 768 -> 64, kv_lora 256 -> 64,
    # nope 64 / rope 32 / v 64, longrope scaling (factors per rope dim).
    "minicpm3": dict(_SMALL, model_type="minicpm3", hidden_size=256, num_attention_heads=4,
                     num_key_value_heads=4, num_hidden_layers=2, q_lora_rank=64,
                     kv_lora_rank=64, qk_nope_head_dim=64, qk_rope_head_dim=32,
                     v_head_dim=64, max_position_embeddings=32768, rms_norm_eps=1e-5,
                     rope_theta=10000.0, scale_emb=12, scale_depth=1.4, dim_model_base=256,
                     rope_scaling={"type": "longrope",
                                   "long_factor": [1.0591, 1.1241, 1.2834, 1.5999, 2.1856,
                                                   3.0951, 4.3248, 5.6976, 7.0355, 8.2135,
                                                   9.1695, 9.8985, 10.4405, 10.8399,
                                                   11.1384, 11.3678],
                                   "short_factor": [1.0591, 1.1241, 1.2834, 1.5999, 2.1856,
                                                    3.0951, 4.3248, 5.6976, 7.0355, 8.2135,
                                                    9.1695, 9.8985, 10.4405, 10.8399,
                                                    11.1384, 11.3678],
                                   "original_max_position_embeddings": 32768,
                                   "factor": 1.0}),
    # LongCat-Flash: MLA 64 heads -> 4, q_lora 1536 -> 64, kv_lora 512 -> 64,
    # nope 128 / rope 64 / v 128; two attention blocks per layer in HF
    # (num_layers counts layers, num_hidden_layers attention blocks).
    "longcat_flash": dict(_SMALL, model_type="longcat_flash", hidden_size=256,
                          num_attention_heads=4, num_key_value_heads=4, num_layers=1,
                          num_hidden_layers=2, q_lora_rank=64, kv_lora_rank=64,
                          qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                          ffn_hidden_size=128, expert_ffn_hidden_size=64, moe_topk=2,
                          n_routed_experts=4, zero_expert_num=2, rope_theta=10000000.0,
                          rms_norm_eps=1e-5),
    # Mistral-Small-4 (mistral4): MLA 32 heads -> 4, q_lora 1024 -> 64,
    # kv_lora 256 -> 64, nope 64 / rope 64 / v 128, yarn with mscale.
    "mistral4": dict(_SMALL_MOE, model_type="mistral4", hidden_size=256, num_attention_heads=4,
                     num_key_value_heads=4, num_hidden_layers=2, q_lora_rank=64,
                     kv_lora_rank=64, qk_nope_head_dim=64, qk_rope_head_dim=64,
                     v_head_dim=128, n_routed_experts=4, n_shared_experts=1,
                     first_k_dense_replace=1, max_position_embeddings=1048576,
                     rms_norm_eps=1e-6,
                     rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0,
                                      "factor": 128.0, "original_max_position_embeddings": 8192,
                                      "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
                                      "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.1}),
    # Kimi-Linear-48B-A3B: MLA full-attention layers without rope (NoPE)
    # every 4th layer, KDA linear attention between; 32 heads -> 4.
    "kimi_linear": dict(_SMALL_MOE, model_type="kimi_linear", hidden_size=256,
                        num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=4,
                        kv_lora_rank=64, q_lora_rank=None, qk_nope_head_dim=128,
                        qk_rope_head_dim=64, v_head_dim=128, num_local_experts=4,
                        n_shared_experts=1, linear_head_dim=32, linear_num_heads=4,
                        layer_types=["linear_attention"] * 3 + ["full_attention"],
                        mlp_layer_types=["dense"] * 4, rms_norm_eps=1e-5),
    # Hunyuan-A13B (moe): 32/8 -> 8/2 heads of 128, q/k RMSNorm after rope.
    "hunyuan_v1_moe": dict(_SMALL, model_type="hunyuan_v1_moe", hidden_size=1024,
                           head_dim=128, num_attention_heads=8, num_key_value_heads=2,
                           num_hidden_layers=2, num_experts=4, moe_topk=2,
                           use_qk_norm=True, rope_theta=10000.0, rms_norm_eps=1e-5),
    # Hunyuan v3: 64/8 -> 8/1 heads of 128, q/k RMSNorm.
    "hy_v3": dict(_SMALL_MOE, model_type="hy_v3", hidden_size=512, head_dim=128,
                  num_attention_heads=8, num_key_value_heads=1, num_hidden_layers=2,
                  num_experts=4, num_shared_experts=1, rope_theta=10000.0,
                  rms_norm_eps=1e-5),
    # Granite-4.0-H: mamba layers and attention layers (NoPE: no
    # position_embedding_type), 32/8 -> 8/2 heads of 128, attention_multiplier.
    "granitemoehybrid": dict(_SMALL, model_type="granitemoehybrid", hidden_size=1024,
                             num_attention_heads=8, num_key_value_heads=2,
                             num_hidden_layers=2, layer_types=["mamba", "attention"],
                             attention_multiplier=0.0078125, num_local_experts=4,
                             num_experts_per_tok=2, shared_intermediate_size=128,
                             mamba_n_heads=64, mamba_d_state=16, mamba_d_head=32,
                             mamba_chunk_size=16, position_embedding_type="nope",
                             rms_norm_eps=1e-5),
    # LFM2-1.2B: conv layers and attention layers, 32/8 -> 8/2 heads of 64,
    # q/k RMSNorm.
    "lfm2": dict(_SMALL, model_type="lfm2", hidden_size=512, num_attention_heads=8,
                 num_key_value_heads=2, num_hidden_layers=2, layer_types=["conv",
                                                                          "full_attention"],
                 rope_theta=1000000.0, norm_eps=1e-5, block_auto_adjust_ff_dim=False),
    # CWM: 48/8 -> 8/2 heads of 128, sliding layers (8192 -> 16) and full
    # ones (the class's default pattern: layer i full iff i % 4 == 0),
    # llama3 scaling as its config.json gives it.
    "cwm": dict(_SMALL, model_type="cwm", hidden_size=512, head_dim=128,
                num_attention_heads=8, num_key_value_heads=2, num_hidden_layers=5,
                sliding_window=WINDOW, rope_theta=1000000.0, rms_norm_eps=1e-5,
                rope_scaling={"rope_type": "llama3", "factor": 16.0,
                              "original_max_position_embeddings": 8192,
                              "low_freq_factor": 1.0, "high_freq_factor": 4.0}),
    # The same without a rope key: CwmConfig's default rope_parameters
    # (llama3, factor 16) apply.
    "cwm_default_rope": dict(_SMALL, model_type="cwm", hidden_size=512, head_dim=128,
                             num_attention_heads=8, num_key_value_heads=2,
                             num_hidden_layers=2, sliding_window=WINDOW,
                             layer_types=["sliding_attention", "full_attention"],
                             rms_norm_eps=1e-5),
    # Qwen3.5-35B-A3B (text): as qwen3_5_text, MoE.
    "qwen3_5_moe_text": dict(_SMALL_MOE, model_type="qwen3_5_moe_text", hidden_size=256,
                             head_dim=256, num_attention_heads=4, num_key_value_heads=1,
                             num_hidden_layers=4, num_experts=4,
                             shared_expert_intermediate_size=64,
                             layer_types=["linear_attention"] * 3 + ["full_attention"],
                             rope_parameters={"mrope_interleaved": True,
                                              "mrope_section": [11, 11, 10],
                                              "rope_type": "default", "rope_theta": 10000000,
                                              "partial_rotary_factor": 0.25},
                             linear_num_key_heads=2, linear_num_value_heads=4,
                             linear_key_head_dim=32, linear_value_head_dim=32,
                             rms_norm_eps=1e-6),
    # MiniMax-Text-01: lightning attention with a full softmax-attention
    # layer every 8th, 64/8 -> 8/1 heads of 128; its config's rotary_dim 64,
    # which transformers' MiniMax ignores (it rotates the whole head).
    "minimax": dict(_SMALL, model_type="minimax", hidden_size=512, head_dim=128,
                    num_attention_heads=8, num_key_value_heads=1, num_hidden_layers=2,
                    layer_types=["linear_attention", "full_attention"],
                    num_local_experts=4, num_experts_per_tok=2, rope_theta=10000000,
                    rotary_dim=64, block_size=16, rms_norm_eps=1e-5),
    # Laguna: per-head softplus output gate (g_proj), sliding layers.
    "laguna": dict(_SMALL_MOE, model_type="laguna", hidden_size=512, head_dim=128,
                   num_attention_heads=8, num_key_value_heads=2, num_hidden_layers=4,
                   num_experts=4, shared_expert_intermediate_size=64, sliding_window=WINDOW,
                   layer_types=_alternate(4, 4), rms_norm_eps=1e-6),
    # Kimi-K2 (bundled; model_type kimi_k2 is attnc's alias of deepseek_v3,
    # not a transformers type): skipped where transformers lacks it.
    "kimi_k2": dict(_SMALL_MOE, model_type="kimi_k2", hidden_size=256, num_attention_heads=4,
                    num_key_value_heads=4, num_hidden_layers=2, q_lora_rank=64,
                    kv_lora_rank=64, qk_nope_head_dim=128, qk_rope_head_dim=64,
                    v_head_dim=128, rope_theta=50000.0,
                    rope_scaling={"beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0,
                                  "mscale": 1.0, "mscale_all_dim": 1.0,
                                  "original_max_position_embeddings": 4096, "type": "yarn"}),
    # Ling / Bailing hybrid (transformers 5.24): MLA with a per-head scalar
    # sigmoid gate (g_proj), every layer_group_size-th layer full attention.
    "bailing_hybrid": dict(_SMALL_MOE, model_type="bailing_hybrid", hidden_size=256,
                           num_attention_heads=4, num_key_value_heads=4,
                           num_hidden_layers=2, layer_group_size=2, q_lora_rank=64,
                           kv_lora_rank=64, qk_nope_head_dim=128, qk_rope_head_dim=64,
                           v_head_dim=128, rope_theta=10000.0),
    # DeepSeek-V3.2: deepseek_v3's MLA with a lightning indexer choosing the
    # top 2048 keys (every key of the test's short sequences), 128 heads -> 4.
    "deepseek_v32": dict(_SMALL_MOE, model_type="deepseek_v32", hidden_size=256,
                         num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=2,
                         q_lora_rank=64, kv_lora_rank=64, qk_nope_head_dim=128,
                         qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=4,
                         n_shared_experts=1, first_k_dense_replace=1, n_group=1,
                         topk_group=1, index_topk=2048, index_head_dim=64, index_n_heads=4,
                         max_position_embeddings=163840, rms_norm_eps=1e-6,
                         rope_scaling={"beta_fast": 32, "beta_slow": 1, "factor": 40,
                                       "mscale": 1.0, "mscale_all_dim": 1.0,
                                       "original_max_position_embeddings": 4096,
                                       "type": "yarn", "rope_theta": 10000}),
    # Gemma-4 (text): sliding layers of 256 with window 512 -> 16, full layers
    # of global_head_dim 512 with proportional rope 0.25, (w) q/k norm, a
    # weightless v norm, scale 1; 8/4 heads -> 4/2.
    "gemma4_text": dict(_SMALL, model_type="gemma4_text", hidden_size=256, head_dim=256,
                        global_head_dim=512, num_attention_heads=4, num_key_value_heads=2,
                        num_hidden_layers=2, sliding_window=WINDOW,
                        layer_types=["sliding_attention", "full_attention"],
                        hidden_size_per_layer_input=16, vocab_size_per_layer_input=64,
                        rms_norm_eps=1e-6),
}
