// RUN: attn-opt %s -split-input-file -verify-diagnostics -attn-specialize

// varlen_attention's template reads contiguous K/V in its tensor-core form
// only: a shape that would take the CUDA-core form (v_dim_padded above 256,
// f32 activations) is refused, naming the rule.
func.func @wide_v(%q: tensor<?x8x128xbf16>, %k: tensor<?x8x128xbf16>,
    %v: tensor<?x8x512xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x8x512xbf16> {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be specialized: varlen_attention has the tensor-core form only (16-bit activations, v_dim_padded <= 256, a tile that fits shared memory), got 'bf16' with v_head_dim 512}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1 : f64}
      : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x512xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x8x512xbf16>
  return %o : tensor<?x8x512xbf16>
}

// -----

func.func @f32(%q: tensor<?x8x64xf32>, %k: tensor<?x8x64xf32>,
    %v: tensor<?x8x64xf32>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x8x64xf32> {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be specialized: varlen_attention has the tensor-core form only (16-bit activations, v_dim_padded <= 256, a tile that fits shared memory), got 'f32' with v_head_dim 64}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1 : f64}
      : tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}

// -----

// The schedule depends on the head counts and dims: they must be static.
func.func @dynamic_kv_heads(%q: tensor<?x8x64xbf16>, %k: tensor<?x?x64xbf16>,
    %v: tensor<?x?x64xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be specialized: num_kv_heads is dynamic (key or value dim 1); the schedule depends on it}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1 : f64}
      : tensor<?x8x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

// Head dims above 512 have no kernel (the paged attention's limit).
func.func @qk_1024(%q: tensor<?x8x1024xbf16>, %k: tensor<?x8x1024xbf16>,
    %v: tensor<?x8x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x8x128xbf16> {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be specialized: qk_head_dim 1024 (padded to 1024) exceeds the largest supported head dim, 512}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1 : f64}
      : tensor<?x8x1024xbf16>, tensor<?x8x1024xbf16>, tensor<?x8x128xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return %o : tensor<?x8x128xbf16>
}

// -----

// attn.keep_schedule needs a schedule to keep.
func.func @keep_nothing(%q: tensor<?x8x128xbf16>, %k: tensor<?x8x128xbf16>,
    %v: tensor<?x8x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> tensor<?x8x128xbf16> {
  // expected-error @+1 {{'attn.varlen_attention' op cannot be specialized: attn.keep_schedule is set but the op has no schedule to keep}}
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1 : f64, attn.keep_schedule}
      : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x8x128xbf16>
  return %o : tensor<?x8x128xbf16>
}
