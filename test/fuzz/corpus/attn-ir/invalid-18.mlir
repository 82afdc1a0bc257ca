func.func @qkv_split_result_tokens(%qkv: tensor<7x1536xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128}
      : tensor<7x1536xbf16>
      -> tensor<7x4x128xbf16>, tensor<8x4x128xbf16>, tensor<7x4x128xbf16>
  return
}
