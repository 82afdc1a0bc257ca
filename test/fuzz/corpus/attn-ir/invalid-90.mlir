func.func @paged_attention_sinks_type(%q: tensor<?x64x64xbf16>,
                                      %kc: tensor<?x16x8x64xbf16>,
                                      %vc: tensor<?x16x8x64xbf16>,
                                      %bt: tensor<?x?xi32>,
                                      %sl: tensor<?xi32>, %qs: tensor<?xi32>,
                                      %sinks: tensor<64xbf16>) {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs sinks %sinks
      {softmax_scale = 0.125 : f64}
      : tensor<?x64x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<64xbf16>
      -> tensor<?x64x64xbf16>
  return
}
