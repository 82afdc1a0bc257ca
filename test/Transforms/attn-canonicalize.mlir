// RUN: attn-opt %s -attn-canonicalize -split-input-file | FileCheck %s

// Identity rope (rotary_dim 0) folds to its input.
// CHECK-LABEL: func.func @identity_rope
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x8xbf16>, %{{.*}}: tensor<?xi64>)
// CHECK-NOT: attn.rope
// CHECK: return %[[Q]]
func.func @identity_rope(%q: tensor<?x4x8xbf16>, %pos: tensor<?xi64>) -> tensor<?x4x8xbf16> {
  %r = attn.rope %q, %pos {rotary_dim = 0 : i64, theta = 1.0e4 : f64} : tensor<?x4x8xbf16>, tensor<?xi64>
  return %r : tensor<?x4x8xbf16>
}

// -----

// A rope that rotates something stays, even a partial one at an offset.
// CHECK-LABEL: func.func @real_rope
// CHECK: attn.rope %{{.*}} {rotary_dim = 2 : i64, rotary_offset = 6 : i64
func.func @real_rope(%q: tensor<?x4x8xbf16>, %pos: tensor<?xi64>) -> tensor<?x4x8xbf16> {
  %r = attn.rope %q, %pos {rotary_dim = 2 : i64, rotary_offset = 6 : i64, theta = 1.0e4 : f64} : tensor<?x4x8xbf16>, tensor<?xi64>
  return %r : tensor<?x4x8xbf16>
}

// -----

// A gate of sigmoid 1 (splat >= 64) is the identity.
// CHECK-LABEL: func.func @trivial_gate
// CHECK-SAME: (%[[O:.*]]: tensor<2x4x3xbf16>)
// CHECK-NOT: attn.output_gate
// CHECK: return %[[O]]
func.func @trivial_gate(%o: tensor<2x4x3xbf16>) -> tensor<2x4x3xbf16> {
  %g = arith.constant dense<1.0e4> : tensor<2x4x3xbf16>
  %y = attn.output_gate %o, %g : tensor<2x4x3xbf16>
  return %y : tensor<2x4x3xbf16>
}

// -----

// A constant gate whose sigmoid is not 1 (here 0.5) still gates.
// CHECK-LABEL: func.func @constant_gate_kept
// CHECK: attn.output_gate
func.func @constant_gate_kept(%o: tensor<2x4x3xbf16>) -> tensor<2x4x3xbf16> {
  %g = arith.constant dense<0.0> : tensor<2x4x3xbf16>
  %y = attn.output_gate %o, %g : tensor<2x4x3xbf16>
  return %y : tensor<2x4x3xbf16>
}

// -----

// A gate computed at run time is kept.
// CHECK-LABEL: func.func @dynamic_gate_kept
// CHECK: attn.output_gate %arg0, %arg1
func.func @dynamic_gate_kept(%o: tensor<?x4x3xbf16>, %g: tensor<?x4x3xbf16>) -> tensor<?x4x3xbf16> {
  %y = attn.output_gate %o, %g : tensor<?x4x3xbf16>
  return %y : tensor<?x4x3xbf16>
}

// -----

// An unused gate result of qkv_split is dropped; the layout (and so the
// fused width, 2*2 + 1*2 + 1*3 + 2*3 = 15) is kept.
// CHECK-LABEL: func.func @unused_split_gate
// CHECK: %q, %k, %v = attn.qkv_split %arg0 {gate_layout = #attn.gate_layout<qkvg>, num_kv_heads = 1 : i64, num_q_heads = 2 : i64, qk_head_dim = 2 : i64, v_head_dim = 3 : i64} : tensor<?x15xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>{{$}}
func.func @unused_split_gate(%qkv: tensor<?x15xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>} : tensor<?x15xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?x2x3xbf16>
  return %q, %k, %v : tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
}

// -----

// A used gate result stays.
// CHECK-LABEL: func.func @used_split_gate
// CHECK: %q, %k, %v, %gate = attn.qkv_split
func.func @used_split_gate(%qkv: tensor<?x15xbf16>) -> tensor<?x2x3xbf16> {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>} : tensor<?x15xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?x2x3xbf16>
  return %g : tensor<?x2x3xbf16>
}

// -----

// Dead attn ops (no used result) are erased; live ones are not.
// CHECK-LABEL: func.func @dead_results
// CHECK-NOT: attn.rms_norm %arg0, %arg2
// CHECK: %[[LIVE:.*]] = attn.rms_norm %arg1, %arg2
// CHECK-NOT: attn.rms_norm
// CHECK: return %[[LIVE]]
func.func @dead_results(%a: tensor<?x4x8xbf16>, %b: tensor<?x4x8xbf16>, %w: tensor<8xbf16>) -> tensor<?x4x8xbf16> {
  %dead = attn.rms_norm %a, %w {eps = 1.0e-6 : f64} : tensor<?x4x8xbf16>, tensor<8xbf16>
  %live = attn.rms_norm %b, %w {eps = 1.0e-6 : f64} : tensor<?x4x8xbf16>, tensor<8xbf16>
  return %live : tensor<?x4x8xbf16>
}

// -----

// An unused gate output of fused_preprocess is dropped; the rest stays.
// CHECK-LABEL: func.func @unused_fused_gate
// CHECK: %q, %k_cache_out, %v_cache_out = attn.fused_preprocess
// CHECK-SAME: -> tensor<?x2x2xbf16>{{$}}
func.func @unused_fused_gate(%qkv: tensor<?x15xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %kc2, %vc2, %g = attn.fused_preprocess %qkv, %slots into %kc, %vc {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>, stages = []} : tensor<?x15xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16> -> tensor<?x2x2xbf16>, tensor<?x2x3xbf16>
  return %q, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Ops of other dialects are not this pass's business: a foldable arith op
// is left alone.
// CHECK-LABEL: func.func @other_dialects_untouched
// CHECK: arith.addi
func.func @other_dialects_untouched(%x: i64) -> i64 {
  %c0 = arith.constant 0 : i64
  %y = arith.addi %x, %c0 : i64
  return %y : i64
}
