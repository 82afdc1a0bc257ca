// RUN: attn-opt %s -split-input-file -attn-specialize | FileCheck %s --check-prefixes=CHECK,SM90A
// RUN: attn-opt %s -split-input-file -attn-specialize=arch=sm_80 | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: attn-opt %s -split-input-file '-attn-specialize=baseline=true' | FileCheck %s --check-prefixes=CHECK,BASELINE

// attn.varlen_attention gets the paged attention's schedule for its heads,
// head dims and types (Specialize.cpp's rules, worked by hand): block_m 128
// of 4 warps, block_n 64 at 2 stages, head dims padded to 16, gqa_pack the
// largest divisor of the group <= 128, target_ctas 2 x SMs (132 on sm_90a,
// 108 on sm_80), max_kv_splits min(64, target_ctas) (the default "mma.sync"
// and form tensor_core are not printed). On sm_90a, head dims that are
// multiples of 8 with pads of 64 and v_dim_padded <= 256 take mma
// "wgmma_ws" instead (never in the baseline).

// MLA's decompressed prefill (DeepSeek-V3 at TP 8): 16 heads, 192/128.
// CHECK-LABEL: func.func @mla_prefill
// On sm_90a the warp-specialised schedule: a producer and two consumer
// warpgroups (num_warps 12), 2 stages of 128 keys (Q 2 x 64 x 192 x 2 + K
// 2 x 128 x 192 x 2 + V 2 x 128 x 128 x 2 = 212992 bytes, plus barriers:
// fits 227 KB), no split-KV; the baseline keeps mma.sync and is marked so
// that it takes the warp-specialised kernel's parameters.
// SM90A: attn.varlen_attention {{.*}}schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">
// SM80: attn.varlen_attention {{.*}}schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>
// BASELINE: attn.varlen_attention {{.*}}{attn.ws_baseline, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>
func.func @mla_prefill(%q: tensor<?x16x192xbf16>, %k: tensor<?x16x192xbf16>,
    %v: tensor<?x16x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x16x128xbf16> {
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1352 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x192xbf16>, tensor<?x16x128xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// GQA 32/2 (group 16: the whole group in one pack), f16, non-causal; 96/80
// pads to 96/80, not multiples of 64: mma.sync on every arch.
// CHECK-LABEL: func.func @gqa_f16
// SM90A: attn.varlen_attention {{.*}}schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 96, v_dim_padded = 80, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>
// SM80: attn.varlen_attention {{.*}}schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 96, v_dim_padded = 80, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>
func.func @gqa_f16(%q: tensor<?x32x90xf16>, %k: tensor<?x2x90xf16>,
    %v: tensor<?x2x72xf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x32x72xf16> {
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1 : f64, causal = false}
      : tensor<?x32x90xf16>, tensor<?x2x90xf16>, tensor<?x2x72xf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x32x72xf16>
  return %o : tensor<?x32x72xf16>
}

// -----

// 256/256 (Qwen3-Next-like, 16/2 heads): 2 stages of 128 keys would need
// 2 x 64 x 256 x 2 + 2 x (128 x 256 x 2) x 2 = 327680 bytes; 80 keys fit
// (229376 + barriers).
// CHECK-LABEL: func.func @wide_heads
// SM90A: attn.varlen_attention {{.*}}schedule = #attn.attention_schedule<block_m = 128, block_n = 80, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">
func.func @wide_heads(%q: tensor<?x16x256xbf16>, %k: tensor<?x2x256xbf16>,
    %v: tensor<?x2x256xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x16x256xbf16> {
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.0625 : f64}
      : tensor<?x16x256xbf16>, tensor<?x2x256xbf16>, tensor<?x2x256xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}

// -----

// attn.keep_schedule: a hand-written schedule (here block_n 176 at 2
// stages) is kept on every target and tier, not replaced.
// CHECK-LABEL: func.func @kept_schedule
// CHECK: attn.varlen_attention {{.*}}{attn.keep_schedule, schedule = #attn.attention_schedule<block_m = 128, block_n = 176, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">
// BASELINE-NOT: attn.ws_baseline
func.func @kept_schedule(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>,
    %v: tensor<?x8x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x32x128xbf16> {
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.088 : f64, attn.keep_schedule,
      schedule = #attn.attention_schedule<block_m = 128, block_n = 176, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">}
      : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o : tensor<?x32x128xbf16>
}

// -----

// 128/128 (32/8 heads): block_n 176 (measured faster than 128 there).
// CHECK-LABEL: func.func @d128
// SM90A: attn.varlen_attention {{.*}}schedule = #attn.attention_schedule<block_m = 128, block_n = 176, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">
func.func @d128(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>,
    %v: tensor<?x8x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x32x128xbf16> {
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.088 : f64}
      : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o : tensor<?x32x128xbf16>
}
