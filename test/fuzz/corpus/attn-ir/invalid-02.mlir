func.func @qkv_split_zero_num_kv_heads(%qkv: tensor<?x512xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 0,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x512xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x0x128xbf16>, tensor<?x0x128xbf16>
  return
}
