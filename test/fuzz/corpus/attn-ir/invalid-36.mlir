func.func @rope_theta_zero(%x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 0.0 : f64}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}
