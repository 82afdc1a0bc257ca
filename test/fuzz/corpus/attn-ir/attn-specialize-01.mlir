func.func @attention_256(%q: tensor<?x16x256xbf16>,
                         %kc: tensor<?x16x2x256xbf16>,
                         %vc: tensor<?x16x2x256xbf16>, %bt: tensor<?x?xi32>,
                         %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x16x256xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0625 : f64}
      : tensor<?x16x256xbf16>, tensor<?x16x2x256xbf16>,
        tensor<?x16x2x256xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}
