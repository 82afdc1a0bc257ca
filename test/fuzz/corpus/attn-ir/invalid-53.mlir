func.func @cache_write_k_element_type(%k: tensor<?x4x128xf8E4M3FN>,
                                      %v: tensor<?x4x128xf8E4M3FN>,
                                      %slots: tensor<?xi64>,
                                      %kc: tensor<?x16x4x128xf8E4M3FN>,
                                      %vc: tensor<?x16x4x128xf8E4M3FN>,
                                      %ks: tensor<f32>, %vs: tensor<f32>) {
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs
      : tensor<?x4x128xf8E4M3FN>, tensor<?x4x128xf8E4M3FN>, tensor<?xi64>
      into tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>
      scales tensor<f32>, tensor<f32>
  return
}
