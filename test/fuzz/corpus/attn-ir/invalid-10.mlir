func.func @qkv_split_width_with_gate(%qkv: tensor<?x5120xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 16, num_kv_heads = 2,
      qk_head_dim = 256, v_head_dim = 256,
      gate_layout = #attn.gate_layout<interleaved>}
      : tensor<?x5120xbf16>
      -> tensor<?x16x256xbf16>, tensor<?x2x256xbf16>, tensor<?x2x256xbf16>,
         tensor<?x16x256xbf16>
  return
}
