// RUN: attn-opt %s -attn-prepare-emission -split-input-file -verify-diagnostics

// What the MLA decode kernel (attnc_mla_decode.cuh) does not take is refused
// by attn-prepare-emission with the rule.

// kv_lora_rank not a multiple of 128 (each warpgroup keeps R / 2 output
// columns, whole 64-column blocks); 320 + 64 = 384 keeps whole column blocks
// of the row, so the rank is what is refused.
func.func @rank320__latent_attention(%q: tensor<?x16x384xbf16>, %cache: tensor<?x64x384xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x320xbf16> attributes {attn.kernel = "latent_attention", attn.layer = "rank320"} {
  // expected-error @+1 {{'attn.latent_attention' op cannot be emitted: kv_lora_rank must be a multiple of 128 from 128 to 512 (the MLA decode kernel's output width: two warpgroups of kv_lora_rank / 2 columns, whole 64-column blocks, one wgmma m64n(kv_lora_rank / 2)k16 each), got 320}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts {kv_lora_rank = 320, softmax_scale = 0.1352 : f64, schedule = #attn.latent_attention_schedule<block_m = 64, block_n = 64, num_warps = 8, max_kv_splits = 32, target_ctas = 132>} : tensor<?x16x384xbf16>, tensor<?x64x384xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x320xbf16>
  return %o : tensor<?x16x320xbf16>
}

// -----

// kv_lora_rank 64: below 128 (a warpgroup's half would be 32 columns).
func.func @rank64__latent_attention(%q: tensor<?x16x128xbf16>, %cache: tensor<?x64x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x64xbf16> attributes {attn.kernel = "latent_attention", attn.layer = "rank64"} {
  // expected-error @+1 {{kv_lora_rank must be a multiple of 128 from 128 to 512}}
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts {kv_lora_rank = 64, softmax_scale = 0.1352 : f64, schedule = #attn.latent_attention_schedule<block_m = 64, block_n = 64, num_warps = 8, max_kv_splits = 32, target_ctas = 132>} : tensor<?x16x128xbf16>, tensor<?x64x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x64xbf16>
  return %o : tensor<?x16x64xbf16>
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
