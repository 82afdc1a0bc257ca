func.func @rope_range_overflow(%x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 9223372036854775806,
      rotary_offset = 9223372036854775806, theta = 1.0e+04 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}
