func.func @identity_rope(%q: tensor<?x4x8xbf16>, %pos: tensor<?xi64>) -> tensor<?x4x8xbf16> {
  %r = attn.rope %q, %pos {rotary_dim = 0 : i64, theta = 1.0e4 : f64} : tensor<?x4x8xbf16>, tensor<?xi64>
  return %r : tensor<?x4x8xbf16>
}
