func.func @rope_scaling_yarn_without_original_max_position(
    %x: tensor<?x4x128xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 1.0e+04 : f64,
      scaling = #attn.rope_scaling<kind = yarn, factor = 40.0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}
