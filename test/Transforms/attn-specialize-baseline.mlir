// RUN: attn-opt %s -split-input-file '-attn-specialize=prefill-kernel=false' | FileCheck %s --check-prefixes=CHECK,OPTIMISED
// RUN: attn-opt %s -split-input-file '-attn-specialize=baseline=true' | FileCheck %s --check-prefixes=CHECK,BASELINE
// RUN: attn-opt %s -split-input-file '-attnc-pipeline=baseline=true' | FileCheck %s --check-prefix=PIPELINE

// attn-specialize's `baseline` option (the tiered JIT's first tier) on
// sm_90a: the attention schedule keeps mma = "mma.sync" (printed as no `mma`
// member, its default) where the default takes "wgmma", and every other
// member stays what the default chose (worked out in attn-specialize.mlir:
// 192/128 with 16 query heads per KV head packs 16; 64/64 with 4 packs 4).
// The preprocess schedule does not depend on it. A baseline that stands in
// for a wgmma schedule is marked `attn.wgmma_baseline` (the printer gives
// it the wgmma kernel's parameters: the TMA K/V tensor maps); one whose
// default is mma.sync (the fp8 cache below) is not.

// CHECK-LABEL: func.func @attention_192_128_hq64(
// OPTIMISED: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">,
// BASELINE: attn.paged_attention {{.*}}{attn.wgmma_baseline, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 16, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>,
// PIPELINE-LABEL: func.func @attention_192_128_hq64__attention(
// PIPELINE-NOT: mma = "wgmma"
// PIPELINE: target_ctas = 264>
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

// -----

// CHECK-LABEL: func.func @attention_64_64(
// OPTIMISED: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">,
// BASELINE: attn.paged_attention {{.*}}{attn.wgmma_baseline, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>,
func.func @attention_64_64(%q: tensor<?x16x64xbf16>,
                           %kc: tensor<?x16x4x64xbf16>,
                           %vc: tensor<?x16x4x64xbf16>,
                           %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                           %qs: tensor<?xi32>)
    -> tensor<?x16x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x16x64xbf16>, tensor<?x16x4x64xbf16>,
        tensor<?x16x4x64xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x16x64xbf16>
  return %o : tensor<?x16x64xbf16>
}

// -----

// An fp8 cache takes mma.sync with or without the option: nothing differs.
// CHECK-LABEL: func.func @attention_fp8_cache(
// CHECK: attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>,
func.func @attention_fp8_cache(%q: tensor<?x16x128xbf16>,
                               %kc: tensor<?x16x4x128xf8E4M3FN>,
                               %vc: tensor<?x16x4x128xf8E4M3FN>,
                               %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                               %qs: tensor<?xi32>, %ks: tensor<f32>,
                               %vs: tensor<f32>)
    -> tensor<?x16x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs scales %ks, %vs
      {softmax_scale = 0.0884 : f64}
      : tensor<?x16x128xbf16>, tensor<?x16x4x128xf8E4M3FN>,
        tensor<?x16x4x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> scales tensor<f32>, tensor<f32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}
