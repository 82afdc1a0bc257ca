//===- attnc_latent_gather.cuh - cached latent rows, contiguous --*- CUDA -*-===//
//
// attn.latent_gather's kernel: for every sequence s, its first
// cu_seqlens[s+1] - cu_seqlens[s] rows of the paged latent cache
// [num_blocks, kBlockSize, kWidth] (a view: block and token strides in
// elements, rows contiguous) are copied, through row s of the block table,
// to output rows [cu_seqlens[s], cu_seqlens[s+1]) of [num_tokens, kWidth]
// (contiguous, the activation type). An fp8 cache (kFp8) is widened and
// multiplied by *cache_scale. One warp copies one output row, kWarps rows a
// block (attnc/Plan/LatentGather.h); rows whose 16-byte chunks tile them
// (kVector) move as 16-byte stores, other widths element by element.
// Output rows no sequence owns (at or past cu_seqlens[num_seqs]) are not
// written.
//
// The generated source defines `struct Config` (act_t, cache_t, kWidth,
// kBlockSize, kFp8, kVector, kWarps) and an extern "C" entry point that calls
// latent_gather<Config>.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_LATENT_GATHER_CUH
#define ATTNC_LATENT_GATHER_CUH

#include "attnc_device.cuh"

namespace attnc {

template <class C>
__device__ __forceinline__ void latent_gather(
    const typename C::cache_t *latent_cache, long long latent_cache_block_stride,
    long long latent_cache_token_stride, const int *block_tables, const int *cu_seqlens,
    const float *cache_scale, typename C::act_t *output, int num_tokens, int num_seqs,
    int max_blocks_per_seq) {
  using act_t = typename C::act_t;
  using cache_t = typename C::cache_t;
  constexpr int kWidth = C::kWidth, kBlockSize = C::kBlockSize;
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * C::kWarps + threadIdx.x / 32;
  if (row >= num_tokens || num_seqs <= 0) return;
  // The owning sequence: the last s with cu_seqlens[s] <= row.
  int lo = 0, hi = num_seqs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (cu_seqlens[mid] <= row) lo = mid;
    else hi = mid - 1;
  }
  const int pos = row - cu_seqlens[lo];
  if (pos < 0 || row >= cu_seqlens[num_seqs] || pos / kBlockSize >= max_blocks_per_seq)
    return;  // no sequence owns the row
  const long long block = block_tables[(long long)lo * max_blocks_per_seq + pos / kBlockSize];
  const cache_t *src = latent_cache + block * latent_cache_block_stride +
                       (long long)(pos % kBlockSize) * latent_cache_token_stride;
  act_t *dst = output + (long long)row * kWidth;
  float scale = 1.0f;
  if constexpr (C::kFp8)
    scale = *cache_scale;
  if constexpr (C::kVector) {
    // 8 values a chunk: 16 bytes of act_t out, 16 (16-bit cache) or 8 (fp8) in.
    for (int c = lane; c < kWidth / 8; c += 32) {
      if constexpr (C::kFp8) {
        const uint2 bytes = *reinterpret_cast<const uint2 *>(src + c * 8);
        const __nv_fp8_e4m3 *e = reinterpret_cast<const __nv_fp8_e4m3 *>(&bytes);
        uint4 out;
        out.x = attnc::pack2<act_t>(float(e[0]) * scale, float(e[1]) * scale);
        out.y = attnc::pack2<act_t>(float(e[2]) * scale, float(e[3]) * scale);
        out.z = attnc::pack2<act_t>(float(e[4]) * scale, float(e[5]) * scale);
        out.w = attnc::pack2<act_t>(float(e[6]) * scale, float(e[7]) * scale);
        *reinterpret_cast<uint4 *>(dst + c * 8) = out;
      } else {
        *reinterpret_cast<uint4 *>(dst + c * 8) = *reinterpret_cast<const uint4 *>(src + c * 8);
      }
    }
  } else {
    for (int d = lane; d < kWidth; d += 32) {
      if constexpr (C::kFp8)
        dst[d] = attnc::from_float<act_t>(attnc::to_float(src[d]) * scale);
      else
        dst[d] = src[d];
    }
  }
}

} // namespace attnc

#endif // ATTNC_LATENT_GATHER_CUH
