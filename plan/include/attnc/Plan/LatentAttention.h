//===- LatentAttention.h - MLA absorbed decode: tiles and memory -*- C++ -*-===//
//
// One definition of the sizes of the MLA absorbed decode kernel
// (attn.latent_attention, runtime/device/attnc_mla_decode.cuh): its tile
// (64 query rows x 64 keys, two warpgroups), the shared-memory map whose
// offsets the emitter prints into the kernel's Config, the split-KV limits
// and the workspace. attn-specialize checks the map fits the arch; the
// emitter sizes the launch by it.
//
// Shared memory, in 128-byte swizzled rows (1024-byte aligned areas):
//  - Q: 64 rows x (R + P) values;
//  - two K tiles of 64 keys x (R + P) values (V is a K tile's first R
//    columns, read in place);
//  - P: 64 rows x 64 keys;
//  - the row maxima of both warpgroups' halves, two tiles' worth
//    (2 x 2 x 64 floats), the row sums (2 x 64 floats);
//  - the split merge's flag (16 bytes) and the tile's sequence (16 bytes).
// (The split merge, a tree over a row tile's splits, works in registers and
// the workspace: no shared memory of its own.)
// An fp8 e4m3 cache uses the same map: a tile's fp8 bytes (half the 16-bit
// tile's) land inside its K tile and are widened there in place.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_PLAN_LATENTATTENTION_H
#define ATTNC_PLAN_LATENTATTENTION_H

#include "attnc/Plan/SplitKv.h"

#include <cstdint>

namespace attnc::plan {

/// The tile of the MLA decode kernel: rows, keys, threads.
constexpr int64_t kLatentBlockM = 64;
constexpr int64_t kLatentBlockN = 64;
constexpr int64_t kLatentWarps = 8;
/// Whether the kernel takes latent width `rank` (kv_lora_rank: V and the
/// output): each of its two warpgroups keeps rank / 2 output columns, whole
/// 64-column blocks, one wgmma m64n(rank / 2)k16 per 16 keys (n <= 256):
/// 512 (DeepSeek-V2/V3, Kimi-K2, GLM-4.x-Flash, LongCat), 256 (Mistral 4),
/// 384 or 128.
inline bool latentRankSupported(int64_t rank) {
  return rank % 128 == 0 && rank >= 128 && rank <= 512;
}
/// The rule of latentRankSupported, for error messages.
constexpr const char *kLatentRankRule =
    "a multiple of 128 from 128 to 512 (the MLA decode kernel's output "
    "width: two warpgroups of kv_lora_rank / 2 columns, whole 64-column "
    "blocks, one wgmma m64n(kv_lora_rank / 2)k16 each)";
/// At most this many splits. The splits of a row tile merge in a binary
/// tree (the last to finish reads ceil(log2(splits)) partial states of 64
/// rows x R floats), so the merge grows with the count's logarithm.
constexpr int64_t kLatentMaxKvSplits = 32;

/// Rows of one TMA box of a K tile (the 16-bit cache's tensor map): one
/// page's rows, at most the tile's keys. The ABI's box and the kernel's
/// Config::kBoxRows both come from here (a box of another size would leave
/// the mbarriers expecting bytes that never land).
inline int64_t latentKBoxRows(int64_t blockSize) {
  return blockSize < kLatentBlockN ? blockSize : kLatentBlockN;
}

/// The shared-memory map of the MLA decode kernel for rows of `qkDim`
/// (R + P) 16-bit values.
struct LatentAttentionSharedMap {
  int64_t qOffset = 0;
  int64_t kOffset = 0;
  int64_t kBytes = 0; ///< one K tile
  int64_t pOffset = 0;
  int64_t maxOffset = 0;
  int64_t lOffset = 0;
  int64_t splitFlagOffset = 0;
  int64_t ownerOffset = 0;
  int64_t barOffset = 0; ///< the K tiles' mbarriers: [2 buffers][column blocks]
  int64_t totalBytes = 0;
};

inline LatentAttentionSharedMap latentAttentionSharedMap(int64_t qkDim) {
  LatentAttentionSharedMap map;
  int64_t qBytes = kLatentBlockM * qkDim * 2;
  map.qOffset = 0;
  map.kOffset = qBytes;
  map.kBytes = kLatentBlockN * qkDim * 2;
  map.pOffset = map.kOffset + 2 * map.kBytes;
  map.maxOffset = map.pOffset + kLatentBlockM * kLatentBlockN * 2;
  map.lOffset = map.maxOffset + 2 * 2 * kLatentBlockM * 4;
  map.splitFlagOffset = map.lOffset + 2 * kLatentBlockM * 4;
  map.ownerOffset = map.splitFlagOffset + 16;
  map.barOffset = map.ownerOffset + 16;
  map.totalBytes = map.barOffset + 2 * (qkDim / 64) * 8;
  return map;
}

/// The split-KV limits of the MLA decode kernel on a GPU of `numSms` SMs:
/// one CTA per SM (its tiles take nearly all of an SM's shared memory).
inline SplitKvLimits latentSplitKvLimits(int64_t numSms) {
  return {numSms, numSms < kLatentMaxKvSplits ? numSms : kLatentMaxKvSplits};
}

/// The workspace of the MLA decode kernel, in floats: the attention
/// kernel's layout (partials of 64 rows x R = `rank`, the rows' max and
/// sum, then the counters) for its limits.
inline int64_t latentAttentionWorkspaceFloats(const SplitKvLimits &limits,
                                              int64_t rank) {
  return attentionWorkspaceFloats(limits, kLatentBlockM, rank);
}

} // namespace attnc::plan

#endif // ATTNC_PLAN_LATENTATTENTION_H
