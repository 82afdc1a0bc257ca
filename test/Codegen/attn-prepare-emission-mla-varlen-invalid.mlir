// RUN: attn-opt %s -attn-prepare-emission -split-input-file -verify-diagnostics

// What varlen_attention's and latent_gather's kernels cannot take is an
// error at attn-prepare-emission, naming the operand or the rule.

// The kernel reads the cumulative counts as int32.
func.func @i64_cu__varlen_attention(%q: tensor<?x16x192xbf16>, %k: tensor<?x16x192xbf16>, %v: tensor<?x16x128xbf16>, %cu_q: tensor<?xi64>, %cu_k: tensor<?xi64>) -> tensor<?x16x128xbf16> attributes {attn.kernel = "varlen_attention", attn.layer = "i64_cu"} {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be emitted: cu_seqlens_q must hold i32, got 'i64'}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1352 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">} : tensor<?x16x192xbf16>, tensor<?x16x192xbf16>, tensor<?x16x128xbf16>, tensor<?xi64>, tensor<?xi64> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// The CUDA-core form reads pages only (attn-specialize never chooses it for
// varlen_attention; a hand-written schedule can).
func.func @cuda_core__varlen_attention(%q: tensor<?x8x64xbf16>, %k: tensor<?x8x64xbf16>, %v: tensor<?x8x64xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<?x8x64xbf16> attributes {attn.kernel = "varlen_attention", attn.layer = "cuda_core"} {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be emitted: varlen_attention has the tensor-core form only, the schedule says form = cuda_core}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, form = cuda_core>} : tensor<?x8x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

// The tensor-core template's one tiling, as for paged attention.
func.func @tiling__varlen_attention(%q: tensor<?x8x64xbf16>, %k: tensor<?x8x64xbf16>, %v: tensor<?x8x64xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<?x8x64xbf16> attributes {attn.kernel = "varlen_attention", attn.layer = "tiling"} {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be emitted: the tensor-core form needs block_m 128, block_n 64, num_warps 4 and pipeline_stages 2, got 64, 64, 4 and 2}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64, schedule = #attn.attention_schedule<block_m = 64, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 64, v_dim_padded = 64, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x8x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

func.func @unscheduled__varlen_attention(%q: tensor<?x8x64xbf16>, %k: tensor<?x8x64xbf16>, %v: tensor<?x8x64xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<?x8x64xbf16> attributes {attn.kernel = "varlen_attention", attn.layer = "unscheduled"} {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be emitted without a schedule (run attn-specialize first)}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64} : tensor<?x8x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

func.func @i64_tables__latent_gather(%cache: tensor<?x64x576xbf16>, %tables: tensor<?x?xi64>, %cu: tensor<?xi32>) -> tensor<?x576xbf16> attributes {attn.kernel = "latent_gather", attn.layer = "i64_tables"} {
  // expected-error @+1 {{'attn.latent_gather' op cannot be emitted: block_tables must hold i32, got 'i64'}}
  %rows = attn.latent_gather %cache, %tables, %cu : tensor<?x64x576xbf16>, tensor<?x?xi64>, tensor<?xi32> -> tensor<?x576xbf16>
  return %rows : tensor<?x576xbf16>
}

// -----

// The row width and the block size are baked into the kernel.
func.func @dynamic_width__latent_gather(%cache: tensor<?x64x?xbf16>, %tables: tensor<?x?xi32>, %cu: tensor<?xi32>) -> tensor<?x?xbf16> attributes {attn.kernel = "latent_gather", attn.layer = "dynamic_width"} {
  // expected-error @+1 {{'attn.latent_gather' op cannot be emitted: latent_cache dim 2 is dynamic, but head counts, head dims and the cache block size are baked into the kernel}}
  %rows = attn.latent_gather %cache, %tables, %cu : tensor<?x64x?xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x?xbf16>
  return %rows : tensor<?x?xbf16>
}

// -----

// The warp-specialised form computes a row tile's keys in one block: a
// hand-written schedule with split-KV is refused.
func.func @ws_splits__varlen_attention(%q: tensor<?x16x192xbf16>, %k: tensor<?x16x192xbf16>, %v: tensor<?x16x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<?x16x128xbf16> attributes {attn.kernel = "varlen_attention", attn.layer = "ws_splits"} {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be emitted: the warp-specialised form needs block_m 128, num_warps 12 and max_kv_splits 1, got 128, 12 and 64}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1352 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma_ws">} : tensor<?x16x192xbf16>, tensor<?x16x192xbf16>, tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o : tensor<?x16x128xbf16>
}

// -----

// A hand-written warp-specialised schedule whose stages do not fit: Q
// (2 x 64 rows of 128), 4 stages of 128 K and 128 V rows of 128, barriers.
func.func @ws_stages__varlen_attention(%q: tensor<?x32x128xbf16>, %k: tensor<?x8x128xbf16>, %v: tensor<?x8x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> tensor<?x32x128xbf16> attributes {attn.kernel = "varlen_attention", attn.layer = "ws_stages"} {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be emitted: the warp-specialised form's shared memory (Q, pipeline_stages 4 of block_n 128 K and V rows, barriers) is 295072 bytes, over the 232448 a block may have}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.088 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 12, pipeline_stages = 4, qk_dim_padded = 128, v_dim_padded = 128, gqa_pack = 4, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">} : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o : tensor<?x32x128xbf16>
}
