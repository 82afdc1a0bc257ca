func.func @attention_output_used_twice(%q: tensor<?x2x8xbf16>, %kc: tensor<?x16x1x8xbf16>, %vc: tensor<?x16x1x8xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %g: tensor<?x2x8xbf16>) -> (tensor<?x2x8xbf16>, tensor<?x2x8xbf16>) {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.35 : f64} : tensor<?x2x8xbf16>, tensor<?x16x1x8xbf16>, tensor<?x16x1x8xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x2x8xbf16>
  %y = attn.output_gate %o, %g : tensor<?x2x8xbf16>
  return %y, %o : tensor<?x2x8xbf16>, tensor<?x2x8xbf16>
}
