func.func @rms_norm_weight_rank(%x: tensor<?x4x128xbf16>,
                                %w: tensor<4x128xbf16>) {
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64}
      : tensor<?x4x128xbf16>, tensor<4x128xbf16>
  return
}
