func.func @layer(%qkv: tensor<?x15xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x1x2xbf16>, %vc: tensor<?x16x1x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> (tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>) {
  %q, %kc2, %vc2, %g = attn.fused_preprocess %qkv, %slots into %kc, %vc {num_q_heads = 2, num_kv_heads = 1, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<qkvg>, stages = []} : tensor<?x15xbf16>, tensor<?xi64> into tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16> -> tensor<?x2x2xbf16>, tensor<?x2x3xbf16>
  %o = attn.paged_attention %q, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.7071 : f64} : tensor<?x2x2xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x2x3xbf16>
  %y = attn.output_gate %o, %g : tensor<?x2x3xbf16>
  return %y, %kc2, %vc2 : tensor<?x2x3xbf16>, tensor<?x16x1x2xbf16>, tensor<?x16x1x3xbf16>
}
