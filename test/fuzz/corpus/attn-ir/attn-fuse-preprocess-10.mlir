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
