func.func @wide(%qkv: tensor<?x4608xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x384xf8E4M3FN>, %vc: tensor<?x16x2x384xf8E4M3FN>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %sinks: tensor<4xf32>, %ks: tensor<f32>, %vs: tensor<f32>) -> (tensor<?x4x384xbf16>, tensor<?x16x2x384xf8E4M3FN>, tensor<?x16x2x384xf8E4M3FN>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 384, v_head_dim = 384, gate_layout = #attn.gate_layout<interleaved>} : tensor<?x4608xbf16> -> tensor<?x4x384xbf16>, tensor<?x2x384xbf16>, tensor<?x2x384xbf16>, tensor<?x4x384xbf16>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs : tensor<?x2x384xbf16>, tensor<?x2x384xbf16>, tensor<?xi64> into tensor<?x16x2x384xf8E4M3FN>, tensor<?x16x2x384xf8E4M3FN> scales tensor<f32>, tensor<f32>
  %o = attn.paged_attention %q, %kc2, %vc2, %tables, %lens, %starts sinks %sinks scales %ks, %vs {softmax_scale = 0.051 : f64, sliding_window = 256 : i64} : tensor<?x4x384xbf16>, tensor<?x16x2x384xf8E4M3FN>, tensor<?x16x2x384xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<4xf32> scales tensor<f32>, tensor<f32> -> tensor<?x4x384xbf16>
  %y = attn.output_gate %o, %g : tensor<?x4x384xbf16>
  return %y, %kc2, %vc2 : tensor<?x4x384xbf16>, tensor<?x16x2x384xf8E4M3FN>, tensor<?x16x2x384xf8E4M3FN>
}
