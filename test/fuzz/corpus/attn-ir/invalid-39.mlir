func.func @rope_positions_rank(%x: tensor<?x4x128xbf16>,
                               %pos: tensor<?x1xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?x1xi64>
  return
}
