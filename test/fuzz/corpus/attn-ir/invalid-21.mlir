func.func @qkv_split_gate_element_type(%qkv: tensor<?x2048xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 4,
      qk_head_dim = 128, v_head_dim = 128,
      gate_layout = #attn.gate_layout<qkvg>}
      : tensor<?x2048xbf16>
      -> tensor<?x4x128xbf16>, tensor<?x4x128xbf16>, tensor<?x4x128xbf16>,
         tensor<?x4x128xf32>
  return
}
