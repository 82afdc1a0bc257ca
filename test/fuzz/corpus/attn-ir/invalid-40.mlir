func.func @rope_positions_token_count(%x: tensor<6x4x128xbf16>,
                                      %pos: tensor<5xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<6x4x128xbf16>, tensor<5xi64>
  return
}
