func.func @rope_scaling_llama3_infinite_factor(%x: tensor<?x4x128xbf16>,
                                               %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 5.0e+05 : f64,
      scaling = #attn.rope_scaling<kind = llama3, factor = 8.0,
                                   original_max_position = 8192,
                                   high_freq_factor = 0x7FF0000000000000>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}
