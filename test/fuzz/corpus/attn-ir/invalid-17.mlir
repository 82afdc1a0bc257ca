func.func @qkv_split_gate_shape(%qkv: tensor<?x3200xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 8, num_kv_heads = 2,
      qk_head_dim = 192, v_head_dim = 128,
      gate_layout = #attn.gate_layout<interleaved>}
      : tensor<?x3200xbf16>
      -> tensor<?x8x192xbf16>, tensor<?x2x192xbf16>, tensor<?x2x128xbf16>,
         tensor<?x8x192xbf16>
  return
}
