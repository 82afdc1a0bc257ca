// RUN: attn-opt %s -attn-prepare-emission -split-input-file -verify-diagnostics

// What the MLA decode kernel (attnc_mla_decode.cuh) does not take is refused
// by attn-prepare-emission with the rule.

// kv_lora_rank other than 512 (the output is two warpgroups of 256 columns).
func.func @rank256__latent_attention(%q: tensor<?x16x320xbf16>, %cache: tensor<?x64x320xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x256xbf16> attributes {attn.kernel = "latent_attention", attn.layer = "rank256"} {
  // expected-error @+1 {{'attn.latent_attention' op cannot be emitted: kv_lora_rank must be 512 (the MLA decode kernel's output width: two warpgroups of 256 columns), got 256}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts {kv_lora_rank = 256, softmax_scale = 0.1352 : f64, schedule = #attn.latent_attention_schedule<block_m = 64, block_n = 64, num_warps = 8, max_kv_splits = 32, target_ctas = 132>} : tensor<?x16x320xbf16>, tensor<?x64x320xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}

// -----

// A rope part that leaves a partial 64-value column block (512 + 32).
func.func @rope32__latent_attention(%q: tensor<?x16x544xbf16>, %cache: tensor<?x64x544xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x512xbf16> attributes {attn.kernel = "latent_attention", attn.layer = "rope32"} {
  // expected-error @+1 {{'attn.latent_attention' op cannot be emitted: kv_lora_rank + rope_head_dim (544) must be a multiple of 64 (128-byte swizzled column blocks)}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts {kv_lora_rank = 512, softmax_scale = 0.1352 : f64, schedule = #attn.latent_attention_schedule<block_m = 64, block_n = 64, num_warps = 8, max_kv_splits = 32, target_ctas = 132>} : tensor<?x16x544xbf16>, tensor<?x64x544xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x512xbf16>
  return %o : tensor<?x16x512xbf16>
}

// -----

// No schedule: attn-specialize has not run.
func.func @bare__latent_attention(%q: tensor<?x16x576xbf16>, %cache: tensor<?x64x576xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x512xbf16> attributes {attn.kernel = "latent_attention", attn.layer = "bare"} {
  // expected-error @+1 {{'attn.latent_attention' op cannot be emitted without a schedule (run attn-specialize first)}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts {kv_lora_rank = 512, softmax_scale = 0.1352 : f64} : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x512xbf16>
  return %o : tensor<?x16x512xbf16>
}
