// RUN: attn-opt %s -split-input-file -attn-specialize | FileCheck %s --check-prefixes=CHECK,ON
// RUN: attn-opt %s -split-input-file '-attn-specialize=prefill-kernel=false' | FileCheck %s --check-prefixes=CHECK,OFF
// RUN: attn-opt %s -split-input-file '-attn-specialize=baseline=true' | FileCheck %s --check-prefixes=CHECK,OFF
// RUN: attn-opt %s -split-input-file '-attn-specialize=arch=sm_90' | FileCheck %s --check-prefixes=CHECK,OFF
// RUN: attn-opt %s -split-input-file -attnc-pipeline | FileCheck %s --check-prefix=OUTLINE

// The paged attention's warp-specialised prefill schedule
// (attn.prefill_schedule) on sm_90a: a 16-bit cache of the activation type
// in static pages of 8 or more tokens, head dims padded to 64 with
// v_dim_padded <= 256: block_m 128, 12 warps, 2 stages, max_kv_splits 1,
// gqa_pack the largest divisor of the group up to 128 (as the op's own
// schedule), block_n 128 where two stages fit (192/128: Q 2 x 64 x 192 x 2
// + 2 x 128 x 192 x 2 + 2 x 128 x 128 x 2 + barriers = 213,088 bytes) else
// 64 (256/256: 128 keys would need 2 x 64 x 256 x 2 + 2 x 2 x 128 x 256 x 2
// = 327,680). Not with prefill-kernel=false, in the baseline, or on sm_90
// (no wgmma). The op's own schedule stays the decode-capable one.
// attnc-pipeline: attn-outline-kernels copies the attention kernel into
// the uncalled @<layer>__prefill_attention (kind prefill_attention) on the
// prefill schedule, gate epilogue included, and drops the attribute; the
// layer calls the attention kernel only.

// CHECK-LABEL: func.func @p192(
// ON: attn.paged_attention {{.*}}{attn.prefill_schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">
// OFF-NOT: attn.prefill_schedule
// OUTLINE-LABEL: func.func @p192__attention(
// OUTLINE-SAME: attn.kernel = "attention"
// OUTLINE-NOT: attn.prefill_schedule
// OUTLINE: attn.paged_attention {{.*}}mma = "wgmma">
// OUTLINE-NEXT: attn.output_gate
// OUTLINE-LABEL: func.func @p192__prefill_attention(
// OUTLINE-SAME: {attn.arg = "query"}
// OUTLINE-SAME: {attn.arg = "gate"}
// OUTLINE-SAME: attn.kernel = "prefill_attention", attn.layer = "p192"
// OUTLINE-NEXT: attn.paged_attention {{.*}}sinks {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, {{.*}}, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">
// OUTLINE-NEXT: attn.output_gate
// OUTLINE-LABEL: func.func @p192(
// OUTLINE-NEXT: call @p192__attention(
// OUTLINE-NOT: call
// OUTLINE: return
func.func @p192(%q: tensor<?x16x192xbf16>, %kc: tensor<?x16x2x192xbf16>,
                %vc: tensor<?x16x2x128xbf16>, %bt: tensor<?x?xi32>,
                %sl: tensor<?xi32>, %qs: tensor<?xi32>, %sinks: tensor<16xf32>,
                %g: tensor<?x16x128xbf16>) -> tensor<?x16x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs sinks %sinks
      {softmax_scale = 0.0722 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<16xf32>
        -> tensor<?x16x128xbf16>
  %y = attn.output_gate %o, %g : tensor<?x16x128xbf16>
  return %y : tensor<?x16x128xbf16>
}

// -----

// 256/256, one KV head (a group of 16: pack 16), pages of 64: block_n 64
// (80, taken at 256/256, is not whole boxes of 64 rows).
// CHECK-LABEL: func.func @p256(
// ON: attn.prefill_schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">
// OFF-NOT: attn.prefill_schedule
// OUTLINE-LABEL: func.func @p256__prefill_attention(
func.func @p256(%q: tensor<?x16x256xbf16>, %kc: tensor<?x64x1x256xbf16>,
                %vc: tensor<?x64x1x256xbf16>, %bt: tensor<?x?xi32>,
                %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x16x256xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0625 : f64}
      : tensor<?x16x256xbf16>, tensor<?x64x1x256xbf16>, tensor<?x64x1x256xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}

// -----

// 128/128 (32/8 heads: pack 4) takes block_n 176 where the pages' boxes
// divide it (pages of 16: 11 boxes a tile); pages of 64 keep 128.
// CHECK-LABEL: func.func @p128_page16(
// ON: attn.prefill_schedule = #attn.attention_schedule<block_m = 128, block_n = 176, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4,
// OFF-NOT: attn.prefill_schedule
func.func @p128_page16(%q: tensor<?x32x128xbf16>, %kc: tensor<?x16x8x128xbf16>,
                %vc: tensor<?x16x8x128xbf16>, %bt: tensor<?x?xi32>,
                %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x32x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o : tensor<?x32x128xbf16>
}

// -----

// CHECK-LABEL: func.func @p128_page64(
// ON: attn.prefill_schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4,
// OFF-NOT: attn.prefill_schedule
func.func @p128_page64(%q: tensor<?x32x128xbf16>, %kc: tensor<?x64x8x128xbf16>,
                %vc: tensor<?x64x8x128xbf16>, %bt: tensor<?x?xi32>,
                %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x32x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x32x128xbf16>, tensor<?x64x8x128xbf16>, tensor<?x64x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o : tensor<?x32x128xbf16>
}

// -----

// No prefill kernel: an fp8 cache (it keeps the wgmma form), pages of 4
// tokens (a box of fewer rows than a swizzle atom), a dynamic block size,
// head dims that are not whole 16-byte rows (100), v_dim_padded 320.
// CHECK-LABEL: func.func @fp8(
// CHECK-NOT: attn.prefill_schedule
// OUTLINE-LABEL: func.func @fp8__attention(
// OUTLINE-NOT: prefill_attention
func.func @fp8(%q: tensor<?x8x128xbf16>, %kc: tensor<?x16x1x128xf8E4M3FN>,
               %vc: tensor<?x16x1x128xf8E4M3FN>, %bt: tensor<?x?xi32>,
               %sl: tensor<?xi32>, %qs: tensor<?xi32>, %ks: tensor<f32>,
               %vs: tensor<f32>) -> tensor<?x8x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs scales %ks, %vs
      {softmax_scale = 0.0884 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x1x128xf8E4M3FN>,
        tensor<?x16x1x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> scales tensor<f32>, tensor<f32> -> tensor<?x8x128xbf16>
  return %o : tensor<?x8x128xbf16>
}
// CHECK-LABEL: func.func @page4(
// CHECK-NOT: attn.prefill_schedule
func.func @page4(%q: tensor<?x8x128xbf16>, %kc: tensor<?x4x1x128xbf16>,
                 %vc: tensor<?x4x1x128xbf16>, %bt: tensor<?x?xi32>,
                 %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0884 : f64}
      : tensor<?x8x128xbf16>, tensor<?x4x1x128xbf16>, tensor<?x4x1x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return %o : tensor<?x8x128xbf16>
}
// CHECK-LABEL: func.func @dynamic_pages(
// CHECK-NOT: attn.prefill_schedule
func.func @dynamic_pages(%q: tensor<?x8x128xbf16>, %kc: tensor<?x?x1x128xbf16>,
                         %vc: tensor<?x?x1x128xbf16>, %bt: tensor<?x?xi32>,
                         %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0884 : f64}
      : tensor<?x8x128xbf16>, tensor<?x?x1x128xbf16>, tensor<?x?x1x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return %o : tensor<?x8x128xbf16>
}
// CHECK-LABEL: func.func @odd_dim(
// CHECK-NOT: attn.prefill_schedule
func.func @odd_dim(%q: tensor<?x8x100xbf16>, %kc: tensor<?x16x1x100xbf16>,
                   %vc: tensor<?x16x1x100xbf16>, %bt: tensor<?x?xi32>,
                   %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x100xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.1 : f64}
      : tensor<?x8x100xbf16>, tensor<?x16x1x100xbf16>, tensor<?x16x1x100xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x100xbf16>
  return %o : tensor<?x8x100xbf16>
}
// CHECK-LABEL: func.func @wide(
// CHECK-NOT: attn.prefill_schedule
func.func @wide(%q: tensor<?x8x320xbf16>, %kc: tensor<?x16x1x320xbf16>,
                %vc: tensor<?x16x1x320xbf16>, %bt: tensor<?x?xi32>,
                %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x320xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.05 : f64}
      : tensor<?x8x320xbf16>, tensor<?x16x1x320xbf16>, tensor<?x16x1x320xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x320xbf16>
  return %o : tensor<?x8x320xbf16>
}
