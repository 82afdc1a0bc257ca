func.func @dead_results(%a: tensor<?x4x8xbf16>, %b: tensor<?x4x8xbf16>, %w: tensor<8xbf16>) -> tensor<?x4x8xbf16> {
  %dead = attn.rms_norm %a, %w {eps = 1.0e-6 : f64} : tensor<?x4x8xbf16>, tensor<8xbf16>
  %live = attn.rms_norm %b, %w {eps = 1.0e-6 : f64} : tensor<?x4x8xbf16>, tensor<8xbf16>
  return %live : tensor<?x4x8xbf16>
}
