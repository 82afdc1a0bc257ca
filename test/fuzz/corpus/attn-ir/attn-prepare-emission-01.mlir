func.func @ok__attention(%q: tensor<?x4x2xf16>, %kc: tensor<?x16x2x2xf16>, %vc: tensor<?x16x2x3xf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x3xf16> attributes {attn.kernel = "attention", attn.layer = "ok"} {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x4x2xf16>, tensor<?x16x2x2xf16>, tensor<?x16x2x3xf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xf16>
  return %o : tensor<?x4x3xf16>
}
