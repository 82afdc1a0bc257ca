func.func @constant_gate_kept(%o: tensor<2x4x3xbf16>) -> tensor<2x4x3xbf16> {
  %g = arith.constant dense<0.0> : tensor<2x4x3xbf16>
  %y = attn.output_gate %o, %g : tensor<2x4x3xbf16>
  return %y : tensor<2x4x3xbf16>
}
