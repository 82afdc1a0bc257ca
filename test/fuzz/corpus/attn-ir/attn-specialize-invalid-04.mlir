func.func @attention_dynamic_qk_dim(%q: tensor<?x8x?xbf16>,
                                    %kc: tensor<?x16x2x?xbf16>,
                                    %vc: tensor<?x16x2x64xbf16>,
                                    %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                    %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x8x?xbf16>, tensor<?x16x2x?xbf16>, tensor<?x16x2x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}
