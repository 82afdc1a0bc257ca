func.func @rms_norm_input_rank(%x: tensor<?x128xbf16>, %w: tensor<128xbf16>) {
  %0 = attn.rms_norm %x, %w {eps = 1.0e-06 : f64}
      : tensor<?x128xbf16>, tensor<128xbf16>
  return
}
