func.func @paged_attention_cache_dtype(%q: tensor<?x64x128xf32>,
                                       %kc: tensor<?x16x8x128xbf16>,
                                       %vc: tensor<?x16x8x128xbf16>,
                                       %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                       %qs: tensor<?xi32>) {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x64x128xf32>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x128xf32>
  return
}
