// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s
// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s --check-prefix=ABSENT

// MLA's preprocess kernel: the header comment, the Config (every number from
// the op, its schedule and its emission attribute; the body is the template
// runtime/device/attnc_mla_preprocess.cuh), the entry point and the ABI.
// Features a layer lacks are not printed (the Defaults say they are absent);
// ABSENT-NOT covers the text between two labels.

// DeepSeek-V3 at TP 8 (16 heads), de-interleaved gptj rope, an fp8 cache:
// the scale is a parameter, the views' strides are i64 parameters, the four
// tensors that may alias are not __restrict__. Schedule: one query warp and
// the latent warp per token, two tokens a block (attn-specialize).
// CHECK-LABEL: kernel deepseek__mla_preprocess (mla_preprocess)
// CHECK: // configuration: num_heads=16 kv_lora_rank=512 rope_head_dim=64
// CHECK-NEXT: //   norm: rms eps=9.9999999999999995e-07
// CHECK-NEXT: //   rope: gptj (de-interleaved: halves out) theta=10000.0 scaling=none
// CHECK-NEXT: //   activation bf16, latent cache fp8_e4m3 (block_size 64)
// CHECK-NEXT: // schedule: vector_width=8 warps_per_token=1 tokens_per_block=2 threads_per_block=128 min_blocks_per_sm=7
// CHECK: #include "attnc_mla_preprocess.cuh"
// CHECK: __constant__ double rope_inv_freq[32] = {
// CHECK: struct Config : attnc::mla_preprocess::Defaults {
// CHECK-NEXT: using act_t = __nv_bfloat16;
// CHECK-NEXT: using cache_t = __nv_fp8_e4m3;
// CHECK-NEXT: using slot_t = long long;
// CHECK-NEXT: using position_t = long long;
// CHECK: static constexpr int num_heads = 16;
// CHECK-NEXT: static constexpr int kv_lora_rank = 512;
// CHECK-NEXT: static constexpr int rope_head_dim = 64;
// CHECK-NEXT: static constexpr int block_size = 64;
// CHECK-NEXT: static constexpr float norm_eps = 9.9999999999999995e-07f;
// CHECK-NEXT: static constexpr auto rope_style = attnc::mla_preprocess::RopeStyle::gptj;
// CHECK-NEXT: static constexpr float rope_attention_factor = 1.0f;
// CHECK: static constexpr bool rope_deinterleave = true;
// CHECK-NEXT: static constexpr bool fp8_cache = true;
// CHECK: static constexpr int warps_per_token = 1;
// CHECK-NEXT: static constexpr int tokens_per_block = 2;
// CHECK-NEXT: static constexpr int threads_per_block = 128;
// CHECK-NEXT: static constexpr int min_blocks_per_sm = 7;
// CHECK-NEXT: static constexpr int token_steps = 1;
// CHECK-NEXT: static constexpr bool l2_prefetch = false;
// CHECK-NEXT: static constexpr bool streaming_stores = false;
// CHECK-NEXT: static constexpr bool stage_in_shared = false;
// CHECK: __launch_bounds__(Config::threads_per_block, Config::min_blocks_per_sm)
// CHECK-NEXT: deepseek__mla_preprocess(const Config::act_t *kv_a,
// CHECK-NEXT: const Config::act_t *q_rope,
// CHECK-NEXT: const Config::slot_t *__restrict__ slot_mapping,
// CHECK-NEXT: const Config::position_t *__restrict__ positions,
// CHECK-NEXT: const Config::act_t *__restrict__ kv_norm_weight,
// CHECK-NEXT: Config::cache_t *__restrict__ latent_cache,
// CHECK-NEXT: const float *__restrict__ cache_scale,
// CHECK-NEXT: Config::act_t *latent_out,
// CHECK-NEXT: Config::act_t *q_rope_out,
// CHECK-NEXT: long long kv_a_row_stride,
// CHECK: int num_tokens) {
// CHECK: p.cache_scale = cache_scale;
// CHECK: attnc::mla_preprocess::Kernel<Config>::run(p);
// CHECK-LABEL: abi deepseek__mla_preprocess
// CHECK: "name": "latent_cache",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "fp8_e4m3",
// CHECK: "strides": [
// CHECK-NEXT: "latent_cache_block_stride",
// CHECK-NEXT: "latent_cache_token_stride",
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "writes": true
// CHECK: "name": "cache_scale",
// CHECK: "block": [
// CHECK-NEXT: 128,
// CHECK: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 1,
// CHECK-NEXT: "divisor": 2
// The kernel waits (griddepcontrol) before its first global access.
// CHECK: "programmatic_dependent_launch": true
// ABSENT-LABEL: kernel deepseek__mla_preprocess (mla_preprocess)
// ABSENT-NOT: latent_scale
// ABSENT-LABEL: abi deepseek__mla_preprocess
func.func @deepseek(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xf8E4M3FN>, %s: tensor<f32>)
    -> (tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xf8E4M3FN>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache scale %s
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>,
       rope_deinterleave = true, theta = 1.0e4 : f64}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xf8E4M3FN> scale tensor<f32>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xf8E4M3FN>
}

// -----

// LongCat-like: a latent_scale, interleaved gptj kept in place, a bf16
// cache of 16-token blocks and i32 indices: no cache_scale parameter, no
// de-interleave, fp8_cache false.
// CHECK-LABEL: kernel longcat__mla_preprocess (mla_preprocess)
// CHECK: //   norm: rms eps=9.9999999999999995e-07 latent_scale=2.0
// CHECK-NEXT: //   rope: gptj theta=10000000.0 scaling=none
// CHECK: using slot_t = int;
// CHECK-NEXT: using position_t = int;
// CHECK: static constexpr bool has_latent_scale = true;
// CHECK-NEXT: static constexpr float latent_scale = 2.0f;
// CHECK-NEXT: static constexpr bool fp8_cache = false;
// CHECK: p.cache_scale = nullptr;
// ABSENT-LABEL: kernel longcat__mla_preprocess (mla_preprocess)
// ABSENT-NOT: rope_deinterleave
// ABSENT-NOT: cache_scale,
// ABSENT-LABEL: abi longcat__mla_preprocess
// ABSENT-NOT: cache_scale
// ABSENT-NOT: fp8
func.func @longcat(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x64x64xbf16>,
    %slots: tensor<?xi32>, %pos: tensor<?xi32>, %w: tensor<512xbf16>,
    %cache: tensor<?x16x576xbf16>)
    -> (tensor<?x576xbf16>, tensor<?x64x64xbf16>, tensor<?x16x576xbf16>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 64, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, latent_scale = 2.0 : f64,
       rope_style = #attn.rope_style<gptj>, theta = 1.0e7 : f64}
      : tensor<?x576xbf16>, tensor<?x64x64xbf16>, tensor<?xi32>,
        tensor<?xi32>, tensor<512xbf16> into tensor<?x16x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x64x64xbf16>, tensor<?x16x576xbf16>
}

// -----

// An explicit schedule with the memory-level knobs (kept by
// attn-specialize): the Config carries them, the header comment names the
// ones off their defaults, and a block handles tokens_per_block x
// token_steps = 4 tokens (the grid's divisor).
// CHECK-LABEL: kernel knobs__mla_preprocess (mla_preprocess)
// CHECK: // schedule: vector_width=8 warps_per_token=1 tokens_per_block=2 threads_per_block=128 min_blocks_per_sm=6 token_steps=2 l2_prefetch streaming_stores stage_in_shared
// CHECK: static constexpr int min_blocks_per_sm = 6;
// CHECK-NEXT: static constexpr int token_steps = 2;
// CHECK-NEXT: static constexpr bool l2_prefetch = true;
// CHECK-NEXT: static constexpr bool streaming_stores = true;
// CHECK-NEXT: static constexpr bool stage_in_shared = true;
// CHECK-LABEL: abi knobs__mla_preprocess
// CHECK: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 1,
// CHECK-NEXT: "divisor": 4
// ABSENT-LABEL: kernel knobs__mla_preprocess (mla_preprocess)
func.func @knobs(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>)
    -> (tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>,
       rope_deinterleave = true, theta = 1.0e4 : f64,
       schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1,
           tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 6,
           token_steps = 2, l2_prefetch = true, streaming_stores = true,
           stage_in_shared = true>}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>
}
