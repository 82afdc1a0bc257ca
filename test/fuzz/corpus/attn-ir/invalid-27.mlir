func.func @rms_norm_eps_zero(%x: tensor<?x4x128xbf16>, %w: tensor<128xbf16>) {
  %0 = attn.rms_norm %x, %w {eps = 0.0 : f64}
      : tensor<?x4x128xbf16>, tensor<128xbf16>
  return
}
