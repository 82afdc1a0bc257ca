// RUN: attn-opt %s -attn-prepare-emission -split-input-file -verify-diagnostics

// The paged prefill kernel (kind prefill_attention, schedule mma
// "wgmma_ws") at attn-prepare-emission: the warp-specialised schedule is
// that kernel's only, and the kernel reads 16-bit caches of the activation
// type in pages of 8 or more tokens with the template's one row tiling.

// A prefill_attention kernel on another schedule.
func.func @mma_sync__prefill_attention(%q: tensor<?x8x64xbf16>, %kc: tensor<?x16x2x64xbf16>, %vc: tensor<?x16x2x64xbf16>, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x64xbf16> attributes {attn.kernel = "prefill_attention", attn.layer = "mma_sync"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: schedule mma "wgmma_ws" is the prefill_attention kernel's (and that kernel's only), got mma "wgmma" in a prefill_attention kernel}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {softmax_scale = 0.125 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">} : tensor<?x8x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

// The warp-specialised schedule in the decode-capable attention kernel.
func.func @ws__attention(%q: tensor<?x8x64xbf16>, %kc: tensor<?x16x2x64xbf16>, %vc: tensor<?x16x2x64xbf16>, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x64xbf16> attributes {attn.kernel = "attention", attn.layer = "ws"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: schedule mma "wgmma_ws" is the prefill_attention kernel's (and that kernel's only), got mma "wgmma_ws" in an attention kernel}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {softmax_scale = 0.125 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">} : tensor<?x8x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

// Split-KV: the kernel computes a row tile's keys in one block.
func.func @splits__prefill_attention(%q: tensor<?x8x64xbf16>, %kc: tensor<?x16x2x64xbf16>, %vc: tensor<?x16x2x64xbf16>, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x64xbf16> attributes {attn.kernel = "prefill_attention", attn.layer = "splits"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: the warp-specialised form needs block_m 128, num_warps 12 and max_kv_splits 1, got 128, 12 and 64}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {softmax_scale = 0.125 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma_ws">} : tensor<?x8x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

// Stages past the block's shared memory: Q (2 x 64 rows of 64), 8 stages of
// 128 K and 128 V rows of 64, barriers.
func.func @stages__prefill_attention(%q: tensor<?x8x64xbf16>, %kc: tensor<?x16x2x64xbf16>, %vc: tensor<?x16x2x64xbf16>, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x64xbf16> attributes {attn.kernel = "prefill_attention", attn.layer = "stages"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: the warp-specialised form's shared memory (Q, pipeline_stages 8 of block_n 128 K and V rows, barriers) is 278816 bytes, over the 232448 a block may have}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {softmax_scale = 0.125 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 8, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">} : tensor<?x8x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

// block_n 176 over pages of 64: a tile is not whole boxes.
func.func @boxes__prefill_attention(%q: tensor<?x8x128xbf16>, %kc: tensor<?x64x2x128xbf16>, %vc: tensor<?x64x2x128xbf16>, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x128xbf16> attributes {attn.kernel = "prefill_attention", attn.layer = "boxes"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: the warp-specialised prefill kernel loads a K/V tile as boxes of min(page, block_n) rows, so block_n must be a multiple of them, got block_n 176 and pages of 64}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {softmax_scale = 0.088 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 176, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">} : tensor<?x8x128xbf16>, tensor<?x64x2x128xbf16>, tensor<?x64x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return %o : tensor<?x8x128xbf16>
}

// -----

// Pages of 4 tokens: a box of fewer rows than a swizzle atom.
func.func @page4__prefill_attention(%q: tensor<?x8x64xbf16>, %kc: tensor<?x4x2x64xbf16>, %vc: tensor<?x4x2x64xbf16>, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> tensor<?x8x64xbf16> attributes {attn.kernel = "prefill_attention", attn.layer = "page4"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: the warp-specialised prefill kernel reads a cache of the activation type in pages of at least 8 tokens, got 'bf16' pages of 4}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {softmax_scale = 0.125 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">} : tensor<?x8x64xbf16>, tensor<?x4x2x64xbf16>, tensor<?x4x2x64xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

// An fp8 cache keeps the wgmma form.
func.func @fp8__prefill_attention(%q: tensor<?x8x64xbf16>, %kc: tensor<?x16x2x64xf8E4M3FN>, %vc: tensor<?x16x2x64xf8E4M3FN>, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>, %ks: tensor<f32>, %vs: tensor<f32>) -> tensor<?x8x64xbf16> attributes {attn.kernel = "prefill_attention", attn.layer = "fp8"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: the warp-specialised prefill kernel reads a cache of the activation type in pages of at least 8 tokens, got 'f8E4M3FN' pages of 16}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs scales %ks, %vs {softmax_scale = 0.125 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">} : tensor<?x8x64xbf16>, tensor<?x16x2x64xf8E4M3FN>, tensor<?x16x2x64xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> scales tensor<f32>, tensor<f32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}
