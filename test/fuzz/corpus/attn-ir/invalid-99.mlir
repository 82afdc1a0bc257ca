func.func @rms_norm_result_type(%x: tensor<?x4x128xbf16>,
                                %w: tensor<128xbf16>) {
  %0 = "attn.rms_norm"(%x, %w) <{eps = 1.0e-06 : f64}>
      : (tensor<?x4x128xbf16>, tensor<128xbf16>) -> tensor<?x4x128xf32>
  return
}
