func.func @cache_write_result_type(%k: tensor<?x4x128xbf16>,
                                   %v: tensor<?x4x128xbf16>,
                                   %slots: tensor<?xi64>,
                                   %kc: tensor<?x16x4x128xbf16>,
                                   %vc: tensor<?x16x4x128xbf16>) {
  %kc2, %vc2 = "attn.cache_write"(%k, %v, %slots, %kc, %vc)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}>
      : (tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>,
         tensor<?x16x4x128xbf16>, tensor<?x16x4x128xbf16>)
      -> (tensor<?x32x4x128xbf16>, tensor<?x16x4x128xbf16>)
  return
}
