func.func @output_gate_type_mismatch(%o: tensor<?x16x128xbf16>,
                                     %g: tensor<?x16x256xbf16>) {
  %y = "attn.output_gate"(%o, %g)
      : (tensor<?x16x128xbf16>, tensor<?x16x256xbf16>) -> tensor<?x16x128xbf16>
  return
}
