func.func @rope_input_rank(%x: tensor<?x512xbf16>, %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 64, theta = 1.0e+04 : f64}
      : tensor<?x512xbf16>, tensor<?xi64>
  return
}
