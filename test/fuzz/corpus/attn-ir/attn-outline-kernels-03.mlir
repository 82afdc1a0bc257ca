func.func @stray_gate(%o: tensor<?x4x8xbf16>, %g: tensor<?x4x8xbf16>) -> tensor<?x4x8xbf16> {
  %y = attn.output_gate %o, %g : tensor<?x4x8xbf16>
  return %y : tensor<?x4x8xbf16>
}
