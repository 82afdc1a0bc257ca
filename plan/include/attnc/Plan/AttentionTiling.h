//===- AttentionTiling.h - Shared memory of the attention kernel -*- C++ -*-===//
//
// One definition of the tensor-core attention kernel's shared-memory layout
// in bytes, for the schedule (attn-specialize checks the tile fits) and the
// emitter (the launch's dynamic shared memory). The kernel's own constexprs
// (kSharedBytes in the generated source, checked by a static_assert) follow
// the same formula. Rows are padded by 16 bytes (8 16-bit elements) so that
// the 8 rows an ldmatrix reads fall in distinct banks; fp8 rows land raw
// (padded by 16 bytes) and are widened into 16-bit tiles. The front area is
// the largest of:
//  - tiles of more than 16 rows, mma.sync: the Q tile (block_m rows), one
//    K and one V tile (staggered), and for fp8 their landing buffers;
//  - tiles of more than 16 rows, wgmma (128-byte swizzled, unpadded rows):
//    the Q tile, two K tiles and one V tile;
//  - tiles of at most 16 rows: a 16-row Q tile, `stages` K/V tiles as they
//    land, and for fp8 one widened K/V pair;
//  - after the key loop, the warps' merge area (block_m rows of
//    v_dim_padded + 8 floats and 5 floats per row) or the split merge's
//    statistics (2 * max_kv_splits + 2 floats per row).
// Then the slots of three tiles' keys (3 x block_n ints), the split merge's
// flag (16 bytes) and the tile's sequence (16 bytes). The wgmma form needs
// the area to start 1024-byte aligned: the kernel has no static shared
// memory.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_PLAN_ATTENTIONTILING_H
#define ATTNC_PLAN_ATTENTIONTILING_H

#include <algorithm>
#include <cstdint>

namespace attnc::attn {

/// Whether the tensor-core form takes a layer: 16-bit activations, a cache
/// of the same type or fp8, and a V head whose fp32 accumulator fits a
/// warp's registers (v_dim_padded <= 256). attn-specialize chooses the form
/// by it and the emitter guards on it; the rest take the CUDA-core form.
inline bool takesTensorCoreForm(int64_t vPadded, bool sixteenBitActivation,
                                bool cacheIsActivationOrFp8) {
  return vPadded <= 256 && sixteenBitActivation && cacheIsActivationOrFp8;
}

/// Whether tiles of more than 16 rows take wgmma (schedule mma "wgmma"):
/// an arch with it (sm_90a), 16-bit activations with a cache of the same
/// type (fp8 tiles keep the mma.sync form, which widens them in shared
/// memory), and head dims padded to 64-element column blocks with
/// v_dim_padded <= 128 (two m64 row blocks of fp32 output accumulators,
/// v_dim_padded registers per thread, next to the 64-key score tiles).
inline bool takesWgmmaForm(bool archHasWgmma, int64_t qkPadded,
                           int64_t vPadded, bool sixteenBitActivation,
                           bool cacheIsActivation) {
  return archHasWgmma && sixteenBitActivation && cacheIsActivation &&
         qkPadded % 64 == 0 && vPadded % 64 == 0 && vPadded <= 128;
}

inline int64_t attentionSharedBytes(int64_t qkPadded, int64_t vPadded,
                                    int64_t blockM, int64_t blockN,
                                    int64_t stages, int64_t maxSplits,
                                    bool fp8Cache, bool wgmma) {
  int64_t qStride = qkPadded + 8, vStride = vPadded + 8;
  int64_t kBytes = blockN * qStride * 2, vBytes = blockN * vStride * 2;
  int64_t kLand = fp8Cache ? blockN * (qkPadded + 16) : kBytes;
  int64_t vLand = fp8Cache ? blockN * (vPadded + 16) : vBytes;
  int64_t staggered =
      wgmma ? blockM * qkPadded * 2 + 2 * blockN * qkPadded * 2 +
                  blockN * vPadded * 2
            : blockM * qStride * 2 + kBytes + vBytes +
                  (fp8Cache ? kLand + vLand : 0);
  int64_t ring = 16 * qStride * 2 + stages * (kLand + vLand) +
                 (fp8Cache ? kBytes + vBytes : 0);
  int64_t merge = 4 * blockM * (vPadded + 8 + 5);
  int64_t splitMerge = 4 * (2 * maxSplits * blockM + 2 * blockM);
  int64_t front = std::max({staggered, ring, merge, splitMerge});
  return (front + 15) / 16 * 16 + 3 * blockN * 4 + 32;
}

} // namespace attnc::attn

#endif // ATTNC_PLAN_ATTENTIONTILING_H
