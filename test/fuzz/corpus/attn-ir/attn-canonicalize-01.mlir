func.func @real_rope(%q: tensor<?x4x8xbf16>, %pos: tensor<?xi64>) -> tensor<?x4x8xbf16> {
  %r = attn.rope %q, %pos {rotary_dim = 2 : i64, rotary_offset = 6 : i64, theta = 1.0e4 : f64} : tensor<?x4x8xbf16>, tensor<?xi64>
  return %r : tensor<?x4x8xbf16>
}
