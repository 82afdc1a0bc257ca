func.func @cache_write_fp8_only_k_scale(%k: tensor<?x4x128xbf16>,
                                        %v: tensor<?x4x128xbf16>,
                                        %slots: tensor<?xi64>,
                                        %kc: tensor<?x16x4x128xf8E4M3FN>,
                                        %vc: tensor<?x16x4x128xf8E4M3FN>,
                                        %ks: tensor<f32>) {
  %kc2, %vc2 = "attn.cache_write"(%k, %v, %slots, %kc, %vc, %ks)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0>}>
      : (tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>,
         tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>, tensor<f32>)
      -> (tensor<?x16x4x128xf8E4M3FN>, tensor<?x16x4x128xf8E4M3FN>)
  return
}
