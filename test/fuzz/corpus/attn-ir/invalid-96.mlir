func.func @output_gate_rank(%o: tensor<?x4096xbf16>, %g: tensor<?x4096xbf16>) {
  %y = attn.output_gate %o, %g : tensor<?x4096xbf16>
  return
}
