// RUN: not attn-translate --attn-to-cuda %s -split-input-file 2>&1 | FileCheck %s

// The printer takes the emission attribute as attn-prepare-emission wrote
// it; one written by hand that does not fit the op is an error, not a
// kernel that reads a gate segment at a made-up offset. Here the kernel
// outputs the gate, but the attribute has no gate offsets.
// CHECK: error: 'attn.fused_preprocess' op attn.emission has gate_offset and gate_head_stride exactly when the kernel outputs the gate
func.func @nogate__preprocess(%qkv: tensor<?x30xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x4x3xbf16>) attributes {attn.kernel = "preprocess", attn.layer = "nogate"} {
  %q, %kc2, %vc2, %g = attn.fused_preprocess %qkv, %slots into %kc, %vc {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>, stages = [], schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>, attn.emission = #attn.preprocess_emission<activation = "bf16", cache = "bf16", block_size = 16, fused_width = 30, q_offset = 0, q_head_stride = 2, k_offset = 8, v_offset = 12>} : tensor<?x30xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> -> tensor<?x4x2xbf16>, tensor<?x4x3xbf16>
  return %q, %kc2, %vc2, %g : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x4x3xbf16>
}

// -----

// Rope with a table of the wrong length (rotary_dim 2 has one frequency).
// CHECK: error: 'attn.fused_preprocess' op attn.emission has inv_freq (rotary_dim / 2 values) exactly when the kernel has rope
func.func @table__preprocess(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %pos: tensor<?xi64>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) attributes {attn.kernel = "preprocess", attn.layer = "table"} {
  %q, %kc2, %vc2 = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, stages = [#attn.stage<rope>], rope_style = #attn.rope_style<neox>, rotary_dim = 2, rotary_offset = 0, theta = 100.0 : f64, schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>, attn.emission = #attn.preprocess_emission<activation = "bf16", cache = "bf16", block_size = 16, fused_width = 18, q_offset = 0, q_head_stride = 2, k_offset = 8, v_offset = 12, inv_freq = array<f64: 1.0, 0.5>>} : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> positions tensor<?xi64> -> tensor<?x4x2xbf16>
  return %q, %kc2, %vc2 : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}

// -----

// A kernel function must name the layer it came from (found by fuzzing:
// the printer read a missing attn.layer).
// CHECK: error: 'func.func' op is a kernel function without a string attn.layer (the layer function it was outlined from)
func.func @nolayer__preprocess(%qkv: tensor<?x30xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %pos: tensor<?xi64>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x4x3xbf16>) attributes {attn.kernel = "preprocess", attn.layers = "ok"} {
  %q, %kc2, %vc2, %g = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>, stages = [#attn.stage<rope>], rope_style = #attn.rope_style<neox>, rotary_dim = 2, rotary_offset = 0, theta = 100.0 : f64, schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>} : tensor<?x30xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> positions tensor<?xi64> -> tensor<?x4x2xbf16>, tensor<?x4x3xbf16>
  return %q, %kc2, %vc2, %g : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x4x3xbf16>
}

// -----

// The kernel function's name is the extern "C" entry point (found by
// fuzzing: a layer function with a dot in its name gave an entry point the
// runtime refuses).
// CHECK: error: 'func.func' op is a kernel function whose name is not a C identifier (it is the CUDA entry point)
func.func @"not.c__preprocess"(%qkv: tensor<?x30xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %pos: tensor<?xi64>) -> (tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x4x3xbf16>) attributes {attn.kernel = "preprocess", attn.layer = "not.c"} {
  %q, %kc2, %vc2, %g = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>, stages = [#attn.stage<rope>], rope_style = #attn.rope_style<neox>, rotary_dim = 2, rotary_offset = 0, theta = 100.0 : f64, schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>} : tensor<?x30xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16> positions tensor<?xi64> -> tensor<?x4x2xbf16>, tensor<?x4x3xbf16>
  return %q, %kc2, %vc2, %g : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x4x3xbf16>
}
