func.func @empty__preprocess() attributes {attn.kernel = "preprocess", attn.layer = "x"} {
  return
}
