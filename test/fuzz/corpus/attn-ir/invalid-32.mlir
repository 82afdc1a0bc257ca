func.func @rope_negative_rotary_offset(%x: tensor<?x4x128xbf16>,
                                       %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 64, rotary_offset = -2,
      theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}
