// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The rules of #attn.mla_preprocess_schedule (AttnOps.cpp), one case each.

// Every count is positive.
func.func @zero_warps(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>) {
  // expected-error @+4 {{mla_preprocess_schedule warps_per_token must be >= 1, got 0}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64,
       schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 0, tokens_per_block = 2, threads_per_block = 64, min_blocks_per_sm = 8>}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return
}

// -----

// One access of a power-of-two count of elements, at most 16.
func.func @width_not_power_of_two(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>) {
  // expected-error @+4 {{mla_preprocess_schedule vector_width must be a power of two <= 16 (one access of at most 16 bytes), got 6}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64,
       schedule = #attn.mla_preprocess_schedule<vector_width = 6, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 8>}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return
}

// -----

// threads_per_block is the latent warp and the query warps of every token.
func.func @threads_mismatch(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>) {
  // expected-error @+4 {{mla_preprocess_schedule threads_per_block must be 32 x (warps_per_token + 1) x tokens_per_block (128), got 256}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64,
       schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 256, min_blocks_per_sm = 8>}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return
}

// -----

// A CUDA block has at most 1024 threads.
func.func @too_many_threads(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>) {
  // expected-error @+4 {{mla_preprocess_schedule threads_per_block must be <= 1024, got 2048}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64,
       schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 7, tokens_per_block = 8, threads_per_block = 2048, min_blocks_per_sm = 1>}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return
}

// -----

// A token place handles at least one token.
func.func @zero_steps(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>) {
  // expected-error @+4 {{mla_preprocess_schedule token_steps must be >= 1, got 0}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64,
       schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 7, token_steps = 0>}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return
}

// -----

// The steps are unrolled: at most 8.
func.func @too_many_steps(%kv_a: tensor<?x576xbf16>, %q_pe: tensor<?x16x64xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<512xbf16>,
    %cache: tensor<?x64x576xbf16>) {
  // expected-error @+4 {{mla_preprocess_schedule token_steps must be <= 8, got 9}}
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {num_heads = 16, kv_lora_rank = 512, rope_head_dim = 64,
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>, theta = 1.0e4 : f64,
       schedule = #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 1, tokens_per_block = 2, threads_per_block = 128, min_blocks_per_sm = 7, token_steps = 9>}
      : tensor<?x576xbf16>, tensor<?x16x64xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
  return
}
