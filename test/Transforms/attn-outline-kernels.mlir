// RUN: attn-opt %s -attn-outline-kernels -split-input-file -verify-diagnostics | FileCheck %s

// A gated 2/3 layer: the preprocess kernel takes exactly its operands (no
// positions, no norm weights: the layer has neither), the attention kernel
// takes the gate as its epilogue operand; the layer calls both.
// CHECK-LABEL: func.func @layer__preprocess(
// CHECK-SAME: %{{.*}}: tensor<?x15xbf16> {attn.arg = "qkv"}, %{{.*}}: tensor<?xi64> {attn.arg = "slot_mapping"}, %{{.*}}: tensor<?x16x1x2xbf16> {attn.arg = "k_cache"}, %{{.*}}: tensor<?x16x1x3xbf16> {attn.arg = "v_cache"})
// CHECK-SAME: -> (tensor<?x2x2xbf16> {attn.result = "q"}, tensor<?x16x1x2xbf16> {attn.result = "k_cache_out"}, tensor<?x16x1x3xbf16> {attn.result = "v_cache_out"}, tensor<?x2x3xbf16> {attn.result = "gate"})
// CHECK-SAME: attributes {attn.kernel = "preprocess", attn.layer = "layer"}
// CHECK-NEXT: attn.fused_preprocess
// CHECK-NEXT: return
// CHECK-LABEL: func.func @layer__attention(
// CHECK-SAME: {attn.arg = "query"}
// CHECK-SAME: {attn.arg = "k_cache"}
// CHECK-SAME: {attn.arg = "v_cache"}
// CHECK-SAME: {attn.arg = "block_tables"}
// CHECK-SAME: {attn.arg = "seq_lens"}
// CHECK-SAME: {attn.arg = "query_start_loc"}
// CHECK-SAME: %[[GATE:.*]]: tensor<?x2x3xbf16> {attn.arg = "gate"})
// CHECK-SAME: -> (tensor<?x2x3xbf16> {attn.result = "output"})
// CHECK-SAME: attributes {attn.kernel = "attention", attn.layer = "layer"}
// CHECK-NEXT: %[[O:.*]] = attn.paged_attention
// CHECK-NEXT: %[[G:.*]] = attn.output_gate %[[O]], %[[GATE]]
// CHECK-NEXT: return %[[G]]
// CHECK-LABEL: func.func @layer(
// CHECK-NEXT: %[[P:.*]]:4 = call @layer__preprocess(%arg0, %arg1, %arg2, %arg3)
// CHECK-NEXT: %[[A:.*]] = call @layer__attention(%[[P]]#0, %[[P]]#1, %[[P]]#2, %arg4, %arg5, %arg6, %[[P]]#3)
// CHECK-NEXT: return %[[A]], %[[P]]#1, %[[P]]#2
func.func @layer(%qkv: tensor<?x15xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> (tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %kc2, %vc2, %g = attn.fused_preprocess %qkv, %slots into %kc, %vc {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>, stages = []} : tensor<?x15xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16> -> tensor<?x2x2xbf16>, tensor<?x2x3xbf16>
  %o = attn.paged_attention %q, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.7071 : f64} : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x2x3xbf16>
  %y = attn.output_gate %o, %g : tensor<?x2x3xbf16>
  return %y, %kc2, %vc2 : tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Optional operands become named arguments in ABI order (positions, norm
// weights, scales; sinks for attention), and an ungated attention kernel
// has no gate argument.
// CHECK-LABEL: func.func @full__preprocess(
// CHECK-SAME: {attn.arg = "qkv"}, {{.*}}{attn.arg = "slot_mapping"}, {{.*}}{attn.arg = "k_cache"}, {{.*}}{attn.arg = "v_cache"}, {{.*}}{attn.arg = "positions"}, {{.*}}{attn.arg = "q_norm_weight"}, {{.*}}{attn.arg = "k_norm_weight"}, {{.*}}{attn.arg = "k_scale"}, {{.*}}{attn.arg = "v_scale"})
// CHECK-LABEL: func.func @full__attention(
// CHECK-SAME: {attn.arg = "sinks"}, {{.*}}{attn.arg = "k_scale"}, {{.*}}{attn.arg = "v_scale"})
// CHECK-NOT: attn.arg = "gate"
// CHECK-SAME: -> (tensor<?x4x128xbf16> {attn.result = "output"})
// CHECK-NOT: attn.output_gate
// CHECK-LABEL: func.func @full(
func.func @full(%qkv: tensor<?x1408xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x64x2x192xf8E4M3FN>, %vc: tensor<?x64x2x128xf8E4M3FN>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %qw: tensor<192xbf16>, %kw: tensor<192xbf16>, %sinks: tensor<4xf32>, %ks: tensor<f32>, %vs: tensor<f32>) -> (tensor<?x4x128xbf16>, tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN>) {
  %q, %kc2, %vc2 = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos q_norm_weight %qw k_norm_weight %kw scales %ks, %vs {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 192, v_head_dim = 128, stages = [#attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<rope>], norm_style = #attn.norm_style<rms>, norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<neox>, rotary_dim = 64, rotary_offset = 0, theta = 1.0e4 : f64} : tensor<?x1408xbf16>, tensor<?xi64> into tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN> positions tensor<?xi64> q_norm_weight tensor<192xbf16> k_norm_weight tensor<192xbf16> scales tensor<f32>, tensor<f32> -> tensor<?x4x192xbf16>
  %o = attn.paged_attention %q, %kc2, %vc2, %tables, %lens, %starts sinks %sinks scales %ks, %vs {softmax_scale = 0.0722 : f64} : tensor<?x4x192xbf16>, tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<4xf32> scales tensor<f32>, tensor<f32> -> tensor<?x4x128xbf16>
  return %o, %kc2, %vc2 : tensor<?x4x128xbf16>, tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN>
}

// -----

// An unfused op has no kernel: the pass says which and why.
func.func @unfused(%q: tensor<?x4x8xbf16>, %w: tensor<8xbf16>) -> tensor<?x4x8xbf16> {
  // expected-error @+1 {{'attn.rms_norm' op is not in kernel form: it was not fused into attn.fused_preprocess}}
  %n = attn.rms_norm %q, %w {eps = 1.0e-6 : f64} : tensor<?x4x8xbf16>, tensor<8xbf16>
  return %n : tensor<?x4x8xbf16>
}

// -----

// A gate whose input is not an attention output cannot be an epilogue.
func.func @stray_gate(%o: tensor<?x4x8xbf16>, %g: tensor<?x4x8xbf16>) -> tensor<?x4x8xbf16> {
  // expected-error @+1 {{'attn.output_gate' op is not in kernel form: its input is not the sole use of an attn.paged_attention output}}
  %y = attn.output_gate %o, %g : tensor<?x4x8xbf16>
  return %y : tensor<?x4x8xbf16>
}

// -----

// An attention output with a second user keeps the gate out of the kernel,
// which the pass reports rather than computing the gate elsewhere.
func.func @attention_output_used_twice(%q: tensor<?x2x8xbf16>, %kc: tensor<?x16x1x8xbf16>, %vc: tensor<?x16x1x8xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %g: tensor<?x2x8xbf16>) -> (tensor<?x2x8xbf16>, tensor<?x2x8xbf16>) {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.35 : f64} : tensor<?x2x8xbf16>, tensor<?x16x1x8xbf16>, tensor<?x16x1x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x2x8xbf16>
  // expected-error @+1 {{'attn.output_gate' op is not in kernel form}}
  %y = attn.output_gate %o, %g : tensor<?x2x8xbf16>
  return %y, %o : tensor<?x2x8xbf16>, tensor<?x2x8xbf16>
}
