func.func @pair(%qkv: tensor<?x6144xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x8x128xbf16>, %vc: tensor<?x16x8x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %qw: tensor<128xbf16>, %kw: tensor<128xbf16>) -> (tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 8, qk_head_dim = 128, v_head_dim = 128} : tensor<?x6144xbf16> -> tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x32x128xbf16>, tensor<128xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x8x128xbf16>, tensor<128xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x32x128xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x8x128xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64> into tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.0884 : f64} : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o, %kc2, %vc2 : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
}
