func.func @paged_attention_query_start_loc_length(
    %q: tensor<?x8x128xbf16>, %kc: tensor<?x16x8x128xbf16>,
    %vc: tensor<?x16x8x128xbf16>, %bt: tensor<4x32xi32>, %sl: tensor<4xi32>,
    %qs: tensor<4xi32>) {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<4x32xi32>, tensor<4xi32>, tensor<4xi32> -> tensor<?x8x128xbf16>
  return
}
