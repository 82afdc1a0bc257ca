func.func @qkv_split_width_overflow(%qkv: tensor<?x0xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 4611686018427387904,
      num_kv_heads = 4611686018427387904, qk_head_dim = 1, v_head_dim = 2}
      : tensor<?x0xbf16>
      -> tensor<?x4611686018427387904x1xbf16>,
         tensor<?x4611686018427387904x1xbf16>,
         tensor<?x4611686018427387904x2xbf16>
  return
}
