// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the attn dialect (AttnOps.cpp and
// RopeScalingAttr::verify in AttnAttrs.cpp), then a few rules that ODS
// traits and the parsers enforce. Every case is otherwise valid, so the
// diagnostic is the one of the rule under test.

//===----------------------------------------------------------------------===//
// qkv_split: head counts and dims
//===----------------------------------------------------------------------===//

// I64Attr reads back zero-extended; the verifier must report -4, not
// 18446744073709551612.
func.func @qkv_split_negative_num_q_heads(%qkv: tensor<?x1536xbf16>) {
  // expected-error @+1 {{'attn.qkv_split' op num_q_heads must be >= 1, got -4}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = -4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x1536xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

func.func @qkv_split_zero_num_q_heads(%qkv: tensor<?x1024xbf16>) {
  // expected-error @+1 {{num_q_heads must be >= 1, got 0}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 0, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x1024xbf16>
      -> tensor<?x0x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

func.func @qkv_split_zero_num_kv_heads(%qkv: tensor<?x512xbf16>) {
  // expected-error @+1 {{num_kv_heads must be >= 1, got 0}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 0,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x512xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x0x128xbf16>, tensor<?x0x128xbf16>
  return
}

// -----

func.func @qkv_split_negative_num_kv_heads(%qkv: tensor<?x512xbf16>) {
  // expected-error @+1 {{num_kv_heads must be >= 1, got -1}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = -1,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x512xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x1x128xbf16>, tensor<?x1x128xbf16>
  return
}

// -----

func.func @qkv_split_zero_qk_head_dim(%qkv: tensor<?x512xbf16>) {
  // expected-error @+1 {{qk_head_dim must be >= 1, got 0}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 0, v_head_dim = 128}
      : tensor<?x512xbf16>
      -> tensor<?x4x0xbf16>, tensor<?x4x0xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

func.func @qkv_split_negative_v_head_dim(%qkv: tensor<?x1024xbf16>) {
  // expected-error @+1 {{v_head_dim must be >= 1, got -128}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = -128}
      : tensor<?x1024xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

func.func @qkv_split_gqa_not_divisible(%qkv: tensor<?x5376xbf16>) {
  // expected-error @+1 {{num_q_heads (32) must be divisible by num_kv_heads (5)}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 5,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x5376xbf16>
      -> tensor<?x32x128xbf16>, tensor<?x5x128xbf16>, tensor<?x5x128xbf16>
  return
}

// -----

// 2^62*1 + 2^62*1 + 2^62*2 wraps to 0 in 64 bits: must not match W = 0; the
// layout library refuses heads and dims above 2^20 before any sum.
func.func @qkv_split_width_overflow(%qkv: tensor<?x0xbf16>) {
  // expected-error @+1 {{num_q_heads: must be <= 1048576 (got 4611686018427387904)}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4611686018427387904,
      num_kv_heads = 4611686018427387904, qk_head_dim = 1, v_head_dim = 2}
      : tensor<?x0xbf16>
      -> tensor<?x4611686018427387904x1xbf16>,
         tensor<?x4611686018427387904x1xbf16>,
         tensor<?x4611686018427387904x2xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// qkv_split: fused input
//===----------------------------------------------------------------------===//

func.func @qkv_split_qkv_rank(%qkv: tensor<?x4x384xbf16>) {
  // expected-error @+1 {{qkv must have rank 2 [tokens, fused_width], got 'tensor<?x4x384xbf16>'}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x4x384xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

// Dqk and Dv swapped in the width: 64*128 + 4*128 + 4*192 = 9472, not 13568.
func.func @qkv_split_width_no_gate(%qkv: tensor<?x9472xbf16>) {
  // expected-error @+1 {{fused width (qkv dim 1) must equal num_q_heads*qk_head_dim + num_kv_heads*qk_head_dim + num_kv_heads*v_head_dim = 13568 for gate_layout none, got 9472}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 4,
      qk_head_dim = 192, v_head_dim = 128}
      : tensor<?x9472xbf16>
      -> tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

// The width without the gate is not enough when there is a gate.
func.func @qkv_split_width_with_gate(%qkv: tensor<?x5120xbf16>) {
  // expected-error @+1 {{+ num_q_heads*v_head_dim = 9216 for gate_layout interleaved, got 5120}}
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 16, num_kv_heads = 2,
      qk_head_dim = 256, v_head_dim = 256,
      gate_layout = #attn.gate_layout<interleaved>}
      : tensor<?x5120xbf16>
      -> tensor<?x16x256xbf16>, tensor<?x2x256xbf16>, tensor<?x2x256xbf16>,
         tensor<?x16x256xbf16>
  return
}

// -----

// The fused width must be static: the attributes fix it.
func.func @qkv_split_width_dynamic(%qkv: tensor<?x?xbf16>) {
  // expected-error @+1 {{= 1536 for gate_layout none, got ?}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x?xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

func.func @qkv_split_qkv_element_type(%qkv: tensor<?x1536xi8>) {
  // expected-error @+1 {{qkv element type must be bf16, f16 or f32, got 'i8'}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x1536xi8>
      -> tensor<?x4x128xi8>, tensor<?x4x128xi8>, tensor<?x4x128xi8>
  return
}

// -----

//===----------------------------------------------------------------------===//
// qkv_split: gate result presence
//===----------------------------------------------------------------------===//

func.func @qkv_split_gate_result_without_gate_layout(%qkv: tensor<?x1536xbf16>) {
  // expected-error @+1 {{gate_layout none must not have a gate result}}
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x1536xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>,
         tensor<?x4x128xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// qkv_split: result shapes and element types
//===----------------------------------------------------------------------===//

func.func @qkv_split_q_shape(%qkv: tensor<?x13568xbf16>) {
  // expected-error @+1 {{q result must have shape [?, 64, 192] (tokens x num_q_heads x qk_head_dim), got 'tensor<?x32x192xbf16>'}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 4,
      qk_head_dim = 192, v_head_dim = 128}
      : tensor<?x13568xbf16>
      -> tensor<?x32x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

// k is Dqk wide, not Dv.
func.func @qkv_split_k_shape(%qkv: tensor<?x13568xbf16>) {
  // expected-error @+1 {{k result must have shape [?, 4, 192] (tokens x num_kv_heads x qk_head_dim), got 'tensor<?x4x128xbf16>'}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 4,
      qk_head_dim = 192, v_head_dim = 128}
      : tensor<?x13568xbf16>
      -> tensor<?x64x192xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

// v is Dv wide, not Dqk.
func.func @qkv_split_v_shape(%qkv: tensor<?x13568xbf16>) {
  // expected-error @+1 {{v result must have shape [?, 4, 128] (tokens x num_kv_heads x v_head_dim), got 'tensor<?x4x192xbf16>'}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 4,
      qk_head_dim = 192, v_head_dim = 128}
      : tensor<?x13568xbf16>
      -> tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x192xbf16>
  return
}

// -----

// The gate is Dv wide per query head, not Dqk.
func.func @qkv_split_gate_shape(%qkv: tensor<?x3200xbf16>) {
  // expected-error @+1 {{gate result must have shape [?, 8, 128] (tokens x num_q_heads x v_head_dim), got 'tensor<?x8x192xbf16>'}}
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 8, num_kv_heads = 2,
      qk_head_dim = 192, v_head_dim = 128,
      gate_layout = #attn.gate_layout<interleaved>}
      : tensor<?x3200xbf16>
      -> tensor<?x8x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>,
         tensor<?x8x192xbf16>
  return
}

// -----

func.func @qkv_split_result_tokens(%qkv: tensor<7x1536xbf16>) {
  // expected-error @+1 {{k result must have shape [7, 4, 128] (tokens x num_kv_heads x qk_head_dim), got 'tensor<8x4x128xbf16>'}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<7x1536xbf16>
      -> tensor<7x4x128xbf16>, tensor<8x4x128xbf16>, tensor<7x4x128xbf16>
  return
}

// -----

func.func @qkv_split_result_rank(%qkv: tensor<?x1536xbf16>) {
  // expected-error @+1 {{q result must have shape [?, 4, 128] (tokens x num_q_heads x qk_head_dim), got 'tensor<?x512xbf16>'}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x1536xbf16>
      -> tensor<?x512xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

func.func @qkv_split_result_element_type(%qkv: tensor<?x1536xbf16>) {
  // expected-error @+1 {{v result element type ('f16') must equal the qkv element type ('bf16')}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x1536xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xf16>
  return
}

// -----

func.func @qkv_split_gate_element_type(%qkv: tensor<?x2048xbf16>) {
  // expected-error @+1 {{gate result element type ('f32') must equal the qkv element type ('bf16')}}
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128,
      gate_layout = #attn.gate_layout<qkvg>}
      : tensor<?x2048xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>,
         tensor<?x4x128xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

func.func @rms_norm_input_rank(%x: tensor<?x128xbf16>, %w: tensor<128xbf16>) {
  // expected-error @+1 {{input must have rank 3 [tokens, heads, head_dim], got 'tensor<?x128xbf16>'}}
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64}
      : tensor<?x128xbf16>, tensor<128xbf16>
  return
}

// -----

func.func @rms_norm_input_element_type(%x: tensor<?x4x128xf8E4M3FN>,
                                       %w: tensor<128xbf16>) {
  // expected-error @+1 {{input element type must be bf16, f16 or f32, got 'f8E4M3FN'}}
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64}
      : tensor<?x4x128xf8E4M3FN>, tensor<128xbf16>
  return
}

// -----

func.func @rms_norm_weight_rank(%x: tensor<?x4x128xbf16>,
                                %w: tensor<4x128xbf16>) {
  // expected-error @+1 {{weight must have rank 1 [head_dim], got 'tensor<4x128xbf16>'}}
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64}
      : tensor<?x4x128xbf16>, tensor<4x128xbf16>
  return
}

// -----

// A Dv-long weight on a Dqk-wide input.
func.func @rms_norm_weight_length(%x: tensor<?x64x192xbf16>,
                                  %w: tensor<128xbf16>) {
  // expected-error @+1 {{weight length must equal the head dim it normalises (192), got 'tensor<128xbf16>'}}
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64}
      : tensor<?x64x192xbf16>, tensor<128xbf16>
  return
}

// -----

func.func @rms_norm_weight_element_type(%x: tensor<?x4x128xbf16>,
                                        %w: tensor<128xi8>) {
  // expected-error @+1 {{weight element type must be bf16, f16 or f32, got 'i8'}}
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64}
      : tensor<?x4x128xbf16>, tensor<128xi8>
  return
}

// -----

func.func @rms_norm_eps_zero(%x: tensor<?x4x128xbf16>, %w: tensor<128xbf16>) {
  // expected-error @+1 {{eps must be a positive finite number, got 0}}
  %0 = attn.rms_norm %x, %w {eps = 0.0 : f64}
      : tensor<?x4x128xbf16>, tensor<128xbf16>
  return
}

// -----

func.func @rms_norm_eps_infinite(%x: tensor<?x4x128xbf16>,
                                 %w: tensor<128xbf16>) {
  // expected-error @+1 {{eps must be a positive finite number, got inf}}
  %0 = attn.rms_norm %x, %w {eps = 0x7FF0000000000000 : f64}
      : tensor<?x4x128xbf16>, tensor<128xbf16>
  return
}

// -----

// The weight's shape follows the scope: [H, D] for head_weights.
func.func @rms_norm_head_weights_shape(%x: tensor<?x8x128xbf16>,
                                       %w: tensor<128xbf16>) {
  // expected-error @+1 {{weight must have shape [8, 128] (a row per head, scope head_weights), got 'tensor<128xbf16>'}}
  %0 = attn.rms_norm %x, %w {eps = 1.0e-05 : f64,
      style = #attn.norm_style<layernorm>, scope = #attn.norm_scope<head_weights>}
      : tensor<?x8x128xbf16>, tensor<128xbf16>
  return
}

// -----

// [H * D] for projection: a k weight ([Hkv * D]) on q is an error.
func.func @rms_norm_projection_shape(%x: tensor<?x32x128xbf16>,
                                     %w: tensor<1024xbf16>) {
  // expected-error @+1 {{weight must have shape [4096] (heads * head_dim, scope projection), got 'tensor<1024xbf16>'}}
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64,
      scope = #attn.norm_scope<projection>}
      : tensor<?x32x128xbf16>, tensor<1024xbf16>
  return
}

// -----

func.func @rms_norm_missing_weight(%x: tensor<?x4x128xbf16>) {
  // expected-error @+1 {{weight is required by norm style layernorm}}
  %0 = attn.rms_norm %x {eps = 1.0e-05 : f64,
      style = #attn.norm_style<layernorm>} : tensor<?x4x128xbf16>
  return
}

// -----

func.func @rms_norm_unweighted_with_weight(%x: tensor<?x4x128xbf16>,
                                           %w: tensor<128xbf16>) {
  // expected-error @+1 {{weight is not allowed with norm style unweighted}}
  %0 = attn.rms_norm %x, %w {eps = 1.0e-05 : f64,
      style = #attn.norm_style<unweighted>}
      : tensor<?x4x128xbf16>, tensor<128xbf16>
  return
}

// -----

func.func @rms_norm_bias_without_layernorm(%x: tensor<?x4x128xbf16>,
                                           %w: tensor<128xbf16>,
                                           %b: tensor<128xbf16>) {
  // expected-error @+1 {{bias is only allowed with norm style layernorm, got rms}}
  %0 = attn.rms_norm %x, %w bias %b {eps = 1.0e-06 : f64}
      : tensor<?x4x128xbf16>, tensor<128xbf16> bias tensor<128xbf16>
  return
}

// -----

func.func @rms_norm_bias_type(%x: tensor<?x4x128xbf16>, %w: tensor<4x128xbf16>,
                              %b: tensor<128xbf16>) {
  // expected-error @+1 {{bias type ('tensor<128xbf16>') must equal the weight type ('tensor<4x128xbf16>')}}
  %0 = attn.rms_norm %x, %w bias %b {eps = 1.0e-05 : f64,
      style = #attn.norm_style<layernorm>, scope = #attn.norm_scope<head_weights>}
      : tensor<?x4x128xbf16>, tensor<4x128xbf16> bias tensor<128xbf16>
  return
}

// -----

func.func @rms_norm_unweighted_scope(%x: tensor<?x4x128xbf16>) {
  // expected-error @+1 {{norm scope projection describes a weight's shape: an unweighted norm has scope head}}
  %0 = attn.rms_norm %x {eps = 1.0e-05 : f64,
      style = #attn.norm_style<unweighted>, scope = #attn.norm_scope<projection>}
      : tensor<?x4x128xbf16>
  return
}

// -----

func.func @rms_norm_unweighted_eps(%x: tensor<?x4x128xbf16>) {
  // expected-error @+1 {{eps must be a positive finite number, got -1}}
  %0 = attn.rms_norm %x {eps = -1.0 : f64,
      style = #attn.norm_style<unweighted>} : tensor<?x4x128xbf16>
  return
}

// -----

// A rank of a tensor-parallel split holds some heads; the projection's
// statistics need all of them.
module attributes {attn.tensor_parallel = array<i64: 2, 0>} {
  func.func @rms_norm_projection_tp(%x: tensor<?x16x128xbf16>,
                                    %w: tensor<2048xbf16>) {
    // expected-error @+1 {{norm scope projection needs every head of the projection on one rank: not in a module with attn.tensor_parallel tp 2}}
    %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64,
        scope = #attn.norm_scope<projection>}
        : tensor<?x16x128xbf16>, tensor<2048xbf16>
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

func.func @rope_input_rank(%x: tensor<?x512xbf16>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{input must have rank 3 [tokens, heads, qk_head_dim], got 'tensor<?x512xbf16>'}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<?x512xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_input_element_type(%x: tensor<?x4x128xi32>,
                                   %pos: tensor<?xi64>) {
  // expected-error @+1 {{input element type must be bf16, f16 or f32, got 'i32'}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<?x4x128xi32>, tensor<?xi64>
  return
}

// -----

func.func @rope_negative_rotary_dim(%x: tensor<?x4x128xbf16>,
                                    %pos: tensor<?xi64>) {
  // expected-error @+1 {{rotary_dim must be >= 0, got -64}}
  %0 = attn.rope %x, %pos {rotary_dim = -64, theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_negative_rotary_offset(%x: tensor<?x4x128xbf16>,
                                       %pos: tensor<?xi64>) {
  // expected-error @+1 {{rotary_offset must be >= 0, got -2}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, rotary_offset = -2,
      theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_odd_rotary_dim(%x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{rotary_dim must be even, got 33}}
  %0 = attn.rope %x, %pos {rotary_dim = 33, theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_range_past_head_dim(%x: tensor<?x16x192xbf16>,
                                    %pos: tensor<?xi64>) {
  // expected-error @+1 {{rotary_offset + rotary_dim (130 + 64) must be <= the head dim (192)}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, rotary_offset = 130,
      theta = 1.0e+04 : f64}
      : tensor<?x16x192xbf16>, tensor<?xi64>
  return
}

// -----

// offset + dim overflows int64; the check must not wrap around.
func.func @rope_range_overflow(%x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{rotary_offset + rotary_dim (9223372036854775806 + 9223372036854775806) must be <= the head dim (128)}}
  %0 = attn.rope %x, %pos {rotary_dim = 9223372036854775806,
      rotary_offset = 9223372036854775806, theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_theta_zero(%x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{theta must be a positive finite number, got 0}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 0.0 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_theta_negative(%x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{theta must be a positive finite number, got -10000}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = -1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_positions_not_integer(%x: tensor<?x4x128xbf16>,
                                      %pos: tensor<?xf32>) {
  // expected-error @+1 {{positions must be a rank-1 tensor of i32 or i64, got 'tensor<?xf32>'}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xf32>
  return
}

// -----

func.func @rope_positions_rank(%x: tensor<?x4x128xbf16>,
                               %pos: tensor<?x1xi64>) {
  // expected-error @+1 {{positions must be a rank-1 tensor of i32 or i64, got 'tensor<?x1xi64>'}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?x1xi64>
  return
}

// -----

func.func @rope_positions_token_count(%x: tensor<6x4x128xbf16>,
                                      %pos: tensor<5xi64>) {
  // expected-error @+1 {{token count (dim 0) of positions (5) must equal that of input (6)}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<6x4x128xbf16>, tensor<5xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// rope_scaling attribute
//===----------------------------------------------------------------------===//

func.func @rope_scaling_factor_zero(%x: tensor<?x4x128xbf16>,
                                    %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling factor must be a positive finite number, got 0}}
      scaling = #attn.rope_scaling<kind = linear, factor = 0.0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_scaling_factor_negative(%x: tensor<?x4x128xbf16>,
                                        %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling factor must be a positive finite number, got -2}}
      scaling = #attn.rope_scaling<kind = dynamic, factor = -2.0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_scaling_original_max_position_negative(
    %x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling original_max_position must be >= 0, got -1}}
      scaling = #attn.rope_scaling<kind = linear, factor = 2.0,
                                   original_max_position = -1>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_scaling_yarn_without_original_max_position(
    %x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling original_max_position must be set (> 0) for yarn scaling}}
      scaling = #attn.rope_scaling<kind = yarn, factor = 40.0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_scaling_llama3_without_original_max_position(
    %x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 5.0e+05 : f64,
      // expected-error @+1 {{rope_scaling original_max_position must be set (> 0) for llama3 scaling}}
      scaling = #attn.rope_scaling<kind = llama3, factor = 8.0,
                                   original_max_position = 0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_scaling_llama3_high_not_above_low(%x: tensor<?x4x128xbf16>,
                                                  %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 5.0e+05 : f64,
      // expected-error @+1 {{rope_scaling high_freq_factor must be >= low_freq_factor for llama3 scaling (2 < 4)}}
      scaling = #attn.rope_scaling<kind = llama3, factor = 8.0,
                                   original_max_position = 8192,
                                   low_freq_factor = 4.0,
                                   high_freq_factor = 2.0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_scaling_yarn_beta_fast_below_beta_slow(
    %x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling beta_fast must be >= beta_slow for yarn scaling (1 < 32)}}
      scaling = #attn.rope_scaling<kind = yarn, factor = 40.0,
                                   original_max_position = 4096,
                                   beta_fast = 1.0, beta_slow = 32.0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_scaling_mscale_negative(%x: tensor<?x4x128xbf16>,
                                        %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling mscale and mscale_all_dim must be >= 0}}
      scaling = #attn.rope_scaling<kind = yarn, factor = 40.0,
                                   original_max_position = 4096,
                                   mscale_all_dim = -1.0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

// A NaN is neither < 0 nor >= 0; it must still be rejected.
func.func @rope_scaling_mscale_nan(%x: tensor<?x4x128xbf16>,
                                   %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling mscale must be a finite number, got nan}}
      scaling = #attn.rope_scaling<kind = yarn, factor = 40.0,
                                   original_max_position = 4096,
                                   mscale = 0x7FF8000000000000>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

// An infinite high_freq_factor would pass "high > low".
func.func @rope_scaling_llama3_infinite_factor(%x: tensor<?x4x128xbf16>,
                                               %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 5.0e+05 : f64,
      // expected-error @+1 {{rope_scaling high_freq_factor must be a finite number, got inf}}
      scaling = #attn.rope_scaling<kind = llama3, factor = 8.0,
                                   original_max_position = 8192,
                                   high_freq_factor = 0x7FF0000000000000>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// cache_write: k and v
//===----------------------------------------------------------------------===//

func.func @cache_write_k_rank(%k: tensor<?x512xbf16>, %v: tensor<?x4x128xbf16>,
                              %slots: tensor<?xi64>,
                              %kc: tensor<?x16x4x128xbf16>,
                              %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{k must have rank 3 [tokens, num_kv_heads, head_dim], got 'tensor<?x512xbf16>'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x512xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}

// -----

func.func @cache_write_v_rank(%k: tensor<?x4x128xbf16>, %v: tensor<?x512xbf16>,
                              %slots: tensor<?xi64>,
                              %kc: tensor<?x16x4x128xbf16>,
                              %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{v must have rank 3 [tokens, num_kv_heads, head_dim], got 'tensor<?x512xbf16>'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x512xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}

// -----

func.func @cache_write_k_element_type(%k: tensor<?x4x128xf8E4M3FN>,
                                      %v: tensor<?x4x128xf8E4M3FN>,
                                      %slots: tensor<?xi64>,
                                      %kc: tensor<?x16x4x128xf8E4M3FN>,
                                      %vc: tensor<?x16x4x128xf8E4M3FN>,
                                      %ks: tensor<f32>, %vs: tensor<f32>) {
  // expected-error @+1 {{k element type must be bf16, f16 or f32, got 'f8E4M3FN'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xf8E4M3FN>, tensor<?x4x128xf8E4M3FN>, tensor<?xi64>
      into tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>
      scales tensor<f32>, tensor<f32>
  return
}

// -----

func.func @cache_write_v_element_type(%k: tensor<?x4x128xbf16>,
                                      %v: tensor<?x4x128xf16>,
                                      %slots: tensor<?xi64>,
                                      %kc: tensor<?x16x4x128xbf16>,
                                      %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{v element type ('f16') must equal the k element type ('bf16')}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}

// -----

func.func @cache_write_v_token_count(%k: tensor<3x4x128xbf16>,
                                     %v: tensor<4x4x128xbf16>,
                                     %slots: tensor<?xi64>,
                                     %kc: tensor<?x16x4x128xbf16>,
                                     %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{token count (dim 0) of v (4) must equal that of k (3)}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<3x4x128xbf16>, tensor<4x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}

// -----

func.func @cache_write_v_num_kv_heads(%k: tensor<?x4x128xbf16>,
                                      %v: tensor<?x8x128xbf16>,
                                      %slots: tensor<?xi64>,
                                      %kc: tensor<?x16x4x128xbf16>,
                                      %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{num_kv_heads (dim 1) of v (8) must equal that of k (4)}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// cache_write: the cache pair (shared with paged_attention)
//===----------------------------------------------------------------------===//

func.func @cache_write_k_cache_rank(%k: tensor<?x4x128xbf16>,
                                    %v: tensor<?x4x128xbf16>,
                                    %slots: tensor<?xi64>,
                                    %kc: tensor<?x4x128xbf16>,
                                    %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{k_cache must have rank 4 [num_blocks, block_size, num_kv_heads, head_dim], got 'tensor<?x4x128xbf16>'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}

// -----

func.func @cache_write_v_cache_rank(%k: tensor<?x4x128xbf16>,
                                    %v: tensor<?x4x128xbf16>,
                                    %slots: tensor<?xi64>,
                                    %kc: tensor<?x16x4x128xbf16>,
                                    %vc: tensor<?x1x16x4x128xbf16>) {
  // expected-error @+1 {{v_cache must have rank 4 [num_blocks, block_size, num_kv_heads, head_dim], got 'tensor<?x1x16x4x128xbf16>'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x1x16x4x128xbf16>
  return
}

// -----

func.func @cache_write_num_blocks(%k: tensor<?x4x128xbf16>,
                                  %v: tensor<?x4x128xbf16>,
                                  %slots: tensor<?xi64>,
                                  %kc: tensor<100x16x4x128xbf16>,
                                  %vc: tensor<99x16x4x128xbf16>) {
  // expected-error @+1 {{num_blocks (dim 0) of k_cache (100) must equal that of v_cache (99)}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<100x16x4x128xbf16>, tensor<99x16x4x128xbf16>
  return
}

// -----

func.func @cache_write_block_size(%k: tensor<?x4x128xbf16>,
                                  %v: tensor<?x4x128xbf16>,
                                  %slots: tensor<?xi64>,
                                  %kc: tensor<?x16x4x128xbf16>,
                                  %vc: tensor<?x32x4x128xbf16>) {
  // expected-error @+1 {{block_size (dim 1) of k_cache (16) must equal that of v_cache (32)}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x32x4x128xbf16>
  return
}

// -----

func.func @cache_write_cache_num_kv_heads(%k: tensor<?x4x128xbf16>,
                                          %v: tensor<?x4x128xbf16>,
                                          %slots: tensor<?xi64>,
                                          %kc: tensor<?x16x4x128xbf16>,
                                          %vc: tensor<?x16x8x128xbf16>) {
  // expected-error @+1 {{num_kv_heads (dim 2) of k_cache (4) must equal that of v_cache (8)}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x8x128xbf16>
  return
}

// -----

func.func @cache_write_cache_element_types_differ(
    %k: tensor<?x4x128xbf16>, %v: tensor<?x4x128xbf16>, %slots: tensor<?xi64>,
    %kc: tensor<?x16x4x128xf8E4M3FN>, %vc: tensor<?x16x4x128xbf16>,
    %ks: tensor<f32>, %vs: tensor<f32>) {
  // expected-error @+1 {{k_cache and v_cache element types must match, got 'f8E4M3FN' and 'bf16'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xbf16>
      scales tensor<f32>, tensor<f32>
  return
}

// -----

// A 16-bit cache must have the activation dtype.
func.func @cache_write_cache_dtype_not_activation(
    %k: tensor<?x4x128xbf16>, %v: tensor<?x4x128xbf16>, %slots: tensor<?xi64>,
    %kc: tensor<?x16x4x128xf16>, %vc: tensor<?x16x4x128xf16>) {
  // expected-error @+1 {{cache element type must be the activation type ('bf16') or f8E4M3FN, got 'f16'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xf16>, tensor<?x16x4x128xf16>
  return
}

// -----

// The only fp8 cache format is f8E4M3FN.
func.func @cache_write_cache_dtype_other_fp8(
    %k: tensor<?x4x128xbf16>, %v: tensor<?x4x128xbf16>, %slots: tensor<?xi64>,
    %kc: tensor<?x16x4x128xf8E5M2>, %vc: tensor<?x16x4x128xf8E5M2>,
    %ks: tensor<f32>, %vs: tensor<f32>) {
  // expected-error @+1 {{cache element type must be the activation type ('bf16') or f8E4M3FN, got 'f8E5M2'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xf8E5M2>, tensor<?x16x4x128xf8E5M2>
      scales tensor<f32>, tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// cache_write: caches against k and v
//===----------------------------------------------------------------------===//

func.func @cache_write_k_cache_num_kv_heads(%k: tensor<?x4x128xbf16>,
                                            %v: tensor<?x4x128xbf16>,
                                            %slots: tensor<?xi64>,
                                            %kc: tensor<?x16x8x128xbf16>,
                                            %vc: tensor<?x16x8x128xbf16>) {
  // expected-error @+1 {{num_kv_heads of k_cache (8) must equal that of k (4)}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
  return
}

// -----

// K cache sized with Dv instead of Dqk.
func.func @cache_write_k_cache_head_dim(%k: tensor<?x4x192xbf16>,
                                        %v: tensor<?x4x128xbf16>,
                                        %slots: tensor<?xi64>,
                                        %kc: tensor<?x16x4x128xbf16>,
                                        %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{k_cache head dim (128) must equal the k head dim, qk_head_dim (192)}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x192xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}

// -----

// V cache sized with Dqk instead of Dv.
func.func @cache_write_v_cache_head_dim(%k: tensor<?x4x192xbf16>,
                                        %v: tensor<?x4x128xbf16>,
                                        %slots: tensor<?xi64>,
                                        %kc: tensor<?x16x4x192xbf16>,
                                        %vc: tensor<?x16x4x192xbf16>) {
  // expected-error @+1 {{v_cache head dim (192) must equal the v head dim, v_head_dim (128)}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x192xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x192xbf16>, tensor<?x16x4x192xbf16>
  return
}

// -----

func.func @cache_write_slot_mapping_type(%k: tensor<?x4x128xbf16>,
                                         %v: tensor<?x4x128xbf16>,
                                         %slots: tensor<?xui32>,
                                         %kc: tensor<?x16x4x128xbf16>,
                                         %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{slot_mapping must be a rank-1 tensor of i32 or i64, got 'tensor<?xui32>'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xui32>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}

// -----

func.func @cache_write_slot_mapping_token_count(%k: tensor<3x4x128xbf16>,
                                                %v: tensor<3x4x128xbf16>,
                                                %slots: tensor<2xi64>,
                                                %kc: tensor<?x16x4x128xbf16>,
                                                %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{token count (dim 0) of slot_mapping (2) must equal that of k (3)}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<3x4x128xbf16>, tensor<3x4x128xbf16>, tensor<2xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// cache_write: fp8 scales (shared with paged_attention)
//===----------------------------------------------------------------------===//

func.func @cache_write_fp8_without_scales(%k: tensor<?x4x128xbf16>,
                                          %v: tensor<?x4x128xbf16>,
                                          %slots: tensor<?xi64>,
                                          %kc: tensor<?x16x4x128xf8E4M3FN>,
                                          %vc: tensor<?x16x4x128xf8E4M3FN>) {
  // expected-error @+1 {{an f8E4M3FN cache needs the k_scale and v_scale operands}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>
  return
}

// -----

// The custom syntax takes both scales or neither; the generic form can give
// only one.
func.func @cache_write_fp8_only_k_scale(%k: tensor<?x4x128xbf16>,
                                        %v: tensor<?x4x128xbf16>,
                                        %slots: tensor<?xi64>,
                                        %kc: tensor<?x16x4x128xf8E4M3FN>,
                                        %vc: tensor<?x16x4x128xf8E4M3FN>,
                                        %ks: tensor<f32>) {
  // expected-error @+1 {{an f8E4M3FN cache needs the k_scale and v_scale operands}}
  %kc2, %vc2 = "attn.cache_write"(%k, %v, %slots, %kc, %vc, %ks)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0>}>
      : (tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>,
         tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>, tensor<f32>)
      -> (tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>)
  return
}

// -----

func.func @cache_write_scales_without_fp8(%k: tensor<?x4x128xbf16>,
                                          %v: tensor<?x4x128xbf16>,
                                          %slots: tensor<?xi64>,
                                          %kc: tensor<?x16x4x128xbf16>,
                                          %vc: tensor<?x16x4x128xbf16>,
                                          %ks: tensor<f32>, %vs: tensor<f32>) {
  // expected-error @+1 {{k_scale and v_scale are only allowed with an f8E4M3FN cache, the cache is 'bf16'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
      scales tensor<f32>, tensor<f32>
  return
}

// -----

func.func @cache_write_k_scale_not_scalar(%k: tensor<?x4x128xbf16>,
                                          %v: tensor<?x4x128xbf16>,
                                          %slots: tensor<?xi64>,
                                          %kc: tensor<?x16x4x128xf8E4M3FN>,
                                          %vc: tensor<?x16x4x128xf8E4M3FN>,
                                          %ks: tensor<1xf32>,
                                          %vs: tensor<f32>) {
  // expected-error @+1 {{k_scale must be tensor<f32>, got 'tensor<1xf32>'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>
      scales tensor<1xf32>, tensor<f32>
  return
}

// -----

func.func @cache_write_v_scale_not_f32(%k: tensor<?x4x128xbf16>,
                                       %v: tensor<?x4x128xbf16>,
                                       %slots: tensor<?xi64>,
                                       %kc: tensor<?x16x4x128xf8E4M3FN>,
                                       %vc: tensor<?x16x4x128xf8E4M3FN>,
                                       %ks: tensor<f32>, %vs: tensor<bf16>) {
  // expected-error @+1 {{v_scale must be tensor<f32>, got 'tensor<bf16>'}}
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>
      scales tensor<f32>, tensor<bf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// paged_attention
//===----------------------------------------------------------------------===//

func.func @paged_attention_query_rank(%q: tensor<?x8192xbf16>,
                                      %kc: tensor<?x16x8x128xbf16>,
                                      %vc: tensor<?x16x8x128xbf16>,
                                      %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                      %qs: tensor<?xi32>) {
  // expected-error @+1 {{query must have rank 3 [tokens, num_q_heads, qk_head_dim], got 'tensor<?x8192xbf16>'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8192xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x128xbf16>
  return
}

// -----

func.func @paged_attention_query_element_type(%q: tensor<?x64x128xi8>,
                                              %kc: tensor<?x16x8x128xi8>,
                                              %vc: tensor<?x16x8x128xi8>,
                                              %bt: tensor<?x?xi32>,
                                              %sl: tensor<?xi32>,
                                              %qs: tensor<?xi32>) {
  // expected-error @+1 {{query element type must be bf16, f16 or f32, got 'i8'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x64x128xi8>, tensor<?x16x8x128xi8>, tensor<?x16x8x128xi8>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x128xi8>
  return
}

// -----

// The cache-pair rules hold for paged_attention too.
func.func @paged_attention_cache_dtype(%q: tensor<?x64x128xf32>,
                                       %kc: tensor<?x16x8x128xbf16>,
                                       %vc: tensor<?x16x8x128xbf16>,
                                       %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                       %qs: tensor<?xi32>) {
  // expected-error @+1 {{cache element type must be the activation type ('f32') or f8E4M3FN, got 'bf16'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x64x128xf32>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x128xf32>
  return
}

// -----

func.func @paged_attention_gqa_not_divisible(%q: tensor<?x64x128xbf16>,
                                             %kc: tensor<?x16x5x128xbf16>,
                                             %vc: tensor<?x16x5x128xbf16>,
                                             %bt: tensor<?x?xi32>,
                                             %sl: tensor<?xi32>,
                                             %qs: tensor<?xi32>) {
  // expected-error @+1 {{num_q_heads (query dim 1, 64) must be divisible by num_kv_heads (k_cache dim 2, 5)}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x64x128xbf16>, tensor<?x16x5x128xbf16>, tensor<?x16x5x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x128xbf16>
  return
}

// -----

// Zero KV heads is rejected even when the query head count is dynamic.
func.func @paged_attention_zero_kv_heads(%q: tensor<?x?x128xbf16>,
                                         %kc: tensor<?x16x0x128xbf16>,
                                         %vc: tensor<?x16x0x128xbf16>,
                                         %bt: tensor<?x?xi32>,
                                         %sl: tensor<?xi32>,
                                         %qs: tensor<?xi32>) {
  // expected-error @+1 {{num_q_heads (query dim 1, ?) must be divisible by num_kv_heads (k_cache dim 2, 0)}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x?x128xbf16>, tensor<?x16x0x128xbf16>, tensor<?x16x0x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x?x128xbf16>
  return
}

// -----

func.func @paged_attention_k_cache_head_dim(%q: tensor<?x64x192xbf16>,
                                            %kc: tensor<?x16x4x128xbf16>,
                                            %vc: tensor<?x16x4x128xbf16>,
                                            %bt: tensor<?x?xi32>,
                                            %sl: tensor<?xi32>,
                                            %qs: tensor<?xi32>) {
  // expected-error @+1 {{k_cache head dim (128) must equal the query head dim, qk_head_dim (192)}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64}
      : tensor<?x64x192xbf16>, tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x128xbf16>
  return
}

// -----

// The output is Dv wide (the V cache's head dim), not Dqk.
func.func @paged_attention_output_head_dim(%q: tensor<?x64x192xbf16>,
                                           %kc: tensor<?x16x4x192xbf16>,
                                           %vc: tensor<?x16x4x128xbf16>,
                                           %bt: tensor<?x?xi32>,
                                           %sl: tensor<?xi32>,
                                           %qs: tensor<?xi32>) {
  // expected-error @+1 {{output must have shape [?, 64, 128] (tokens x num_q_heads x v_head_dim of the v_cache), got 'tensor<?x64x192xbf16>'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64}
      : tensor<?x64x192xbf16>, tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x192xbf16>
  return
}

// -----

// The output has Hq heads, not Hkv.
func.func @paged_attention_output_heads(%q: tensor<?x64x192xbf16>,
                                        %kc: tensor<?x16x4x192xbf16>,
                                        %vc: tensor<?x16x4x128xbf16>,
                                        %bt: tensor<?x?xi32>,
                                        %sl: tensor<?xi32>,
                                        %qs: tensor<?xi32>) {
  // expected-error @+1 {{output must have shape [?, 64, 128] (tokens x num_q_heads x v_head_dim of the v_cache), got 'tensor<?x4x128xbf16>'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64}
      : tensor<?x64x192xbf16>, tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x128xbf16>
  return
}

// -----

func.func @paged_attention_output_element_type(%q: tensor<?x8x128xbf16>,
                                               %kc: tensor<?x16x8x128xbf16>,
                                               %vc: tensor<?x16x8x128xbf16>,
                                               %bt: tensor<?x?xi32>,
                                               %sl: tensor<?xi32>,
                                               %qs: tensor<?xi32>) {
  // expected-error @+1 {{output element type ('f32') must equal the query element type ('bf16')}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xf32>
  return
}

// -----

func.func @paged_attention_block_tables_rank(%q: tensor<?x8x128xbf16>,
                                             %kc: tensor<?x16x8x128xbf16>,
                                             %vc: tensor<?x16x8x128xbf16>,
                                             %bt: tensor<?xi32>,
                                             %sl: tensor<?xi32>,
                                             %qs: tensor<?xi32>) {
  // expected-error @+1 {{block_tables must be a rank-2 tensor of i32 or i64, got 'tensor<?xi32>'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return
}

// -----

func.func @paged_attention_seq_lens_type(%q: tensor<?x8x128xbf16>,
                                         %kc: tensor<?x16x8x128xbf16>,
                                         %vc: tensor<?x16x8x128xbf16>,
                                         %bt: tensor<?x?xi32>,
                                         %sl: tensor<?xf32>,
                                         %qs: tensor<?xi32>) {
  // expected-error @+1 {{seq_lens must be a rank-1 tensor of i32 or i64, got 'tensor<?xf32>'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xf32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return
}

// -----

func.func @paged_attention_query_start_loc_type(%q: tensor<?x8x128xbf16>,
                                                %kc: tensor<?x16x8x128xbf16>,
                                                %vc: tensor<?x16x8x128xbf16>,
                                                %bt: tensor<?x?xi32>,
                                                %sl: tensor<?xi32>,
                                                %qs: tensor<?xi16>) {
  // expected-error @+1 {{query_start_loc must be a rank-1 tensor of i32 or i64, got 'tensor<?xi16>'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi16> -> tensor<?x8x128xbf16>
  return
}

// -----

func.func @paged_attention_seq_lens_vs_block_tables(
    %q: tensor<?x8x128xbf16>, %kc: tensor<?x16x8x128xbf16>,
    %vc: tensor<?x16x8x128xbf16>, %bt: tensor<3x32xi32>, %sl: tensor<4xi32>,
    %qs: tensor<5xi32>) {
  // expected-error @+1 {{sequence count (dim 0) of seq_lens (4) must equal that of block_tables (3)}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<3x32xi32>, tensor<4xi32>, tensor<5xi32> -> tensor<?x8x128xbf16>
  return
}

// -----

func.func @paged_attention_query_start_loc_length(
    %q: tensor<?x8x128xbf16>, %kc: tensor<?x16x8x128xbf16>,
    %vc: tensor<?x16x8x128xbf16>, %bt: tensor<4x32xi32>, %sl: tensor<4xi32>,
    %qs: tensor<4xi32>) {
  // expected-error @+1 {{query_start_loc must have one more entry than seq_lens (5), got 4}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<4x32xi32>, tensor<4xi32>, tensor<4xi32> -> tensor<?x8x128xbf16>
  return
}

// -----

// One sink per query head, not per KV head.
func.func @paged_attention_sinks_length(%q: tensor<?x64x64xbf16>,
                                        %kc: tensor<?x16x8x64xbf16>,
                                        %vc: tensor<?x16x8x64xbf16>,
                                        %bt: tensor<?x?xi32>,
                                        %sl: tensor<?xi32>, %qs: tensor<?xi32>,
                                        %sinks: tensor<8xf32>) {
  // expected-error @+1 {{sinks must have shape [64] (one logit per query head), got 'tensor<8xf32>'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs sinks %sinks
      {softmax_scale = 0.125 : f64}
      : tensor<?x64x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<8xf32>
      -> tensor<?x64x64xbf16>
  return
}

// -----

func.func @paged_attention_sinks_type(%q: tensor<?x64x64xbf16>,
                                      %kc: tensor<?x16x8x64xbf16>,
                                      %vc: tensor<?x16x8x64xbf16>,
                                      %bt: tensor<?x?xi32>,
                                      %sl: tensor<?xi32>, %qs: tensor<?xi32>,
                                      %sinks: tensor<64xbf16>) {
  // expected-error @+1 {{sinks element type must be f32, got 'bf16'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs sinks %sinks
      {softmax_scale = 0.125 : f64}
      : tensor<?x64x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<64xbf16>
      -> tensor<?x64x64xbf16>
  return
}

// -----

// The fp8 scale rules hold for paged_attention too.
func.func @paged_attention_fp8_without_scales(
    %q: tensor<?x8x128xbf16>, %kc: tensor<?x16x8x128xf8E4M3FN>,
    %vc: tensor<?x16x8x128xf8E4M3FN>, %bt: tensor<?x?xi32>,
    %sl: tensor<?xi32>, %qs: tensor<?xi32>) {
  // expected-error @+1 {{an f8E4M3FN cache needs the k_scale and v_scale operands}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xf8E4M3FN>,
        tensor<?x16x8x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x8x128xbf16>
  return
}

// -----

func.func @paged_attention_softmax_scale_zero(%q: tensor<?x8x128xbf16>,
                                              %kc: tensor<?x16x8x128xbf16>,
                                              %vc: tensor<?x16x8x128xbf16>,
                                              %bt: tensor<?x?xi32>,
                                              %sl: tensor<?xi32>,
                                              %qs: tensor<?xi32>) {
  // expected-error @+1 {{softmax_scale must be a positive finite number, got 0}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return
}

// -----

func.func @paged_attention_sliding_window_negative(
    %q: tensor<?x8x128xbf16>, %kc: tensor<?x16x8x128xbf16>,
    %vc: tensor<?x16x8x128xbf16>, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
    %qs: tensor<?xi32>) {
  // expected-error @+1 {{sliding_window must be >= 0, got -1}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64, sliding_window = -1}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return
}

// -----

func.func @paged_attention_logit_softcap_negative(
    %q: tensor<?x8x128xbf16>, %kc: tensor<?x16x8x128xbf16>,
    %vc: tensor<?x16x8x128xbf16>, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
    %qs: tensor<?xi32>) {
  // expected-error @+1 {{logit_softcap must be >= 0 (0: none), got -30}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64, logit_softcap = -30.0 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return
}

// -----

func.func @paged_attention_value_scale_zero(%q: tensor<?x8x128xbf16>,
                                            %kc: tensor<?x16x8x128xbf16>,
                                            %vc: tensor<?x16x8x128xbf16>,
                                            %bt: tensor<?x?xi32>,
                                            %sl: tensor<?xi32>,
                                            %qs: tensor<?xi32>) {
  // expected-error @+1 {{value_scale must be a positive finite number, got 0}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64, value_scale = 0.0 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// output_gate
//===----------------------------------------------------------------------===//

func.func @output_gate_rank(%o: tensor<?x4096xbf16>, %g: tensor<?x4096xbf16>) {
  // expected-error @+1 {{input must have rank 3 [tokens, num_q_heads, v_head_dim], got 'tensor<?x4096xbf16>'}}
  %y = attn.output_gate %o, %g : tensor<?x4096xbf16>
  return
}

// -----

func.func @output_gate_element_type(%o: tensor<?x16x256xi8>,
                                    %g: tensor<?x16x256xi8>) {
  // expected-error @+1 {{input element type must be bf16, f16 or f32, got 'i8'}}
  %y = attn.output_gate %o, %g : tensor<?x16x256xi8>
  return
}

// -----

// A gate is the output's shape or one value per head, nothing between.
func.func @output_gate_type_mismatch(%o: tensor<?x16x128xbf16>,
                                     %g: tensor<?x16x256xbf16>) {
  // expected-error @+1 {{gate must have shape [?, 16, 1] (the input's shape, or tokens x num_q_heads x 1 (one value per head)), got 'tensor<?x16x256xbf16>'}}
  %y = attn.output_gate %o, %g : tensor<?x16x128xbf16>, tensor<?x16x256xbf16>
  return
}

// -----

func.func @output_gate_head_scalar_heads(%o: tensor<?x16x128xbf16>,
                                         %g: tensor<?x8x1xbf16>) {
  // expected-error @+1 {{gate must have shape [?, 16, 1] (the input's shape, or tokens x num_q_heads x 1 (one value per head)), got 'tensor<?x8x1xbf16>'}}
  %y = attn.output_gate %o, %g : tensor<?x16x128xbf16>, tensor<?x8x1xbf16>
  return
}

// -----

func.func @output_gate_head_scalar_element(%o: tensor<?x16x128xbf16>,
                                           %g: tensor<?x16x1xf16>) {
  // expected-error @+1 {{gate element type}}
  %y = attn.output_gate %o, %g : tensor<?x16x128xbf16>, tensor<?x16x1xf16>
  return
}

// -----

func.func @output_gate_result_type(%o: tensor<?x16x128xbf16>,
                                   %g: tensor<?x16x1xbf16>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %y = "attn.output_gate"(%o, %g)
      : (tensor<?x16x128xbf16>, tensor<?x16x1xbf16>) -> tensor<?x16x64xbf16>
  return
}

// -----

// head_scalar: the fused width adds num_q_heads gate columns.
func.func @qkv_split_head_scalar_width(%qkv: tensor<?x3744xbf16>) {
  // expected-error @+1 {{+ num_q_heads = 3728 for gate_layout head_scalar, got 3744}}
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 16, num_kv_heads = 2,
      qk_head_dim = 192, v_head_dim = 128, gate_layout = #attn.gate_layout<head_scalar>}
      : tensor<?x3744xbf16> -> tensor<?x16x192xbf16>, tensor<?x2x192xbf16>,
        tensor<?x2x128xbf16>, tensor<?x16x1xbf16>
  return
}

// -----

func.func @qkv_split_head_scalar_gate_shape(%qkv: tensor<?x3728xbf16>) {
  // expected-error @+1 {{gate result must have shape [?, 16, 1] (tokens x num_q_heads x 1)}}
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 16, num_kv_heads = 2,
      qk_head_dim = 192, v_head_dim = 128, gate_layout = #attn.gate_layout<head_scalar>}
      : tensor<?x3728xbf16> -> tensor<?x16x192xbf16>, tensor<?x2x192xbf16>,
        tensor<?x2x128xbf16>, tensor<?x16x128xbf16>
  return
}

// -----

func.func @rope_longrope_lists_missing(%x: tensor<?x4x96xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 96, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling short_factor and long_factor are set exactly for longrope scaling}}
      scaling = #attn.rope_scaling<kind = longrope, factor = 32.0, original_max_position = 4096>}
      : tensor<?x4x96xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_lists_without_longrope(%x: tensor<?x4x4xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 4, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling short_factor and long_factor are set exactly for longrope scaling}}
      scaling = #attn.rope_scaling<kind = linear, factor = 2.0,
          short_factor = array<f64: 1.0, 1.0>, long_factor = array<f64: 2.0, 2.0>>}
      : tensor<?x4x4xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_longrope_list_lengths(%x: tensor<?x4x4xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 4, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling short_factor and long_factor must be non-empty and of one length (got 2 and 3)}}
      scaling = #attn.rope_scaling<kind = longrope, factor = 32.0, original_max_position = 4096,
          short_factor = array<f64: 1.0, 1.0>, long_factor = array<f64: 2.0, 2.0, 2.0>>}
      : tensor<?x4x4xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_longrope_factor_value(%x: tensor<?x4x4xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 4, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling short_factor and long_factor values must be positive finite numbers, got 0}}
      scaling = #attn.rope_scaling<kind = longrope, factor = 32.0, original_max_position = 4096,
          short_factor = array<f64: 1.0, 0.0>, long_factor = array<f64: 2.0, 2.0>>}
      : tensor<?x4x4xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_longrope_original(%x: tensor<?x4x4xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 4, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling original_max_position must be set (> 0) for longrope scaling}}
      scaling = #attn.rope_scaling<kind = longrope, factor = 32.0,
          short_factor = array<f64: 1.0, 1.0>, long_factor = array<f64: 2.0, 2.0>>}
      : tensor<?x4x4xbf16>, tensor<?xi64>
  return
}

// -----

// One divisor per inverse frequency: rotary_dim / 2 of them.
func.func @rope_longrope_rotary_dim(%x: tensor<?x4x8xbf16>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{longrope short_factor and long_factor must have rotary_dim / 2 (4) values, got 2}}
  %0 = attn.rope %x, %pos {rotary_dim = 8, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = longrope, factor = 32.0, original_max_position = 4096,
          short_factor = array<f64: 1.0, 1.0>, long_factor = array<f64: 2.0, 2.0>>}
      : tensor<?x4x8xbf16>, tensor<?xi64>
  return
}

// -----

func.func @rope_attention_factor_kind(%x: tensor<?x4x4xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 4, theta = 1.0e+04 : f64,
      // expected-error @+1 {{rope_scaling attention_factor applies to yarn and longrope scaling only}}
      scaling = #attn.rope_scaling<kind = linear, factor = 2.0, attention_factor = 1.5>}
      : tensor<?x4x4xbf16>, tensor<?xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Rules enforced by ODS traits and the parsers
//===----------------------------------------------------------------------===//

func.func @rms_norm_result_type(%x: tensor<?x4x128xbf16>,
                                %w: tensor<128xbf16>) {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %0 = "attn.rms_norm"(%x, %w) <{eps = 1.0e-06 : f64, operandSegmentSizes = array<i32: 1, 1, 0>}>
      : (tensor<?x4x128xbf16>, tensor<128xbf16>) -> tensor<?x4x128xf32>
  return
}

// -----

func.func @cache_write_result_type(%k: tensor<?x4x128xbf16>,
                                   %v: tensor<?x4x128xbf16>,
                                   %slots: tensor<?xi64>,
                                   %kc: tensor<?x16x4x128xbf16>,
                                   %vc: tensor<?x16x4x128xbf16>) {
  // expected-error @+1 {{failed to verify that all of {k_cache, k_cache_out} have same type}}
  %kc2, %vc2 = "attn.cache_write"(%k, %v, %slots, %kc, %vc)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}>
      : (tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>,
         tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>)
      -> (tensor<?x32x4x128xbf16>, tensor<?x16x4x128xbf16>)
  return
}

// -----

func.func @qkv_split_missing_attribute(%qkv: tensor<?x1536xbf16>) {
  // expected-error @+1 {{requires attribute 'v_head_dim'}}
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128}
      : tensor<?x1536xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

func.func @rope_theta_not_f64(%x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{attribute 'theta' failed to satisfy constraint: 64-bit float attribute}}
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f32}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

func.func @qkv_split_unknown_gate_layout(%qkv: tensor<?x1536xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128,
      // expected-error @+2 {{expected ::attnc::attn::GateLayout to be one of: none, qkvg, interleaved}}
      // expected-error @+1 {{failed to parse Attn_GateLayoutAttr parameter 'value'}}
      gate_layout = #attn.gate_layout<gqkv>}
      : tensor<?x1536xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}

// -----

func.func @rope_scaling_bad_bool(%x: tensor<?x4x128xbf16>,
                                 %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = yarn, factor = 40.0,
                                   original_max_position = 4096,
                                   // expected-error @+2 {{expected 'true' or 'false', got 'yes'}}
                                   // expected-error @+1 {{failed to parse Attn_RopeScalingAttr parameter 'truncate'}}
                                   truncate = yes>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}

// -----

// The preprocess launch bound is a count of blocks.
func.func @preprocess_schedule_min_blocks(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                                          %kc: tensor<?x16x2x2xbf16>,
                                          %vc: tensor<?x16x2x3xbf16>) {
  // expected-error @+1 {{preprocess_schedule min_blocks_per_sm must be >= 1, got 0}}
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, stages = [], schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 0>}
      : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
      -> tensor<?x4x2xbf16>
  return
}

// -----

// The CUDA-core form has no matrix instruction to choose.
func.func @schedule_cuda_core_wgmma(%q: tensor<?x16x192xbf16>, %kc: tensor<?x16x2x192xbf16>,
                                    %vc: tensor<?x16x2x128xbf16>, %bt: tensor<?x?xi32>,
                                    %sl: tensor<?xi32>, %qs: tensor<?xi32>) {
  // expected-error @+1 {{attention_schedule form cuda_core has no matrix instruction: mma must be "mma.sync" (the default), got "wgmma"}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma", form = cuda_core>, softmax_scale = 0.07 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return
}

// -----

// At least one work item's loads are in flight.
func.func @preprocess_schedule_prefetch(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                                        %kc: tensor<?x16x2x2xbf16>,
                                        %vc: tensor<?x16x2x3xbf16>) {
  // expected-error @+1 {{preprocess_schedule prefetch must be >= 1, got 0}}
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, stages = [], schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4, prefetch = 0>}
      : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
      -> tensor<?x4x2xbf16>
  return
}

// -----

// The form is one of the two kernel forms.
func.func @schedule_bad_form(%q: tensor<?x16x192xbf16>, %kc: tensor<?x16x2x192xbf16>,
                             %vc: tensor<?x16x2x128xbf16>, %bt: tensor<?x?xi32>,
                             %sl: tensor<?xi32>, %qs: tensor<?xi32>) {
  // expected-error @+2 {{expected one of [tensor_core, cuda_core] for the paged attention kernel's form, got: reference}}
  // expected-error @+1 {{failed to parse Attn_AttentionScheduleAttr parameter 'form'}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, form = reference>, softmax_scale = 0.07 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return
}

// -----

// The schedule's mma names one of the two instructions.
func.func @schedule_bad_mma(%q: tensor<?x16x192xbf16>, %kc: tensor<?x16x2x192xbf16>,
                            %vc: tensor<?x16x2x128xbf16>, %bt: tensor<?x?xi32>,
                            %sl: tensor<?xi32>, %qs: tensor<?xi32>) {
  // expected-error @+1 {{attention_schedule mma must be "mma.sync", "wgmma" or "wgmma_ws", got "mma"}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "mma">, softmax_scale = 0.07 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return
}

// -----

// wgmma tiles are one warpgroup of two m64 row blocks.
func.func @schedule_wgmma_block_m(%q: tensor<?x16x192xbf16>, %kc: tensor<?x16x2x192xbf16>,
                                  %vc: tensor<?x16x2x128xbf16>, %bt: tensor<?x?xi32>,
                                  %sl: tensor<?xi32>, %qs: tensor<?xi32>) {
  // expected-error @+1 {{attention_schedule mma "wgmma" needs block_m 128 and num_warps 4 (one warpgroup, two m64 row blocks), got block_m 64 and num_warps 4}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {schedule = #attn.attention_schedule<block_m = 64, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">, softmax_scale = 0.07 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return
}

// -----

// wgmma operands are 64-element (128-byte) swizzled column blocks.
func.func @schedule_wgmma_pad(%q: tensor<?x16x80xbf16>, %kc: tensor<?x16x2x80xbf16>,
                              %vc: tensor<?x16x2x128xbf16>, %bt: tensor<?x?xi32>,
                              %sl: tensor<?xi32>, %qs: tensor<?xi32>) {
  // expected-error @+1 {{attention_schedule mma "wgmma" needs qk_dim_padded and v_dim_padded multiples of 64 (128-byte swizzled column blocks) and v_dim_padded <= 256, got 80 and 128}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 80, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">, softmax_scale = 0.07 : f64}
      : tensor<?x16x80xbf16>, tensor<?x16x2x80xbf16>, tensor<?x16x2x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return
}

// -----

func.func @query_temperature_floor_scale(%q: tensor<?x4x8xbf16>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{temperature floor_scale must be a positive finite number, got 0}}
  %0 = attn.query_temperature %q, %pos {floor_scale = 0.0 : f64, scale = 0.1 : f64}
      : tensor<?x4x8xbf16>, tensor<?xi64>
  return
}

// -----

func.func @query_temperature_rank(%q: tensor<?x32xbf16>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{input must have rank 3 [tokens, heads, qk_head_dim]}}
  %0 = attn.query_temperature %q, %pos {floor_scale = 8192.0 : f64, scale = 0.1 : f64}
      : tensor<?x32xbf16>, tensor<?xi64>
  return
}

// -----

func.func @query_temperature_positions(%q: tensor<3x4x8xbf16>, %pos: tensor<4xi64>) {
  // expected-error @+1 {{token count (dim 0)}}
  %0 = attn.query_temperature %q, %pos {floor_scale = 8192.0 : f64, scale = 0.1 : f64}
      : tensor<3x4x8xbf16>, tensor<4xi64>
  return
}

// -----

func.func @fused_temperature_not_last(%qkv: tensor<?x16xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>,
    %kc: tensor<?x16x1x4xbf16>, %vc: tensor<?x16x1x4xbf16>) {
  // expected-error @+1 {{q_temperature must be the last stage (it scales the final q)}}
  %q, %kc2, %vc2 = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos {
      num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 4, v_head_dim = 4,
      stages = [#attn.stage<q_temperature>, #attn.stage<rope>], rope_style = #attn.rope_style<neox>,
      rotary_dim = 4, rotary_offset = 0, theta = 1.0e4 : f64,
      temperature_floor_scale = 8192.0 : f64, temperature_scale = 0.1 : f64}
      : tensor<?x16xbf16>, tensor<?xi64> into tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>
        positions tensor<?xi64> -> tensor<?x2x4xbf16>
  return
}

// -----

func.func @fused_temperature_attrs(%qkv: tensor<?x16xbf16>, %slots: tensor<?xi64>, %pos: tensor<?xi64>,
    %kc: tensor<?x16x1x4xbf16>, %vc: tensor<?x16x1x4xbf16>) {
  // expected-error @+1 {{temperature_scale is required by the q_temperature stage}}
  %q, %kc2, %vc2 = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos {
      num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 4, v_head_dim = 4,
      stages = [#attn.stage<q_temperature>], temperature_floor_scale = 8192.0 : f64}
      : tensor<?x16xbf16>, tensor<?xi64> into tensor<?x16x1x4xbf16>, tensor<?x16x1x4xbf16>
        positions tensor<?xi64> -> tensor<?x2x4xbf16>
  return
}

// -----

func.func @attention_chunk_not_causal(%q: tensor<?x4x8xbf16>, %kc: tensor<?x16x2x8xbf16>,
    %vc: tensor<?x16x2x8xbf16>, %t: tensor<?x?xi32>, %l: tensor<?xi32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{attention_chunk needs causal attention}}
  %o = attn.paged_attention %q, %kc, %vc, %t, %l, %s {softmax_scale = 0.35 : f64,
      causal = false, attention_chunk = 128}
      : tensor<?x4x8xbf16>, tensor<?x16x2x8xbf16>, tensor<?x16x2x8xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x4x8xbf16>
  return
}

// -----

func.func @attention_chunk_negative(%q: tensor<?x4x8xbf16>, %kc: tensor<?x16x2x8xbf16>,
    %vc: tensor<?x16x2x8xbf16>, %t: tensor<?x?xi32>, %l: tensor<?xi32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{attention_chunk}}
  %o = attn.paged_attention %q, %kc, %vc, %t, %l, %s {softmax_scale = 0.35 : f64,
      attention_chunk = -2}
      : tensor<?x4x8xbf16>, tensor<?x16x2x8xbf16>, tensor<?x16x2x8xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x4x8xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// fused_preprocess: the q/k norm's style, scope and bias
//===----------------------------------------------------------------------===//

// Projection scope: k's weight is [Hkv * Dqk] = [4], not q's [Hq * Dqk].
func.func @fused_projection_k_weight(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                                     %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>,
                                     %qw: tensor<8xbf16>, %kw: tensor<8xbf16>) {
  // expected-error @+1 {{k_norm_weight must have shape [4] (heads * head_dim, scope projection), got 'tensor<8xbf16>'}}
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      q_norm_weight %qw k_norm_weight %kw
      {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3,
       stages = [#attn.stage<q_norm>, #attn.stage<k_norm>],
       norm_style = #attn.norm_style<rms>, norm_eps = 1.0e-06 : f64,
       norm_scope = #attn.norm_scope<projection>}
      : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
        q_norm_weight tensor<8xbf16> k_norm_weight tensor<8xbf16> -> tensor<?x4x2xbf16>
  return
}

// -----

func.func @fused_bias_without_stage(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                                    %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>,
                                    %kw: tensor<2xbf16>, %qb: tensor<2xbf16>) {
  // expected-error @+1 {{q_norm_bias is only allowed with the q_norm stage}}
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      k_norm_weight %kw q_norm_bias %qb
      {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3,
       stages = [#attn.stage<k_norm>],
       norm_style = #attn.norm_style<layernorm>, norm_eps = 1.0e-05 : f64}
      : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
        k_norm_weight tensor<2xbf16> q_norm_bias tensor<2xbf16> -> tensor<?x4x2xbf16>
  return
}

// -----

func.func @fused_bias_rms(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                          %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>,
                          %kw: tensor<2xbf16>, %kb: tensor<2xbf16>) {
  // expected-error @+1 {{k_norm_bias is only allowed with norm style layernorm, got rms}}
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      k_norm_weight %kw k_norm_bias %kb
      {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3,
       stages = [#attn.stage<k_norm>],
       norm_style = #attn.norm_style<rms>, norm_eps = 1.0e-05 : f64}
      : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
        k_norm_weight tensor<2xbf16> k_norm_bias tensor<2xbf16> -> tensor<?x4x2xbf16>
  return
}

// -----

func.func @fused_unweighted_weight(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                                   %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>,
                                   %qw: tensor<2xbf16>) {
  // expected-error @+1 {{q_norm_weight is not allowed with norm style unweighted}}
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      q_norm_weight %qw
      {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3,
       stages = [#attn.stage<q_norm>, #attn.stage<k_norm>],
       norm_style = #attn.norm_style<unweighted>, norm_eps = 1.0e-05 : f64}
      : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
        q_norm_weight tensor<2xbf16> -> tensor<?x4x2xbf16>
  return
}

// -----

func.func @fused_weight_missing(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                                %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>,
                                %qw: tensor<4x2xbf16>) {
  // expected-error @+1 {{k_norm_weight is required by norm style layernorm}}
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      q_norm_weight %qw
      {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3,
       stages = [#attn.stage<q_norm>, #attn.stage<k_norm>],
       norm_style = #attn.norm_style<layernorm>, norm_eps = 1.0e-05 : f64,
       norm_scope = #attn.norm_scope<head_weights>}
      : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
        q_norm_weight tensor<4x2xbf16> -> tensor<?x4x2xbf16>
  return
}

// -----

func.func @fused_scope_without_norm(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                                    %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>) {
  // expected-error @+1 {{norm_scope is only allowed with the q_norm or k_norm stage}}
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3,
       stages = [], norm_scope = #attn.norm_scope<projection>}
      : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
        -> tensor<?x4x2xbf16>
  return
}

// -----

// Persistent blocks are the warp-specialised kernel's only.
func.func @schedule_persistent_wgmma(%q: tensor<?x16x192xbf16>, %k: tensor<?x16x192xbf16>,
                                     %v: tensor<?x16x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{attention_schedule persistent = true needs mma "wgmma_ws" (the warp-specialised kernel), got "wgmma"}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma", persistent = true>, softmax_scale = 0.07 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x192xbf16>, tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return
}

// -----

// "wgmma_ws" (the warp-specialised form) needs a producer and two consumer
// warpgroups: num_warps 12.
func.func @schedule_ws_warps(%q: tensor<?x16x192xbf16>, %k: tensor<?x16x192xbf16>,
                             %v: tensor<?x16x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{attention_schedule mma "wgmma_ws" needs block_m 128 and num_warps 12 (a producer and two consumer warpgroups), got block_m 128 and num_warps 4}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {schedule = #attn.attention_schedule<block_m = 128, block_n = 128, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">, softmax_scale = 0.07 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x192xbf16>, tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return
}

// -----

// Its key tiles are 64 or 128 keys in at least two stages.
func.func @schedule_ws_block_n(%q: tensor<?x16x192xbf16>, %k: tensor<?x16x192xbf16>,
                               %v: tensor<?x16x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) {
  // expected-error @+1 {{attention_schedule mma "wgmma_ws" needs qk_dim_padded and v_dim_padded multiples of 64, v_dim_padded <= 256, block_n 64, 80, 128, 176 or 192 (the S wrappers) and at least 2 pipeline_stages, got 192, 128, 96 and 2}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {schedule = #attn.attention_schedule<block_m = 128, block_n = 96, num_warps = 12, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 1, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, mma = "wgmma_ws">, softmax_scale = 0.07 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x192xbf16>, tensor<?x16x128xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return
}
