func.func @paged_attention_query_element_type(%q: tensor<?x64x128xi8>,
                                              %kc: tensor<?x16x8x128xi8>,
                                              %vc: tensor<?x16x8x128xi8>,
                                              %bt: tensor<?x?xi32>,
                                              %sl: tensor<?xi32>,
                                              %qs: tensor<?xi32>) {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.088 : f64}
      : tensor<?x64x128xi8>, tensor<?x16x8x128xi8>, tensor<?x16x8x128xi8>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x64x128xi8>
  return
}
