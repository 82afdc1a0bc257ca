//===- AttentionTiling.h - Shared memory of the attention kernel -*- C++ -*-===//
//
// One definition of the tensor-core attention kernel's shared-memory layout
// in bytes, for the schedule (attn-specialize checks the tile fits) and the
// emitter (the launch's dynamic shared memory, and every area's offset,
// printed into the kernel's Config for the template in
// runtime/device/attnc_attention.cuh). Rows are padded by 16 bytes (8 16-bit elements) so that
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

namespace attnc::plan {

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

/// The tensor-core kernel's shared-memory map: row strides and the byte
/// offset of every area, for one schedule (the file comment has the picture).
/// The emitter prints it into the kernel's Config; the template reads it.
struct AttentionSharedMap {
  // Row strides: 16-bit tiles padded by 8 elements, the merge area's rows
  // (floats), and a landed K/V row in bytes (fp8: raw, padded by 16 bytes;
  // else the 16-bit row).
  int64_t qStride, kStride, vStride, oStride, kLandStride, vLandStride;
  // Tiles of more than 16 rows, mma.sync: the Q tile at 0, then one K and
  // one V tile, then (fp8) their landing buffers; without fp8 the tiles land
  // in place.
  int64_t staggeredKOffset, staggeredVOffset, staggeredKLandOffset,
      staggeredVLandOffset;
  // Tiles of at most 16 rows: a 16-row Q tile at 0, then `stages` stages of
  // ringStageBytes (K landed, V landed at ringVOffset within the stage),
  // then (fp8) the widened K and V tiles.
  int64_t ringOffset, ringStageBytes, ringVOffset, ringWidenKOffset,
      ringWidenVOffset;
  // wgmma (128-byte swizzled rows): the Q tile at 0, two K tiles of
  // wgmmaKBytes, one V tile.
  int64_t wgmmaKOffset, wgmmaKBytes, wgmmaVOffset;
  // After the key loop, from 0: the warps' merge area (o [block_m][oStride],
  // then m, l, weights, row m, row l [block_m] each) or the split merge's
  // statistics (weights and l [max_kv_splits][block_m], merged m and l).
  int64_t mergeMOffset, mergeLOffset, mergeWeightOffset, mergeRowMOffset,
      mergeRowLOffset;
  int64_t splitLOffset, splitMergedMOffset, splitMergedLOffset;
  // The front area (the largest of the above), then the slots of three
  // tiles' keys, the split merge's flag (16 bytes) and the tile's sequence
  // (16 bytes); totalBytes is the launch's dynamic shared memory.
  int64_t frontBytes, slotOffset, splitFlagOffset, ownerOffset, totalBytes;
};

inline AttentionSharedMap attentionSharedMap(int64_t qkPadded, int64_t vPadded,
                                             int64_t blockM, int64_t blockN,
                                             int64_t stages, int64_t maxSplits,
                                             bool fp8Cache, bool wgmma) {
  AttentionSharedMap map{};
  map.qStride = map.kStride = qkPadded + 8;
  map.vStride = map.oStride = vPadded + 8;
  int64_t kBytes = blockN * map.kStride * 2, vBytes = blockN * map.vStride * 2;
  map.kLandStride = fp8Cache ? qkPadded + 16 : map.kStride * 2;
  map.vLandStride = fp8Cache ? vPadded + 16 : map.vStride * 2;
  int64_t kLand = blockN * map.kLandStride, vLand = blockN * map.vLandStride;

  int64_t qBytes = blockM * map.qStride * 2;
  map.staggeredKOffset = qBytes;
  map.staggeredVOffset = qBytes + kBytes;
  map.staggeredKLandOffset = fp8Cache ? qBytes + kBytes + vBytes : qBytes;
  map.staggeredVLandOffset =
      fp8Cache ? map.staggeredKLandOffset + kLand : qBytes + kBytes;
  int64_t staggered = qBytes + kBytes + vBytes + (fp8Cache ? kLand + vLand : 0);

  map.ringOffset = 16 * map.qStride * 2;
  map.ringStageBytes = kLand + vLand;
  map.ringVOffset = kLand;
  map.ringWidenKOffset = map.ringOffset + stages * map.ringStageBytes;
  map.ringWidenVOffset = map.ringWidenKOffset + kBytes;
  int64_t ring = map.ringWidenKOffset + (fp8Cache ? kBytes + vBytes : 0);

  int64_t wgmmaQBytes = blockM * qkPadded * 2;
  map.wgmmaKOffset = wgmmaQBytes;
  map.wgmmaKBytes = blockN * qkPadded * 2;
  map.wgmmaVOffset = wgmmaQBytes + 2 * map.wgmmaKBytes;
  int64_t wgmmaBytes = map.wgmmaVOffset + blockN * vPadded * 2;

  int64_t rowFloats = 4 * blockM;
  map.mergeMOffset = rowFloats * map.oStride;
  map.mergeLOffset = map.mergeMOffset + rowFloats;
  map.mergeWeightOffset = map.mergeLOffset + rowFloats;
  map.mergeRowMOffset = map.mergeWeightOffset + rowFloats;
  map.mergeRowLOffset = map.mergeRowMOffset + rowFloats;
  int64_t merge = map.mergeRowLOffset + rowFloats;
  map.splitLOffset = maxSplits * rowFloats;
  map.splitMergedMOffset = 2 * maxSplits * rowFloats;
  map.splitMergedLOffset = map.splitMergedMOffset + rowFloats;
  int64_t splitMerge = map.splitMergedLOffset + rowFloats;

  map.frontBytes =
      std::max({wgmma ? wgmmaBytes : staggered, ring, merge, splitMerge});
  map.slotOffset = (map.frontBytes + 15) / 16 * 16;
  map.splitFlagOffset = map.slotOffset + 3 * blockN * 4;
  map.ownerOffset = map.splitFlagOffset + 16;
  map.totalBytes = map.ownerOffset + 16;
  return map;
}

/// The launch's dynamic shared memory: the total of attentionSharedMap.
inline int64_t attentionSharedBytes(int64_t qkPadded, int64_t vPadded,
                                    int64_t blockM, int64_t blockN,
                                    int64_t stages, int64_t maxSplits,
                                    bool fp8Cache, bool wgmma) {
  return attentionSharedMap(qkPadded, vPadded, blockM, blockN, stages,
                            maxSplits, fp8Cache, wgmma)
      .totalBytes;
}

/// The CUDA-core form's shared memory: its warps' partial rows of the
/// group's query heads, merged at the end: num_warps x group x (max, sum and
/// v_head_dim outputs) floats.
inline int64_t referenceAttentionSharedBytes(int64_t numWarps,
                                             int64_t groupSize,
                                             int64_t vHeadDim) {
  return numWarps * groupSize * (2 + vHeadDim) * 4;
}

/// Whether a row of `dim` elements of `elementBytes` each is a whole number
/// of 16-byte chunks (copied by cp.async 16 bytes at a time; else element
/// by element).
inline bool rowIsWholeChunks(int64_t dim, int64_t elementBytes) {
  return dim * elementBytes % 16 == 0;
}

/// The warp-specialised form (schedule mma "wgmma_ws",
/// runtime/device/attnc_attention_ws.cuh): attn.varlen_attention on an arch
/// with wgmma, 16-bit activations, head dims padded to 64-value column
/// blocks and v_dim_padded <= 256 (one consumer's fp32 output accumulator,
/// v_dim_padded / 2 registers per thread, next to its score tile).
inline bool takesWarpSpecializedForm(bool archHasWgmma, int64_t qkPadded,
                                     int64_t vPadded, bool sixteenBitActivation) {
  return archHasWgmma && sixteenBitActivation && qkPadded % 64 == 0 &&
         vPadded % 64 == 0 && vPadded <= 256;
}

/// The warp-specialised form's block: a producer warpgroup and two consumer
/// warpgroups of 64 query rows each, and the registers setmaxnreg moves
/// between them. A block of 384 threads launches with 168 registers each
/// (the 64K file over 384, rounded down to 8); setmaxnreg only moves
/// registers within the block's allocation (an increase that the released
/// registers cannot cover waits forever), so 128 x 32 + 256 x 232 <= 384 x
/// 168. (24 producer registers would give the consumers 240, but spilled
/// the producer's loop at 192/128, NVRTC 13.0; the consumers use ~170.)
constexpr int64_t kWsWarps = 12, kWsBlockM = 128;
/// The paged prefill kernel's pages: boxes of whole 8-row swizzle atoms.
constexpr int64_t kWsMinPageRows = 8;
/// The paged prefill kernel serves a batch whose query rows (tokens x
/// gqa_pack) average at least this many a sequence (half its row tile);
/// decode-heavy batches keep the decode-capable kernel (16-row tiles,
/// split-KV). The ABI hint `min_rows_per_seq`.
constexpr int64_t kWsPrefillMinRowsPerSeq = 64;
/// The block's shared memory at most: sm_90's opt-in dynamic limit (the
/// form needs sm_90a).
constexpr int64_t kWsMaxSharedBytes = 227 * 1024;
constexpr int64_t kWsLaunchRegisters = 168;
constexpr int64_t kWsProducerRegisters = 32, kWsConsumerRegisters = 232;
/// Persistent blocks' producer warp looks up each row tile and loops over
/// the block's tiles: at 32 registers it spilled 40 bytes at 192/128 (NVRTC
/// 13.0), at 40 a few words, outside its load loop; 128 x 40 + 256 x 232 =
/// 384 x 168.
constexpr int64_t kWsPersistentProducerRegisters = 40;
static_assert(128 * kWsProducerRegisters + 256 * kWsConsumerRegisters <=
                      kWsWarps * 32 * kWsLaunchRegisters &&
                  128 * kWsPersistentProducerRegisters +
                          256 * kWsConsumerRegisters <=
                      kWsWarps * 32 * kWsLaunchRegisters,
              "setmaxnreg moves registers within the block's allocation");
/// The producer warpgroup's registers (setmaxnreg), persistent blocks or not.
inline int64_t wsProducerRegisters(bool persistent) {
  return persistent ? kWsPersistentProducerRegisters : kWsProducerRegisters;
}

/// The warp-specialised form's shared memory (128-byte swizzled tiles,
/// 1024-byte aligned): the two consumers' Q tiles (64 rows each), `stages`
/// K tiles, `stages` V tiles, the mbarriers (full and empty per stage for K
/// and V, and the V tail's; persistent blocks add full and empty for each
/// of two tile-info slots), then at ownerOffset the row tile's owner: the
/// int4 of the block's sequence lookup or, persistent, the two slots of
/// infoSlotBytes (0 otherwise) in which the producer publishes each row
/// tile's sequence, rows and key tiles.
struct WsAttentionSharedMap {
  int64_t qBytes, kOffset, kStageBytes, vOffset, vStageBytes, barOffset,
      ownerOffset, infoSlotBytes, totalBytes;
};
inline WsAttentionSharedMap wsAttentionSharedMap(int64_t qkPadded,
                                                 int64_t vPadded,
                                                 int64_t blockN,
                                                 int64_t stages,
                                                 bool persistent) {
  WsAttentionSharedMap map{};
  map.qBytes = 64 * qkPadded * 2;
  map.kOffset = 2 * map.qBytes;
  map.kStageBytes = blockN * qkPadded * 2;
  map.vOffset = map.kOffset + stages * map.kStageBytes;
  map.vStageBytes = blockN * vPadded * 2;
  map.barOffset = map.vOffset + stages * map.vStageBytes;
  map.ownerOffset = map.barOffset + (4 * stages + 1 + (persistent ? 4 : 0)) * 8;
  map.ownerOffset = (map.ownerOffset + 15) / 16 * 16;
  map.infoSlotBytes = persistent ? 64 : 0;
  map.totalBytes = map.ownerOffset + (persistent ? 2 * map.infoSlotBytes : 16);
  return map;
}

} // namespace attnc::plan

#endif // ATTNC_PLAN_ATTENTIONTILING_H
