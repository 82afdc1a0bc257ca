func.func @attention_smem_both(%q: tensor<?x64x512xbf16>,
                               %kc: tensor<?x16x1x512xbf16>,
                               %vc: tensor<?x16x1x256xbf16>, %bt: tensor<?x?xi32>,
                               %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x64x256xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0442 : f64}
      : tensor<?x64x512xbf16>, tensor<?x16x1x512xbf16>,
        tensor<?x16x1x256xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x64x256xbf16>
  return %o : tensor<?x64x256xbf16>
}
