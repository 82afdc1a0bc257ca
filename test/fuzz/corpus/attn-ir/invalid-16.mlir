func.func @qkv_split_v_shape(%qkv: tensor<?x13568xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 4,
      qk_head_dim = 192, v_head_dim = 128}
      : tensor<?x13568xbf16>
      -> tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x192xbf16>
  return
}
