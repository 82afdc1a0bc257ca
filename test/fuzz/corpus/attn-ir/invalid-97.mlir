func.func @output_gate_element_type(%o: tensor<?x16x256xi8>,
                                    %g: tensor<?x16x256xi8>) {
  %y = attn.output_gate %o, %g : tensor<?x16x256xi8>
  return
}
