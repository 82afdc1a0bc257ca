func.func @rms_norm_weight_element_type(%x: tensor<?x4x128xbf16>,
                                        %w: tensor<128xi8>) {
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64}
      : tensor<?x4x128xbf16>, tensor<128xi8>
  return
}
