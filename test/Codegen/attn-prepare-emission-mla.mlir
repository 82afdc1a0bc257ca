// RUN: attn-opt %s -attn-prepare-emission -split-input-file -verify-diagnostics | FileCheck %s

// MLA's preprocess: element types, the latent cache's block size and the
// rope table. rope_head_dim 4 at theta 100 has two inverse frequencies,
// 100^0 = 1 and 100^(-2/4) = 0.1; linear scaling by 2 halves them.
// CHECK-LABEL: func.func @linear__mla_preprocess
// CHECK: attn.emission = #attn.mla_preprocess_emission<activation = "bf16", cache = "fp8_e4m3", block_size = 16, inv_freq = array<f64: 5.000000e-01, 5.000000e-02>>
func.func @linear__mla_preprocess(%kv_a: tensor<?x12xbf16>, %q_pe: tensor<?x2x4xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<8xbf16>, %cache: tensor<?x16x12xf8E4M3FN>, %s: tensor<f32>) -> (tensor<?x12xbf16>, tensor<?x2x4xbf16>, tensor<?x16x12xf8E4M3FN>) attributes {attn.kernel = "mla_preprocess", attn.layer = "linear"} {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache scale %s {num_heads = 2, kv_lora_rank = 8, rope_head_dim = 4, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<neox>, theta = 100.0 : f64, scaling = #attn.rope_scaling<kind = linear, factor = 2.0>, schedule = #attn.mla_preprocess_schedule<vector_width = 2, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>} : tensor<?x12xbf16>, tensor<?x2x4xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<8xbf16> into tensor<?x16x12xf8E4M3FN> scale tensor<f32>
  return %lat, %qr, %c : tensor<?x12xbf16>, tensor<?x2x4xbf16>, tensor<?x16x12xf8E4M3FN>
}

// -----

// Yarn with mscale 1 and mscale_all_dim 0.5 at factor 40: cos and sin
// carry (0.1 ln 40 + 1) / (0.05 ln 40 + 1) = 1.36889 / 1.18444 = 1.15572
// (Hugging Face's _compute_yarn_parameters; the softmax scale's mscale is
// the importer's business, not this kernel's). DeepSeek's equal mscales
// give 1, which is not printed.
// CHECK-LABEL: func.func @yarn__mla_preprocess
// CHECK: attn.emission = #attn.mla_preprocess_emission<activation = "bf16", cache = "bf16", block_size = 64, inv_freq = array<f64: {{.*}}>, rope_attention_factor = 1.1557{{[0-9]*}}>
// CHECK-LABEL: func.func @deepseek__mla_preprocess
// CHECK: attn.emission = #attn.mla_preprocess_emission<activation = "bf16", cache = "bf16", block_size = 64, inv_freq = array<f64: {{[^>]*}}>>
func.func @yarn__mla_preprocess(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>, %cache: tensor<?x64x576xbf16>) -> (tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>) attributes {attn.kernel = "mla_preprocess", attn.layer = "yarn"} {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, rope_deinterleave = true, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096, mscale = 1.0, mscale_all_dim = 0.5>, schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>} : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>
}
func.func @deepseek__mla_preprocess(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>, %cache: tensor<?x64x576xbf16>) -> (tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>) attributes {attn.kernel = "mla_preprocess", attn.layer = "deepseek"} {
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, rope_deinterleave = true, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096, mscale = 1.0, mscale_all_dim = 1.0>, schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>} : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>
}
