// RUN: attn-opt %s -split-input-file '-attn-specialize=prefill-kernel=false' | FileCheck %s --check-prefixes=CHECK,SM90A
// (The paged prefill kernel's schedule, attn.prefill_schedule: attn-specialize-prefill.mlir.)
// RUN: attn-opt %s -split-input-file -attn-specialize=arch=sm_80 | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: attn-opt %s -split-input-file -attn-specialize=arch=sm_86 | FileCheck %s --check-prefixes=CHECK,SM86
// RUN: attn-opt %s -split-input-file -attn-specialize=arch=sm_89 | FileCheck %s --check-prefixes=CHECK,SM89
// RUN: attn-opt %s -split-input-file -attn-specialize=arch=sm_90 | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: attn-opt %s -split-input-file '-attn-specialize=num-sms=16 prefill-kernel=false' | FileCheck %s --check-prefixes=CHECK,NUMSMS

// The expected schedules were worked out by hand from the rules in the
// header of passes/lib/Specialize.cpp and the shared-memory formula of
// attnc/Dialect/Attn/AttentionTiling.h. Preprocess schedules do not depend
// on the arch (CHECK); attention schedules are checked per run.
//
// Attention on every arch: block_m 128 (4 warps of two m16 tiles); num_warps
// 4 while the fp32 output accumulator of 16 rows, v_dim_padded / 2
// registers per thread, is at most 128, else 8; target_ctas = 2 x SMs (sm_80
// 108 -> 216, sm_86 84 -> 168, sm_89 128 -> 256, sm_90 and sm_90a 132 ->
// 264, num-sms=16 -> 32); max_kv_splits = min(64, target_ctas) = 64 (32 at
// num-sms=16); split_kv_min_keys 256; gqa_pack the largest divisor of
// Hq / Hkv that is <= 128. Shared memory in the comments, with rows of P =
// qk_dim_padded + 8 and V = v_dim_padded + 8 16-bit elements, K and V tiles
// of block_n x P x 2 and block_n x V x 2 bytes, and fp8 landing tiles of
// block_n x (qk_dim_padded + 16) and block_n x (v_dim_padded + 16) bytes:
//   max(staggered 128 x P x 2 + K + V (+ the fp8 landing tiles),
//       ring 16 x P x 2 + stages x (K + V, or the landing tiles for fp8)
//            (+ K + V for fp8),
//       merge 4 x 128 x (V + 5),
//       split 4 x (2 x max_kv_splits x 128 + 2 x 128) = 66560 (33792 at 32
//             splits)), rounded up to 16 bytes
//   + slots 2 x block_n x 4 + 16,
// against 227 KB = 232448 bytes (sm_90, sm_90a), 163 KB = 166912 (sm_80) and
// 99 KB = 101376 (sm_86, sm_89). The tensor-core tile is block_n 64 at 2
// stages; a shape it does not take (v_dim_padded > 256, f32) or that does
// not fit gets the CUDA-core form, recorded as form = cuda_core (block_n 16 at 1 stage), whose
// num_warps x group x (2 + v_head_dim) floats must fit (no shape here
// exceeds that; attn-specialize-invalid.mlir has the rejections).
//
// Preprocess launch bound: min_blocks_per_sm = 1024 / threads_per_block
// (integer division, at least 1); in the pair layout (a neox rotation over
// the whole head with threads_per_head dividing the half-head vectors)
// 640 / threads_per_block, with prefetch 1. pair_layout = false and
// prefetch = 2 are the defaults, not printed.

// SM90A: module attributes {attn.target = "sm_90a"}
// SM80: module attributes {attn.target = "sm_80"}
// SM86: module attributes {attn.target = "sm_86"}
// SM89: module attributes {attn.target = "sm_89"}
// SM90: module attributes {attn.target = "sm_90"}
// NUMSMS: module attributes {attn.target = "sm_90a"}

//===----------------------------------------------------------------------===//
// fused_preprocess
//===----------------------------------------------------------------------===//

// Dqk 2 / Dv 3: gcd 1, so width 1; 3 vectors -> 4 threads per head; 8 items
// per token x 4 threads = 32, so 8 whole tokens fill 256 threads: 4 blocks
// per SM. Neox over the whole head, but 4 threads do not divide its one
// half-head vector: no pair layout.
// CHECK-LABEL: func.func @preprocess_2_3(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>,
func.func @preprocess_2_3(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                          %kc: tensor<?x16x2x2xbf16>,
                          %vc: tensor<?x16x2x3xbf16>, %pos: tensor<?xi64>,
                          %qw: tensor<2xbf16>, %kw: tensor<2xbf16>)
    -> tensor<?x4x2xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      positions %pos q_norm_weight %qw k_norm_weight %kw
      {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3,
       stages = [#attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<rope>],
       norm_style = #attn.norm_style<rms>, norm_eps = 1.0e-06 : f64,
       rotary_dim = 2, rotary_offset = 0,
       rope_style = #attn.rope_style<neox>, theta = 1.0e+04 : f64}
      : tensor<?x18xbf16>, tensor<?xi64>
        into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
        positions tensor<?xi64> q_norm_weight tensor<2xbf16>
        k_norm_weight tensor<2xbf16>
      -> tensor<?x4x2xbf16>
  return %q : tensor<?x4x2xbf16>
}

// Tiny dims, many heads: a token is 40 items x 4 threads = 160 threads; a
// 256-thread block would leave 96 of them idle, so the block is 160:
// 1024 / 160 = 6 blocks per SM.
// CHECK-LABEL: func.func @preprocess_2_3_many_heads(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 160, heads_per_block = 40, tokens_per_block = 1, min_blocks_per_sm = 6>,
func.func @preprocess_2_3_many_heads(%qkv: tensor<?x84xbf16>,
                                     %slots: tensor<?xi64>,
                                     %kc: tensor<?x16x4x2xbf16>,
                                     %vc: tensor<?x16x4x3xbf16>)
    -> tensor<?x32x2xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      {num_q_heads = 32, num_kv_heads = 4, qk_head_dim = 2, v_head_dim = 3,
       stages = []}
      : tensor<?x84xbf16>, tensor<?xi64>
        into tensor<?x16x4x2xbf16>, tensor<?x16x4x3xbf16>
      -> tensor<?x32x2xbf16>
  return %q : tensor<?x32x2xbf16>
}

// A gate adds Hq items: 12 x 4 threads = 48 per token, 5 tokens = 240
// threads, rounded up to 8 warps.
// CHECK-LABEL: func.func @preprocess_2_3_gate(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 5, min_blocks_per_sm = 4>,
func.func @preprocess_2_3_gate(%qkv: tensor<?x30xbf16>, %slots: tensor<?xi64>,
                               %kc: tensor<?x16x2x2xbf16>,
                               %vc: tensor<?x16x2x3xbf16>)
    -> (tensor<?x4x2xbf16>, tensor<?x4x3xbf16>) {
  %q, %kc1, %vc1, %g = attn.fused_preprocess %qkv, %slots into %kc, %vc
      {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3,
       gate_layout = #attn.gate_layout<interleaved>, stages = []}
      : tensor<?x30xbf16>, tensor<?xi64>
        into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
      -> tensor<?x4x2xbf16>, tensor<?x4x3xbf16>
  return %q, %g : tensor<?x4x2xbf16>, tensor<?x4x3xbf16>
}

// 16-byte vectors (8 bf16); 8 vectors per head. Neox over the whole head:
// the pair layout, threads dividing the 4 half-head vectors with >= 4
// vectors each: 2 threads. 48 items x 2 = 96 threads per token: 2 tokens,
// 192 threads, 96 groups; 640 / 192 = 3 blocks per SM.
// CHECK-LABEL: func.func @preprocess_64(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 8, threads_per_head = 2, threads_per_block = 192, heads_per_block = 96, tokens_per_block = 2, min_blocks_per_sm = 3, pair_layout = true, prefetch = 1>,
func.func @preprocess_64(%qkv: tensor<?x3072xbf16>, %slots: tensor<?xi64>,
                         %kc: tensor<?x16x8x64xbf16>,
                         %vc: tensor<?x16x8x64xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x32x64xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      positions %pos
      {num_q_heads = 32, num_kv_heads = 8, qk_head_dim = 64, v_head_dim = 64,
       stages = [#attn.stage<rope>], rotary_dim = 64, rotary_offset = 0,
       rope_style = #attn.rope_style<neox>, theta = 1.0e+04 : f64}
      : tensor<?x3072xbf16>, tensor<?xi64>
        into tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>
        positions tensor<?xi64>
      -> tensor<?x32x64xbf16>
  return %q : tensor<?x32x64xbf16>
}

// Qwen3: q/k norm then rope, 16 vectors per head; neox over the whole head:
// pair layout with 4 threads (8 half-head vectors, 4 vectors per lane).
// 48 items x 4 = 192 threads per token; 640 / 192 = 3 blocks per SM.
// CHECK-LABEL: func.func @preprocess_128(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 8, threads_per_head = 4, threads_per_block = 192, heads_per_block = 48, tokens_per_block = 1, min_blocks_per_sm = 3, pair_layout = true, prefetch = 1>,
func.func @preprocess_128(%qkv: tensor<?x6144xbf16>, %slots: tensor<?xi64>,
                          %kc: tensor<?x16x8x128xbf16>,
                          %vc: tensor<?x16x8x128xbf16>, %pos: tensor<?xi64>,
                          %qw: tensor<128xbf16>, %kw: tensor<128xbf16>)
    -> tensor<?x32x128xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      positions %pos q_norm_weight %qw k_norm_weight %kw
      {num_q_heads = 32, num_kv_heads = 8, qk_head_dim = 128,
       v_head_dim = 128,
       stages = [#attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<rope>],
       norm_style = #attn.norm_style<rms>, norm_eps = 1.0e-06 : f64,
       rotary_dim = 128, rotary_offset = 0,
       rope_style = #attn.rope_style<neox>, theta = 1.0e+06 : f64}
      : tensor<?x6144xbf16>, tensor<?xi64>
        into tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
        positions tensor<?xi64> q_norm_weight tensor<128xbf16>
        k_norm_weight tensor<128xbf16>
      -> tensor<?x32x128xbf16>
  return %q : tensor<?x32x128xbf16>
}

// MiMo-V2-Flash full attention, 192/128, partial rotary 64: 24 vectors of
// the larger head -> 32 threads (v heads use 16 of them).
// CHECK-LABEL: func.func @preprocess_192_128_hq64(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 8, threads_per_head = 32, threads_per_block = 256, heads_per_block = 8, tokens_per_block = 1, min_blocks_per_sm = 4>,
func.func @preprocess_192_128_hq64(%qkv: tensor<?x13568xbf16>,
                                   %slots: tensor<?xi64>,
                                   %kc: tensor<?x16x4x192xbf16>,
                                   %vc: tensor<?x16x4x128xbf16>,
                                   %pos: tensor<?xi64>,
                                   %qw: tensor<192xbf16>,
                                   %kw: tensor<192xbf16>)
    -> tensor<?x64x192xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      positions %pos q_norm_weight %qw k_norm_weight %kw
      {num_q_heads = 64, num_kv_heads = 4, qk_head_dim = 192,
       v_head_dim = 128,
       stages = [#attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<rope>],
       norm_style = #attn.norm_style<rms>, norm_eps = 1.0e-06 : f64,
       rotary_dim = 64, rotary_offset = 0,
       rope_style = #attn.rope_style<neox>, theta = 5.0e+06 : f64}
      : tensor<?x13568xbf16>, tensor<?xi64>
        into tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>
        positions tensor<?xi64> q_norm_weight tensor<192xbf16>
        k_norm_weight tensor<192xbf16>
      -> tensor<?x64x192xbf16>
  return %q : tensor<?x64x192xbf16>
}

// CHECK-LABEL: func.func @preprocess_192_128_hq16(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 8, threads_per_head = 32, threads_per_block = 256, heads_per_block = 8, tokens_per_block = 1, min_blocks_per_sm = 4>,
func.func @preprocess_192_128_hq16(%qkv: tensor<?x3712xbf16>,
                                   %slots: tensor<?xi64>,
                                   %kc: tensor<?x16x2x192xbf16>,
                                   %vc: tensor<?x16x2x128xbf16>,
                                   %pos: tensor<?xi64>)
    -> tensor<?x16x192xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      positions %pos
      {num_q_heads = 16, num_kv_heads = 2, qk_head_dim = 192,
       v_head_dim = 128, stages = [#attn.stage<rope>], rotary_dim = 64,
       rotary_offset = 0, rope_style = #attn.rope_style<neox>,
       theta = 1.0e+04 : f64}
      : tensor<?x3712xbf16>, tensor<?xi64>
        into tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
        positions tensor<?xi64>
      -> tensor<?x16x192xbf16>
  return %q : tensor<?x16x192xbf16>
}

// 256/256 with a [q|k|v|g] gate: 32 vectors per head, a warp per head.
// CHECK-LABEL: func.func @preprocess_256_gate(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 8, threads_per_head = 32, threads_per_block = 256, heads_per_block = 8, tokens_per_block = 1, min_blocks_per_sm = 4>,
func.func @preprocess_256_gate(%qkv: tensor<?x9216xbf16>,
                               %slots: tensor<?xi64>,
                               %kc: tensor<?x16x2x256xbf16>,
                               %vc: tensor<?x16x2x256xbf16>)
    -> (tensor<?x16x256xbf16>, tensor<?x16x256xbf16>) {
  %q, %kc1, %vc1, %g = attn.fused_preprocess %qkv, %slots into %kc, %vc
      {num_q_heads = 16, num_kv_heads = 2, qk_head_dim = 256,
       v_head_dim = 256, gate_layout = #attn.gate_layout<qkvg>, stages = []}
      : tensor<?x9216xbf16>, tensor<?xi64>
        into tensor<?x16x2x256xbf16>, tensor<?x16x2x256xbf16>
      -> tensor<?x16x256xbf16>, tensor<?x16x256xbf16>
  return %q, %g : tensor<?x16x256xbf16>, tensor<?x16x256xbf16>
}

// An fp8 cache does not change the width (it is set by the bf16 reads).
// Pair layout (neox over the whole 128-dim head): 4 threads; 10 items x 4 =
// 40 threads per token, 6 tokens per block, 256 threads, 64 groups;
// 640 / 256 = 2 blocks per SM.
// CHECK-LABEL: func.func @preprocess_fp8_cache(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 8, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 6, min_blocks_per_sm = 2, pair_layout = true, prefetch = 1>,
func.func @preprocess_fp8_cache(%qkv: tensor<?x1280xbf16>,
                                %slots: tensor<?xi64>,
                                %kc: tensor<?x16x1x128xf8E4M3FN>,
                                %vc: tensor<?x16x1x128xf8E4M3FN>,
                                %pos: tensor<?xi64>, %ks: tensor<f32>,
                                %vs: tensor<f32>)
    -> tensor<?x8x128xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      positions %pos scales %ks, %vs
      {num_q_heads = 8, num_kv_heads = 1, qk_head_dim = 128,
       v_head_dim = 128, stages = [#attn.stage<rope>], rotary_dim = 128,
       rotary_offset = 0, rope_style = #attn.rope_style<neox>,
       theta = 1.0e+04 : f64}
      : tensor<?x1280xbf16>, tensor<?xi64>
        into tensor<?x16x1x128xf8E4M3FN>, tensor<?x16x1x128xf8E4M3FN>
        positions tensor<?xi64> scales tensor<f32>, tensor<f32>
      -> tensor<?x8x128xbf16>
  return %q : tensor<?x8x128xbf16>
}

// neox, rotary_dim 12 at offset 4: the halves start at 4 and 10, so the
// width must divide 4 and 6: 2.
// CHECK-LABEL: func.func @preprocess_neox_offset(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 2, threads_per_head = 32, threads_per_block = 256, heads_per_block = 8, tokens_per_block = 1, min_blocks_per_sm = 4>,
func.func @preprocess_neox_offset(%qkv: tensor<?x768xbf16>,
                                  %slots: tensor<?xi64>,
                                  %kc: tensor<?x16x2x64xbf16>,
                                  %vc: tensor<?x16x2x64xbf16>,
                                  %pos: tensor<?xi64>)
    -> tensor<?x8x64xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      positions %pos
      {num_q_heads = 8, num_kv_heads = 2, qk_head_dim = 64, v_head_dim = 64,
       stages = [#attn.stage<rope>], rotary_dim = 12, rotary_offset = 4,
       rope_style = #attn.rope_style<neox>, theta = 1.0e+04 : f64}
      : tensor<?x768xbf16>, tensor<?xi64>
        into tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>
        positions tensor<?xi64>
      -> tensor<?x8x64xbf16>
  return %q : tensor<?x8x64xbf16>
}

// The same range with gptj: the rotated range [4, 16) only needs width 4,
// whose vectors hold whole (2i, 2i+1) pairs. 12 items x 16 threads = 192:
// 1024 / 192 = 5 blocks per SM.
// CHECK-LABEL: func.func @preprocess_gptj_offset(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 4, threads_per_head = 16, threads_per_block = 192, heads_per_block = 12, tokens_per_block = 1, min_blocks_per_sm = 5>,
func.func @preprocess_gptj_offset(%qkv: tensor<?x768xbf16>,
                                  %slots: tensor<?xi64>,
                                  %kc: tensor<?x16x2x64xbf16>,
                                  %vc: tensor<?x16x2x64xbf16>,
                                  %pos: tensor<?xi64>)
    -> tensor<?x8x64xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      positions %pos
      {num_q_heads = 8, num_kv_heads = 2, qk_head_dim = 64, v_head_dim = 64,
       stages = [#attn.stage<rope>], rotary_dim = 12, rotary_offset = 4,
       rope_style = #attn.rope_style<gptj>, theta = 1.0e+04 : f64}
      : tensor<?x768xbf16>, tensor<?xi64>
        into tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>
        positions tensor<?xi64>
      -> tensor<?x8x64xbf16>
  return %q : tensor<?x8x64xbf16>
}

// f32 activations: 16 bytes are 4 elements.
// CHECK-LABEL: func.func @preprocess_f32(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 4, threads_per_head = 32, threads_per_block = 256, heads_per_block = 8, tokens_per_block = 1, min_blocks_per_sm = 4>,
func.func @preprocess_f32(%qkv: tensor<?x1536xf32>, %slots: tensor<?xi64>,
                          %kc: tensor<?x16x2x128xf32>,
                          %vc: tensor<?x16x2x128xf32>)
    -> tensor<?x8x128xf32> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      {num_q_heads = 8, num_kv_heads = 2, qk_head_dim = 128,
       v_head_dim = 128, stages = []}
      : tensor<?x1536xf32>, tensor<?xi64>
        into tensor<?x16x2x128xf32>, tensor<?x16x2x128xf32>
      -> tensor<?x8x128xf32>
  return %q : tensor<?x8x128xf32>
}

// The pair layout wherever threads_per_head divides the half-head vectors,
// whichever rule chose the threads: Dqk 512 / Dv 3 gives width 1 (gcd 1),
// 512 vectors -> 32 threads; the pair rule's 32 threads would leave 16
// vectors per lane (more than 8), so the plain rule's 32 stay, and they
// divide the 256 half-head vectors. 3 items x 32 = 96 threads per token: 2
// tokens, 192 threads, 6 groups; 640 / 192 = 3 blocks per SM.
// CHECK-LABEL: func.func @preprocess_pair_wide(
// CHECK: attn.fused_preprocess {{.*}}schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 32, threads_per_block = 192, heads_per_block = 6, tokens_per_block = 2, min_blocks_per_sm = 3, pair_layout = true, prefetch = 1>,
func.func @preprocess_pair_wide(%qkv: tensor<?x1027xbf16>,
                                %slots: tensor<?xi64>,
                                %kc: tensor<?x16x1x512xbf16>,
                                %vc: tensor<?x16x1x3xbf16>,
                                %pos: tensor<?xi64>)
    -> tensor<?x1x512xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      positions %pos
      {num_q_heads = 1, num_kv_heads = 1, qk_head_dim = 512, v_head_dim = 3,
       stages = [#attn.stage<rope>], rotary_dim = 512, rotary_offset = 0,
       rope_style = #attn.rope_style<neox>, theta = 1.0e+04 : f64}
      : tensor<?x1027xbf16>, tensor<?xi64>
        into tensor<?x16x1x512xbf16>, tensor<?x16x1x3xbf16>
        positions tensor<?xi64>
      -> tensor<?x1x512xbf16>
  return %q : tensor<?x1x512xbf16>
}
//===----------------------------------------------------------------------===//
// paged_attention
//===----------------------------------------------------------------------===//

// Dqk 2 / Dv 3 pad to 16 (P = V = 24, K = V = 64 x 24 x 2 = 3072); 2 query
// heads per KV head: pack 2. max(staggered 128 x 24 x 2 + 3072 + 3072 =
// 12288, ring 16 x 24 x 2 + 2 x 6144 = 13056, merge 4 x 128 x 29 = 14848,
// split 66560) + slots 3 x 64 x 4 = 768 + 32 = 67360 bytes: 64 keys at 2
// stages everywhere (pads of 16: mma.sync on sm_90a too). num-sms=16:
// split 33792 is the largest, 33792 + 768 + 32 = 34592.
// CHECK-LABEL: func.func @attention_2_3(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>,
// SM90: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>,
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>,
// SM86: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 168>,
// SM89: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 256>,
// NUMSMS: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 32, target_ctas = 32>,
func.func @attention_2_3(%q: tensor<?x4x2xbf16>, %kc: tensor<?x16x2x2xbf16>,
                         %vc: tensor<?x16x2x3xbf16>, %bt: tensor<?x?xi32>,
                         %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x4x3xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.7071 : f64}
      : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  return %o : tensor<?x4x3xbf16>
}

// P = V = 72 (K = V = 9216); 32 / 8 = 4 query heads per KV head: pack 4.
// max(staggered 128 x 72 x 2 + 2 x 9216 = 36864, ring 16 x 72 x 2 + 2 x
// 18432 = 39168, merge 4 x 128 x 77 = 39424, split 66560) + 768 + 32 = 67360
// bytes: 64 keys everywhere. sm_90a takes wgmma (pads of 64, bf16 cache):
// its tile 128 x 64 x 2 + 2 x 64 x 64 x 2 + 64 x 64 x 2 = 40960 replaces
// the staggered term, still 67360 bytes.
// CHECK-LABEL: func.func @attention_64(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">,
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>,
// SM86: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 168>,
func.func @attention_64(%q: tensor<?x32x64xbf16>, %kc: tensor<?x16x8x64xbf16>,
                        %vc: tensor<?x16x8x64xbf16>, %bt: tensor<?x?xi32>,
                        %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x32x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x32x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x16x8x64xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x32x64xbf16>
  return %o : tensor<?x32x64xbf16>
}

// P = V = 136 (K = V = 17408); pack 4. max(staggered 128 x 136 x 2 + 2 x
// 17408 = 69632, ring 16 x 136 x 2 + 2 x 34816 = 73984, merge 4 x 128 x 141
// = 72192, split 66560) + 768 + 32 = 74784 bytes <= 101376: 64 keys
// everywhere. sm_90a: wgmma, 128 x 128 x 2 + 2 x 64 x 128 x 2 + 64 x 128 x 2
// = 81920, so 82720 bytes (two blocks fit its 228 KB).
// CHECK-LABEL: func.func @attention_128(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">,
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>,
// SM86: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 168>,
func.func @attention_128(%q: tensor<?x32x128xbf16>,
                         %kc: tensor<?x16x8x128xbf16>,
                         %vc: tensor<?x16x8x128xbf16>, %bt: tensor<?x?xi32>,
                         %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x32x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0884 : f64}
      : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o : tensor<?x32x128xbf16>
}

// MiMo-V2-Flash full attention, 16 query heads per KV head: pack 16. P =
// 200, V = 136 (K = 64 x 200 x 2 = 25600, V = 17408). max(staggered 128 x
// 200 x 2 + 25600 + 17408 = 94208, ring 16 x 200 x 2 + 2 x 43008 = 92416,
// merge 72192, split 66560) + 768 + 32 = 95008 bytes <= 101376: 64 keys on
// every arch. sm_90a: wgmma, 128 x 192 x 2 + 2 x 64 x 192 x 2 + 64 x 128 x
// 2 = 114688, so 115488 bytes: 2 x (115488 + 1024) = 233024 <= 233472, two
// blocks per SM. num-sms=16: split 33792, still 95008.
// CHECK-LABEL: func.func @attention_192_128_hq64(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">,
// SM90: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>,
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>,
// SM86: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 168>,
// SM89: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 256>,
// NUMSMS: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 32, target_ctas = 32, mma = "wgmma">,
func.func @attention_192_128_hq64(%q: tensor<?x64x192xbf16>,
                                  %kc: tensor<?x16x4x192xbf16>,
                                  %vc: tensor<?x16x4x128xbf16>,
                                  %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                  %qs: tensor<?xi32>)
    -> tensor<?x64x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64}
      : tensor<?x64x192xbf16>, tensor<?x16x4x192xbf16>,
        tensor<?x16x4x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x64x128xbf16>
  return %o : tensor<?x64x128xbf16>
}

// The decode benchmark's shape: 8 query heads per KV head, pack 8; shared
// memory as above, 95008 bytes at 64 keys (115488 with wgmma on sm_90a).
// CHECK-LABEL: func.func @attention_192_128_hq16(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">,
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>,
// SM86: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 168>,
func.func @attention_192_128_hq16(%q: tensor<?x16x192xbf16>,
                                  %kc: tensor<?x16x2x192xbf16>,
                                  %vc: tensor<?x16x2x128xbf16>,
                                  %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                  %qs: tensor<?xi32>)
    -> tensor<?x16x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>,
        tensor<?x16x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// P = V = 264 (K = V = 64 x 264 x 2 = 33792); pack 8. 64 keys: max(staggered
// 128 x 264 x 2 + 2 x 33792 = 135168, ring 16 x 264 x 2 + 2 x 67584 =
// 143616, merge 4 x 128 x 269 = 137728, split 66560) + 768 + 32 = 144416
// bytes: sm_90, sm_90a (v_dim_padded 256 > 128: mma.sync) and sm_80. sm_86/sm_89 (101376): the CUDA-core form,
// 4 warps x 8 heads x (2 + 256) x 4 = 33024 bytes.
// SM90A-LABEL: func.func @attention_256(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>,
// SM90-LABEL: func.func @attention_256(
// SM90: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>,
// SM80-LABEL: func.func @attention_256(
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>,
// SM86-LABEL: func.func @attention_256(
// SM86: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 168, form = cuda_core>,
// SM89-LABEL: func.func @attention_256(
// SM89: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 256, form = cuda_core>,
// NUMSMS-LABEL: func.func @attention_256(
// NUMSMS: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 32, target_ctas = 32>,
func.func @attention_256(%q: tensor<?x16x256xbf16>,
                         %kc: tensor<?x16x2x256xbf16>,
                         %vc: tensor<?x16x2x256xbf16>, %bt: tensor<?x?xi32>,
                         %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x16x256xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0625 : f64}
      : tensor<?x16x256xbf16>, tensor<?x16x2x256xbf16>,
        tensor<?x16x2x256xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}

// -----

// The same shape with fp8 caches: landing tiles of 64 x (256 + 16) = 17408
// bytes each. 64 keys: max(staggered 67584 + 2 x 33792 + 2 x 17408 =
// 169984, ring 8448 + 2 x 34816 + 67584 = 145664, merge 137728, split 66560)
// + 768 + 32 = 170784 bytes: sm_90/sm_90a only (fp8: mma.sync). sm_80 (166912), sm_86 and
// sm_89: the CUDA-core form, 4 x 8 x (2 + 256) x 4 = 33024 bytes.
// SM90A-LABEL: func.func @attention_256_fp8(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>,
// SM80-LABEL: func.func @attention_256_fp8(
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216, form = cuda_core>,
// SM86-LABEL: func.func @attention_256_fp8(
// SM86: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 168, form = cuda_core>,
// SM89-LABEL: func.func @attention_256_fp8(
// SM89: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 256, form = cuda_core>,
func.func @attention_256_fp8(%q: tensor<?x16x256xbf16>,
                             %kc: tensor<?x16x2x256xf8E4M3FN>,
                             %vc: tensor<?x16x2x256xf8E4M3FN>,
                             %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                             %qs: tensor<?xi32>, %ks: tensor<f32>,
                             %vs: tensor<f32>)
    -> tensor<?x16x256xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs scales %ks, %vs
      {softmax_scale = 0.0625 : f64}
      : tensor<?x16x256xbf16>, tensor<?x16x2x256xf8E4M3FN>,
        tensor<?x16x2x256xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> scales tensor<f32>, tensor<f32>
      -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}

// -----

// The largest head dims: the 16-row accumulator is 512 / 2 = 256 registers
// per thread, so 8 warps; 8 / 8 heads: pack 1. v_dim_padded 512 > 256: the
// CUDA-core form on every arch, 8 warps x 1 head x (2 + 512) x 4 = 16448
// bytes.
// SM90A-LABEL: func.func @attention_512(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 8, pipeline_stages = 1, qk_dim_padded = 512, v_dim_padded = 512, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, form = cuda_core>,
// SM90-LABEL: func.func @attention_512(
// SM90: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 8, pipeline_stages = 1, qk_dim_padded = 512, v_dim_padded = 512, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, form = cuda_core>,
// SM80-LABEL: func.func @attention_512(
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 8, pipeline_stages = 1, qk_dim_padded = 512, v_dim_padded = 512, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216, form = cuda_core>,
// SM86-LABEL: func.func @attention_512(
// SM86: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 8, pipeline_stages = 1, qk_dim_padded = 512, v_dim_padded = 512, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 168, form = cuda_core>,
// SM89-LABEL: func.func @attention_512(
// SM89: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 8, pipeline_stages = 1, qk_dim_padded = 512, v_dim_padded = 512, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 256, form = cuda_core>,
// NUMSMS-LABEL: func.func @attention_512(
// NUMSMS: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 8, pipeline_stages = 1, qk_dim_padded = 512, v_dim_padded = 512, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 32, target_ctas = 32, form = cuda_core>,
func.func @attention_512(%q: tensor<?x8x512xbf16>,
                         %kc: tensor<?x16x8x512xbf16>,
                         %vc: tensor<?x16x8x512xbf16>, %bt: tensor<?x?xi32>,
                         %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x512xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0442 : f64}
      : tensor<?x8x512xbf16>, tensor<?x16x8x512xbf16>,
        tensor<?x16x8x512xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x8x512xbf16>
  return %o : tensor<?x8x512xbf16>
}

// -----

// 96 query heads on one KV head: the pack is the largest divisor of 96 that
// is <= block_m 128: 96 itself. Shared memory as attention_128: 74784 bytes
// (82720 with wgmma on sm_90a).
// CHECK-LABEL: func.func @attention_gqa_cap(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 96, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">,
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 96, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>,
// SM86: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 96, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 168>,
func.func @attention_gqa_cap(%q: tensor<?x96x128xbf16>,
                             %kc: tensor<?x16x1x128xbf16>,
                             %vc: tensor<?x16x1x128xbf16>,
                             %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                             %qs: tensor<?xi32>)
    -> tensor<?x96x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0884 : f64}
      : tensor<?x96x128xbf16>, tensor<?x16x1x128xbf16>,
        tensor<?x16x1x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x96x128xbf16>
  return %o : tensor<?x96x128xbf16>
}

// Head counts and dims dynamic in one operand are read from another: Hq 8
// (output), Hkv 2, qk 64 (k_cache), v 64: pack 4; 67360 bytes as
// attention_64.
// CHECK-LABEL: func.func @attention_sizes_from_other_operands(
// SM90A: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">,
func.func @attention_sizes_from_other_operands(%q: tensor<?x?x?xbf16>,
    %kc: tensor<?x16x2x64xbf16>, %vc: tensor<?x16x2x64xbf16>,
    %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x?x?xbf16>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// A schedule already present (e.g. for another target) is replaced. 8 / 8
// heads: pack 1; 67360 bytes as attention_64.
// CHECK-LABEL: func.func @attention_replaces_schedule(
// SM80: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>,
func.func @attention_replaces_schedule(%q: tensor<?x8x64xbf16>,
                                       %kc: tensor<?x16x8x64xbf16>,
                                       %vc: tensor<?x16x8x64xbf16>,
                                       %bt: tensor<?x?xi32>,
                                       %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64,
       schedule = #attn.attention_schedule<block_m = 128, block_n = 64,
           num_warps = 8, pipeline_stages = 3, qk_dim_padded = 64,
           v_dim_padded = 64, gqa_pack = 1, split_kv_min_keys = 256,
           max_kv_splits = 64, target_ctas = 264>}
      : tensor<?x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}
