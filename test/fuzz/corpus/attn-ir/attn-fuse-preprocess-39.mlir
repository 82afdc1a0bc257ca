func.func @gate_used_before_operands(%qkv: tensor<?x15xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>) -> (tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>} : tensor<?x15xbf16> -> tensor<?x2x2xbf16>, tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?x2x3xbf16>
  %y = attn.output_gate %g, %g : tensor<?x2x3xbf16>
  %s = arith.addi %slots, %slots : tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %k, %v, %s into %kc, %vc : tensor<?x1x2xbf16>, tensor<?x1x3xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
  return %q, %y, %kc2, %vc2 : tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}
