func.func @cache_write_v_scale_not_f32(%k: tensor<?x4x128xbf16>,
                                       %v: tensor<?x4x128xbf16>,
                                       %slots: tensor<?xi64>,
                                       %kc: tensor<?x16x4x128xf8E4M3FN>,
                                       %vc: tensor<?x16x4x128xf8E4M3FN>,
                                       %ks: tensor<f32>, %vs: tensor<bf16>) {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>
      scales tensor<f32>, tensor<bf16>
  return
}
