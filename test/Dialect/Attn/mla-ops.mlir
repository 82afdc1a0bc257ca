// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s -mlir-print-op-generic | attn-opt | FileCheck %s

// The MLA ops round-trip through the custom and the generic form; defaulted
// attributes (latent_scale 1, rope_deinterleave false, causal true) are not
// printed, set ones are.

// CHECK-LABEL: func.func @deepseek_v3
// CHECK: attn.mla_preprocess %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} {kv_lora_rank = 512 : i64, norm_eps = 9.9999999999999995E-7 : f64, num_heads = 128 : i64, rope_deinterleave = true, rope_head_dim = 64 : i64, rope_style = #attn.rope_style<gptj>, theta = 1.000000e+04 : f64} : tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
// CHECK: attn.latent_attention %{{.*}} {kv_lora_rank = 512 : i64, softmax_scale = 1.352000e-01 : f64} : tensor<?x128x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x128x512xbf16>
// CHECK: attn.varlen_attention %{{.*}} {softmax_scale = 1.352000e-01 : f64} : tensor<?x128x192xbf16>, tensor<?x128x192xbf16>, tensor<?x128x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x128x128xbf16>
// CHECK: attn.latent_gather %{{.*}} : tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x576xbf16>
func.func @deepseek_v3(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x128x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>, %q: tensor<?x128x576xbf16>,
    %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>,
    %qp: tensor<?x128x192xbf16>, %k: tensor<?x128x192xbf16>,
    %v: tensor<?x128x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> (tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?x64x576xbf16>,
        tensor<?x128x512xbf16>, tensor<?x128x128xbf16>, tensor<?x576xbf16>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 128, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>,
       rope_deinterleave = true, theta = 1.0e4 : f64}
      : tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  %o = attn.latent_attention %q, %c, %tables, %lens, %starts
      {kv_lora_rank = 512, softmax_scale = 0.1352 : f64}
      : tensor<?x128x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x128x512xbf16>
  %p = attn.varlen_attention %qp, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1352 : f64}
      : tensor<?x128x192xbf16>, tensor<?x128x192xbf16>, tensor<?x128x128xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x128x128xbf16>
  %rows = attn.latent_gather %c, %tables, %cu_k
      : tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x576xbf16>
  return %lat, %qr, %c, %o, %p, %rows
      : tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?x64x576xbf16>,
        tensor<?x128x512xbf16>, tensor<?x128x128xbf16>, tensor<?x576xbf16>
}

// An fp8 latent cache carries its scale; LongCat's latent_scale and a
// non-causal attention print.
// CHECK-LABEL: func.func @fp8_longcat
// CHECK: attn.mla_preprocess {{.*}} into %{{.*}} scale %{{.*}} {{{.*}}latent_scale = 2.000000e+00 : f64{{.*}}} : {{.*}} into tensor<?x64x576xf8E4M3FN> scale tensor<f32>
// CHECK: attn.latent_attention {{.*}} scale %{{.*}} {causal = false, {{.*}}} : {{.*}} scale tensor<f32> -> tensor<?x16x512xbf16>
// CHECK: attn.latent_gather {{.*}} scale %{{.*}} : tensor<?x64x576xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32> scale tensor<f32> -> tensor<?x576xbf16>
func.func @fp8_longcat(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xf8E4M3FN>, %s: tensor<f32>, %q: tensor<?x16x576xbf16>,
    %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>)
    -> (tensor<?x16x512xbf16>, tensor<?x576xbf16>) {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache scale %s
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, latent_scale = 2.0 : f64,
       rope_style = #attn.rope_style<gptj>, theta = 1.0e7 : f64}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xf8E4M3FN> scale tensor<f32>
  %o = attn.latent_attention %q, %c, %tables, %lens, %starts scale %s
      {kv_lora_rank = 512, softmax_scale = 0.1352 : f64, causal = false}
      : tensor<?x16x576xbf16>, tensor<?x64x576xf8E4M3FN>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> scale tensor<f32> -> tensor<?x16x512xbf16>
  %rows = attn.latent_gather %c, %tables, %starts scale %s
      : tensor<?x64x576xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32> scale tensor<f32>
      -> tensor<?x576xbf16>
  return %o, %rows : tensor<?x16x512xbf16>, tensor<?x576xbf16>
}
