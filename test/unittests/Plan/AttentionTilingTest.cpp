//===- AttentionTilingTest.cpp - The attention kernel's shared memory -----===//
#include "attnc/Plan/AttentionTiling.h"

#include <gtest/gtest.h>

namespace attnc::plan {
namespace {

// block_m 128, block_n 64, 2 stages, 64 splits: the tensor-core tiling.
AttentionSharedMap mapFor(int64_t qkPadded, int64_t vPadded, bool fp8, bool wgmma) {
  return attentionSharedMap(qkPadded, vPadded, 128, 64, 2, 64, fp8, wgmma);
}

TEST(AttentionTiling, WgmmaAreasOfTheDefaultModel) {
  // 192/128 bf16: Q 128 x 192 x 2 = 49152, K tiles of 64 x 192 x 2 = 24576,
  // V after two of them (98304), 64 x 128 x 2 = 16384 more: the front area
  // 114688; slots 768, flag and sequence 16 each.
  AttentionSharedMap map = mapFor(192, 128, false, true);
  EXPECT_EQ(map.wgmmaKOffset, 49152);
  EXPECT_EQ(map.wgmmaKBytes, 24576);
  EXPECT_EQ(map.wgmmaVOffset, 98304);
  EXPECT_EQ(map.frontBytes, 114688);
  EXPECT_EQ(map.slotOffset, 114688);
  EXPECT_EQ(map.splitFlagOffset, 115456);
  EXPECT_EQ(map.ownerOffset, 115472);
  EXPECT_EQ(map.totalBytes, 115488);
}

TEST(AttentionTiling, Fp8LandingBuffers) {
  // 192/128 fp8: rows of 200 / 136 elements, raw rows of 208 / 144 bytes;
  // the staggered landing buffers after Q (51200) and the 16-bit K (25600)
  // and V (17408) tiles; the ring's stages of 13312 + 9216 bytes after the
  // 16-row Q tile (6400), the widened pair after both stages.
  AttentionSharedMap map = mapFor(192, 128, true, false);
  EXPECT_EQ(map.kLandStride, 208);
  EXPECT_EQ(map.vLandStride, 144);
  EXPECT_EQ(map.staggeredKLandOffset, 94208);
  EXPECT_EQ(map.staggeredVLandOffset, 107520);
  EXPECT_EQ(map.ringOffset, 6400);
  EXPECT_EQ(map.ringStageBytes, 22528);
  EXPECT_EQ(map.ringVOffset, 13312);
  EXPECT_EQ(map.ringWidenKOffset, 51456);
  EXPECT_EQ(map.ringWidenVOffset, 77056);
  EXPECT_EQ(map.totalBytes, 117536);
}

TEST(AttentionTiling, MergeAreasAfterTheKeyLoop) {
  // Pads of 16: the split statistics (2 x 64 x 512 + 2 x 512 = 66560 bytes)
  // are the largest area; the merge area's m after 512 x 24 bytes.
  AttentionSharedMap map = mapFor(16, 16, false, false);
  EXPECT_EQ(map.mergeMOffset, 12288);
  EXPECT_EQ(map.mergeRowLOffset, 14336);
  EXPECT_EQ(map.splitLOffset, 32768);
  EXPECT_EQ(map.splitMergedLOffset, 66048);
  EXPECT_EQ(map.frontBytes, 66560);
  EXPECT_EQ(map.totalBytes, 67360);
  EXPECT_EQ(attentionSharedBytes(16, 16, 128, 64, 2, 64, false, false), 67360);
}

TEST(AttentionTiling, WarpSpecializedPersistentPiecesOnlyWhenPersistent) {
  // 192/128, block_n 128, 2 stages: the 9 mbarriers at 212992, the owner's
  // int4 at 213072 (16-aligned), 213088 bytes; persistent blocks add the
  // tile-info slots' 4 mbarriers and two 64-byte slots at 213104.
  WsAttentionSharedMap map = wsAttentionSharedMap(192, 128, 128, 2, false);
  EXPECT_EQ(map.barOffset, 212992);
  EXPECT_EQ(map.ownerOffset, 213072);
  EXPECT_EQ(map.infoSlotBytes, 0);
  EXPECT_EQ(map.totalBytes, 213088);
  EXPECT_EQ(wsProducerRegisters(false), 32);
  WsAttentionSharedMap persistent =
      wsAttentionSharedMap(192, 128, 128, 2, true);
  EXPECT_EQ(persistent.barOffset, 212992);
  EXPECT_EQ(persistent.ownerOffset, 213104);
  EXPECT_EQ(persistent.infoSlotBytes, 64);
  EXPECT_EQ(persistent.totalBytes, 213232);
  EXPECT_EQ(wsProducerRegisters(true), 40);
}

TEST(AttentionTiling, RowsInWholeChunks) {
  EXPECT_TRUE(rowIsWholeChunks(192, 2));
  EXPECT_TRUE(rowIsWholeChunks(128, 1));
  EXPECT_FALSE(rowIsWholeChunks(3, 2));
}

} // namespace
} // namespace attnc::plan
