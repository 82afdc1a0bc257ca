// Requests attn-specialize cannot serve. The shape cases run on sm_80; the
// option cases need their own options, so split-file gives each its file.
// RUN: split-file %s %t
// RUN: attn-opt %t/shapes.mlir -split-input-file -verify-diagnostics -attn-specialize=arch=sm_80
// RUN: attn-opt %t/unknown-arch.mlir -verify-diagnostics -attn-specialize=arch=sm_70
// RUN: attn-opt %t/unknown-arch-no-kernels.mlir -verify-diagnostics -attn-specialize=arch=sm_100
// RUN: attn-opt %t/negative-num-sms.mlir -verify-diagnostics '-attn-specialize=num-sms=-1'

//--- shapes.mlir

// Padded head dims above 512 have no kernel.
func.func @attention_qk_1024(%q: tensor<?x8x1024xbf16>,
                             %kc: tensor<?x16x8x1024xbf16>,
                             %vc: tensor<?x16x8x128xbf16>,
                             %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                             %qs: tensor<?xi32>) -> tensor<?x8x128xbf16> {
  // expected-error @+1 {{'attn.paged_attention' op cannot be specialized: qk_head_dim 1024 (padded to 1024) exceeds the largest supported head dim, 512}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.03125 : f64}
      : tensor<?x8x1024xbf16>, tensor<?x16x8x1024xbf16>,
        tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x8x128xbf16>
  return %o : tensor<?x8x128xbf16>
}

// -----

// The limit is on the padded size: 513 pads to 528. The preprocess kernel
// feeds attention, so it has the same limit.
func.func @preprocess_v_513(%qkv: tensor<?x769xbf16>, %slots: tensor<?xi64>,
                            %kc: tensor<?x16x1x128xbf16>,
                            %vc: tensor<?x16x1x513xbf16>)
    -> tensor<?x1x128xbf16> {
  // expected-error @+1 {{'attn.fused_preprocess' op cannot be specialized: v_head_dim 513 (padded to 528) exceeds the largest supported head dim, 512}}
  %q, %kc1, %vc1 = attn.fused_preprocess %qkv, %slots into %kc, %vc
      {num_q_heads = 1, num_kv_heads = 1, qk_head_dim = 128,
       v_head_dim = 513, stages = []}
      : tensor<?x769xbf16>, tensor<?xi64>
        into tensor<?x16x1x128xbf16>, tensor<?x16x1x513xbf16>
      -> tensor<?x1x128xbf16>
  return %q : tensor<?x1x128xbf16>
}

// -----

// f32 512/512 with 64 query heads on one KV head: f32 activations take the
// CUDA-core form (8 warps: a 16-row accumulator of 512 columns is 256
// registers per thread, twice the 128 allowed), whose merge area is
// 8 warps x 64 heads x (2 + 512) floats x 4 = 1052672 bytes, more than
// sm_80's 163 KB = 166912.
func.func @attention_smem_cuda_core(%q: tensor<?x64x512xf32>,
                                    %kc: tensor<?x16x1x512xf32>,
                                    %vc: tensor<?x16x1x512xf32>, %bt: tensor<?x?xi32>,
                                    %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x64x512xf32> {
  // expected-error @+1 {{'attn.paged_attention' op cannot be specialized: the CUDA-core form needs 1052672 bytes (num_warps x group x (2 + v_head_dim) floats), sm_80 allows 166912}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0442 : f64}
      : tensor<?x64x512xf32>, tensor<?x16x1x512xf32>,
        tensor<?x16x1x512xf32>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x64x512xf32>
  return %o : tensor<?x64x512xf32>
}

// -----

// bf16 512/256 with 64 query heads on one KV head: the tensor-core form
// applies (v_dim_padded 256) but its tile does not fit: rows of 520 (Q, K)
// and 264 (V) elements, Q 128 x 520 x 2 = 133120 + K 64 x 520 x 2 = 66560
// + V 64 x 264 x 2 = 33792 = 233472 (the decode ring, 16 x 520 x 2 +
// 2 x (66560 + 33792) = 217344, and the merge areas are smaller) + slots
// 3 x 64 x 4 = 768 + 32 = 234272 bytes. The CUDA-core form: 4 warps x 64
// x (2 + 256) x 4 = 264192 bytes. Both exceed 166912.
func.func @attention_smem_both(%q: tensor<?x64x512xbf16>,
                               %kc: tensor<?x16x1x512xbf16>,
                               %vc: tensor<?x16x1x256xbf16>, %bt: tensor<?x?xi32>,
                               %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x64x256xbf16> {
  // expected-error @+1 {{'attn.paged_attention' op cannot be specialized: the tensor-core tile needs 234272 bytes of shared memory and the CUDA-core form needs 264192 bytes (num_warps x group x (2 + v_head_dim) floats), sm_80 allows 166912}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.0442 : f64}
      : tensor<?x64x512xbf16>, tensor<?x16x1x512xbf16>,
        tensor<?x16x1x256xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x64x256xbf16>
  return %o : tensor<?x64x256xbf16>
}

// -----

// A head dim dynamic in every operand that carries it.
func.func @attention_dynamic_qk_dim(%q: tensor<?x8x?xbf16>,
                                    %kc: tensor<?x16x2x?xbf16>,
                                    %vc: tensor<?x16x2x64xbf16>,
                                    %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                    %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  // expected-error @+1 {{'attn.paged_attention' op cannot be specialized: qk_head_dim is dynamic (query dim 2 or k_cache dim 3); the schedule depends on it}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x8x?xbf16>, tensor<?x16x2x?xbf16>, tensor<?x16x2x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

func.func @attention_dynamic_kv_heads(%q: tensor<?x8x64xbf16>,
                                      %kc: tensor<?x16x?x64xbf16>,
                                      %vc: tensor<?x16x?x64xbf16>,
                                      %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                                      %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  // expected-error @+1 {{'attn.paged_attention' op cannot be specialized: num_kv_heads is dynamic (k_cache or v_cache dim 2); the schedule depends on it}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x8x64xbf16>, tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}

// -----

// Every op that cannot be served is reported in one run, not just the
// first.
func.func @two_errors(%q: tensor<?x8x1024xbf16>,
                      %kc: tensor<?x16x8x1024xbf16>,
                      %vc: tensor<?x16x8x128xbf16>,
                      %bt: tensor<?x?xi32>, %sl: tensor<?xi32>,
                      %qs: tensor<?xi32>) -> tensor<?x8x128xbf16> {
  // expected-error @+1 {{qk_head_dim 1024 (padded to 1024) exceeds}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.03125 : f64}
      : tensor<?x8x1024xbf16>, tensor<?x16x8x1024xbf16>,
        tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x8x128xbf16>
  // expected-error @+1 {{qk_head_dim 1024 (padded to 1024) exceeds}}
  %o2 = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.03125 : f64}
      : tensor<?x8x1024xbf16>, tensor<?x16x8x1024xbf16>,
        tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
        tensor<?xi32> -> tensor<?x8x128xbf16>
  return %o2 : tensor<?x8x128xbf16>
}

//--- unknown-arch.mlir

// An option error is reported once, at the first kernel op.
func.func @unknown_arch(%q: tensor<?x8x64xbf16>, %kc: tensor<?x16x8x64xbf16>,
                        %vc: tensor<?x16x8x64xbf16>, %bt: tensor<?x?xi32>,
                        %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  // expected-error @+1 {{'attn.paged_attention' op cannot be specialized: unknown arch 'sm_70' (known: sm_80, sm_86, sm_89, sm_90, sm_90a)}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  %o2 = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o2 : tensor<?x8x64xbf16>
}

//--- unknown-arch-no-kernels.mlir

// Without kernel ops the module itself is blamed: an unknown target is never
// recorded.
// expected-error @+1 {{'builtin.module' op cannot be specialized: unknown arch 'sm_100' (known: sm_80, sm_86, sm_89, sm_90, sm_90a)}}
module {
  func.func @empty() {
    return
  }
}

//--- negative-num-sms.mlir

func.func @negative_num_sms(%q: tensor<?x8x64xbf16>,
                            %kc: tensor<?x16x8x64xbf16>,
                            %vc: tensor<?x16x8x64xbf16>, %bt: tensor<?x?xi32>,
                            %sl: tensor<?xi32>, %qs: tensor<?xi32>)
    -> tensor<?x8x64xbf16> {
  // expected-error @+1 {{'attn.paged_attention' op cannot be specialized: num-sms must be in [0, 1048576] (0: the arch's flagship part), got -1}}
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs
      {softmax_scale = 0.125 : f64}
      : tensor<?x8x64xbf16>, tensor<?x16x8x64xbf16>, tensor<?x16x8x64xbf16>,
        tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xbf16>
  return %o : tensor<?x8x64xbf16>
}
