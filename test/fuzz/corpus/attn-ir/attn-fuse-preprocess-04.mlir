func.func @norm_after_rope_192_128(%qkv: tensor<?x1408xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x192xbf16>, %vc: tensor<?x16x2x128xbf16>, %qw: tensor<192xbf16>, %kw: tensor<192xbf16>) -> (tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 192, v_head_dim = 128} : tensor<?x1408xbf16> -> tensor<?x4x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 64, theta = 5.0e6 : f64} : tensor<?x4x192xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 64, theta = 5.0e6 : f64} : tensor<?x2x192xbf16>, tensor<?xi64>
  %qn = attn.rms_norm %qr, %qw {eps = 1.0e-5 : f64} : tensor<?x4x192xbf16>, tensor<192xbf16>
  %kn = attn.rms_norm %kr, %kw {eps = 1.0e-5 : f64} : tensor<?x2x192xbf16>, tensor<192xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc : tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?xi64> into tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
  return %qn, %kc2, %vc2 : tensor<?x4x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>
}
