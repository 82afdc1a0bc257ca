func.func @attention_gqa_cap(%q: tensor<?x96x128xbf16>,
                             %kc: tensor<?x16x1x128xbf16>,
                             %vc: tensor<?x16x1x128xbf16>,
                             %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                             %qs: tensor<?xi32>)
    -> tensor<?x96x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0884 : f64}
      : tensor<?x96x128xbf16>, tensor<?x16x1x128xbf16>,
        tensor<?x16x1x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x96x128xbf16>
  return %o : tensor<?x96x128xbf16>
}

func.func @attention_sizes_from_other_operands(%q: tensor<?x?x?xbf16>,
    %kc: tensor<?x16x2x64xbf16>, %vc: tensor<?x16x2x64xbf16>,
    %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x?x?xbf16>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

func.func @attention_replaces_schedule(%q: tensor<?x8x64xbf16>,
                                       %kc: tensor<?x16x8x64xbf16>,
                                       %vc: tensor<?x16x8x64xbf16>,
                                       %bt: tensor<?x?xi32>,
                                       %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64,
       schedule = #attn.attention_schedule<block_m = 128, block_n = 64,
           num_warps = 8, pipeline_stages = 3, qk_dim_padded = 64,
           v_dim_padded = 64, gqa_pack = 1, split_kv_min_keys = 256,
           max_kv_splits = 64, target_ctas = 264>}
      : tensor<?x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}
