func.func @fp8_cache_192_128(%qkv: tensor<?x1408xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x64x2x192xf8E4M3FN>, %vc: tensor<?x64x2x128xf8E4M3FN>, %ks: tensor<f32>, %vs: tensor<f32>) -> (tensor<?x4x192xbf16>, tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 192, v_head_dim = 128} : tensor<?x1408xbf16> -> tensor<?x4x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 64, theta = 1.0e4 : f64} : tensor<?x4x192xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 64, theta = 1.0e4 : f64} : tensor<?x2x192xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc scales %ks, %vs : tensor<?x2x192xbf16>, tensor<?x2x128xbf16>, tensor<?xi64> into tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN> scales tensor<f32>, tensor<f32>
  return %qr, %kc2, %vc2 : tensor<?x4x192xbf16>, tensor<?x64x2x192xf8E4M3FN>, tensor<?x64x2x128xf8E4M3FN>
}
