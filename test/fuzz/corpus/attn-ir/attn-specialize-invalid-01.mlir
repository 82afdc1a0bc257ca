func.func @preprocess_v_513(%qkv: tensor<?x769xbf16>, %slots: tensor<?xi64>,
                            %kc: tensor<?x16x1x128xbf16>,
                            %vc: tensor<?x16x1x513xbf16>)
    -> tensor<?x1x128xbf16> {
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      {num_q_heads = 1, num_kv_heads = 1, qk_head_dim = 128,
       v_head_dim = 513, stages = []}
      : tensor<?x769xbf16>, tensor<?xi64>
        into tensor<?x16x1x128xbf16>, tensor<?x16x1x513xbf16>
      -> tensor<?x1x128xbf16>
  return %q : tensor<?x1x128xbf16>
}
