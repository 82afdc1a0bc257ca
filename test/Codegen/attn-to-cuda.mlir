// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s

// A 2/3 layer with an interleaved gate, no q/k norm, no rope (Dqk != Dv
// everywhere): per q head [q (2) | gate (3)], so q and gate heads stride 5;
// k starts after the 4 q/gate blocks (4*5 = 20), v after the k heads
// (20 + 2*2 = 24); the fused width is 24 + 2*3 = 30.
// CHECK-LABEL: // ===== kernel small__preprocess (preprocess) =====
// CHECK: // configuration: num_q_heads=4 num_kv_heads=2 qk_head_dim=2 v_head_dim=3 gate_layout=interleaved (gate output)
// CHECK-NEXT: //   stages: none
// CHECK: // layout: fused_width=30 q@0 (head stride 5) k@20 v@24 gate@2 (head stride 5)
// CHECK: // schedule: vector_width=1
// CHECK-NOT: rsqrtf
// CHECK-NOT: norm_weight
// CHECK-NOT: rope
// CHECK: constexpr int kNumQHeads = 4;
// CHECK: constexpr int kNumKvHeads = 2;
// CHECK: constexpr int kQkHeadDim = 2;
// CHECK: constexpr int kVHeadDim = 3;
// CHECK: constexpr long long kFusedWidth = 30;
// CHECK: constexpr long long kQHeadStride = 5;
// CHECK: constexpr long long kKOffset = 20;
// CHECK: constexpr long long kVOffset = 24;
// CHECK: constexpr long long kGateOffset = 2;
// CHECK: constexpr long long kGateHeadStride = 5;
// CHECK-NOT: rsqrtf
// CHECK-NOT: rotate_buffer
// The gate is written from its own segment to gate_out; V rows and the V
// cache are indexed with Dv, K with Dqk.
// CHECK: store_row<3, act_t, kVHeadDim>(
// CHECK-NEXT: gate_out + ((long long)w.token * kNumQHeads + w.head) * kVHeadDim, lane, x);
// CHECK: constexpr int kDim = kKind == 1 ? kQkHeadDim : kVHeadDim;
// CHECK: (slot * kNumKvHeads + w.head) * kDim;
// CHECK: constexpr int kDim = kKind >= 2 ? kVHeadDim : kQkHeadDim;
// CHECK: constexpr long long kOffset = kKind == 0 ? kQOffset : kKind == 1 ? kKOffset : kKind == 2 ? kVOffset : kGateOffset;
// CHECK: constexpr long long kStride = kKind == 0 ? kQHeadStride : kKind == 1 ? kQkHeadDim : kKind == 2 ? kVHeadDim : kGateHeadStride;
// CHECK: act_t *__restrict__ gate_out,
// CHECK-NOT: rsqrtf
// CHECK-LABEL: // ===== abi small__preprocess =====
// CHECK-NOT: norm_weight
// CHECK-NOT: positions
// CHECK: "name": "gate_out"
// CHECK-LABEL: // ===== kernel small__attention (attention) =====
// CHECK: constexpr int kGroupSize = 2;
// CHECK: constexpr int kQkHeadDim = 2;
// CHECK: constexpr int kVHeadDim = 3;
// The gate epilogue multiplies by sigmoid(gate).
// CHECK: result *= attnc::sigmoid(attnc::to_float(gate[out]));
func.func @small(%qkv: tensor<?x30xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> (tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<interleaved>} : tensor<?x30xbf16> -> tensor<?x4x2xbf16>, tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x4x3xbf16>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc : tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
  %o = attn.paged_attention %q, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.7071 : f64} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  %y = attn.output_gate %o, %g : tensor<?x4x3xbf16>
  return %y, %kc2, %vc2 : tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}

// -----

// 192/128 with Gemma-style q/k norm after a gptj rope over the last 64 dims
// (MLA-like offset 128), yarn scaling, an fp8 cache: every stage present in
// the model's order, fp8 scales, attention with sinks and a sliding window.
// CHECK-LABEL: // ===== kernel big__preprocess (preprocess) =====
// CHECK: //   stages: rope q_norm k_norm
// CHECK: //   norm: gemma
// CHECK: //   rope: gptj rotary_dim=64 rotary_offset=128
// CHECK-SAME: scaling=yarn factor=40.0 original_max_position=4096
// CHECK: //   activation bf16, cache fp8_e4m3
// CHECK: using cache_t = __nv_fp8_e4m3;
// CHECK: constexpr int kRotaryOffset = 128;
// CHECK: __constant__ double kInvFreq[kRotaryHalf] = {
// The rope comes before the norm in the source, as in the stages.
// CHECK: // rotary embedding, gptj (interleaved pairs)
// CHECK: if constexpr (kKind == 0) // RMSNorm over the head dim, Gemma style (1 + w)
// CHECK-NEXT: attnc::rms_norm_head<true, kChunks, kThreadsPerHead, kVectorWidth>(x, weight, kQkHeadDim, kNormEps, group_mask);
// CHECK: if constexpr (kKind == 1) // RMSNorm over the head dim, Gemma style (1 + w)
// CHECK-NEXT: attnc::rms_norm_head<true, kChunks, kThreadsPerHead, kVectorWidth>(x, weight, kQkHeadDim, kNormEps, group_mask);
// CHECK: const float inv_scale = kKind == 1 ? k_inv_scale : v_inv_scale;
// CHECK: x[c][i] *= inv_scale;
// CHECK-LABEL: // ===== kernel big__attention (attention) =====
// CHECK: constexpr int kGroupSize = 8;
// CHECK: constexpr int kSlidingWindow = 128;
// CHECK: const float *__restrict__ sinks,
// CHECK: const int key_begin = max(0, q_pos - kSlidingWindow + 1);
// CHECK: const float k_dequant = *k_scale, v_dequant = *v_scale;
// CHECK-NOT: sigmoid
// CHECK-LABEL: // ===== abi big__attention =====
func.func @big(%qkv: tensor<?x1856xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x64x1x192xf8E4M3FN>, %vc: tensor<?x64x1x128xf8E4M3FN>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %qw: tensor<192xbf16>, %kw: tensor<192xbf16>, %sinks: tensor<8xf32>, %ks: tensor<f32>, %vs: tensor<f32>) -> (tensor<?x8x128xbf16>, tensor<?x64x1x192xf8E4M3FN>, tensor<?x64x1x128xf8E4M3FN>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 8, num_kv_heads = 1, qk_head_dim = 192, v_head_dim = 128} : tensor<?x1856xbf16> -> tensor<?x8x192xbf16>, tensor<?x1x192xbf16>, tensor<?x1x128xbf16>
  %qr = attn.rope %q, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64, rotary_offset = 128, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096>} : tensor<?x8x192xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64, rotary_offset = 128, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096>} : tensor<?x1x192xbf16>, tensor<?xi64>
  %qn = attn.rms_norm %qr, %qw {eps = 1.0e-6 : f64, style = #attn.norm_style<gemma>} : tensor<?x8x192xbf16>, tensor<192xbf16>
  %kn = attn.rms_norm %kr, %kw {eps = 1.0e-6 : f64, style = #attn.norm_style<gemma>} : tensor<?x1x192xbf16>, tensor<192xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc scales %ks, %vs : tensor<?x1x192xbf16>, tensor<?x1x128xbf16>, tensor<?xi64> into tensor<?x64x1x192xf8E4M3FN>, tensor<?x64x1x128xf8E4M3FN> scales tensor<f32>, tensor<f32>
  %o = attn.paged_attention %qn, %kc2, %vc2, %tables, %lens, %starts sinks %sinks scales %ks, %vs {softmax_scale = 0.0722 : f64, sliding_window = 128 : i64} : tensor<?x8x192xbf16>, tensor<?x64x1x192xf8E4M3FN>, tensor<?x64x1x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<8xf32> scales tensor<f32>, tensor<f32> -> tensor<?x8x128xbf16>
  return %o, %kc2, %vc2 : tensor<?x8x128xbf16>, tensor<?x64x1x192xf8E4M3FN>, tensor<?x64x1x128xf8E4M3FN>
}

// -----

// Neox over the whole 128-dim head (Qwen3-like): the schedule's 4 threads per
// head divide the 8 half-head vectors, so the emitter uses the pair layout:
// each lane holds vectors v and v + 8 (chunks c and c + 2), the rotation
// needs no exchange between lanes.
// CHECK-LABEL: // ===== kernel pair__preprocess (preprocess) =====
// CHECK: // schedule: vector_width=8 threads_per_head=4
// CHECK: constexpr int kPrefetch = 1;
// CHECK: constexpr int kPairChunks = 2;
// CHECK: if constexpr (kKind <= 1) // pair layout: halves of one rotation pair
// CHECK-NEXT: return c < kPairChunks ? c * kThreadsPerHead + lane
// CHECK-NEXT: : kRotaryHalf / kVectorWidth + (c - kPairChunks) * kThreadsPerHead + lane;
// CHECK-NOT: group_fetch
// CHECK: rotary embedding, neox, pair layout
// CHECK: x[c][i] = a * cs[i] + b * sn[i];
// CHECK-NEXT: x[c + kPairChunks][i] = b * cs[i] - a * sn[i];
// CHECK-NOT: group_fetch
// CHECK-LABEL: // ===== abi pair__preprocess =====
func.func @pair(%qkv: tensor<?x6144xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x8x128xbf16>, %vc: tensor<?x16x8x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %qw: tensor<128xbf16>, %kw: tensor<128xbf16>) -> (tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 8, qk_head_dim = 128, v_head_dim = 128} : tensor<?x6144xbf16> -> tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x32x128xbf16>, tensor<128xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x8x128xbf16>, tensor<128xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x32x128xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x8x128xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64> into tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.0884 : f64} : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o, %kc2, %vc2 : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
}
