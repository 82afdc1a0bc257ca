//===- attnc_attention_rules.cuh - which keys a query row attends -*- CUDA -*-===//
//
// The key range of a query row, shared by the attention templates
// (attnc_attention.cuh's PagedAttention, attnc_attention_ws.cuh's
// WsAttention, attnc_attention_reference.cuh's CUDA-core form), so that causal masking, the sliding window and Llama 4's
// chunked attention mean the same in every form. C is the kernel's Config:
// kCausal, kSlidingWindow (0: none), kAttentionChunk (0: none).
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_ATTENTION_RULES_CUH
#define ATTNC_ATTENTION_RULES_CUH

namespace attnc {

template <class C> struct KeyRange {
  /// The first key row `pos` (a query position; the queries are the last
  /// positions of a sequence of kv_len keys) attends. Non-decreasing in
  /// pos for all three rules (the window's start pos - window + 1, the
  /// chunk's start pos - pos % chunk), which the tile ranges rely on.
  static __device__ __forceinline__ int begin(int pos, int kv_len) {
    int first = 0;
    if constexpr (C::kSlidingWindow > 0)
      first = max(0, (C::kCausal ? pos : kv_len - 1) - C::kSlidingWindow + 1);
    if constexpr (C::kAttentionChunk > 0) // causal only (the verifier's rule)
      first = max(first, pos - pos % C::kAttentionChunk);
    return first;
  }
  /// One past the last key row `pos` attends.
  static __device__ __forceinline__ int end(int pos, int kv_len) {
    if constexpr (C::kCausal)
      return min(pos + 1, kv_len);
    else
      return kv_len;
  }
};

} // namespace attnc

#endif // ATTNC_ATTENTION_RULES_CUH
