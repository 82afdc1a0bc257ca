func.func @qkv_split_width_no_gate(%qkv: tensor<?x9472xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 4,
      qk_head_dim = 192, v_head_dim = 128}
      : tensor<?x9472xbf16>
      -> tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>
  return
}
