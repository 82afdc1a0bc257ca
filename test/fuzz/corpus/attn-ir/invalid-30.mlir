func.func @rope_input_element_type(%x: tensor<?x4x128xi32>,
                                   %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<?x4x128xi32>, tensor<?xi64>
  return
}
