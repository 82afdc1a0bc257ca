// RUN: attn-opt %s -attn-prepare-emission -split-input-file -verify-diagnostics

// What the attention templates take of a schedule: attn-prepare-emission
// rejects the rest with the rule, so the printer only prints.

// A wgmma schedule (sm_90a tiles from 128-byte swizzled shared memory of the
// activation type) on an fp8 cache would read raw fp8 bytes as 16-bit
// values. (attn-specialize never chooses it for fp8: such caches keep
// mma.sync, which widens them.)
func.func @fp8__attention(%q: tensor<?x16x192xbf16>, %kc: tensor<?x64x2x192xf8E4M3FN>, %vc: tensor<?x64x2x128xf8E4M3FN>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %ks: tensor<f32>, %vs: tensor<f32>) -> tensor<?x16x128xbf16> attributes {attn.kernel = "attention", attn.layer = "fp8"} {
  // expected-error @+1 {{'attn.paged_attention' op schedule mma "wgmma" needs a cache of the activation type (fp8 and other caches take mma.sync), got fp8_e4m3 for bf16}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts scales %ks, %vs {softmax_scale = 0.0722 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">} : tensor<?x16x192xbf16>, tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> scales tensor<f32>, tensor<f32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// The wgmma wrappers (attnc_wgmma.cuh) have O += P V for N = 64 and 128
// only; the schedule's verifier allows up to 256.
func.func @wide_wgmma__attention(%q: tensor<?x16x256xbf16>, %kc: tensor<?x64x2x256xbf16>, %vc: tensor<?x64x2x256xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x256xbf16> attributes {attn.kernel = "attention", attn.layer = "wide"} {
  // expected-error @+1 {{'attn.paged_attention' op schedule mma "wgmma" needs v_dim_padded 64 or 128 (the O += P V wrappers of attnc_wgmma.cuh), got 256}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.0625 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">} : tensor<?x16x256xbf16>, tensor<?x64x2x256xbf16>, tensor<?x64x2x256xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}

// -----

// The tensor-core template has one tiling; a schedule of another shape
// must say form = cuda_core.
func.func @tiling__attention(%q: tensor<?x4x2xbf16>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x3xbf16> attributes {attn.kernel = "attention", attn.layer = "tiling"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: the tensor-core form needs block_m 128, block_n 64, num_warps 4 and pipeline_stages 2, got 128, 16, 4 and 1 (attn-specialize records other shapes as form = cuda_core)}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  return %o : tensor<?x4x3xbf16>
}

// -----

// A V head whose fp32 accumulator does not fit a warp's registers
// (v_dim_padded above 256) takes the CUDA-core form.
func.func @wide__attention(%q: tensor<?x4x2xbf16>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x264xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x264xbf16> attributes {attn.kernel = "attention", attn.layer = "wide"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: the tensor-core form needs 16-bit activations, a cache of their type or fp8 and v_dim_padded <= 256, got bf16, bf16 and 272 (attn-specialize records such layers as form = cuda_core)}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 272, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x264xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x264xbf16>
  return %o : tensor<?x4x264xbf16>
}

// -----

// Every value printed as a float literal must be a normal float32: a
// softmax scale of 1e39 would print as a literal NVRTC rejects (or inf).
func.func @huge_scale__attention(%q: tensor<?x16x128xbf16>, %kc: tensor<?x64x2x128xbf16>, %vc: tensor<?x64x2x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x128xbf16> attributes {attn.kernel = "attention", attn.layer = "huge_scale"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: softmax_scale must be 0 or finite of magnitude within float32's normal range [1.17549435e-38, 3.40282347e+38] (it becomes a float constant in the kernels), got 1.000000e+39}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 1.0e39 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x16x128xbf16>, tensor<?x64x2x128xbf16>, tensor<?x64x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// A softcap below float32's normal range.
func.func @tiny_softcap__attention(%q: tensor<?x16x128xbf16>, %kc: tensor<?x64x2x128xbf16>, %vc: tensor<?x64x2x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x128xbf16> attributes {attn.kernel = "attention", attn.layer = "tiny_softcap"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: logit_softcap must be 0 or finite}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.088 : f64, logit_softcap = 1.0e-300 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x16x128xbf16>, tensor<?x64x2x128xbf16>, tensor<?x64x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// The warp-specialised schedule of a paged attention is its
// prefill_attention kernel's only (attn-prepare-emission-prefill-invalid.mlir).
func.func @ws_paged__attention(%q: tensor<?x16x128xbf16>, %kc: tensor<?x64x2x128xbf16>, %vc: tensor<?x64x2x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x128xbf16> attributes {attn.kernel = "attention", attn.layer = "ws_paged"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: schedule mma "wgmma_ws" is the prefill_attention kernel's (and that kernel's only), got mma "wgmma_ws" in an attention kernel}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.088 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">} : tensor<?x16x128xbf16>, tensor<?x64x2x128xbf16>, tensor<?x64x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}
