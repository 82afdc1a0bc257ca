// RUN: attn-opt %s -attn-prepare-emission -split-input-file -verify-diagnostics | FileCheck %s

// A prepared preprocess kernel carries every derived number: layout offsets
// from the layout library (2/3 with a qkvg gate: q 0..8, k 8..12, v 12..18,
// gate 18..30), and the rope table (theta 100, rotary_dim 2: one frequency,
// 100^0 = 1).
// CHECK-LABEL: func.func @ok__preprocess
// CHECK: attn.emission = #attn.preprocess_emission<activation = "bf16", cache = "bf16", block_size = 16, fused_width = 30, q_offset = 0, q_head_stride = 2, k_offset = 8, v_offset = 12, gate_offset = 18, gate_head_stride = 3, inv_freq = array<f64: 1.000000e+00>>
func.func @ok__preprocess(%qkv: tensor<?x30xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %pos: tensor<?xi64>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x4x3xbf16>) attributes {attn.kernel = "preprocess", attn.layer = "ok"} {
  %q, %kc2, %vc2, %g = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>, stages = [#attn.stage<rope>], rope_style = #attn.rope_style<neox>, rotary_dim = 2, rotary_offset = 0, theta = 100.0 : f64, schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>} : tensor<?x30xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> positions tensor<?xi64> -> tensor<?x4x2xbf16>, tensor<?x4x3xbf16>
  return %q, %kc2, %vc2, %g : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x4x3xbf16>
}

// -----

// Attention: the GQA group and the softmax scale in log2 units
// (0.5 * log2(e) = 0.72134752044448169).
// CHECK-LABEL: func.func @ok__attention
// CHECK: attn.emission = #attn.attention_emission<activation = "fp16", cache = "fp16", block_size = 16, group_size = 2, scale_log2 = 0.72134752044448169>
func.func @ok__attention(%q: tensor<?x4x2xf16>, %kc: tensor<?x16x2x2xf16>, %vc: tensor<?x16x2x3xf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x3xf16> attributes {attn.kernel = "attention", attn.layer = "ok"} {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x4x2xf16>, tensor<?x16x2x2xf16>, tensor<?x16x2x3xf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xf16>
  return %o : tensor<?x4x3xf16>
}

// -----

func.func @unscheduled__attention(%q: tensor<?x4x2xbf16>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x3xbf16> attributes {attn.kernel = "attention", attn.layer = "x"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted without a schedule (run attn-specialize first)}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  return %o : tensor<?x4x3xbf16>
}

// -----

func.func @f32__attention(%q: tensor<?x4x2xf32>, %kc: tensor<?x16x2x2xf32>, %vc: tensor<?x16x2x3xf32>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x3xf32> attributes {attn.kernel = "attention", attn.layer = "x"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: activation type 'f32' is not supported (bf16 or f16)}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x4x2xf32>, tensor<?x16x2x2xf32>, tensor<?x16x2x3xf32>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xf32>
  return %o : tensor<?x4x3xf32>
}

// -----

func.func @i64_tables__attention(%q: tensor<?x4x2xbf16>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %tables: tensor<?x?xi64>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x3xbf16> attributes {attn.kernel = "attention", attn.layer = "x"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: block_tables must hold i32, got 'i64'}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x?xi64>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  return %o : tensor<?x4x3xbf16>
}

// -----

func.func @dynamic_block__attention(%q: tensor<?x4x2xbf16>, %kc: tensor<?x?x2x2xbf16>, %vc: tensor<?x?x2x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x3xbf16> attributes {attn.kernel = "attention", attn.layer = "x"} {
  // expected-error @+1 {{'attn.paged_attention' op cannot be emitted: k_cache dim 1 is dynamic, but head counts, head dims and the cache block size are baked into the kernel}}
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x4x2xbf16>, tensor<?x?x2x2xbf16>, tensor<?x?x2x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  return %o : tensor<?x4x3xbf16>
}

// -----

// Dynamic NTK scaling depends on the sequence length at run time.
func.func @dynamic_rope__preprocess(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %pos: tensor<?xi64>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) attributes {attn.kernel = "preprocess", attn.layer = "x"} {
  // expected-error @+1 {{'attn.fused_preprocess' op cannot be emitted: dynamic NTK rope scaling depends on the sequence length at run time}}
  %q, %kc2, %vc2 = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, stages = [#attn.stage<rope>], rope_style = #attn.rope_style<neox>, rotary_dim = 2, rotary_offset = 0, theta = 100.0 : f64, scaling = #attn.rope_scaling<kind = dynamic, factor = 2.0>, schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>} : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> positions tensor<?xi64> -> tensor<?x4x2xbf16>
  return %q, %kc2, %vc2 : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}

// -----

// A pair layout the op cannot have: the rotation covers the whole 2-dim
// head, but its one half-head element is not a multiple of 1 x 4 lanes.
func.func @bad_pair__preprocess(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %pos: tensor<?xi64>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) attributes {attn.kernel = "preprocess", attn.layer = "x"} {
  // expected-error @+1 {{'attn.fused_preprocess' op cannot be emitted: the schedule's pair_layout needs a neox rope over the whole q/k head (rotary_offset 0, rotary_dim 2) whose half (1 elements) is a multiple of vector_width (1) x threads_per_head (4)}}
  %q, %kc2, %vc2 = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, stages = [#attn.stage<rope>], rope_style = #attn.rope_style<neox>, rotary_dim = 2, rotary_offset = 0, theta = 100.0 : f64, schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 2, pair_layout = true, prefetch = 1>} : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> positions tensor<?xi64> -> tensor<?x4x2xbf16>
  return %q, %kc2, %vc2 : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}

// -----

// A pair layout without a rope.
func.func @pair_no_rope__preprocess(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) attributes {attn.kernel = "preprocess", attn.layer = "x"} {
  // expected-error @+1 {{'attn.fused_preprocess' op cannot be emitted: the schedule's pair_layout needs a neox rope over the whole q/k head}}
  %q, %kc2, %vc2 = attn.fused_preprocess %qkv, %slots into %kc, %vc {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, stages = [], schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 1, threads_per_block = 32, heads_per_block = 32, tokens_per_block = 4, min_blocks_per_sm = 20, pair_layout = true, prefetch = 1>} : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> -> tensor<?x4x2xbf16>
  return %q, %kc2, %vc2 : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}

// -----

// A kernel function whose body is not its kind's op.
// expected-error @+1 {{'func.func' op is a preprocess kernel without an attn.fused_preprocess}}
func.func @empty__preprocess() attributes {attn.kernel = "preprocess", attn.layer = "x"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has unknown attn.kernel kind 'softmax'}}
func.func @odd() attributes {attn.kernel = "softmax"} {
  return
}

// -----

// Layer form, not kernel form.
// expected-error @+1 {{no kernel functions to emit (run attn-outline-kernels first)}}
module {
  func.func @layer() {
    return
  }
}

// -----

// A projection-scope norm after the rope: the kernel takes the token's
// statistics before any head is rotated.
func.func @projection_after_rope__preprocess(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %pos: tensor<?xi64>, %qw: tensor<8xbf16>, %kw: tensor<4xbf16>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) attributes {attn.kernel = "preprocess", attn.layer = "x"} {
  // expected-error @+1 {{'attn.fused_preprocess' op cannot be emitted: norm_scope projection after rope (the kernel takes a token's statistics over the whole projection before rotating any head)}}
  %q, %kc2, %vc2 = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos q_norm_weight %qw k_norm_weight %kw {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, stages = [#attn.stage<rope>, #attn.stage<q_norm>, #attn.stage<k_norm>], norm_style = #attn.norm_style<rms>, norm_eps = 1.0e-06 : f64, norm_scope = #attn.norm_scope<projection>, rope_style = #attn.rope_style<gptj>, rotary_dim = 2, rotary_offset = 0, theta = 100.0 : f64, schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>} : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> positions tensor<?xi64> q_norm_weight tensor<8xbf16> k_norm_weight tensor<4xbf16> -> tensor<?x4x2xbf16>
  return %q, %kc2, %vc2 : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}

// -----

// The kernel reads the norm weights (and biases) as the activation type.
func.func @bias_type__preprocess(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %qw: tensor<2xf32>, %qb: tensor<2xf32>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) attributes {attn.kernel = "preprocess", attn.layer = "x"} {
  // expected-error @+1 {{'attn.fused_preprocess' op cannot be emitted: q_norm_weight element type 'f32' must be the activation type 'bf16'}}
  %q, %kc2, %vc2 = attn.fused_preprocess %qkv, %slots into %kc, %vc q_norm_weight %qw q_norm_bias %qb {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, stages = [#attn.stage<q_norm>], norm_style = #attn.norm_style<layernorm>, norm_eps = 1.0e-05 : f64, schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>} : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> q_norm_weight tensor<2xf32> q_norm_bias tensor<2xf32> -> tensor<?x4x2xbf16>
  return %q, %kc2, %vc2 : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}
