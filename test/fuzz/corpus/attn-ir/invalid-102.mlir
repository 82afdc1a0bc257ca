func.func @rope_theta_not_f64(%x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f32}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}
