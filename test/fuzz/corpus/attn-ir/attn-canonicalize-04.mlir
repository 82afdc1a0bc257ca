func.func @dynamic_gate_kept(%o: tensor<?x4x3xbf16>, %g: tensor<?x4x3xbf16>) -> tensor<?x4x3xbf16> {
  %y = attn.output_gate %o, %g : tensor<?x4x3xbf16>
  return %y : tensor<?x4x3xbf16>
}
