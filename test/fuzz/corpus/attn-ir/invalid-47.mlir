func.func @rope_scaling_yarn_beta_fast_below_beta_slow(
    %x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = yarn, factor = 40.0,
                                   original_max_position = 4096,
                                   beta_fast = 1.0, beta_slow = 32.0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}
