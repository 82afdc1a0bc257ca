func.func @wide_wgmma__attention(%q: tensor<?x16x256xbf16>, %kc: tensor<?x64x2x256xbf16>, %vc: tensor<?x64x2x256xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x256xbf16> attributes {attn.kernel = "attention", attn.layer = "wide"} {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.0625 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 256, v_dim_padded = 256, gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264, mma = "wgmma">} : tensor<?x16x256xbf16>, tensor<?x64x2x256xbf16>, tensor<?x64x2x256xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}
