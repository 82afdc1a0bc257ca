// RUN: attn-opt %s -attn-fuse-preprocess -split-input-file | FileCheck %s

// Shapes: "2/3" layers have 2 query heads and 1 KV head, Dqk = 2, Dv = 3
// (fused width 2*2 + 1*2 + 1*3 = 9, 15 with a gate); "192/128" layers have
// 4 / 2 heads (4*192 + 2*192 + 2*128 = 1408, 1920 with a gate). Dqk != Dv
// everywhere, so a k/v or Dqk/Dv mix-up does not verify.

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

// A model without q/k norm: the fused op has the rope stage only, and no norm
// operand or attribute at all.
// CHECK-LABEL: func.func @no_norm_2_3(
// CHECK-SAME: %[[QKV:[^:]+]]: tensor<?x9xbf16>, %[[POS:[^:]+]]: tensor<?xi64>, %[[SLOTS:[^:]+]]: tensor<?xi64>, %[[KC:[^:]+]]: tensor<?x16x1x2xbf16>, %[[VC:[^:]+]]: tensor<?x16x1x3xbf16>,
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]] = attn.fused_preprocess %[[QKV]], %[[SLOTS]] into %[[KC]], %[[VC]] positions %[[POS]] {
// CHECK-NOT: norm
// CHECK-SAME: rope_style = #attn.rope_style<neox>, rotary_dim = 2 : i64, rotary_offset = 0 : i64, stages = [#attn.stage<rope>], theta = 1.000000e+04 : f64
// CHECK-NOT: norm
// CHECK-SAME: positions tensor<?xi64> -> tensor<?x2x2xbf16>{{$}}
// CHECK-NEXT: %[[O:[^ ]+]] = attn.paged_attention %[[Q]], %[[KCO]], %[[VCO]],
// CHECK-NEXT: return %[[O]], %[[KCO]], %[[VCO]]
func.func @no_norm_2_3(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> (tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.7071 : f64} : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x2x3xbf16>
  return %o, %kc2, %vc2 : tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Neither norm nor rope: split and cache write alone, `stages = []`, no
// positions and no rope attributes either.
// CHECK-LABEL: func.func @no_stages_2_3(
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]] = attn.fused_preprocess %arg0, %arg1 into %arg2, %arg3 {num_kv_heads = 1 : i64, num_q_heads = 2 : i64, qk_head_dim = 2 : i64, stages = [], v_head_dim = 3 : i64} : tensor<?x9xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16> -> tensor<?x2x2xbf16>{{$}}
// CHECK-NEXT: return %[[Q]], %[[KCO]], %[[VCO]]
func.func @no_stages_2_3(%qkv: tensor<?x9xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %q, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// q/k norm then rope, 192/128, qkvg gate (a fourth segment): the fused op
// returns the gate and the output gate reads it; the rope's style, range and
// yarn scaling are carried over.
// CHECK-LABEL: func.func @qkvg_norm_rope_192_128(
// CHECK-SAME: %[[QKV:[^:]+]]: tensor<?x1920xbf16>, %[[POS:[^:]+]]: tensor<?xi64>, %[[SLOTS:[^:]+]]: tensor<?xi64>, %[[KC:[^:]+]]: tensor<?x16x2x192xbf16>, %[[VC:[^:]+]]: tensor<?x16x2x128xbf16>, %[[QW:[^:]+]]: tensor<192xbf16>, %[[KW:[^:]+]]: tensor<192xbf16>,
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]], %[[G:[^ ,]+]] = attn.fused_preprocess %[[QKV]], %[[SLOTS]] into %[[KC]], %[[VC]] positions %[[POS]] q_norm_weight %[[QW]] k_norm_weight %[[KW]] {gate_layout = #attn.gate_layout<qkvg>, norm_eps = 9.9999999999999995E-7 : f64, norm_style = #attn.norm_style<rms>, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, qk_head_dim = 192 : i64, rope_style = #attn.rope_style<gptj>, rotary_dim = 64 : i64, rotary_offset = 128 : i64, scaling = #attn.rope_scaling<kind = yarn, factor = 4.000000e+01, original_max_position = 4096, mscale_all_dim = 1.000000e+00>, stages = [#attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<rope>], theta = 1.000000e+04 : f64, v_head_dim = 128 : i64} : tensor<?x1920xbf16>, tensor<?xi64> into tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16> positions tensor<?xi64> q_norm_weight tensor<192xbf16> k_norm_weight tensor<192xbf16> -> tensor<?x4x192xbf16>, tensor<?x4x128xbf16>{{$}}
// CHECK-NEXT: %[[O:[^ ]+]] = attn.paged_attention %[[Q]], %[[KCO]], %[[VCO]],
// CHECK-NEXT: %[[Y:[^ ]+]] = attn.output_gate %[[O]], %[[G]]
// CHECK-NEXT: return %[[Y]], %[[KCO]], %[[VCO]]
func.func @qkvg_norm_rope_192_128(%qkv: tensor<?x1920xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x192xbf16>, %vc: tensor<?x16x2x128xbf16>, %qw: tensor<192xbf16>, %kw: tensor<192xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> (tensor<?x4x128xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 192, v_head_dim = 128, gate_layout = #attn.gate_layout<qkvg>} : tensor<?x1920xbf16> -> tensor<?x4x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?x4x128xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x4x192xbf16>, tensor<192xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x2x192xbf16>, tensor<192xbf16>
  %qr = attn.rope %qn, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64, rotary_offset = 128, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096, mscale_all_dim = 1.0>} : tensor<?x4x192xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64, rotary_offset = 128, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096, mscale_all_dim = 1.0>} : tensor<?x2x192xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?xi64> into tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.0722 : f64} : tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x128xbf16>
  %y = attn.output_gate %o, %g : tensor<?x4x128xbf16>
  return %y, %kc2, %vc2 : tensor<?x4x128xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
}

// -----

// LayerNorm with a weight row per head and a bias (StableLM-like): the
// biases become the fused op's q_norm_bias / k_norm_bias and the scope its
// norm_scope.
// CHECK-LABEL: func.func @layernorm_head_weights_bias_2_3(
// CHECK-NEXT: attn.fused_preprocess %arg0, %arg2 into %arg3, %arg4 positions %arg1 q_norm_weight %arg5 k_norm_weight %arg6 q_norm_bias %arg7 k_norm_bias %arg8 {norm_eps = 1.000000e-05 : f64, norm_scope = #attn.norm_scope<head_weights>, norm_style = #attn.norm_style<layernorm>,
// CHECK-SAME: stages = [#attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<rope>]
// CHECK-SAME: q_norm_weight tensor<2x2xbf16> k_norm_weight tensor<1x2xbf16> q_norm_bias tensor<2x2xbf16> k_norm_bias tensor<1x2xbf16> -> tensor<?x2x2xbf16>{{$}}
func.func @layernorm_head_weights_bias_2_3(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2x2xbf16>, %kw: tensor<1x2xbf16>, %qb: tensor<2x2xbf16>, %kb: tensor<1x2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw bias %qb {eps = 1.0e-5 : f64, style = #attn.norm_style<layernorm>, scope = #attn.norm_scope<head_weights>} : tensor<?x2x2xbf16>, tensor<2x2xbf16> bias tensor<2x2xbf16>
  %kn = attn.rms_norm %k, %kw bias %kb {eps = 1.0e-5 : f64, style = #attn.norm_style<layernorm>, scope = #attn.norm_scope<head_weights>} : tensor<?x1x2xbf16>, tensor<1x2xbf16> bias tensor<1x2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Llama 4: an unweighted norm after the rope; no weight operands.
// CHECK-LABEL: func.func @unweighted_after_rope_2_3(
// CHECK-NEXT: attn.fused_preprocess %arg0, %arg2 into %arg3, %arg4 positions %arg1 {norm_eps = 1.000000e-05 : f64, norm_style = #attn.norm_style<unweighted>,
// CHECK-SAME: stages = [#attn.stage<rope>, #attn.stage<q_norm>, #attn.stage<k_norm>]
// CHECK-SAME: positions tensor<?xi64> -> tensor<?x2x2xbf16>{{$}}
func.func @unweighted_after_rope_2_3(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {style = #attn.rope_style<gptj>, rotary_dim = 2, theta = 5.0e5 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {style = #attn.rope_style<gptj>, rotary_dim = 2, theta = 5.0e5 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %qn = attn.rms_norm %qr {eps = 1.0e-5 : f64, style = #attn.norm_style<unweighted>} : tensor<?x2x2xbf16>
  %kn = attn.rms_norm %kr {eps = 1.0e-5 : f64, style = #attn.norm_style<unweighted>} : tensor<?x1x2xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qn, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// q over the whole projection, k per head: one kernel has one norm scope,
// so nothing fuses.
// CHECK-LABEL: func.func @mixed_scopes_not_fused(
// CHECK-NOT: attn.fused_preprocess
// CHECK: attn.cache_write
func.func @mixed_scopes_not_fused(%qkv: tensor<?x9xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<4xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64, scope = #attn.norm_scope<projection>} : tensor<?x2x2xbf16>, tensor<4xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qn, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Interleaved gate (each query head followed by its gate head), 2/3,
// gemma-style norms before the rope.
// CHECK-LABEL: func.func @interleaved_gemma_2_3(
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]], %[[G:[^ ,]+]] = attn.fused_preprocess %arg0, %arg2 into %arg3, %arg4 positions %arg1 q_norm_weight %arg5 k_norm_weight %arg6 {gate_layout = #attn.gate_layout<interleaved>, norm_eps = 9.9999999999999995E-7 : f64, norm_style = #attn.norm_style<gemma>, num_kv_heads = 1 : i64, num_q_heads = 2 : i64, qk_head_dim = 2 : i64, rope_style = #attn.rope_style<neox>, rotary_dim = 2 : i64, rotary_offset = 0 : i64, stages = [#attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<rope>], theta = 1.000000e+06 : f64, v_head_dim = 3 : i64} : tensor<?x15xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16> positions tensor<?xi64> q_norm_weight tensor<2xbf16> k_norm_weight tensor<2xbf16> -> tensor<?x2x2xbf16>, tensor<?x2x3xbf16>{{$}}
// CHECK-NEXT: return %[[Q]], %[[G]], %[[KCO]], %[[VCO]]
func.func @interleaved_gemma_2_3(%qkv: tensor<?x15xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<interleaved>} : tensor<?x15xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?x2x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64, style = #attn.norm_style<gemma>} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64, style = #attn.norm_style<gemma>} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 2, theta = 1.0e6 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 2, theta = 1.0e6 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %g, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Norm after rope: the rope stage comes first.
// CHECK-LABEL: func.func @norm_after_rope_192_128(
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]] = attn.fused_preprocess %arg0, %arg2 into %arg3, %arg4 positions %arg1 q_norm_weight %arg5 k_norm_weight %arg6 {norm_eps = 1.000000e-05 : f64, norm_style = #attn.norm_style<rms>, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, qk_head_dim = 192 : i64, rope_style = #attn.rope_style<neox>, rotary_dim = 64 : i64, rotary_offset = 0 : i64, stages = [#attn.stage<rope>, #attn.stage<q_norm>, #attn.stage<k_norm>], theta = 5.000000e+06 : f64, v_head_dim = 128 : i64} : tensor<?x1408xbf16>, tensor<?xi64> into tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16> positions tensor<?xi64> q_norm_weight tensor<192xbf16> k_norm_weight tensor<192xbf16> -> tensor<?x4x192xbf16>{{$}}
// CHECK-NEXT: return %[[Q]], %[[KCO]], %[[VCO]]
func.func @norm_after_rope_192_128(%qkv: tensor<?x1408xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x192xbf16>, %vc: tensor<?x16x2x128xbf16>, %qw: tensor<192xbf16>, %kw: tensor<192xbf16>) -> (tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 192, v_head_dim = 128} : tensor<?x1408xbf16> -> tensor<?x4x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 64, theta = 5.0e6 : f64} : tensor<?x4x192xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 64, theta = 5.0e6 : f64} : tensor<?x2x192xbf16>, tensor<?xi64>
  %qn = attn.rms_norm %qr, %qw {eps = 1.0e-5 : f64} : tensor<?x4x192xbf16>, tensor<192xbf16>
  %kn = attn.rms_norm %kr, %kw {eps = 1.0e-5 : f64} : tensor<?x2x192xbf16>, tensor<192xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc : tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?xi64> into tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
  return %qn, %kc2, %vc2 : tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
}

// -----

// An fp8 cache: the scales move to the fused op.
// CHECK-LABEL: func.func @fp8_cache_192_128(
// CHECK-SAME: %[[KS:[^:]+]]: tensor<f32>, %[[VS:[^:]+]]: tensor<f32>)
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]] = attn.fused_preprocess %arg0, %arg2 into %arg3, %arg4 positions %arg1 scales %[[KS]], %[[VS]] {num_kv_heads = 2 : i64, num_q_heads = 4 : i64, qk_head_dim = 192 : i64, rope_style = #attn.rope_style<neox>, rotary_dim = 64 : i64, rotary_offset = 0 : i64, stages = [#attn.stage<rope>], theta = 1.000000e+04 : f64, v_head_dim = 128 : i64} : tensor<?x1408xbf16>, tensor<?xi64> into tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN> positions tensor<?xi64> scales tensor<f32>, tensor<f32> -> tensor<?x4x192xbf16>{{$}}
// CHECK-NEXT: return %[[Q]], %[[KCO]], %[[VCO]]
func.func @fp8_cache_192_128(%qkv: tensor<?x1408xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x64x2x192xf8E4M3FN>, %vc: tensor<?x64x2x128xf8E4M3FN>, %ks: tensor<f32>, %vs: tensor<f32>) -> (tensor<?x4x192xbf16>, tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 192, v_head_dim = 128} : tensor<?x1408xbf16> -> tensor<?x4x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 64, theta = 1.0e4 : f64} : tensor<?x4x192xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 64, theta = 1.0e4 : f64} : tensor<?x2x192xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc scales %ks, %vs : tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?xi64> into tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN> scales tensor<f32>, tensor<f32>
  return %qr, %kc2, %vc2 : tensor<?x4x192xbf16>, tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN>
}

// -----

// A norm on q only: stages [q_norm, rope], a q weight and no k weight.
// CHECK-LABEL: func.func @q_only_norm_2_3(
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]] = attn.fused_preprocess %arg0, %arg2 into %arg3, %arg4 positions %arg1 q_norm_weight %arg5 {
// CHECK-NOT: k_norm
// CHECK-SAME: stages = [#attn.stage<q_norm>, #attn.stage<rope>]
// CHECK-NOT: k_norm
// CHECK-NEXT: return %[[Q]], %[[KCO]], %[[VCO]]
func.func @q_only_norm_2_3(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// A norm on k only, after the rope: stages [rope, k_norm].
// CHECK-LABEL: func.func @k_only_norm_after_rope_2_3(
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]] = attn.fused_preprocess %arg0, %arg2 into %arg3, %arg4 positions %arg1 k_norm_weight %arg5 {
// CHECK-SAME: norm_eps = 9.9999999999999995E-7 : f64, norm_style = #attn.norm_style<rms>,
// CHECK-SAME: stages = [#attn.stage<rope>, #attn.stage<k_norm>]
// CHECK-NEXT: return %[[Q]], %[[KCO]], %[[VCO]]
func.func @k_only_norm_after_rope_2_3(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kn = attn.rms_norm %kr, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Norms without a rope: stages [q_norm, k_norm], no positions, no rope
// attributes.
// CHECK-LABEL: func.func @norm_without_rope_2_3(
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]] = attn.fused_preprocess %arg0, %arg1 into %arg2, %arg3 q_norm_weight %arg4 k_norm_weight %arg5 {norm_eps = 9.9999999999999995E-7 : f64, norm_style = #attn.norm_style<rms>, num_kv_heads = 1 : i64, num_q_heads = 2 : i64, qk_head_dim = 2 : i64, stages = [#attn.stage<q_norm>, #attn.stage<k_norm>], v_head_dim = 3 : i64} : tensor<?x9xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16> q_norm_weight tensor<2xbf16> k_norm_weight tensor<2xbf16> -> tensor<?x2x2xbf16>{{$}}
// CHECK-NEXT: return %[[Q]], %[[KCO]], %[[VCO]]
func.func @norm_without_rope_2_3(%qkv: tensor<?x9xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qn, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// A split whose gate result was dropped (gate_layout kept, columns skipped):
// the fused op keeps the layout and has no gate result.
// CHECK-LABEL: func.func @dropped_gate_2_3(
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]] = attn.fused_preprocess %arg0, %arg1 into %arg2, %arg3 {gate_layout = #attn.gate_layout<qkvg>,
// CHECK-SAME: -> tensor<?x2x2xbf16>{{$}}
// CHECK-NEXT: return %[[Q]], %[[KCO]], %[[VCO]]
func.func @dropped_gate_2_3(%qkv: tensor<?x15xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>} : tensor<?x15xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %q, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Two layers in one function fuse independently; the second writes the
// caches the first produced.
// CHECK-LABEL: func.func @two_layers_2_3(
// CHECK-NEXT: %[[Q1:[^ ,]+]], %[[KC1:[^ ,]+]], %[[VC1:[^ ,]+]] = attn.fused_preprocess %arg0, %arg3 into %arg4, %arg5 positions %arg2 {
// CHECK-SAME: theta = 1.000000e+04 : f64
// CHECK-NEXT: %[[Q2:[^ ,]+]], %[[KC2:[^ ,]+]], %[[VC2:[^ ,]+]] = attn.fused_preprocess %arg1, %arg3 into %[[KC1]], %[[VC1]] positions %arg2 {
// CHECK-SAME: theta = 5.000000e+06 : f64
// CHECK-NEXT: return %[[Q1]], %[[Q2]], %[[KC2]], %[[VC2]]
func.func @two_layers_2_3(%qkv1: tensor<?x9xbf16>, %qkv2: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q1, %k1, %v1 = attn.qkv_split %qkv1 {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr1 = attn.rope %q1, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr1 = attn.rope %k1, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc1, %vc1 = attn.cache_write %kr1, %v1, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  %q2, %k2, %v2 = attn.qkv_split %qkv2 {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr2 = attn.rope %q2, %pos {rotary_dim = 2, theta = 5.0e6 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr2 = attn.rope %k2, %pos {rotary_dim = 2, theta = 5.0e6 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr2, %v2, %slots into %kc1, %vc1 : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr1, %qr2, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// An operand defined after the split (here the slot mapping): the fused op
// is placed after its definition.
// CHECK-LABEL: func.func @operand_after_split_2_3(
// CHECK-NEXT: %[[S:[^ ]+]] = arith.addi %arg1, %arg1
// CHECK-NEXT: %[[Q:[^ ,]+]], %[[KCO:[^ ,]+]], %[[VCO:[^ ,]+]] = attn.fused_preprocess %arg0, %[[S]] into %arg2, %arg3 {
// CHECK-NEXT: return %[[Q]], %[[KCO]], %[[VCO]]
func.func @operand_after_split_2_3(%qkv: tensor<?x9xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %s = arith.addi %slots, %slots : tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %k, %v, %s into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %q, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// No fusion: the IR is left exactly as it is
//===----------------------------------------------------------------------===//

// The split's q has a user outside the chain.
// CHECK-LABEL: func.func @split_q_used_outside(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q,
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @split_q_used_outside(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %q, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// The split's k has a user outside the chain.
// CHECK-LABEL: func.func @split_k_used_outside(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q,
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @split_k_used_outside(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %k, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// The split's v has a user besides the cache write.
// CHECK-LABEL: func.func @split_v_used_outside(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q,
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @split_v_used_outside(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x1x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %v, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x1x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// The normed q has a user besides the rope.
// CHECK-LABEL: func.func @normed_q_used_outside(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rms_norm %q,
// CHECK-NEXT: attn.rms_norm %k,
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @normed_q_used_outside(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %qn, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// The normed k has a user besides the rope.
// CHECK-LABEL: func.func @normed_k_used_outside(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rms_norm %q,
// CHECK-NEXT: attn.rms_norm %k,
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @normed_k_used_outside(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kn, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// With the norm after the rope, the rotated q is an intermediate; here it
// has a user besides the norm.
// CHECK-LABEL: func.func @rotated_q_used_outside(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q,
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.rms_norm
// CHECK-NEXT: attn.rms_norm
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @rotated_q_used_outside(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %qn = attn.rms_norm %qr, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %kr, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qn, %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// The rotated k that is written also has another user.
// CHECK-LABEL: func.func @written_k_used_outside(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q,
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @written_k_used_outside(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// q and k rotated with different positions.
// CHECK-LABEL: func.func @rope_positions_differ(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q, %arg1
// CHECK-NEXT: attn.rope %k, %arg5
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @rope_positions_differ(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %pos2: tensor<?xi64>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos2 {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// q and k rotated with different pairing styles.
// CHECK-LABEL: func.func @rope_style_differs(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q, {{.*}}style = #attn.rope_style<gptj>
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @rope_style_differs(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {style = #attn.rope_style<gptj>, rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// q and k rotated over different numbers of dims (192/128, 64 vs 128).
// CHECK-LABEL: func.func @rope_rotary_dim_differs(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q, {{.*}}rotary_dim = 64
// CHECK-NEXT: attn.rope %k, {{.*}}rotary_dim = 128
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @rope_rotary_dim_differs(%qkv: tensor<?x1408xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x192xbf16>, %vc: tensor<?x16x2x128xbf16>) -> (tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 192, v_head_dim = 128} : tensor<?x1408xbf16> -> tensor<?x4x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 64, theta = 1.0e4 : f64} : tensor<?x4x192xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 128, theta = 1.0e4 : f64} : tensor<?x2x192xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?xi64> into tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
  return %qr, %kc2, %vc2 : tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
}

// -----

// q and k rotated at different offsets (192/128: dims 128..191 vs 0..63).
// CHECK-LABEL: func.func @rope_offset_differs(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q, {{.*}}rotary_offset = 128
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @rope_offset_differs(%qkv: tensor<?x1408xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x192xbf16>, %vc: tensor<?x16x2x128xbf16>) -> (tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 192, v_head_dim = 128} : tensor<?x1408xbf16> -> tensor<?x4x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 64, rotary_offset = 128, theta = 1.0e4 : f64} : tensor<?x4x192xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 64, theta = 1.0e4 : f64} : tensor<?x2x192xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?xi64> into tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
  return %qr, %kc2, %vc2 : tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
}

// -----

// q and k rotated with different theta.
// CHECK-LABEL: func.func @rope_theta_differs(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q, {{.*}}theta = 1.000000e+04
// CHECK-NEXT: attn.rope %k, {{.*}}theta = 1.000000e+06
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @rope_theta_differs(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e6 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Only q's rope has frequency scaling.
// CHECK-LABEL: func.func @rope_scaling_on_one_side(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q, {{.*}}scaling = #attn.rope_scaling<kind = linear
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @rope_scaling_on_one_side(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = linear, factor = 8.0>} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// q and k scaled by different factors.
// CHECK-LABEL: func.func @rope_scaling_differs(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q, {{.*}}factor = 8.0
// CHECK-NEXT: attn.rope %k, {{.*}}factor = 4.0
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @rope_scaling_differs(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = linear, factor = 8.0>} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = linear, factor = 4.0>} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// A rope on q only.
// CHECK-LABEL: func.func @rope_on_q_only(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q,
// CHECK-NEXT: attn.cache_write %k,
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @rope_on_q_only(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// A rope on k only.
// CHECK-LABEL: func.func @rope_on_k_only(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return %q,
// CHECK-NOT: attn.fused_preprocess
func.func @rope_on_k_only(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %q, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// q and k normalised with different styles.
// CHECK-LABEL: func.func @norm_style_differs(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rms_norm %q, {{.*}}style = #attn.norm_style<gemma>
// CHECK-NEXT: attn.rms_norm %k,
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @norm_style_differs(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64, style = #attn.norm_style<gemma>} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// q and k normalised with different eps.
// CHECK-LABEL: func.func @norm_eps_differs(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rms_norm %q, {{.*}}eps = 9.9999999999999995E-7
// CHECK-NEXT: attn.rms_norm %k, {{.*}}eps = 1.000000e-05
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @norm_eps_differs(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-5 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// q normalised before the rope, k after it.
// CHECK-LABEL: func.func @norms_on_different_sides(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rms_norm %q,
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.rms_norm
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @norms_on_different_sides(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kn = attn.rms_norm %kr, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// An op that is neither a norm nor a rope between k's rope and the cache
// write.
// CHECK-LABEL: func.func @other_op_on_k(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q,
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: arith.negf
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @other_op_on_k(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kx = arith.negf %kr : tensor<?x1x2xbf16>
  %kc2, %vc2 = attn.cache_write %kx, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// An op that is neither a norm nor a rope between the split's q and its
// rope: q's chain ends at the split, unrotated, while k is rotated.
// CHECK-LABEL: func.func @other_op_on_q(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: arith.negf %q
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @other_op_on_q(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qx = arith.negf %q : tensor<?x2x2xbf16>
  %qr = attn.rope %qx, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Two norms on k: the kernel has one k_norm stage.
// CHECK-LABEL: func.func @two_norms_on_k(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rms_norm %k,
// CHECK-NEXT: attn.rms_norm
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @two_norms_on_k(%qkv: tensor<?x9xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %knn = attn.rms_norm %kn, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %kc2, %vc2 = attn.cache_write %knn, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %q, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Two norms on q.
// CHECK-LABEL: func.func @two_norms_on_q(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rms_norm %q,
// CHECK-NEXT: attn.rms_norm
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @two_norms_on_q(%qkv: tensor<?x9xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %qnn = attn.rms_norm %qn, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qnn, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Two ropes on q (and on k).
// CHECK-LABEL: func.func @two_ropes(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q,
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.rope
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @two_ropes(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %qrr = attn.rope %qr, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %krr = attn.rope %kr, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %krr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qrr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// k does not come from a split (here a function argument).
// CHECK-LABEL: func.func @k_not_from_split(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.cache_write %arg4, %v,
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @k_not_from_split(%qkv: tensor<?x9xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %kx: tensor<?x1x2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %kc2, %vc2 = attn.cache_write %kx, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %q, %k, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// v is not the split's v (it comes from elsewhere).
// CHECK-LABEL: func.func @v_not_from_split(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.cache_write %k, %arg4,
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @v_not_from_split(%qkv: tensor<?x9xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %vx: tensor<?x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x1x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %kc2, %vc2 = attn.cache_write %k, %vx, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %q, %v, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x1x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// The value written as k is the split's q (MHA, so the shapes allow it).
// CHECK-LABEL: func.func @k_is_split_q(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.cache_write %q, %v,
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @k_is_split_q(%qkv: tensor<?x7xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 1, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x7xbf16> -> tensor<?x1x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %kc2, %vc2 = attn.cache_write %q, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %k, %kc2, %vc2 : tensor<?x1x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// The gate is used before the slot mapping is computed: no point in the
// block has every operand of the fused op and precedes every user of its
// results.
// CHECK-LABEL: func.func @gate_used_before_operands(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.output_gate %gate, %gate
// CHECK-NEXT: arith.addi
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @gate_used_before_operands(%qkv: tensor<?x15xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>} : tensor<?x15xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?x2x3xbf16>
  %y = attn.output_gate %g, %g : tensor<?x2x3xbf16>
  %s = arith.addi %slots, %slots : tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %k, %v, %s into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %q, %y, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Token counts that only disagree across ops: qkv has 4 tokens, positions 5,
// and the split results are dynamic, so every unfused op verifies; the
// fused op would check positions against qkv and fail, so nothing is fused.
// CHECK-LABEL: func.func @tokens_disagree_across_ops(
// CHECK-NEXT: attn.qkv_split
// CHECK-NEXT: attn.rope %q,
// CHECK-NEXT: attn.rope %k,
// CHECK-NEXT: attn.cache_write
// CHECK-NEXT: return
// CHECK-NOT: attn.fused_preprocess
func.func @tokens_disagree_across_ops(%qkv: tensor<4x9xbf16>, %pos: tensor<5xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<4x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<5xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<5xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}

// -----

// Llama 4 NoPE layer: the query temperature is the fused op's last stage,
// reading the positions no rope reads; k is untouched by it.
// CHECK-LABEL: func.func @query_temperature_nope(
// CHECK-SAME: %[[QKV:[^:]+]]: tensor<?x16xbf16>, %[[POS:[^:]+]]: tensor<?xi64>,
// CHECK-NEXT: attn.fused_preprocess %[[QKV]], %{{[^ ]+}} into %{{[^ ]+}}, %{{[^ ]+}} positions %[[POS]] {
// CHECK-NOT: rope_style
// CHECK-SAME: stages = [#attn.stage<q_temperature>], temperature_floor_scale = 8.192000e+03 : f64, temperature_scale = 1.000000e-01 : f64
func.func @query_temperature_nope(%qkv: tensor<?x16xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x4xbf16>, %vc: tensor<?x16x1x4xbf16>) -> (tensor<?x2x4xbf16>, tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 4, v_head_dim = 4} : tensor<?x16xbf16> -> tensor<?x2x4xbf16>, tensor<?x1x4xbf16>, tensor<?x1x4xbf16>
  %qt = attn.query_temperature %q, %pos {floor_scale = 8192.0 : f64, scale = 0.1 : f64} : tensor<?x2x4xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc : tensor<?x1x4xbf16>, tensor<?x1x4xbf16>, tensor<?xi64> into tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>
  return %qt, %kc2, %vc2 : tensor<?x2x4xbf16>, tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>
}

// -----

// After rope and norm: the stages keep the model's order, temperature last.
// CHECK-LABEL: func.func @query_temperature_after_rope(
// CHECK: stages = [#attn.stage<rope>, #attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<q_temperature>]
func.func @query_temperature_after_rope(%qkv: tensor<?x16xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x4xbf16>, %vc: tensor<?x16x1x4xbf16>, %w: tensor<4xbf16>) -> (tensor<?x2x4xbf16>, tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 4, v_head_dim = 4} : tensor<?x16xbf16> -> tensor<?x2x4xbf16>, tensor<?x1x4xbf16>, tensor<?x1x4xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 4, theta = 1.0e4 : f64} : tensor<?x2x4xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 4, theta = 1.0e4 : f64} : tensor<?x1x4xbf16>, tensor<?xi64>
  %qn = attn.rms_norm %qr, %w {eps = 1.0e-5 : f64} : tensor<?x2x4xbf16>, tensor<4xbf16>
  %kn = attn.rms_norm %kr, %w {eps = 1.0e-5 : f64} : tensor<?x1x4xbf16>, tensor<4xbf16>
  %qt = attn.query_temperature %qn, %pos {floor_scale = 8192.0 : f64, scale = 0.1 : f64} : tensor<?x2x4xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc : tensor<?x1x4xbf16>, tensor<?x1x4xbf16>, tensor<?xi64> into tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>
  return %qt, %kc2, %vc2 : tensor<?x2x4xbf16>, tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>
}

// -----

// A temperature on k is no query temperature the kernel has: no fusion.
// CHECK-LABEL: func.func @temperature_on_k_not_fused(
// CHECK-NOT: attn.fused_preprocess
// CHECK: attn.cache_write
func.func @temperature_on_k_not_fused(%qkv: tensor<?x16xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x4xbf16>, %vc: tensor<?x16x1x4xbf16>) -> (tensor<?x2x4xbf16>, tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 4, v_head_dim = 4} : tensor<?x16xbf16> -> tensor<?x2x4xbf16>, tensor<?x1x4xbf16>, tensor<?x1x4xbf16>
  %kt = attn.query_temperature %k, %pos {floor_scale = 8192.0 : f64, scale = 0.1 : f64} : tensor<?x1x4xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kt, %v, %slots into %kc, %vc : tensor<?x1x4xbf16>, tensor<?x1x4xbf16>, tensor<?xi64> into tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>
  return %q, %kc2, %vc2 : tensor<?x2x4xbf16>, tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>
}
