func.func @qkv_split_zero_qk_head_dim(%qkv: tensor<?x512xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 0, v_head_dim = 128}
      : tensor<?x512xbf16>
      -> tensor<?x4x0xbf16>, tensor<?x4x0xbf16>, tensor<?x4x128xbf16>
  return
}
