func.func @attention_256_fp8(%q: tensor<?x16x256xbf16>,
                             %kc: tensor<?x16x2x256xf8E4M3FN>,
                             %vc: tensor<?x16x2x256xf8E4M3FN>,
                             %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                             %qs: tensor<?xi32>, %ks: tensor<f32>,
                             %vs: tensor<f32>)
    -> tensor<?x16x256xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs scales %ks, %vs
      {softmax_scale = 0.0625 : f64}
      : tensor<?x16x256xbf16>, tensor<?x16x2x256xf8E4M3FN>,
        tensor<?x16x2x256xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> scales tensor<f32>, tensor<f32>
      -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}
