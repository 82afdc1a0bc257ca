func.func @rope_scaling_llama3_high_not_above_low(%x: tensor<?x4x128xbf16>,
                                                  %pos: tensor<?xi64>) {
  %0 = attn.rope %x, %pos {rotary_dim = 128, theta = 5.0e+05 : f64,
      scaling = #attn.rope_scaling<kind = llama3, factor = 8.0,
                                   original_max_position = 8192,
                                   low_freq_factor = 2.0,
                                   high_freq_factor = 2.0>}
      : tensor<?x4x128xbf16>, tensor<?xi64>
  return
}
