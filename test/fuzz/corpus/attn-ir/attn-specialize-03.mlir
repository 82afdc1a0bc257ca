func.func @attention_512(%q: tensor<?x8x512xbf16>,
                         %kc: tensor<?x16x8x512xbf16>,
                         %vc: tensor<?x16x8x512xbf16>, %bt: tensor<?x?xi32>,
                         %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x512xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0442 : f64}
      : tensor<?x8x512xbf16>, tensor<?x16x8x512xbf16>,
        tensor<?x16x8x512xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x8x512xbf16>
  return %o : tensor<?x8x512xbf16>
}
