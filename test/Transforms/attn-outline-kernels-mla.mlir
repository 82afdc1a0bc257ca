// RUN: attn-opt %s --attn-outline-kernels | FileCheck %s

// Each MLA op is one kernel (the decode here reads an fp8 cache, so its
// optional cache_scale is an argument; the gather's bf16 cache has none): its function is named <layer>__<kind>, its
// arguments and results by role (the ABI names); the layer calls them.

// CHECK-LABEL: func.func @mla__mla_preprocess(
// CHECK-SAME: {attn.arg = "kv_a"}, %{{.*}} {attn.arg = "q_rope"}, %{{.*}} {attn.arg = "slot_mapping"}, %{{.*}} {attn.arg = "positions"}, %{{.*}} {attn.arg = "kv_norm_weight"}, %{{.*}} {attn.arg = "latent_cache"})
// CHECK-SAME: {attn.result = "latent"}, {{.*}} {attn.result = "q_rope_out"}, {{.*}} {attn.result = "latent_cache_out"})
// CHECK-SAME: attn.kernel = "mla_preprocess", attn.layer = "mla"
// CHECK-LABEL: func.func @mla__latent_attention(
// CHECK-SAME: {attn.arg = "query"}, %{{.*}} {attn.arg = "latent_cache"}, %{{.*}} {attn.arg = "block_tables"}, %{{.*}} {attn.arg = "seq_lens"}, %{{.*}} {attn.arg = "query_start_loc"}, %{{.*}} {attn.arg = "cache_scale"})
// CHECK-SAME: attn.kernel = "latent_attention"
// CHECK-LABEL: func.func @mla__varlen_attention(
// CHECK-SAME: {attn.arg = "query"}, %{{.*}} {attn.arg = "key"}, %{{.*}} {attn.arg = "value"}, %{{.*}} {attn.arg = "cu_seqlens_q"}, %{{.*}} {attn.arg = "cu_seqlens_k"})
// CHECK-SAME: attn.kernel = "varlen_attention"
// CHECK-LABEL: func.func @mla__latent_gather(
// CHECK-SAME: {attn.arg = "latent_cache"}, %{{.*}} {attn.arg = "block_tables"}, %{{.*}} {attn.arg = "cu_seqlens"})
// CHECK-SAME: attn.kernel = "latent_gather"
// CHECK-LABEL: func.func @mla(
// CHECK: %[[P:.*]]:3 = call @mla__mla_preprocess(
// CHECK: call @mla__latent_attention(
// CHECK: call @mla__varlen_attention(
// CHECK: call @mla__latent_gather(%[[P]]#2,
func.func @mla(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x128x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>, %q: tensor<?x128x576xbf16>,
    %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>,
    %c8d: tensor<?x64x576xf8E4M3FN>, %s: tensor<f32>, %qp: tensor<?x128x192xbf16>, %k: tensor<?x128x192xbf16>,
    %v: tensor<?x128x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> (tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?x128x512xbf16>,
        tensor<?x128x128xbf16>, tensor<?x576xbf16>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 128, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  %o = attn.latent_attention %q, %c8d, %tables, %lens, %starts scale %s
      {kv_lora_rank = 512, softmax_scale = 0.1352 : f64}
      : tensor<?x128x576xbf16>, tensor<?x64x576xf8E4M3FN>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> scale tensor<f32> -> tensor<?x128x512xbf16>
  %p = attn.varlen_attention %qp, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1352 : f64}
      : tensor<?x128x192xbf16>, tensor<?x128x192xbf16>, tensor<?x128x128xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x128x128xbf16>
  %rows = attn.latent_gather %c, %tables, %starts
      : tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x576xbf16>
  return %lat, %qr, %o, %p, %rows : tensor<?x576xbf16>, tensor<?x128x64xbf16>,
      tensor<?x128x512xbf16>, tensor<?x128x128xbf16>, tensor<?x576xbf16>
}
