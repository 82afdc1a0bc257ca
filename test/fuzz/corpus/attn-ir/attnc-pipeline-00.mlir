func.func @layer(%qkv: tensor<?x30xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<interleaved>} : tensor<?x30xbf16> -> tensor<?x4x2xbf16>, tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x4x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x4x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 0 : i64, theta = 1.0e4 : f64} : tensor<?x4x2xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 0 : i64, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.7071 : f64} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  %y = attn.output_gate %o, %g : tensor<?x4x3xbf16>
  return %y, %kc2, %vc2 : tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}
