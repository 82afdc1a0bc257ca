// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The schedule's verifier: the kernel's one tile, and no more splits than
// target CTAs.

func.func @tile(%q: tensor<?x16x576xbf16>, %cache: tensor<?x64x576xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x512xbf16> {
  // expected-error @+1 {{latent_attention_schedule needs block_m 64, block_n 64 and num_warps 8 (the kernel's tile: two warpgroups over 64 rows), got block_m 128, block_n 64, num_warps 8}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts {kv_lora_rank = 512, softmax_scale = 0.1352 : f64, schedule = #attn.latent_attention_schedule<block_m = 128, block_n = 64, num_warps = 8, max_kv_splits = 32, target_ctas = 132>} : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x512xbf16>
  return %o : tensor<?x16x512xbf16>
}

// -----

func.func @splits(%q: tensor<?x16x576xbf16>, %cache: tensor<?x64x576xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x512xbf16> {
  // expected-error @+1 {{latent_attention_schedule max_kv_splits (33) must be <= target_ctas (32)}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts {kv_lora_rank = 512, softmax_scale = 0.1352 : f64, schedule = #attn.latent_attention_schedule<block_m = 64, block_n = 64, num_warps = 8, max_kv_splits = 33, target_ctas = 32>} : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x512xbf16>
  return %o : tensor<?x16x512xbf16>
}

// -----

func.func @zero(%q: tensor<?x16x576xbf16>, %cache: tensor<?x64x576xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x512xbf16> {
  // expected-error @+1 {{latent_attention_schedule target_ctas must be >= 1, got 0}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts {kv_lora_rank = 512, softmax_scale = 0.1352 : f64, schedule = #attn.latent_attention_schedule<block_m = 64, block_n = 64, num_warps = 8, max_kv_splits = 1, target_ctas = 0>} : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x512xbf16>
  return %o : tensor<?x16x512xbf16>
}
