//===- attnc_attention_reference.cuh - CUDA-core paged attention -*- CUDA -*-===//
//
// The reference-quality (CUDA-core) form of the paged attention kernel: one
// block per (query row, KV head), warps stride over the keys, the group's
// query heads share each K/V read. attn-specialize chooses it for shapes the
// tensor-core form does not take (v_dim_padded above 256, f32 activations, a
// cache in another 16-bit type, tiles that do not fit shared memory).
//
// The generated source defines a Config (see attnc_attention.cuh for the
// members) and an extern "C" entry point that calls reference_attention.
// Absent features are `if constexpr`: they leave no instruction.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_ATTENTION_REFERENCE_CUH
#define ATTNC_ATTENTION_REFERENCE_CUH

#include "attnc_attention_rules.cuh"
#include "attnc_device.cuh"

namespace attnc {

/// x times the fp8 dequantisation scale where the cache is fp8.
template <bool kFp8> __device__ __forceinline__ float dequant(float x, float scale) {
  if constexpr (kFp8)
    return x * scale;
  else
    return x;
}

template <class C>
__device__ __forceinline__ void reference_attention(
    const typename C::act_t *query, const typename C::cache_t *k_cache,
    const typename C::cache_t *v_cache, long long k_cache_block_stride,
    long long k_cache_token_stride, long long k_cache_head_stride, long long v_cache_block_stride,
    long long v_cache_token_stride, long long v_cache_head_stride, const int *block_tables,
    const int *seq_lens, const int *query_start_loc, const float *sinks, const float *k_scale,
    const float *v_scale, const typename C::act_t *gate, typename C::act_t *output,
    int num_tokens, int num_seqs, int max_blocks_per_seq) {
  using act_t = typename C::act_t;
  using cache_t = typename C::cache_t;
  constexpr int kNumQHeads = C::kNumQHeads;
  constexpr int kGroupSize = C::kGroupSize;
  constexpr int kQkHeadDim = C::kQkHeadDim, kVHeadDim = C::kVHeadDim;
  constexpr int kBlockSize = C::kBlockSize, kWarps = C::kWarps;
  constexpr int kQkPerLane = (kQkHeadDim + 31) / 32;
  constexpr int kVPerLane = (kVHeadDim + 31) / 32;
  const int token = blockIdx.x;
  const int kv_head = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (num_seqs <= 0) return; // malformed batch: nothing owns this row

  // The sequence owning this query row: last seq with query_start_loc <= token.
  // (hi declared first: the operand order of the kernel's tuned SASS.)
  int hi = num_seqs - 1, lo = 0;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (query_start_loc[mid] <= token) lo = mid; else hi = mid - 1;
  }
  const int seq = lo;
  const int q_start = query_start_loc[seq];
  const int q_len = query_start_loc[seq + 1] - q_start;
  const int kv_len = seq_lens[seq];
  // Queries are the last q_len of the kv_len positions.
  const int q_pos = kv_len - q_len + (token - q_start);
  const int key_end = attnc::KeyRange<C>::end(q_pos, kv_len);
  const int key_begin = attnc::KeyRange<C>::begin(q_pos, kv_len);
  float k_dequant = 1.0f, v_dequant = 1.0f;
  if constexpr (C::kFp8)
    k_dequant = *k_scale, v_dequant = *v_scale;
  float q[kGroupSize][kQkPerLane];
#pragma unroll
  for (int h = 0; h < kGroupSize; ++h)
#pragma unroll
    for (int c = 0; c < kQkPerLane; ++c) {
      const int d = lane + 32 * c;
      q[h][c] = d < kQkHeadDim ? attnc::to_float(query[((long long)token * kNumQHeads +
                                  kv_head * kGroupSize + h) * kQkHeadDim + d]) : 0.0f;
    }
  float m[kGroupSize], l[kGroupSize], acc[kGroupSize][kVPerLane];
#pragma unroll
  for (int h = 0; h < kGroupSize; ++h) {
    m[h] = -attnc::infinity();
    l[h] = 0.0f;
#pragma unroll
    for (int c = 0; c < kVPerLane; ++c) acc[h][c] = 0.0f;
  }
  const int *table = block_tables + (long long)seq * max_blocks_per_seq;
  // This KV head's rows in the engine's cache views (strides in elements).
  const cache_t *k_head = k_cache + kv_head * k_cache_head_stride;
  const cache_t *v_head = v_cache + kv_head * v_cache_head_stride;
  for (int key = key_begin + warp; key < key_end; key += kWarps) {
    const long long block = table[key / kBlockSize];
    const int offset = key % kBlockSize;
    const cache_t *k_row = k_head + block * k_cache_block_stride + offset * k_cache_token_stride;
    const cache_t *v_row = v_head + block * v_cache_block_stride + offset * v_cache_token_stride;
    float k[kQkPerLane], v[kVPerLane];
#pragma unroll
    for (int c = 0; c < kQkPerLane; ++c) {
      const int d = lane + 32 * c;
      k[c] = d < kQkHeadDim ? dequant<C::kFp8>(attnc::to_float(k_row[d]), k_dequant) : 0.0f;
    }
#pragma unroll
    for (int c = 0; c < kVPerLane; ++c) {
      const int d = lane + 32 * c;
      v[c] = d < kVHeadDim ? dequant<C::kFp8>(attnc::to_float(v_row[d]), v_dequant) : 0.0f;
    }
#pragma unroll
    for (int h = 0; h < kGroupSize; ++h) {
      float dot = 0.0f;
#pragma unroll
      for (int c = 0; c < kQkPerLane; ++c) dot += q[h][c] * k[c];
      dot = attnc::warp_sum(dot);
      float score;
      if constexpr (C::kHasSoftcap)
        score = C::kSoftcap * tanhf(dot * C::kSoftmaxScale / C::kSoftcap) * 1.4426950408889634f;
      else
        score = dot * C::kScaleLog2;
      const float m_new = fmaxf(m[h], score);
      const float correction = exp2f(m[h] - m_new);
      const float p = exp2f(score - m_new);
      l[h] = l[h] * correction + p;
#pragma unroll
      for (int c = 0; c < kVPerLane; ++c) acc[h][c] = acc[h][c] * correction + p * v[c];
      m[h] = m_new;
    }
  }
  // Merge the warps' partial softmax states.
  extern __shared__ float shared[];
  float *shared_m = shared;                              // [kWarps][kGroupSize]
  float *shared_l = shared_m + kWarps * kGroupSize;      // [kWarps][kGroupSize]
  float *shared_acc = shared_l + kWarps * kGroupSize;    // [kWarps][kGroupSize][kVHeadDim]
#pragma unroll
  for (int h = 0; h < kGroupSize; ++h) {
    if (lane == 0) {
      shared_m[warp * kGroupSize + h] = m[h];
      shared_l[warp * kGroupSize + h] = l[h];
    }
#pragma unroll
    for (int c = 0; c < kVPerLane; ++c) {
      const int d = lane + 32 * c;
      if (d < kVHeadDim) shared_acc[(warp * kGroupSize + h) * kVHeadDim + d] = acc[h][c];
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kGroupSize * kVHeadDim; i += kWarps * 32) {
    const int h = i / kVHeadDim, d = i % kVHeadDim;
    const int q_head = kv_head * kGroupSize + h;
    float m_all = -attnc::infinity();
    for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, shared_m[w * kGroupSize + h]);
    // The sink adds one learned logit to the denominator only.
    float sink = 0.0f;
    if constexpr (C::kSinks) {
      sink = sinks[q_head] * 1.4426950408889634f;
      m_all = fmaxf(m_all, sink);
    }
    float result = 0.0f;
    if (m_all != -attnc::infinity()) {
      float l_all = 0.0f, acc_all = 0.0f;
      for (int w = 0; w < kWarps; ++w) {
        const float weight = exp2f(shared_m[w * kGroupSize + h] - m_all);
        l_all += shared_l[w * kGroupSize + h] * weight;
        acc_all += shared_acc[(w * kGroupSize + h) * kVHeadDim + d] * weight;
      }
      if constexpr (C::kSinks)
        l_all += exp2f(sink - m_all);
      // The largest logit contributes exp2(0) = 1, so l_all >= 1 here; a NaN
      // anywhere in the row stays NaN instead of turning into zeros.
      result = acc_all / l_all;
    }
    if constexpr (C::kHasValueScale)
      result *= C::kValueScale;
    const long long out = ((long long)token * kNumQHeads + q_head) * kVHeadDim + d;
    if constexpr (C::kGate)
      result *= attnc::sigmoid(attnc::to_float(
          gate[C::kGateHeadScalar ? (long long)token * kNumQHeads + q_head : out]));
    output[out] = attnc::from_float<act_t>(result);
  }
}

} // namespace attnc

#endif // ATTNC_ATTENTION_REFERENCE_CUH
