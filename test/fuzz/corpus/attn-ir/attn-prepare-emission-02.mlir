func.func @unscheduled__attention(%q: tensor<?x4x2xbf16>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x4x3xbf16> attributes {attn.kernel = "attention", attn.layer = "x"} {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.5 : f64} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  return %o : tensor<?x4x3xbf16>
}
