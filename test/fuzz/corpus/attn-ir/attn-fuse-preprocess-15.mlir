func.func @normed_q_used_outside(%qkv: tensor<?x9xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3} : tensor<?x9xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x1x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 2, theta = 1.0e4 : f64} : tensor<?x1x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %qr, %qn, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}
