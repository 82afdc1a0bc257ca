func.func @cache_write_scales_without_fp8(%k: tensor<?x4x128xbf16>,
                                          %v: tensor<?x4x128xbf16>,
                                          %slots: tensor<?xi64>,
                                          %kc: tensor<?x16x4x128xbf16>,
                                          %vc: tensor<?x16x4x128xbf16>,
                                          %ks: tensor<f32>, %vs: tensor<f32>) {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>
      scales tensor<f32>, tensor<f32>
  return
}
