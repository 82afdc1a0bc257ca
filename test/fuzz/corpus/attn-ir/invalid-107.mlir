func.func @preprocess_schedule_prefetch(%qkv: tensor<?x18xbf16>, %slots: tensor<?xi64>,
                                        %kc: tensor<?x16x2x2xbf16>,
                                        %vc: tensor<?x16x2x3xbf16>) {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, stages = [], schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4, threads_per_block = 256, heads_per_block = 64, tokens_per_block = 8, min_blocks_per_sm = 4, prefetch = 0>}
      : tensor<?x18xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
      -> tensor<?x4x2xbf16>
  return
}
