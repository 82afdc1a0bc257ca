func.func @qkv_split_missing_attribute(%qkv: tensor<?x1536xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128}
      : tensor<?x1536xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>
  return
}
