// RUN: attn-opt %s -attn-prepare-emission -split-input-file -verify-diagnostics

// What the MLA preprocess template cannot take: attn-prepare-emission
// rejects it with the rule, so the printer only prints.

// Unscheduled.
func.func @unscheduled__mla_preprocess(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>, %cache: tensor<?x64x576xbf16>) -> (tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>) attributes {attn.kernel = "mla_preprocess", attn.layer = "unscheduled"} {
  // expected-error @+1 {{'attn.mla_preprocess' op cannot be emitted without a schedule (run attn-specialize first)}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64} : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>
}

// -----

// The block size is baked into the kernel.
func.func @dynamic_block__mla_preprocess(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>, %cache: tensor<?x?x576xbf16>) -> (tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x?x576xbf16>) attributes {attn.kernel = "mla_preprocess", attn.layer = "dynamic_block"} {
  // expected-error @+1 {{'attn.mla_preprocess' op cannot be emitted: latent_cache dim 1 is dynamic, but head counts, head dims and the cache block size are baked into the kernel}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64, schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>} : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<512xbf16> into tensor<?x?x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x?x576xbf16>
}

// -----

// f32 activations have no kernel.
func.func @f32__mla_preprocess(%kv_a: tensor<?x576xf32>, %q_pe: tensor<?x16x64xf32>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xf32>, %cache: tensor<?x64x576xf32>) -> (tensor<?x576xf32>, tensor<?x16x64xf32>, tensor<?x64x576xf32>) attributes {attn.kernel = "mla_preprocess", attn.layer = "f32"} {
  // expected-error @+1 {{'attn.mla_preprocess' op cannot be emitted: activation type 'f32' is not supported (bf16 or f16)}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64, schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>} : tensor<?x576xf32>, tensor<?x16x64xf32>, tensor<?xi64>, tensor<?xi64>, tensor<512xf32> into tensor<?x64x576xf32>
  return %lat, %qr, %c : tensor<?x576xf32>, tensor<?x16x64xf32>, tensor<?x64x576xf32>
}

// -----

// A vector must not straddle the rope halves: 8 does not divide 36 / 2.
func.func @straddle__mla_preprocess(%kv_a: tensor<?x548xbf16>, %q_pe: tensor<?x16x36xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>, %cache: tensor<?x64x548xbf16>) -> (tensor<?x548xbf16>, tensor<?x16x36xbf16>, tensor<?x64x548xbf16>) attributes {attn.kernel = "mla_preprocess", attn.layer = "straddle"} {
  // expected-error @+1 {{'attn.mla_preprocess' op cannot be emitted: the schedule's vector_width (8) must divide kv_lora_rank (512) and rope_head_dim / 2 (18) and span at most 16 bytes}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 36, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64, schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>} : tensor<?x548xbf16>, tensor<?x16x36xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<512xbf16> into tensor<?x64x548xbf16>
  return %lat, %qr, %c : tensor<?x548xbf16>, tensor<?x16x36xbf16>, tensor<?x64x548xbf16>
}

// -----

// De-interleaving in place needs a head's units in one warp: 96 / 2 / 8 = 6 units do not divide 32.
func.func @deinterleave_units__mla_preprocess(%kv_a: tensor<?x608xbf16>, %q_pe: tensor<?x16x96xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>, %cache: tensor<?x64x608xbf16>) -> (tensor<?x608xbf16>, tensor<?x16x96xbf16>, tensor<?x64x608xbf16>) attributes {attn.kernel = "mla_preprocess", attn.layer = "deinterleave_units"} {
  // expected-error @+1 {{'attn.mla_preprocess' op cannot be emitted: rope_deinterleave needs the rope units of a head (rope_head_dim / 2 / vector_width = 6) to divide 32 (one warp)}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 96, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64, rope_deinterleave = true, schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>} : tensor<?x608xbf16>, tensor<?x16x96xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<512xbf16> into tensor<?x64x608xbf16>
  return %lat, %qr, %c : tensor<?x608xbf16>, tensor<?x16x96xbf16>, tensor<?x64x608xbf16>
}

// -----

// Dynamic NTK depends on the sequence length.
func.func @dynamic_ntk__mla_preprocess(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>, %cache: tensor<?x64x576xbf16>) -> (tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>) attributes {attn.kernel = "mla_preprocess", attn.layer = "dynamic_ntk"} {
  // expected-error @+1 {{'attn.mla_preprocess' op cannot be emitted: dynamic NTK rope scaling depends on the sequence length at run time, which the generated kernel does not take}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = dynamic, factor = 2.0>, schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>} : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>
}

// -----

// One inverse-frequency table: no longrope.
func.func @longrope__mla_preprocess(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>, %cache: tensor<?x64x576xbf16>) -> (tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>) attributes {attn.kernel = "mla_preprocess", attn.layer = "longrope"} {
  // expected-error @+1 {{'attn.mla_preprocess' op cannot be emitted: longrope scaling is not supported by the MLA preprocess kernel (one inverse-frequency table)}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = longrope, factor = 2.0, original_max_position = 4096, short_factor = array<f64: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>, long_factor = array<f64: 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0>>, schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>} : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return %lat, %qr, %c : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?x64x576xbf16>
}
