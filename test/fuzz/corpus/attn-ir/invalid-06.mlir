func.func @qkv_split_gqa_not_divisible(%qkv: tensor<?x5376xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 5,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<?x5376xbf16>
      -> tensor<?x32x128xbf16>, tensor<?x5x128xbf16>, tensor<?x5x128xbf16>
  return
}
