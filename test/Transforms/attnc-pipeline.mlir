// RUN: attn-opt %s -attnc-pipeline | FileCheck %s
// RUN: attn-opt %s -attnc-pipeline=arch=sm_80 | FileCheck %s --check-prefix=SM80

// The named pipeline takes a layer in the attn dialect to the kernel form:
// the identity rope is folded away by attn-canonicalize, the split, q/k norm
// and cache write are fused (stages list only the norms), specialised for the
// target, and outlined into two kernels. A 2/3 GQA layer with a gate.
// Attention schedule (passes/lib/Specialize.cpp, worked out by hand): head
// dims pad to 16 (rows of 24 elements), block_m 128, 4 warps, 2 query heads
// per KV head: pack 2. Shared memory: max(staggered 128 x 24 x 2 + 2 x 64 x
// 24 x 2 = 12288, ring 16 x 24 x 2 + 2 x 2 x 64 x 24 x 2 = 13056, merge 4 x
// 128 x (24 + 5) = 14848, split 4 x (2 x 64 x 128 + 2 x 128) = 66560) +
// slots 2 x 64 x 4 = 512 + 16 = 67088 bytes, so 64 keys at 2 stages fit
// everywhere; target_ctas 2 x 132 = 264 on sm_90a, 2 x 108 = 216 on sm_80;
// max_kv_splits min(64, target_ctas) = 64.

// CHECK: module attributes {attn.target = "sm_90a"}
// CHECK-LABEL: func.func @layer__preprocess(
// CHECK-SAME: attributes {attn.kernel = "preprocess", attn.layer = "layer"}
// CHECK-NEXT: attn.fused_preprocess
// CHECK-NOT: positions
// CHECK-SAME: q_norm_weight %{{.*}} k_norm_weight %
// CHECK-SAME: schedule = #attn.preprocess_schedule<vector_width = 1, threads_per_head = 4
// CHECK-SAME: stages = [#attn.stage<q_norm>, #attn.stage<k_norm>]
// CHECK-LABEL: func.func @layer__attention(
// CHECK-NEXT: attn.paged_attention
// CHECK-SAME: schedule = #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 264>
// CHECK-NEXT: attn.output_gate
// CHECK-LABEL: func.func @layer(
// CHECK-NOT: attn.
// CHECK: call @layer__preprocess
// CHECK-NOT: attn.
// CHECK: call @layer__attention
// CHECK-NOT: attn.
// CHECK: return

// SM80: module attributes {attn.target = "sm_80"}
// SM80: #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4, pipeline_stages = 2, qk_dim_padded = 16, v_dim_padded = 16, gqa_pack = 2, split_kv_min_keys = 256, max_kv_splits = 64, target_ctas = 216>
func.func @layer(%qkv: tensor<?x30xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %qw: tensor<2xbf16>, %kw: tensor<2xbf16>) -> (tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<interleaved>} : tensor<?x30xbf16> -> tensor<?x4x2xbf16>, tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x4x3xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x4x2xbf16>, tensor<2xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x2x2xbf16>, tensor<2xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 0 : i64, theta = 1.0e4 : f64} : tensor<?x4x2xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 0 : i64, theta = 1.0e4 : f64} : tensor<?x2x2xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.7071 : f64} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  %y = attn.output_gate %o, %g : tensor<?x4x3xbf16>
  return %y, %kc2, %vc2 : tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}
