func.func @unused_split_gate(%qkv: tensor<?x15xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>} : tensor<?x15xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?x2x3xbf16>
  return %q, %k, %v : tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>
}
