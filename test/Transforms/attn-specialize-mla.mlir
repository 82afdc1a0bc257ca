// RUN: attn-opt %s -split-input-file -attn-specialize | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-specialize=arch=sm_80 | FileCheck %s

// The MLA preprocess schedule (passes/lib/Specialize.cpp), the same on
// every arch. Worked by hand:
//  - vector_width: 16 bytes of bf16 = 8, which divides kv_lora_rank 512 and
//    rope_head_dim / 2 = 32.
//  - query units per token: H x 32 / 8 = 4H; query warps ceil(4H / 64),
//    1..8; tokens per block max(1, 4 / (warps + 1)); threads 32 x (warps +
//    1) x tokens; min blocks per SM max(1, 65536 / (72 x threads)).
// 128 heads: 512 units, 8 query warps + the latent warp, one token, 288
// threads, 65536 / 20736 = 3 blocks.
// CHECK-LABEL: func.func @deepseek_v3
// CHECK: schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 8, tokens_per_block = 1, threads_per_block = 288, min_blocks_per_sm = 3>
func.func @deepseek_v3(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x128x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>)
    -> (tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?x64x576xbf16>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 128, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>,
       rope_deinterleave = true, theta = 1.0e4 : f64}
      : tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?x64x576xbf16>
}

// -----

// 16 heads (DeepSeek at TP 8): 64 units, one query warp + the latent warp,
// two tokens a block (4 / 2), 128 threads, 65536 / 9216 = 7 blocks per SM.
// CHECK-LABEL: func.func @tp8
// CHECK: schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 7>
func.func @tp8(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xf8E4M3FN>, %s: tensor<f32>)
    -> (tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xf8E4M3FN>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache scale %s
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xf8E4M3FN> scale tensor<f32>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xf8E4M3FN>
}

// -----

// A small odd shape: kv_lora_rank 20 and rope_head_dim 12 (half 6): the
// width is the largest power of two dividing gcd(20, 6) = 2; 3 heads of 3
// units = 9 units, one query warp, two tokens a block.
// CHECK-LABEL: func.func @odd
// CHECK: schedule = #attn.mla_preprocess_schedule<vector_width = 2, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 7>
func.func @odd(%kv_a: tensor<?x32xf16>, %q_pe: tensor<?x3x12xf16>,
    %slots: tensor<?xi32>, %pos: tensor<?xi32>, %w: tensor<20xf16>,
    %cache: tensor<?x16x32xf16>)
    -> (tensor<?x32xf16>, tensor<?x3x12xf16>, tensor<?x16x32xf16>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 3, kv_lora_rank = 20, rope_head_dim = 12,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<neox>, theta = 1.0e4 : f64}
      : tensor<?x32xf16>, tensor<?x3x12xf16>, tensor<?xi32>,
        tensor<?xi32>, tensor<20xf16> into tensor<?x16x32xf16>
  return %lat, %qr, %c : tensor<?x32xf16>, tensor<?x3x12xf16>, tensor<?x16x32xf16>
}

// -----

// A schedule the op already has (hand-written IR, a variant of
// bench/sweep_mla_preprocess.py) is kept as written, the memory-level knobs
// included; the chosen one would be warps_per_token = 8, 288 threads.
// CHECK-LABEL: func.func @explicit
// CHECK: schedule = #attn.mla_preprocess_schedule<vector_width = 4, warps_per_token = 4, tokens_per_block = 1, threads_per_block = 160, min_blocks_per_sm = 5, token_steps = 2, l2_prefetch = true, streaming_stores = true, stage_in_shared = true>
func.func @explicit(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x128x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>)
    -> (tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?x64x576xbf16>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 128, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>,
       rope_deinterleave = true, theta = 1.0e4 : f64,
       schedule = #attn.mla_preprocess_schedule<vector_width = 4, warps_per_token = 4,
           tokens_per_block = 1, threads_per_block = 160, min_blocks_per_sm = 5,
           token_steps = 2, l2_prefetch = true, streaming_stores = true,
           stage_in_shared = true>}
      : tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?x64x576xbf16>
}
