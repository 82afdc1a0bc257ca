// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of every attn op in every optional form. Attributes equal to
// their default (gate_layout none, style rms / neox, rotary_offset 0,
// causal true, sliding_window 0, logit_softcap 0.0, value_scale 1.0, and
// rope_scaling fields at their defaults) are elided by the printer; the
// CHECK lines spell the whole attribute dictionary so that an elision or a
// missing attribute shows up as a failure.

//===----------------------------------------------------------------------===//
// qkv_split
//===----------------------------------------------------------------------===//

// Without gate, Dqk != Dv (MiMo-V2-Flash full attention):
// W = 64*192 + 4*192 + 4*128 = 13568.
// CHECK-LABEL: func.func @qkv_split_no_gate(
// CHECK-SAME:      %[[QKV:[^:]+]]: tensor<?x13568xbf16>
// CHECK:         %[[Q:[^ ,]+]], %[[K:[^ ,]+]], %[[V:[^ ,]+]] = attn.qkv_split %[[QKV]]
// CHECK-SAME:      {num_kv_heads = 4 : i64, num_q_heads = 64 : i64, qk_head_dim = 192 : i64, v_head_dim = 128 : i64}
// CHECK-SAME:      : tensor<?x13568xbf16> -> tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>
// CHECK:         return %[[Q]], %[[K]], %[[V]]
func.func @qkv_split_no_gate(%qkv: tensor<?x13568xbf16>)
    -> (tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 4,
      qk_head_dim = 192, v_head_dim = 128}
      : tensor<?x13568xbf16>
      -> tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>
  return %q, %k, %v
      : tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>
}

// gate_layout = none spelled out is the default and is elided.
// CHECK-LABEL: func.func @qkv_split_explicit_none(
// CHECK:         attn.qkv_split
// CHECK-SAME:      {num_kv_heads = 8 : i64, num_q_heads = 32 : i64, qk_head_dim = 128 : i64, v_head_dim = 128 : i64}
// CHECK-SAME:      : tensor<?x6144xf16> -> tensor<?x32x128xf16>, tensor<?x8x128xf16>, tensor<?x8x128xf16>
func.func @qkv_split_explicit_none(%qkv: tensor<?x6144xf16>)
    -> (tensor<?x32x128xf16>, tensor<?x8x128xf16>, tensor<?x8x128xf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 8,
      qk_head_dim = 128, v_head_dim = 128,
      gate_layout = #attn.gate_layout<none>}
      : tensor<?x6144xf16>
      -> tensor<?x32x128xf16>, tensor<?x8x128xf16>, tensor<?x8x128xf16>
  return %q, %k, %v
      : tensor<?x32x128xf16>, tensor<?x8x128xf16>, tensor<?x8x128xf16>
}

// Concatenated gate [q | k | v | g]: W = 8*128 + 2*128 + 2*128 + 8*128.
// CHECK-LABEL: func.func @qkv_split_qkvg(
// CHECK-SAME:      %[[QKV:[^:]+]]: tensor<?x2560xbf16>
// CHECK:         %[[Q:[^ ,]+]], %[[K:[^ ,]+]], %[[V:[^ ,]+]], %[[G:[^ ,]+]] = attn.qkv_split %[[QKV]]
// CHECK-SAME:      {gate_layout = #attn.gate_layout<qkvg>, num_kv_heads = 2 : i64, num_q_heads = 8 : i64, qk_head_dim = 128 : i64, v_head_dim = 128 : i64}
// CHECK-SAME:      : tensor<?x2560xbf16> -> tensor<?x8x128xbf16>, tensor<?x2x128xbf16>, tensor<?x2x128xbf16>, tensor<?x8x128xbf16>
// CHECK:         return %[[Q]], %[[K]], %[[V]], %[[G]]
func.func @qkv_split_qkvg(%qkv: tensor<?x2560xbf16>)
    -> (tensor<?x8x128xbf16>, tensor<?x2x128xbf16>, tensor<?x2x128xbf16>,
        tensor<?x8x128xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 8, num_kv_heads = 2,
      qk_head_dim = 128, v_head_dim = 128,
      gate_layout = #attn.gate_layout<qkvg>}
      : tensor<?x2560xbf16>
      -> tensor<?x8x128xbf16>, tensor<?x2x128xbf16>, tensor<?x2x128xbf16>,
         tensor<?x8x128xbf16>
  return %q, %k, %v, %g
      : tensor<?x8x128xbf16>, tensor<?x2x128xbf16>, tensor<?x2x128xbf16>,
        tensor<?x8x128xbf16>
}

// Interleaved gate with Dqk != Dv: W = 8*(192 + 128) + 2*192 + 2*128 = 3200.
// The gate is Dv wide per query head.
// CHECK-LABEL: func.func @qkv_split_interleaved_192_128(
// CHECK:         attn.qkv_split
// CHECK-SAME:      {gate_layout = #attn.gate_layout<interleaved>, num_kv_heads = 2 : i64, num_q_heads = 8 : i64, qk_head_dim = 192 : i64, v_head_dim = 128 : i64}
// CHECK-SAME:      : tensor<?x3200xbf16> -> tensor<?x8x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?x8x128xbf16>
func.func @qkv_split_interleaved_192_128(%qkv: tensor<?x3200xbf16>)
    -> tensor<?x8x128xbf16> {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 8, num_kv_heads = 2,
      qk_head_dim = 192, v_head_dim = 128,
      gate_layout = #attn.gate_layout<interleaved>}
      : tensor<?x3200xbf16>
      -> tensor<?x8x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>,
         tensor<?x8x128xbf16>
  return %g : tensor<?x8x128xbf16>
}

// Tiny odd dims, f32, static token count: W = 4*(2 + 3) + 2*2 + 2*3 = 30.
// CHECK-LABEL: func.func @qkv_split_interleaved_2_3(
// CHECK:         attn.qkv_split
// CHECK-SAME:      {gate_layout = #attn.gate_layout<interleaved>, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, qk_head_dim = 2 : i64, v_head_dim = 3 : i64}
// CHECK-SAME:      : tensor<7x30xf32> -> tensor<7x4x2xf32>, tensor<7x2x2xf32>, tensor<7x2x3xf32>, tensor<7x4x3xf32>
func.func @qkv_split_interleaved_2_3(%qkv: tensor<7x30xf32>)
    -> tensor<7x4x3xf32> {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2,
      qk_head_dim = 2, v_head_dim = 3,
      gate_layout = #attn.gate_layout<interleaved>}
      : tensor<7x30xf32>
      -> tensor<7x4x2xf32>, tensor<7x2x2xf32>, tensor<7x2x3xf32>,
         tensor<7x4x3xf32>
  return %g : tensor<7x4x3xf32>
}

// The same 2/3 shape with the concatenated gate has the same width.
// CHECK-LABEL: func.func @qkv_split_qkvg_2_3(
// CHECK:         attn.qkv_split
// CHECK-SAME:      {gate_layout = #attn.gate_layout<qkvg>, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, qk_head_dim = 2 : i64, v_head_dim = 3 : i64}
// CHECK-SAME:      : tensor<?x30xf32> -> tensor<?x4x2xf32>, tensor<?x2x2xf32>, tensor<?x2x3xf32>, tensor<?x4x3xf32>
func.func @qkv_split_qkvg_2_3(%qkv: tensor<?x30xf32>) -> tensor<?x4x3xf32> {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2,
      qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>}
      : tensor<?x30xf32>
      -> tensor<?x4x2xf32>, tensor<?x2x2xf32>, tensor<?x2x3xf32>,
         tensor<?x4x3xf32>
  return %g : tensor<?x4x3xf32>
}

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

// style = rms is the default and is elided.
// CHECK-LABEL: func.func @rms_norm_rms(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<?x32x128xbf16>, %[[W:[^:]+]]: tensor<128xbf16>
// CHECK:         %[[R:.+]] = attn.rms_norm %[[X]], %[[W]]
// CHECK-SAME:      {eps = 9.9999999999999995E-7 : f64} : tensor<?x32x128xbf16>, tensor<128xbf16>
// CHECK:         return %[[R]]
func.func @rms_norm_rms(%x: tensor<?x32x128xbf16>, %w: tensor<128xbf16>)
    -> tensor<?x32x128xbf16> {
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64,
      style = #attn.norm_style<rms>}
      : tensor<?x32x128xbf16>, tensor<128xbf16>
  return %0 : tensor<?x32x128xbf16>
}

// Gemma weighting (1 + w); the weight may be wider than the activations.
// CHECK-LABEL: func.func @rms_norm_gemma(
// CHECK:         attn.rms_norm
// CHECK-SAME:      {eps = 1.000000e-05 : f64, style = #attn.norm_style<gemma>}
// CHECK-SAME:      : tensor<?x2x256xf16>, tensor<256xf32>
func.func @rms_norm_gemma(%x: tensor<?x2x256xf16>, %w: tensor<256xf32>)
    -> tensor<?x2x256xf16> {
  %0 = attn.rms_norm %x, %w {eps = 1.0e-05 : f64,
      style = #attn.norm_style<gemma>}
      : tensor<?x2x256xf16>, tensor<256xf32>
  return %0 : tensor<?x2x256xf16>
}

// Llama 4's L2Norm: no weight operand.
// CHECK-LABEL: func.func @rms_norm_unweighted(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<?x8x64xbf16>
// CHECK:         attn.rms_norm %[[X]] {eps = 1.000000e-05 : f64, style = #attn.norm_style<unweighted>}
// CHECK-SAME:      : tensor<?x8x64xbf16>{{$}}
func.func @rms_norm_unweighted(%x: tensor<?x8x64xbf16>) -> tensor<?x8x64xbf16> {
  %0 = attn.rms_norm %x {eps = 1.0e-05 : f64,
      style = #attn.norm_style<unweighted>} : tensor<?x8x64xbf16>
  return %0 : tensor<?x8x64xbf16>
}

// LayerNorm with a bias, weights [Dqk] shared by the heads (Phi).
// CHECK-LABEL: func.func @rms_norm_layernorm_bias(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<?x32x80xbf16>, %[[W:[^:]+]]: tensor<80xbf16>, %[[B:[^:]+]]: tensor<80xbf16>
// CHECK:         attn.rms_norm %[[X]], %[[W]] bias %[[B]]
// CHECK-SAME:      {eps = 1.000000e-05 : f64, style = #attn.norm_style<layernorm>}
// CHECK-SAME:      : tensor<?x32x80xbf16>, tensor<80xbf16> bias tensor<80xbf16>
func.func @rms_norm_layernorm_bias(%x: tensor<?x32x80xbf16>, %w: tensor<80xbf16>,
                                   %b: tensor<80xbf16>) -> tensor<?x32x80xbf16> {
  %0 = attn.rms_norm %x, %w bias %b {eps = 1.0e-05 : f64,
      style = #attn.norm_style<layernorm>}
      : tensor<?x32x80xbf16>, tensor<80xbf16> bias tensor<80xbf16>
  return %0 : tensor<?x32x80xbf16>
}

// LayerNorm with a weight row per head, no bias (Cohere); scope head is the
// default and elided, head_weights printed.
// CHECK-LABEL: func.func @rms_norm_head_weights(
// CHECK:         attn.rms_norm %{{.+}}, %{{[^ ]+}} {eps = 1.000000e-05 : f64,
// CHECK-SAME:      scope = #attn.norm_scope<head_weights>, style = #attn.norm_style<layernorm>}
// CHECK-SAME:      : tensor<?x8x128xbf16>, tensor<8x128xbf16>{{$}}
func.func @rms_norm_head_weights(%x: tensor<?x8x128xbf16>, %w: tensor<8x128xbf16>)
    -> tensor<?x8x128xbf16> {
  %0 = attn.rms_norm %x, %w {eps = 1.0e-05 : f64,
      style = #attn.norm_style<layernorm>, scope = #attn.norm_scope<head_weights>}
      : tensor<?x8x128xbf16>, tensor<8x128xbf16>
  return %0 : tensor<?x8x128xbf16>
}

// RMSNorm over the whole projection (OLMo-2): weight [H * D].
// CHECK-LABEL: func.func @rms_norm_projection(
// CHECK:         attn.rms_norm
// CHECK-SAME:      {eps = 9.9999999999999995E-7 : f64, scope = #attn.norm_scope<projection>}
// CHECK-SAME:      : tensor<?x40x128xbf16>, tensor<5120xbf16>
func.func @rms_norm_projection(%x: tensor<?x40x128xbf16>, %w: tensor<5120xbf16>)
    -> tensor<?x40x128xbf16> {
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64,
      scope = #attn.norm_scope<projection>}
      : tensor<?x40x128xbf16>, tensor<5120xbf16>
  return %0 : tensor<?x40x128xbf16>
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

// Full-width neox rotary; style and offset at their defaults are elided.
// CHECK-LABEL: func.func @rope_neox(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<?x32x128xbf16>, %[[P:[^:]+]]: tensor<?xi64>
// CHECK:         %[[R:.+]] = attn.rope %[[X]], %[[P]]
// CHECK-SAME:      {rotary_dim = 128 : i64, theta = 5.000000e+05 : f64} : tensor<?x32x128xbf16>, tensor<?xi64>
// CHECK:         return %[[R]]
func.func @rope_neox(%x: tensor<?x32x128xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x32x128xbf16> {
  %0 = attn.rope %x, %pos {style = #attn.rope_style<neox>, rotary_dim = 128,
      rotary_offset = 0, theta = 5.0e+05 : f64}
      : tensor<?x32x128xbf16>, tensor<?xi64>
  return %0 : tensor<?x32x128xbf16>
}

// gptj pairing, i32 positions, static token count.
// CHECK-LABEL: func.func @rope_gptj(
// CHECK:         attn.rope
// CHECK-SAME:      {rotary_dim = 64 : i64, style = #attn.rope_style<gptj>, theta = 1.000000e+04 : f64}
// CHECK-SAME:      : tensor<5x16x64xf32>, tensor<5xi32>
func.func @rope_gptj(%x: tensor<5x16x64xf32>, %pos: tensor<5xi32>)
    -> tensor<5x16x64xf32> {
  %0 = attn.rope %x, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64,
      theta = 1.0e+04 : f64}
      : tensor<5x16x64xf32>, tensor<5xi32>
  return %0 : tensor<5x16x64xf32>
}

// Partial rotary at the start of the head (MiMo-V2-Flash: 64 of 192).
// CHECK-LABEL: func.func @rope_partial(
// CHECK:         attn.rope
// CHECK-SAME:      {rotary_dim = 64 : i64, theta = 5.000000e+06 : f64}
// CHECK-SAME:      : tensor<?x64x192xbf16>, tensor<?xi64>
func.func @rope_partial(%x: tensor<?x64x192xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x64x192xbf16> {
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 5.0e+06 : f64}
      : tensor<?x64x192xbf16>, tensor<?xi64>
  return %0 : tensor<?x64x192xbf16>
}

// Partial rotary at the end of the head (rope part after the nope part):
// offset + dim == Dqk is allowed.
// CHECK-LABEL: func.func @rope_partial_offset(
// CHECK:         attn.rope
// CHECK-SAME:      {rotary_dim = 64 : i64, rotary_offset = 128 : i64, style = #attn.rope_style<gptj>, theta = 1.000000e+04 : f64}
// CHECK-SAME:      : tensor<?x16x192xbf16>, tensor<?xi64>
func.func @rope_partial_offset(%x: tensor<?x16x192xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x16x192xbf16> {
  %0 = attn.rope %x, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64,
      rotary_offset = 128, theta = 1.0e+04 : f64}
      : tensor<?x16x192xbf16>, tensor<?xi64>
  return %0 : tensor<?x16x192xbf16>
}

// rotary_dim = 0 is the identity and is valid.
// CHECK-LABEL: func.func @rope_rotary_dim_zero(
// CHECK:         attn.rope
// CHECK-SAME:      {rotary_dim = 0 : i64, theta = 1.000000e+04 : f64}
func.func @rope_rotary_dim_zero(%x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x4x128xbf16> {
  %0 = attn.rope %x, %pos {rotary_dim = 0, theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return %0 : tensor<?x4x128xbf16>
}

// CHECK-LABEL: func.func @rope_scaling_linear(
// CHECK:         attn.rope
// CHECK-SAME:      {rotary_dim = 128 : i64, scaling = #attn.rope_scaling<kind = linear, factor = 4.000000e+00>, theta = 1.000000e+04 : f64}
func.func @rope_scaling_linear(%x: tensor<?x8x128xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x8x128xbf16> {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = linear, factor = 4.0>}
      : tensor<?x8x128xbf16>, tensor<?xi64>
  return %0 : tensor<?x8x128xbf16>
}

// Llama 3.1: low_freq_factor 1.0 and high_freq_factor 4.0 are the defaults
// and are elided even when spelled out.
// CHECK-LABEL: func.func @rope_scaling_llama3(
// CHECK:         attn.rope
// CHECK-SAME:      {rotary_dim = 128 : i64, scaling = #attn.rope_scaling<kind = llama3, factor = 8.000000e+00, original_max_position = 8192>, theta = 5.000000e+05 : f64}
func.func @rope_scaling_llama3(%x: tensor<?x32x128xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x32x128xbf16> {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 5.0e+05 : f64,
      scaling = #attn.rope_scaling<kind = llama3, factor = 8.0,
                                   original_max_position = 8192,
                                   low_freq_factor = 1.0,
                                   high_freq_factor = 4.0>}
      : tensor<?x32x128xbf16>, tensor<?xi64>
  return %0 : tensor<?x32x128xbf16>
}

// llama3 with non-default frequency factors.
// CHECK-LABEL: func.func @rope_scaling_llama3_factors(
// CHECK:         attn.rope
// CHECK-SAME:      scaling = #attn.rope_scaling<kind = llama3, factor = 3.200000e+01, original_max_position = 8192, low_freq_factor = 2.000000e+00, high_freq_factor = 8.000000e+00>
func.func @rope_scaling_llama3_factors(%x: tensor<?x32x128xbf16>,
                                       %pos: tensor<?xi64>)
    -> tensor<?x32x128xbf16> {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 5.0e+05 : f64,
      scaling = #attn.rope_scaling<kind = llama3, factor = 32.0,
                                   original_max_position = 8192,
                                   low_freq_factor = 2.0,
                                   high_freq_factor = 8.0>}
      : tensor<?x32x128xbf16>, tensor<?xi64>
  return %0 : tensor<?x32x128xbf16>
}

// yarn with every field away from its default; fields print in declaration
// order and floats print exactly.
// CHECK-LABEL: func.func @rope_scaling_yarn(
// CHECK:         attn.rope
// CHECK-SAME:      {rotary_dim = 64 : i64, rotary_offset = 128 : i64, scaling = #attn.rope_scaling<kind = yarn, factor = 4.000000e+01, original_max_position = 4096, beta_fast = 1.600000e+01, beta_slow = 2.000000e+00, mscale = 0.70710678118654757, mscale_all_dim = 1.000000e+00, truncate = false>, style = #attn.rope_style<gptj>, theta = 1.000000e+04 : f64}
func.func @rope_scaling_yarn(%x: tensor<?x16x192xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x16x192xbf16> {
  %0 = attn.rope %x, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64,
      rotary_offset = 128, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = yarn, factor = 40.0,
                                   original_max_position = 4096,
                                   beta_fast = 16.0, beta_slow = 2.0,
                                   mscale = 0.7071067811865476,
                                   mscale_all_dim = 1.0, truncate = false>}
      : tensor<?x16x192xbf16>, tensor<?xi64>
  return %0 : tensor<?x16x192xbf16>
}

// yarn with the defaults spelled out: only kind, factor and
// original_max_position are printed. beta_fast == beta_slow is allowed.
// CHECK-LABEL: func.func @rope_scaling_yarn_defaults(
// CHECK:         scaling = #attn.rope_scaling<kind = yarn, factor = 4.000000e+00, original_max_position = 32768>,
// CHECK:         scaling = #attn.rope_scaling<kind = yarn, factor = 3.200000e+01, original_max_position = 4096, beta_fast = 1.000000e+00>,
func.func @rope_scaling_yarn_defaults(%x: tensor<?x8x128xbf16>,
                                      %pos: tensor<?xi64>)
    -> tensor<?x8x128xbf16> {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+06 : f64,
      scaling = #attn.rope_scaling<kind = yarn, factor = 4.0,
                                   original_max_position = 32768,
                                   beta_fast = 32.0, beta_slow = 1.0,
                                   mscale = 1.0, mscale_all_dim = 0.0,
                                   truncate = true>}
      : tensor<?x8x128xbf16>, tensor<?xi64>
  %1 = attn.rope %0, %pos {rotary_dim = 128, theta = 1.0e+06 : f64,
      scaling = #attn.rope_scaling<kind = yarn, factor = 32.0,
                                   original_max_position = 4096,
                                   beta_fast = 1.0, beta_slow = 1.0>}
      : tensor<?x8x128xbf16>, tensor<?xi64>
  return %1 : tensor<?x8x128xbf16>
}

// CHECK-LABEL: func.func @rope_scaling_dynamic(
// CHECK:         attn.rope
// CHECK-SAME:      {rotary_dim = 128 : i64, scaling = #attn.rope_scaling<kind = dynamic, factor = 2.000000e+00>, theta = 1.000000e+04 : f64}
func.func @rope_scaling_dynamic(%x: tensor<?x8x128xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x8x128xbf16> {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = dynamic, factor = 2.0>}
      : tensor<?x8x128xbf16>, tensor<?xi64>
  return %0 : tensor<?x8x128xbf16>
}

// kind = none is accepted (equivalent to no scaling attribute).
// CHECK-LABEL: func.func @rope_scaling_none(
// CHECK:         attn.rope
// CHECK-SAME:      {rotary_dim = 128 : i64, scaling = #attn.rope_scaling<kind = none>, theta = 1.000000e+04 : f64}
func.func @rope_scaling_none(%x: tensor<?x8x128xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x8x128xbf16> {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = none>}
      : tensor<?x8x128xbf16>, tensor<?xi64>
  return %0 : tensor<?x8x128xbf16>
}

//===----------------------------------------------------------------------===//
// cache_write
//===----------------------------------------------------------------------===//

// Activation-dtype caches, Dqk != Dv, no scales.
// CHECK-LABEL: func.func @cache_write_bf16(
// CHECK-SAME:      %[[K:[^:]+]]: tensor<?x4x192xbf16>, %[[V:[^:]+]]: tensor<?x4x128xbf16>, %[[S:[^:]+]]: tensor<?xi64>, %[[KC:[^:]+]]: tensor<?x16x4x192xbf16>, %[[VC:[^:]+]]: tensor<?x16x4x128xbf16>
// CHECK:         %[[KO:[^ ,]+]], %[[VO:[^ ,]+]] = attn.cache_write %[[K]], %[[V]], %[[S]] into %[[KC]], %[[VC]] :
// CHECK-SAME:      tensor<?x4x192xbf16>, tensor<?x4x128xbf16>, tensor<?xi64> into tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>{{$}}
// CHECK:         return %[[KO]], %[[VO]]
func.func @cache_write_bf16(%k: tensor<?x4x192xbf16>, %v: tensor<?x4x128xbf16>,
                            %slots: tensor<?xi64>,
                            %kc: tensor<?x16x4x192xbf16>,
                            %vc: tensor<?x16x4x128xbf16>)
    -> (tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>) {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<?x4x192xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>
  return %kc2, %vc2 : tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>
}

// f16 activations, i32 slots, static shapes.
// CHECK-LABEL: func.func @cache_write_f16_static(
// CHECK:         attn.cache_write
// CHECK-SAME:      : tensor<3x2x64xf16>, tensor<3x2x64xf16>, tensor<3xi32> into tensor<100x32x2x64xf16>, tensor<100x32x2x64xf16>{{$}}
func.func @cache_write_f16_static(%k: tensor<3x2x64xf16>,
                                  %v: tensor<3x2x64xf16>,
                                  %slots: tensor<3xi32>,
                                  %kc: tensor<100x32x2x64xf16>,
                                  %vc: tensor<100x32x2x64xf16>)
    -> tensor<100x32x2x64xf16> {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc
      : tensor<3x2x64xf16>, tensor<3x2x64xf16>, tensor<3xi32>
      into tensor<100x32x2x64xf16>, tensor<100x32x2x64xf16>
  return %vc2 : tensor<100x32x2x64xf16>
}

// fp8 caches with per-tensor scales.
// CHECK-LABEL: func.func @cache_write_fp8(
// CHECK-SAME:      %[[KS:[^:]+]]: tensor<f32>, %[[VS:[^:]+]]: tensor<f32>)
// CHECK:         attn.cache_write %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} into %{{[^ ,]+}}, %{{[^ ,]+}} scales %[[KS]], %[[VS]] :
// CHECK-SAME:      tensor<?x4x192xbf16>, tensor<?x4x128xbf16>, tensor<?xi64> into tensor<?x16x4x192xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN> scales tensor<f32>, tensor<f32>
func.func @cache_write_fp8(%k: tensor<?x4x192xbf16>, %v: tensor<?x4x128xbf16>,
                           %slots: tensor<?xi64>,
                           %kc: tensor<?x16x4x192xf8E4M3FN>,
                           %vc: tensor<?x16x4x128xf8E4M3FN>,
                           %ks: tensor<f32>, %vs: tensor<f32>)
    -> (tensor<?x16x4x192xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>) {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x192xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x192xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>
      scales tensor<f32>, tensor<f32>
  return %kc2, %vc2
      : tensor<?x16x4x192xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>
}

//===----------------------------------------------------------------------===//
// paged_attention
//===----------------------------------------------------------------------===//

// Schedules: the defaults mma = "mma.sync" and form = tensor_core are
// omitted when printed; form = cuda_core is kept.
// CHECK-LABEL: func.func @paged_attention_schedules(
// CHECK:         attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>, softmax_scale
// CHECK:         attn.paged_attention {{.*}}{schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, form = cuda_core>, softmax_scale
func.func @paged_attention_schedules(%q: tensor<?x16x192xbf16>,
                                     %kc: tensor<?x16x2x192xbf16>,
                                     %vc: tensor<?x16x2x128xbf16>,
                                     %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                     %qs: tensor<?xi32>)
    -> (tensor<?x16x128xbf16>, tensor<?x16x128xbf16>) {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "mma.sync", form = tensor_core>}
      : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>,
        tensor<?x16x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x16x128xbf16>
  %r = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 16, num_warps = 4, pipeline_stages = 1, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, form = cuda_core>}
      : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>,
        tensor<?x16x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x16x128xbf16>
  return %o, %r : tensor<?x16x128xbf16>, tensor<?x16x128xbf16>
}

// Plain: only softmax_scale is printed.
// CHECK-LABEL: func.func @paged_attention_plain(
// CHECK-SAME:      %[[Q:[^:]+]]: tensor<?x64x192xbf16>, %[[KC:[^:]+]]: tensor<?x16x4x192xbf16>, %[[VC:[^:]+]]: tensor<?x16x4x128xbf16>, %[[BT:[^:]+]]: tensor<?x?xi32>, %[[SL:[^:]+]]: tensor<?xi32>, %[[QS:[^:]+]]: tensor<?xi32>)
// CHECK:         %[[O:.+]] = attn.paged_attention %[[Q]], %[[KC]], %[[VC]], %[[BT]], %[[SL]], %[[QS]] {softmax_scale = 7.210000e-02 : f64} :
// CHECK-SAME:      tensor<?x64x192xbf16>, tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x128xbf16>
// CHECK:         return %[[O]]
func.func @paged_attention_plain(%q: tensor<?x64x192xbf16>,
                                 %kc: tensor<?x16x4x192xbf16>,
                                 %vc: tensor<?x16x4x128xbf16>,
                                 %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                 %qs: tensor<?xi32>)
    -> tensor<?x64x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64}
      : tensor<?x64x192xbf16>, tensor<?x16x4x192xbf16>,
        tensor<?x16x4x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x64x128xbf16>
  return %o : tensor<?x64x128xbf16>
}

// Defaults spelled out are elided.
// CHECK-LABEL: func.func @paged_attention_explicit_defaults(
// CHECK:         attn.paged_attention
// CHECK-SAME:      {softmax_scale = 1.250000e-01 : f64} :
func.func @paged_attention_explicit_defaults(%q: tensor<?x8x64xbf16>,
                                             %kc: tensor<?x16x8x64xbf16>,
                                             %vc: tensor<?x16x8x64xbf16>,
                                             %bt: tensor<?x?xi32>,
                                             %sl: tensor<?xi32>,
                                             %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64, causal = true, sliding_window = 0,
       logit_softcap = 0.0 : f64, value_scale = 1.0 : f64}
      : tensor<?x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// Attention sinks (gpt-oss style): one f32 logit per query head.
// CHECK-LABEL: func.func @paged_attention_sinks(
// CHECK-SAME:      %[[SINKS:[^:]+]]: tensor<64xf32>)
// CHECK:         attn.paged_attention %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} sinks %[[SINKS]] {softmax_scale = 1.250000e-01 : f64} :
// CHECK-SAME:      tensor<?x64x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<64xf32> -> tensor<?x64x64xbf16>
func.func @paged_attention_sinks(%q: tensor<?x64x64xbf16>,
                                 %kc: tensor<?x16x8x64xbf16>,
                                 %vc: tensor<?x16x8x64xbf16>,
                                 %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                 %qs: tensor<?xi32>, %sinks: tensor<64xf32>)
    -> tensor<?x64x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs sinks %sinks
      {softmax_scale = 0.125 : f64}
      : tensor<?x64x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<64xf32>
      -> tensor<?x64x64xbf16>
  return %o : tensor<?x64x64xbf16>
}

// fp8 caches read with their scales.
// CHECK-LABEL: func.func @paged_attention_fp8_scales(
// CHECK-SAME:      %[[KS:[^:]+]]: tensor<f32>, %[[VS:[^:]+]]: tensor<f32>)
// CHECK:         attn.paged_attention %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} scales %[[KS]], %[[VS]] {softmax_scale = 7.210000e-02 : f64} :
// CHECK-SAME:      tensor<?x64x192xbf16>, tensor<?x16x4x192xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> scales tensor<f32>, tensor<f32> -> tensor<?x64x128xbf16>
func.func @paged_attention_fp8_scales(%q: tensor<?x64x192xbf16>,
                                      %kc: tensor<?x16x4x192xf8E4M3FN>,
                                      %vc: tensor<?x16x4x128xf8E4M3FN>,
                                      %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                      %qs: tensor<?xi32>,
                                      %ks: tensor<f32>, %vs: tensor<f32>)
    -> tensor<?x64x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs scales %ks, %vs
      {softmax_scale = 0.0721 : f64}
      : tensor<?x64x192xbf16>, tensor<?x16x4x192xf8E4M3FN>,
        tensor<?x16x4x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> scales tensor<f32>, tensor<f32>
      -> tensor<?x64x128xbf16>
  return %o : tensor<?x64x128xbf16>
}

// Sinks and scales together: sinks print before scales.
// CHECK-LABEL: func.func @paged_attention_sinks_and_scales(
// CHECK:         attn.paged_attention %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} sinks %{{[^ ,]+}} scales %{{[^ ,]+}}, %{{[^ ,]+}} {softmax_scale = 1.250000e-01 : f64} :
// CHECK-SAME:      sinks tensor<64xf32> scales tensor<f32>, tensor<f32> -> tensor<?x64x64xbf16>
func.func @paged_attention_sinks_and_scales(%q: tensor<?x64x64xbf16>,
                                            %kc: tensor<?x16x8x64xf8E4M3FN>,
                                            %vc: tensor<?x16x8x64xf8E4M3FN>,
                                            %bt: tensor<?x?xi32>,
                                            %sl: tensor<?xi32>,
                                            %qs: tensor<?xi32>,
                                            %sinks: tensor<64xf32>,
                                            %ks: tensor<f32>, %vs: tensor<f32>)
    -> tensor<?x64x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs sinks %sinks
      scales %ks, %vs {softmax_scale = 0.125 : f64}
      : tensor<?x64x64xbf16>, tensor<?x16x8x64xf8E4M3FN>,
        tensor<?x16x8x64xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> sinks tensor<64xf32> scales tensor<f32>, tensor<f32>
      -> tensor<?x64x64xbf16>
  return %o : tensor<?x64x64xbf16>
}

// CHECK-LABEL: func.func @paged_attention_sliding_window(
// CHECK:         attn.paged_attention
// CHECK-SAME:      {sliding_window = 128 : i64, softmax_scale = 7.210000e-02 : f64} :
func.func @paged_attention_sliding_window(%q: tensor<?x64x192xbf16>,
                                          %kc: tensor<?x16x8x192xbf16>,
                                          %vc: tensor<?x16x8x128xbf16>,
                                          %bt: tensor<?x?xi32>,
                                          %sl: tensor<?xi32>,
                                          %qs: tensor<?xi32>)
    -> tensor<?x64x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64, sliding_window = 128}
      : tensor<?x64x192xbf16>, tensor<?x16x8x192xbf16>,
        tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x64x128xbf16>
  return %o : tensor<?x64x128xbf16>
}

// CHECK-LABEL: func.func @paged_attention_logit_softcap(
// CHECK:         attn.paged_attention
// CHECK-SAME:      {logit_softcap = 5.000000e+01 : f64, softmax_scale = 6.250000e-02 : f64} :
func.func @paged_attention_logit_softcap(%q: tensor<?x32x256xbf16>,
                                         %kc: tensor<?x16x16x256xbf16>,
                                         %vc: tensor<?x16x16x256xbf16>,
                                         %bt: tensor<?x?xi32>,
                                         %sl: tensor<?xi32>,
                                         %qs: tensor<?xi32>)
    -> tensor<?x32x256xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0625 : f64, logit_softcap = 50.0 : f64}
      : tensor<?x32x256xbf16>, tensor<?x16x16x256xbf16>,
        tensor<?x16x16x256xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x32x256xbf16>
  return %o : tensor<?x32x256xbf16>
}

// CHECK-LABEL: func.func @paged_attention_value_scale(
// CHECK:         attn.paged_attention
// CHECK-SAME:      {softmax_scale = 7.210000e-02 : f64, value_scale = 7.070000e-01 : f64} :
func.func @paged_attention_value_scale(%q: tensor<?x64x192xbf16>,
                                       %kc: tensor<?x16x4x192xbf16>,
                                       %vc: tensor<?x16x4x128xbf16>,
                                       %bt: tensor<?x?xi32>,
                                       %sl: tensor<?xi32>,
                                       %qs: tensor<?xi32>)
    -> tensor<?x64x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0721 : f64, value_scale = 0.707 : f64}
      : tensor<?x64x192xbf16>, tensor<?x16x4x192xbf16>,
        tensor<?x16x4x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x64x128xbf16>
  return %o : tensor<?x64x128xbf16>
}

// Non-causal (encoder-style) attention with static batch tables.
// CHECK-LABEL: func.func @paged_attention_not_causal(
// CHECK:         attn.paged_attention
// CHECK-SAME:      {causal = false, softmax_scale = 0.08837890625 : f64} :
// CHECK-SAME:      tensor<?x8x128xf16>, tensor<64x16x8x128xf16>, tensor<64x16x8x128xf16>, tensor<4x32xi64>, tensor<4xi64>, tensor<5xi64> -> tensor<?x8x128xf16>
func.func @paged_attention_not_causal(%q: tensor<?x8x128xf16>,
                                      %kc: tensor<64x16x8x128xf16>,
                                      %vc: tensor<64x16x8x128xf16>,
                                      %bt: tensor<4x32xi64>,
                                      %sl: tensor<4xi64>,
                                      %qs: tensor<5xi64>)
    -> tensor<?x8x128xf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.08837890625 : f64, causal = false}
      : tensor<?x8x128xf16>, tensor<64x16x8x128xf16>, tensor<64x16x8x128xf16>,
        tensor<4x32xi64>, tensor<4xi64>, tensor<5xi64> -> tensor<?x8x128xf16>
  return %o : tensor<?x8x128xf16>
}

// Every optional operand and attribute at once.
// CHECK-LABEL: func.func @paged_attention_everything(
// CHECK:         attn.paged_attention %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}}, %{{[^ ,]+}} sinks %{{[^ ,]+}} scales %{{[^ ,]+}}, %{{[^ ,]+}}
// CHECK-SAME:      {causal = false, logit_softcap = 3.000000e+01 : f64, sliding_window = 4096 : i64, softmax_scale = 7.210000e-02 : f64, value_scale = 5.000000e-01 : f64} :
// CHECK-SAME:      tensor<?x64x192xbf16>, tensor<?x16x4x192xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<64xf32> scales tensor<f32>, tensor<f32> -> tensor<?x64x128xbf16>
func.func @paged_attention_everything(%q: tensor<?x64x192xbf16>,
                                      %kc: tensor<?x16x4x192xf8E4M3FN>,
                                      %vc: tensor<?x16x4x128xf8E4M3FN>,
                                      %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                      %qs: tensor<?xi32>,
                                      %sinks: tensor<64xf32>,
                                      %ks: tensor<f32>, %vs: tensor<f32>)
    -> tensor<?x64x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs sinks %sinks
      scales %ks, %vs
      {softmax_scale = 0.0721 : f64, causal = false, sliding_window = 4096,
       logit_softcap = 30.0 : f64, value_scale = 0.5 : f64}
      : tensor<?x64x192xbf16>, tensor<?x16x4x192xf8E4M3FN>,
        tensor<?x16x4x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> sinks tensor<64xf32> scales tensor<f32>, tensor<f32>
      -> tensor<?x64x128xbf16>
  return %o : tensor<?x64x128xbf16>
}

//===----------------------------------------------------------------------===//
// output_gate
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @output_gate(
// CHECK-SAME:      %[[O:[^:]+]]: tensor<?x16x256xbf16>, %[[G:[^:]+]]: tensor<?x16x256xbf16>)
// CHECK:         %[[Y:.+]] = attn.output_gate %[[O]], %[[G]] : tensor<?x16x256xbf16>{{$}}
// CHECK:         return %[[Y]]
func.func @output_gate(%o: tensor<?x16x256xbf16>, %g: tensor<?x16x256xbf16>)
    -> tensor<?x16x256xbf16> {
  %y = attn.output_gate %o, %g : tensor<?x16x256xbf16>
  return %y : tensor<?x16x256xbf16>
}

// One gate value per head: the gate's type follows the output's.
// CHECK-LABEL: func.func @output_gate_head_scalar(
// CHECK:         attn.output_gate %{{[^ ,]+}}, %{{[^ ,]+}} : tensor<?x16x256xbf16>, tensor<?x16x1xbf16>{{$}}
func.func @output_gate_head_scalar(%o: tensor<?x16x256xbf16>, %g: tensor<?x16x1xbf16>)
    -> tensor<?x16x256xbf16> {
  %y = attn.output_gate %o, %g : tensor<?x16x256xbf16>, tensor<?x16x1xbf16>
  return %y : tensor<?x16x256xbf16>
}

// CHECK-LABEL: func.func @qkv_split_head_scalar(
// CHECK:         gate_layout = #attn.gate_layout<head_scalar>
// CHECK-SAME:    -> tensor<?x16x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?x16x1xbf16>
func.func @qkv_split_head_scalar(%qkv: tensor<?x3728xbf16>) -> tensor<?x16x1xbf16> {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 16, num_kv_heads = 2,
      qk_head_dim = 192, v_head_dim = 128, gate_layout = #attn.gate_layout<head_scalar>}
      : tensor<?x3728xbf16> -> tensor<?x16x192xbf16>, tensor<?x2x192xbf16>,
        tensor<?x2x128xbf16>, tensor<?x16x1xbf16>
  return %g : tensor<?x16x1xbf16>
}

// longrope keeps its factor lists exactly; attention_factor is printed when set.
// CHECK-LABEL: func.func @rope_longrope(
// CHECK:         #attn.rope_scaling<kind = longrope, factor = 3.200000e+01, original_max_position = 4096,
// CHECK-SAME:        short_factor = array<f64: 1.050000e+00, 1.500000e+00>, long_factor = array<f64: 3.250000e+00, 7.000000e+00>, attention_factor = 1.1902380714238083>
func.func @rope_longrope(%x: tensor<?x4x4xbf16>, %pos: tensor<?xi64>) -> tensor<?x4x4xbf16> {
  %0 = attn.rope %x, %pos {rotary_dim = 4, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = longrope, factor = 32.0, original_max_position = 4096,
          short_factor = array<f64: 1.05, 1.5>, long_factor = array<f64: 3.25, 7.0>,
          attention_factor = 1.1902380714238083>}
      : tensor<?x4x4xbf16>, tensor<?xi64>
  return %0 : tensor<?x4x4xbf16>
}

// CHECK-LABEL: func.func @output_gate_f32_static(
// CHECK:         attn.output_gate %{{[^ ,]+}}, %{{[^ ,]+}} : tensor<3x4x3xf32>{{$}}
func.func @output_gate_f32_static(%o: tensor<3x4x3xf32>, %g: tensor<3x4x3xf32>)
    -> tensor<3x4x3xf32> {
  %y = attn.output_gate %o, %g : tensor<3x4x3xf32>
  return %y : tensor<3x4x3xf32>
}

//===----------------------------------------------------------------------===//
// Dynamic dims: a `?` head count or head dim matches anything (only the
// fused width of qkv_split must be static, since its attributes fix it).
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @dynamic_head_dims(
// CHECK:         attn.rms_norm %{{[^ ,]+}}, %{{[^ ,]+}} {eps = 1.000000e-05 : f64} : tensor<?x?x?xbf16>, tensor<128xbf16>
// CHECK:         attn.rope %{{[^ ,]+}}, %{{[^ ,]+}} {rotary_dim = 64 : i64, theta = 1.000000e+04 : f64} : tensor<?x?x?xbf16>, tensor<?xi64>
// CHECK:         attn.cache_write
// CHECK-SAME:      : tensor<?x?x?xbf16>, tensor<?x?x?xbf16>, tensor<?xi64> into tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>{{$}}
// CHECK:         attn.paged_attention
// CHECK-SAME:      : tensor<?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x?x?xbf16>
func.func @dynamic_head_dims(%x: tensor<?x?x?xbf16>, %w: tensor<128xbf16>,
                             %pos: tensor<?xi64>, %v: tensor<?x?x?xbf16>,
                             %kc: tensor<?x?x?x?xbf16>,
                             %vc: tensor<?x?x?x?xbf16>,
                             %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                             %qs: tensor<?xi32>) -> tensor<?x?x?xbf16> {
  %n = attn.rms_norm %x, %w {eps = 1.0e-05 : f64}
      : tensor<?x?x?xbf16>, tensor<128xbf16>
  %r = attn.rope %n, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<?x?x?xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %r, %v, %pos into %kc, %vc
      : tensor<?x?x?xbf16>, tensor<?x?x?xbf16>, tensor<?xi64>
      into tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>
  %o = attn.paged_attention %r, %kc2, %vc2, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x?x?xbf16>
  return %o : tensor<?x?x?xbf16>
}

// A gate layout without a gate result: the gate columns are part of the fused
// width (4*128*3 + 4*128 = 2048) and skipped (attn-canonicalize drops an
// unused gate result this way).
// CHECK-LABEL: func.func @qkv_split_dropped_gate
// CHECK: %q, %k, %v = attn.qkv_split %{{.*}} {gate_layout = #attn.gate_layout<qkvg>, num_kv_heads = 4 : i64, num_q_heads = 4 : i64, qk_head_dim = 128 : i64, v_head_dim = 128 : i64} : tensor<?x2048xbf16> -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>{{$}}
func.func @qkv_split_dropped_gate(%qkv: tensor<?x2048xbf16>) -> tensor<?x4x128xbf16> {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128,
      gate_layout = #attn.gate_layout<qkvg>}
      : tensor<?x2048xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return %q : tensor<?x4x128xbf16>
}

//===----------------------------------------------------------------------===//
// Schedules: default-valued parameters (preprocess pair_layout false and
// prefetch 2) are elided by the printer, others read back as written.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @preprocess_schedule_pair(
// CHECK:         schedule = #attn.preprocess_schedule<vector_width = 8, threads_per_head = 4, threads_per_block = 192, heads_per_block = 48, tokens_per_block = 1, min_blocks_per_sm = 3, pair_layout = true, prefetch = 1>
func.func @preprocess_schedule_pair(%qkv: tensor<?x6144xbf16>, %slots: tensor<?xi64>,
                                    %kc: tensor<?x16x8x128xbf16>,
                                    %vc: tensor<?x16x8x128xbf16>, %pos: tensor<?xi64>)
    -> tensor<?x32x128xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc positions %pos
      {num_q_heads = 32, num_kv_heads = 8, qk_head_dim = 128, v_head_dim = 128,
       stages = [#attn.stage<rope>], rotary_dim = 128, rotary_offset = 0,
       rope_style = #attn.rope_style<neox>, theta = 1.0e+06 : f64,
       schedule = #attn.preprocess_schedule<prefetch = 1, pair_layout = true,
           vector_width = 8, threads_per_head = 4, threads_per_block = 192,
           heads_per_block = 48, tokens_per_block = 1, min_blocks_per_sm = 3>}
      : tensor<?x6144xbf16>, tensor<?xi64>
        into tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
        positions tensor<?xi64>
      -> tensor<?x32x128xbf16>
  return %q : tensor<?x32x128xbf16>
}

// CHECK-LABEL: func.func @preprocess_schedule_defaults(
// CHECK:         schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4>,
func.func @preprocess_schedule_defaults(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                                        %kc: tensor<?x16x2x2xbf16>,
                                        %vc: tensor<?x16x2x3xbf16>)
    -> tensor<?x4x2xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3,
       stages = [],
       schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4,
           threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8,
           min_blocks_per_sm = 4, pair_layout = false, prefetch = 2>}
      : tensor<?x18xbf16>, tensor<?xi64>
        into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
      -> tensor<?x4x2xbf16>
  return %q : tensor<?x4x2xbf16>
}

// The emission attributes round-trip; the inverse frequencies keep every
// digit (the stripped `[...]` form of an f64 array would round them to 7),
// absent optional and default-valued parameters stay unprinted.
// CHECK-LABEL: func.func @emission_attributes
// CHECK-SAME: attn = #attn.attention_emission<activation = "bf16", cache = "bf16", block_size = 16, group_size = 8, scale_log2 = 0.10411755210843938, gate = true>
// CHECK-SAME: pre = #attn.preprocess_emission<activation = "bf16", cache = "fp8_e4m3", block_size = 64, fused_width = 30, q_offset = 0, q_head_stride = 2, k_offset = 8, v_offset = 12, inv_freq = array<f64: 1.000000e+00, 0.61752875812632335>, rope_attention_factor = 1.200000e+00>
// CHECK-SAME: pre_gate = #attn.preprocess_emission<activation = "fp16", cache = "fp16", block_size = 16, fused_width = 30, q_offset = 0, q_head_stride = 5, k_offset = 20, v_offset = 24, gate_offset = 2, gate_head_stride = 5>
func.func @emission_attributes() attributes {
    pre = #attn.preprocess_emission<activation = "bf16", cache = "fp8_e4m3",
        block_size = 64, fused_width = 30, q_offset = 0, q_head_stride = 2,
        k_offset = 8, v_offset = 12, inv_freq = array<f64: 1.0, 0.61752875812632335>,
        rope_attention_factor = 1.2>,
    pre_gate = #attn.preprocess_emission<activation = "fp16", cache = "fp16",
        block_size = 16, fused_width = 30, q_offset = 0, q_head_stride = 5,
        k_offset = 20, v_offset = 24, gate_offset = 2, gate_head_stride = 5,
        rope_attention_factor = 1.0>,
    attn = #attn.attention_emission<activation = "bf16", cache = "bf16",
        block_size = 16, group_size = 8, scale_log2 = 0.10411755210843938,
        gate = true>} {
  return
}
