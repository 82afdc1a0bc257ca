func.func @unfused(%q: tensor<?x4x8xbf16>, %w: tensor<8xbf16>) -> tensor<?x4x8xbf16> {
  %n = attn.rms_norm %q, %w {eps = 1.0e-6 : f64} : tensor<?x4x8xbf16>, tensor<8xbf16>
  return %n : tensor<?x4x8xbf16>
}
