func.func @cache_write_cache_dtype_other_fp8(
    %k: tensor<?x4x128xbf16>, %v: tensor<?x4x128xbf16>, %slots: tensor<?xi64>,
    %kc: tensor<?x16x4x128xf8E5M2>, %vc: tensor<?x16x4x128xf8E5M2>,
    %ks: tensor<f32>, %vs: tensor<f32>) {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
      into tensor<?x16x4x128xf8E5M2>, tensor<?x16x4x128xf8E5M2>
      scales tensor<f32>, tensor<f32>
  return
}
