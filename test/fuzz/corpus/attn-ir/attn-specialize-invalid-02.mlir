func.func @attention_smem_cuda_core(%q: tensor<?x64x512xf32>,
                                    %kc: tensor<?x16x1x512xf32>,
                                    %vc: tensor<?x16x1x512xf32>, %bt: tensor<?x?xi32>,
                                    %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x64x512xf32> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0442 : f64}
      : tensor<?x64x512xf32>, tensor<?x16x1x512xf32>,
        tensor<?x16x1x512xf32>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x64x512xf32>
  return %o : tensor<?x64x512xf32>
}
