func.func @schedule_wgmma_block_m(%q: tensor<?x16x192xbf16>, %kc: tensor<?x16x2x192xbf16>,
                                  %vc: tensor<?x16x2x128xbf16>, %bt: tensor<?x?xi32>,
                                  %sl: tensor<?xi32>, %qs: tensor<?xi32>) {
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {schedule = #attn.attention_schedule<block_m = 64, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">, softmax_scale = 0.07 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  return
}
