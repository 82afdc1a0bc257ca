// RUN: not attn-translate --attn-to-cuda %s 2>&1 | FileCheck %s

// A wgmma schedule (sm_90a tiles from 128-byte swizzled shared memory of the
// activation type) on an fp8 cache: the emitter names the rule instead of
// emitting a kernel that reads raw fp8 bytes as 16-bit values. (attn-specialize
// never chooses it for fp8: such caches keep mma.sync, which widens them.)
// CHECK: error: 'attn.paged_attention' op schedule mma "wgmma" needs a cache of the activation type (fp8 and other caches take mma.sync), got fp8_e4m3 for bf16
func.func @fp8__attention(%q: tensor<?x16x192xbf16>, %kc: tensor<?x64x2x192xf8E4M3FN>, %vc: tensor<?x64x2x128xf8E4M3FN>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %ks: tensor<f32>, %vs: tensor<f32>) -> tensor<?x16x128xbf16> attributes {attn.kernel = "attention", attn.layer = "fp8"} {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts scales %ks, %vs {softmax_scale = 0.0722 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">} : tensor<?x16x192xbf16>, tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> scales tensor<f32>, tensor<f32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}
