func.func @rope_scaling_original_max_position_negative(
    %x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = linear, factor = 2.0,
                                   original_max_position = -1>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}
