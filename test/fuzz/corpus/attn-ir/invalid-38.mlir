func.func @rope_positions_not_integer(%x: tensor<?x4x128xbf16>,
                                      %pos: tensor<?xf32>) {
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xf32>
  return
}
