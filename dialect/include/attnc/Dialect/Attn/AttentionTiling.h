//===- AttentionTiling.h - Shared memory of the attention kernel -*- C++ -*-===//
//
// One definition of the tensor-core attention kernel's shared-memory layout
// in bytes, for the schedule (attn-specialize checks the tile fits) and the
// emitter (the launch's dynamic shared memory). The kernel's own constexprs
// (kSharedBytes in the generated source) follow the same formula:
//  - the Q tile, block_m rows of qk_dim_padded + 8 16-bit elements (the
//    extra 16 bytes per row spread ldmatrix's 8 rows over distinct banks);
//  - a union of: the K/V pipeline (stages x block_n rows of K and V, 16-bit
//    rows padded by 8 elements, or raw fp8 rows padded by 16 bytes plus one
//    widened 16-bit K/V tile), the warps' merge area (block_m rows of
//    v_dim_padded + 8 floats and 5 floats per row), and the split merge
//    statistics (2 * max_kv_splits + 2 floats per row);
//  - the slots of the keys in flight (stages x block_n ints) and 16 bytes.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_DIALECT_ATTN_ATTENTIONTILING_H
#define ATTNC_DIALECT_ATTN_ATTENTIONTILING_H

#include <algorithm>
#include <cstdint>

namespace attnc::attn {

inline int64_t attentionSharedBytes(int64_t qkPadded, int64_t vPadded,
                                    int64_t blockM, int64_t blockN,
                                    int64_t stages, int64_t maxSplits,
                                    bool fp8Cache) {
  int64_t kStride = qkPadded + 8, vStride = vPadded + 8;
  int64_t kStage = fp8Cache ? blockN * (qkPadded + 16) : blockN * kStride * 2;
  int64_t vStage = fp8Cache ? blockN * (vPadded + 16) : blockN * vStride * 2;
  int64_t widened = fp8Cache ? blockN * (kStride + vStride) * 2 : 0;
  int64_t qBytes = blockM * kStride * 2;
  int64_t pipeline = stages * (kStage + vStage) + widened;
  int64_t merge = 4 * (blockM * (vPadded + 8) + 5 * blockM);
  int64_t splitMerge = 4 * (2 * maxSplits * blockM + 2 * blockM);
  int64_t unionBytes = std::max({pipeline, merge, splitMerge});
  return qBytes + (unionBytes + 15) / 16 * 16 + stages * blockN * 4 + 16;
}

} // namespace attnc::attn

#endif // ATTNC_DIALECT_ATTN_ATTENTIONTILING_H
