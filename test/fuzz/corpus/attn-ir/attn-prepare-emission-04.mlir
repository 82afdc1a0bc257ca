func.func @i64_tables__attention(%q: tensor<?x4x2xbf16>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %tables: tensor<?x?xi64>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x3xbf16> attributes {attn.kernel = "attention", attn.layer = "x"} {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64, schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x?xi64>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  return %o : tensor<?x4x3xbf16>
}
