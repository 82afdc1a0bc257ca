func.func @paged_attention_fp8_without_scales(
    %q: tensor<?x8x128xbf16>, %kc: tensor<?x16x8x128xf8E4M3FN>,
    %vc: tensor<?x16x8x128xf8E4M3FN>, %bt: tensor<?x?xi32>,
    %sl: tensor<?xi32>, %qs: tensor<?xi32>) {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xf8E4M3FN>,
        tensor<?x16x8x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x8x128xbf16>
  return
}
