func.func @odd() attributes {attn.kernel = "softmax"} {
  return
}
