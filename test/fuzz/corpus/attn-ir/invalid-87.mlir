func.func @paged_attention_seq_lens_vs_block_tables(
    %q: tensor<?x8x128xbf16>, %kc: tensor<?x16x8x128xbf16>,
    %vc: tensor<?x16x8x128xbf16>, %bt: tensor<3x32xi32>, %sl: tensor<4xi32>,
    %qs: tensor<5xi32>) {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>,
        tensor<3x32xi32>, tensor<4xi32>, tensor<5xi32> -> tensor<?x8x128xbf16>
  return
}
