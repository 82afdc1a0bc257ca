func.func @rope_range_past_head_dim(%x: tensor<?x16x192xbf16>,
                                    %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 64, rotary_offset = 130,
      theta = 1.0e+04 : f64}
      : tensor<?x16x192xbf16>, tensor<?xi64>
  return
}
