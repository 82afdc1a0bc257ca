// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the MLA ops (AttnOps.cpp's MLA section):
// attn.mla_preprocess, attn.latent_attention, attn.varlen_attention and
// attn.latent_gather. Each case is otherwise valid (H 4, kv_lora_rank 16,
// rope_head_dim 8: latent rows of 24), so the diagnostic is the rule's.

//===----------------------------------------------------------------------===//
// mla_preprocess
//===----------------------------------------------------------------------===//

func.func @pre_num_heads(%kv_a: tensor<?x24xbf16>, %q: tensor<?x0x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{'attn.mla_preprocess' op num_heads must be >= 1, got 0}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 0, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x0x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_kv_lora_rank(%kv_a: tensor<?x8xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<0xbf16>, %cache: tensor<?x64x8xbf16>) {
  // expected-error @+1 {{kv_lora_rank must be >= 1, got 0}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 0, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x8xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<0xbf16> into tensor<?x64x8xbf16>
  return
}

// -----

func.func @pre_rope_head_dim_small(%kv_a: tensor<?x16xbf16>, %q: tensor<?x4x0xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x16xbf16>) {
  // expected-error @+1 {{rope_head_dim must be >= 2, got 0}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 0, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x16xbf16>, tensor<?x4x0xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x16xbf16>
  return
}

// -----

func.func @pre_rope_head_dim_odd(%kv_a: tensor<?x23xbf16>, %q: tensor<?x4x7xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x23xbf16>) {
  // expected-error @+1 {{rope_head_dim must be even (rotated in pairs), got 7}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 7, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x23xbf16>, tensor<?x4x7xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x23xbf16>
  return
}

// -----

func.func @pre_kv_a_type(%kv_a: tensor<?x24xf64>, %q: tensor<?x4x8xf64>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xf64>, %cache: tensor<?x64x24xf64>) {
  // expected-error @+1 {{kv_a element type must be bf16, f16 or f32, got 'f64'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xf64>, tensor<?x4x8xf64>, tensor<?xi64>, tensor<?xi64>, tensor<16xf64> into tensor<?x64x24xf64>
  return
}

// -----

func.func @pre_kv_a_shape(%kv_a: tensor<?x23xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{kv_a must have shape [?, 24] (tokens x kv_lora_rank + rope_head_dim), got 'tensor<?x23xbf16>'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x23xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_q_rope_shape(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x16xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{q_rope must have shape [?, 4, 8] (tokens x num_heads x rope_head_dim), got 'tensor<?x4x16xbf16>'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x16xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_q_rope_type(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{q_rope element type ('f16') must equal the kv_a element type ('bf16')}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_q_rope_tokens(%kv_a: tensor<2x24xbf16>, %q: tensor<3x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{token count (dim 0) of q_rope (3) must equal that of kv_a (2)}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<2x24xbf16>, tensor<3x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_weight_shape(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<24xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{kv_norm_weight must have shape [16] (one weight per latent value), got 'tensor<24xbf16>'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<24xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_weight_type(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xf32>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{kv_norm_weight element type ('f32') must equal the kv_a element type ('bf16')}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xf32> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_slots_type(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xf32>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{slot_mapping must be a rank-1 tensor of i32 or i64, got 'tensor<?xf32>'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xf32>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_slots_tokens(%kv_a: tensor<2x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<3xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{token count (dim 0) of slot_mapping (3) must equal that of kv_a (2)}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<2x24xbf16>, tensor<?x4x8xbf16>, tensor<3xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_positions_rank(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?x1xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{positions must be a rank-1 tensor of i32 or i64, got 'tensor<?x1xi64>'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?x1xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_positions_tokens(%kv_a: tensor<2x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<5xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{token count (dim 0) of positions (5) must equal that of kv_a (2)}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<2x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<5xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_cache_shape(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x16xbf16>) {
  // expected-error @+1 {{latent_cache must have shape [?, ?, 24] (num_blocks x block_size x kv_lora_rank + rope_head_dim), got 'tensor<?x64x16xbf16>'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x16xbf16>
  return
}

// -----

func.func @pre_cache_rank(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x1x24xbf16>) {
  // expected-error @+1 {{latent_cache must have shape [?, ?, 24]}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x1x24xbf16>
  return
}

// -----

func.func @pre_cache_type(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xf16>) {
  // expected-error @+1 {{latent_cache element type must be the activation type ('bf16') or f8E4M3FN, got 'f16'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xf16>
  return
}

// -----

func.func @pre_fp8_without_scale(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xf8E4M3FN>) {
  // expected-error @+1 {{an f8E4M3FN latent_cache needs the cache_scale operand}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xf8E4M3FN>
  return
}

// -----

func.func @pre_scale_without_fp8(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{cache_scale is only allowed with an f8E4M3FN latent_cache, the cache is 'bf16'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache scale %s
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16> scale tensor<f32>
  return
}

// -----

func.func @pre_scale_type(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xf8E4M3FN>, %s: tensor<1xf32>) {
  // expected-error @+1 {{cache_scale must be tensor<f32>, got 'tensor<1xf32>'}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache scale %s
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xf8E4M3FN> scale tensor<1xf32>
  return
}

// -----

func.func @pre_norm_eps(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{norm_eps must be a positive finite number, got 0}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 0.0 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_latent_scale(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{latent_scale must be a positive finite number, got -2}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64, latent_scale = -2.0 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_deinterleave_neox(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{rope_deinterleave needs rope_style gptj (it reads interleaved pairs), got neox}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<neox>, theta = 1.0e4 : f64, rope_deinterleave = true}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_theta(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{theta must be a positive finite number, got 0}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 0.0 : f64}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

func.func @pre_longrope_lengths(%kv_a: tensor<?x24xbf16>, %q: tensor<?x4x8xbf16>, %slots: tensor<?xi64>,
    %pos: tensor<?xi64>, %w: tensor<16xbf16>, %cache: tensor<?x64x24xbf16>) {
  // expected-error @+1 {{longrope short_factor and long_factor must have rope_head_dim / 2 (4) values, got 2}}
  %l, %qr, %c = attn.mla_preprocess %kv_a, %q, %slots, %pos, %w into %cache
      {num_heads = 4, kv_lora_rank = 16, rope_head_dim = 8, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = longrope, factor = 32.0, original_max_position = 4096, short_factor = array<f64: 1.0, 1.0>, long_factor = array<f64: 2.0, 2.0>>}
      : tensor<?x24xbf16>, tensor<?x4x8xbf16>, tensor<?xi64>, tensor<?xi64>, tensor<16xbf16> into tensor<?x64x24xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// latent_attention
//===----------------------------------------------------------------------===//

func.func @lat_kv_lora_rank(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{'attn.latent_attention' op kv_lora_rank must be >= 1, got 0}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 0, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x0xbf16>
  return
}

// -----

func.func @lat_query_rank(%q: tensor<?x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{query must have rank 3 [tokens, num_heads, kv_lora_rank + rope_head_dim], got 'tensor<?x24xbf16>'}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_query_type(%q: tensor<?x4x24xi16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{query element type must be bf16, f16 or f32, got 'i16'}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xi16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_query_width(%q: tensor<?x4x16xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{query head dim (16) must exceed kv_lora_rank (16): it is kv_lora_rank + rope_head_dim}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x16xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_cache_width(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x32xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{latent_cache must have shape [?, ?, 24] (num_blocks x block_size x kv_lora_rank + rope_head_dim), got 'tensor<?x64x32xbf16>'}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x32xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_cache_type(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xf32>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{latent_cache element type must be the activation type ('bf16') or f8E4M3FN, got 'f32'}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_fp8_without_scale(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xf8E4M3FN>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{an f8E4M3FN latent_cache needs the cache_scale operand}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_scale_without_fp8(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>, %s: tensor<f32>) {
  // expected-error @+1 {{cache_scale is only allowed with an f8E4M3FN latent_cache}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts scale %s
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> scale tensor<f32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_output_shape(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{output must have shape [?, 4, 16] (tokens x num_heads x kv_lora_rank), got 'tensor<?x4x24xbf16>'}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x24xbf16>
  return
}

// -----

func.func @lat_output_heads(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{output must have shape [?, 4, 16]}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @lat_output_type(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{output element type ('f16') must equal the query element type ('bf16')}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xf16>
  return
}

// -----

func.func @lat_tables(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{block_tables must be a rank-2 tensor of i32 or i64, got 'tensor<?xi32>'}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_seq_lens(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xf32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{seq_lens must be a rank-1 tensor of i32 or i64, got 'tensor<?xf32>'}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xf32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_starts(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?x2xi32>) {
  // expected-error @+1 {{query_start_loc must be a rank-1 tensor of i32 or i64, got 'tensor<?x2xi32>'}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x2xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_seq_count(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<3x?xi32>,
    %lens: tensor<4xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{sequence count (dim 0) of seq_lens (4) must equal that of block_tables (3)}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<3x?xi32>, tensor<4xi32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_starts_count(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<4xi32>, %starts: tensor<4xi32>) {
  // expected-error @+1 {{query_start_loc must have one more entry than seq_lens (5), got 4}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.125 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<4xi32>, tensor<4xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

func.func @lat_softmax_scale(%q: tensor<?x4x24xbf16>, %cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %lens: tensor<?xi32>, %starts: tensor<?xi32>) {
  // expected-error @+1 {{softmax_scale must be a positive finite number, got 0}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 16, softmax_scale = 0.0 : f64}
      : tensor<?x4x24xbf16>, tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// varlen_attention
//===----------------------------------------------------------------------===//

func.func @var_query_rank(%q: tensor<?x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{'attn.varlen_attention' op query must have rank 3 [tokens, heads, head_dim], got 'tensor<?x24xbf16>'}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x24xbf16>, tensor<?x8x24xbf16>, tensor<?x8x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_key_rank(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x1x24xbf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{key must have rank 3 [tokens, heads, head_dim]}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x1x24xbf16>, tensor<?x8x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_value_rank(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{value must have rank 3 [tokens, heads, head_dim]}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xbf16>, tensor<?x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_query_type(%q: tensor<?x8x24xf64>, %k: tensor<?x8x24xf64>, %v: tensor<?x8x16xf64>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{query element type must be bf16, f16 or f32, got 'f64'}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xf64>, tensor<?x8x24xf64>, tensor<?x8x16xf64>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xf64>
  return
}

// -----

func.func @var_key_type(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{key element type ('f16') must equal the query element type ('bf16')}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xf16>, tensor<?x8x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_value_type(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x8x16xf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{value element type ('f16') must equal the query element type ('bf16')}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xbf16>, tensor<?x8x16xf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_kv_tokens(%q: tensor<?x8x24xbf16>, %k: tensor<10x8x24xbf16>, %v: tensor<12x8x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{token count (dim 0) of key (10) must equal that of value (12)}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<10x8x24xbf16>, tensor<12x8x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_kv_heads(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x4x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{num_kv_heads (dim 1) of key (8) must equal that of value (4)}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xbf16>, tensor<?x4x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_qk_dim(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x32xbf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{qk_head_dim (dim 2) of key (32) must equal that of query (24)}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x32xbf16>, tensor<?x8x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_gqa(%q: tensor<?x8x24xbf16>, %k: tensor<?x3x24xbf16>, %v: tensor<?x3x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{num_q_heads (query dim 1, 8) must be divisible by num_kv_heads (key dim 1, 3)}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x3x24xbf16>, tensor<?x3x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_output_shape(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{output must have shape [?, 8, 16] (tokens_q x num_q_heads x v_head_dim), got 'tensor<?x8x24xbf16>'}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xbf16>, tensor<?x8x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x24xbf16>
  return
}

// -----

func.func @var_output_type(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{output element type ('f32') must equal the query element type ('bf16')}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xbf16>, tensor<?x8x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xf32>
  return
}

// -----

func.func @var_cu_q(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<?xi16>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{cu_seqlens_q must be a rank-1 tensor of i32 or i64, got 'tensor<?xi16>'}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xbf16>, tensor<?x8x16xbf16>, tensor<?xi16>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_cu_k(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?x?xi32>) {
  // expected-error @+1 {{cu_seqlens_k must be a rank-1 tensor of i32 or i64, got 'tensor<?x?xi32>'}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xbf16>, tensor<?x8x16xbf16>, tensor<?xi32>, tensor<?x?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_cu_count(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<5xi32>,
    %cu_k: tensor<4xi32>) {
  // expected-error @+1 {{sequence count + 1 (dim 0) of cu_seqlens_q (5) must equal that of cu_seqlens_k (4)}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xbf16>, tensor<?x8x16xbf16>, tensor<5xi32>, tensor<4xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

func.func @var_softmax_scale(%q: tensor<?x8x24xbf16>, %k: tensor<?x8x24xbf16>, %v: tensor<?x8x16xbf16>, %cu_q: tensor<?xi32>,
    %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{softmax_scale must be a positive finite number, got -1}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = -1.0 : f64}
      : tensor<?x8x24xbf16>, tensor<?x8x24xbf16>, tensor<?x8x16xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x16xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// latent_gather
//===----------------------------------------------------------------------===//

func.func @gat_output_rank(%cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %cu: tensor<?xi32>) {
  // expected-error @+1 {{'attn.latent_gather' op output must have rank 2 [tokens, kv_lora_rank + rope_head_dim], got 'tensor<?x1x24xbf16>'}}
  %rows = attn.latent_gather %cache, %tables, %cu
      : tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x1x24xbf16>
  return
}

// -----

func.func @gat_output_type(%cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %cu: tensor<?xi32>) {
  // expected-error @+1 {{output element type must be bf16, f16 or f32, got 'i32'}}
  %rows = attn.latent_gather %cache, %tables, %cu
      : tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x24xi32>
  return
}

// -----

func.func @gat_cache_width(%cache: tensor<?x64x26xbf16>, %tables: tensor<?x?xi32>,
    %cu: tensor<?xi32>) {
  // expected-error @+1 {{latent_cache must have shape [?, ?, 24]}}
  %rows = attn.latent_gather %cache, %tables, %cu
      : tensor<?x64x26xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x24xbf16>
  return
}

// -----

func.func @gat_cache_type(%cache: tensor<?x64x24xf16>, %tables: tensor<?x?xi32>,
    %cu: tensor<?xi32>) {
  // expected-error @+1 {{latent_cache element type must be the activation type ('bf16') or f8E4M3FN, got 'f16'}}
  %rows = attn.latent_gather %cache, %tables, %cu
      : tensor<?x64x24xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x24xbf16>
  return
}

// -----

func.func @gat_fp8_without_scale(%cache: tensor<?x64x24xf8E4M3FN>, %tables: tensor<?x?xi32>,
    %cu: tensor<?xi32>) {
  // expected-error @+1 {{an f8E4M3FN latent_cache needs the cache_scale operand}}
  %rows = attn.latent_gather %cache, %tables, %cu
      : tensor<?x64x24xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x24xbf16>
  return
}

// -----

func.func @gat_scale_without_fp8(%cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %cu: tensor<?xi32>, %s: tensor<f32>) {
  // expected-error @+1 {{cache_scale is only allowed with an f8E4M3FN latent_cache}}
  %rows = attn.latent_gather %cache, %tables, %cu scale %s
      : tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?xi32> scale tensor<f32> -> tensor<?x24xbf16>
  return
}

// -----

func.func @gat_scale_type(%cache: tensor<?x64x24xf8E4M3FN>, %tables: tensor<?x?xi32>,
    %cu: tensor<?xi32>, %s: tensor<f16>) {
  // expected-error @+1 {{cache_scale must be tensor<f32>, got 'tensor<f16>'}}
  %rows = attn.latent_gather %cache, %tables, %cu scale %s
      : tensor<?x64x24xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32> scale tensor<f16> -> tensor<?x24xbf16>
  return
}

// -----

func.func @gat_tables(%cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xf32>,
    %cu: tensor<?xi32>) {
  // expected-error @+1 {{block_tables must be a rank-2 tensor of i32 or i64, got 'tensor<?x?xf32>'}}
  %rows = attn.latent_gather %cache, %tables, %cu
      : tensor<?x64x24xbf16>, tensor<?x?xf32>, tensor<?xi32> -> tensor<?x24xbf16>
  return
}

// -----

func.func @gat_cu(%cache: tensor<?x64x24xbf16>, %tables: tensor<?x?xi32>,
    %cu: tensor<?x?xi32>) {
  // expected-error @+1 {{cu_seqlens must be a rank-1 tensor of i32 or i64, got 'tensor<?x?xi32>'}}
  %rows = attn.latent_gather %cache, %tables, %cu
      : tensor<?x64x24xbf16>, tensor<?x?xi32>, tensor<?x?xi32> -> tensor<?x24xbf16>
  return
}

// -----

func.func @gat_cu_count(%cache: tensor<?x64x24xbf16>, %tables: tensor<3x?xi32>,
    %cu: tensor<3xi32>) {
  // expected-error @+1 {{cu_seqlens must have one more entry than block_tables has rows (4), got 3}}
  %rows = attn.latent_gather %cache, %tables, %cu
      : tensor<?x64x24xbf16>, tensor<3x?xi32>, tensor<3xi32> -> tensor<?x24xbf16>
  return
}
