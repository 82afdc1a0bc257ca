func.func @rms_norm_input_element_type(%x: tensor<?x4x128xf8E4M3FN>,
                                       %w: tensor<128xbf16>) {
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64}
      : tensor<?x4x128xf8E4M3FN>, tensor<128xbf16>
  return
}
