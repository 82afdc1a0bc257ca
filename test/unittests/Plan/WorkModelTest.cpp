//===- WorkModelTest.cpp - Bytes, FLOPs and floor time --------------------===//
//
// Every expected number is worked out by hand in the comment beside it.
//
//===----------------------------------------------------------------------===//
#include "attnc/Plan/WorkModel.h"

#include <gtest/gtest.h>

namespace attnc::plan {
namespace {

/// MiMo-V2-Flash's full layers: Hq 64, Hkv 4, Dqk 192, Dv 128, bf16
/// activations and cache, rope, pages of 16 tokens.
LayerWorkShape mimoFull() {
  LayerWorkShape shape;
  shape.heads = {64, 4, 192, 128, GateLayout::None};
  shape.rope = true;
  return shape;
}

TEST(WorkModel, PreprocessBytesPerToken) {
  Result<PreprocessTraffic> t = preprocessTraffic(mimoFull());
  ASSERT_TRUE(t.ok()) << t.status().message();
  // Fused width 64*192 + 4*192 + 4*128 = 12288 + 768 + 512 = 13568 bf16
  // values = 27136 bytes, + 8 (slot) + 8 (position) = 27152.
  EXPECT_EQ(t->read_bytes, 27152);
  // q 64*192*2 = 24576, K and V rows 4*(192+128)*2 = 2560: 27136.
  EXPECT_EQ(t->written_bytes, 27136);
  EXPECT_EQ(t->bytes(), 27152 + 27136);
}

TEST(WorkModel, GatesAndFp8CacheAndNoRope) {
  // Hq 2, Hkv 1, Dqk 4, Dv 3, [q|k|v|g], fp8 cache, no rope.
  LayerWorkShape shape;
  shape.heads = {2, 1, 4, 3, GateLayout::Concatenated};
  shape.cache_bytes = 1;
  Result<PreprocessTraffic> t = preprocessTraffic(shape);
  ASSERT_TRUE(t.ok()) << t.status().message();
  // Width 8 + 4 + 3 + 2*3 (gate) = 21 -> 42 bytes, + 8 (slot), no position.
  EXPECT_EQ(t->read_bytes, 50);
  // q 8 and gate 6 values -> 28 bytes; K 4 and V 3 fp8 bytes: 35.
  EXPECT_EQ(t->written_bytes, 35);
  Result<AttentionTraffic> a = attentionTraffic(shape);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->kv_bytes_per_key, 7);      // 1 * (4 + 3) * 1
  EXPECT_EQ(a->query_read_bytes, 28);     // (2*4 q + 2*3 gate) * 2
  EXPECT_EQ(a->output_written_bytes, 12); // 2*3*2
  EXPECT_EQ(a->flops_per_query_key, 28);  // 2 * 2 * (4 + 3)

  // One gate value per query head: the gate segment is Hq = 2 wide.
  shape.heads.gate = GateLayout::HeadScalar;
  t = preprocessTraffic(shape);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->read_bytes, (8 + 4 + 3 + 2) * 2 + 8);     // 42
  EXPECT_EQ(t->written_bytes, (8 + 2) * 2 + 7);          // 27
  EXPECT_EQ(attentionTraffic(shape)->query_read_bytes, 20); // (8 + 2) * 2
}

TEST(WorkModel, VisibleKeysAndCausalPairs) {
  EXPECT_EQ(visibleKeys(0, 0), 1);
  EXPECT_EQ(visibleKeys(8191, 0), 8192);
  // Position 4999 with a 4096-key window sees keys 904..4999.
  EXPECT_EQ(visibleKeys(4999, 4096), 4096);
  EXPECT_EQ(visibleKeys(100, 4096), 101);
  // 10 tokens: 1 + 2 + ... + 10 = 55.
  EXPECT_EQ(causalQueryKeyPairs(10, 0), 55);
  // Window 4: 1 + 2 + 3 + 4 + 6 * 4 = 34.
  EXPECT_EQ(causalQueryKeyPairs(10, 4), 34);
  // Chunks of 4: positions 0..9 see 1 2 3 4 1 2 3 4 1 2 keys = 23; the
  // decode query at position 9 sees 9 % 4 + 1 = 2 keys.
  EXPECT_EQ(causalQueryKeyPairs(10, 0, 4), 23);
  EXPECT_EQ(visibleKeys(9, 0, 4), 2);
  EXPECT_EQ(visibleKeys(8191, 0, 8192), 8192);
  EXPECT_EQ(visibleKeys(32767, 0, 8192), 8192);
  EXPECT_EQ(visibleKeys(32768, 0, 8192), 1);
  // Chunks of 4 and a window of 3: 1 2 3 3 1 2 3 3 1 2 = 21.
  EXPECT_EQ(causalQueryKeyPairs(10, 3, 4), 21);
  // A chunk no shorter than the prefill changes nothing.
  EXPECT_EQ(causalQueryKeyPairs(10, 0, 10), 55);
  // A window no shorter than the prefill changes nothing.
  EXPECT_EQ(causalQueryKeyPairs(10, 10), 55);
  EXPECT_EQ(causalQueryKeyPairs(10, 11), 55);
  EXPECT_EQ(causalQueryKeyPairs(0, 4), 0);
  // The largest context: 2^31 * (2^31 + 1) / 2 fits int64_t.
  EXPECT_EQ(causalQueryKeyPairs(int64_t(1) << 31, 0),
            (int64_t(1) << 61) + (int64_t(1) << 30));
}

TEST(WorkModel, DecodeStepFloorIsTheKvBytes) {
  Workload decode{Phase::Decode, 64, 8192};
  Machine h200;
  Result<KernelWork> w = attentionWork(mimoFull(), decode, h200);
  ASSERT_TRUE(w.ok()) << w.status().message();
  // Per sequence: 8192 keys * 2560 bytes = 20971520, q 24576, block table
  // 8192 / 16 = 512 pages * 4 = 2048, length and start 8: 20998152; 64 of
  // them: 1343881728 read. Output 64*128*2 = 16384 per sequence: 1048576.
  EXPECT_DOUBLE_EQ(w->read_bytes, 1343881728.0);
  EXPECT_DOUBLE_EQ(w->written_bytes, 1048576.0);
  // 64 sequences * 8192 pairs * 2*64*(192+128) = 40960: 21474836480.
  EXPECT_DOUBLE_EQ(w->flops, 21474836480.0);
  // 1344930304 bytes / 4.25e12 B/s = 316.45 us; 2.147e10 / 780e12 =
  // 27.5 us: memory-bound.
  EXPECT_NEAR(w->floorSeconds() * 1e6, 316.454, 1e-3);
  EXPECT_NEAR(w->compute_seconds * 1e6, 27.532, 1e-3);
  EXPECT_TRUE(w->memoryBound());

  // The step's preprocess: 64 tokens of 27152 read and 27136 written bytes.
  Result<KernelWork> p = preprocessWork(mimoFull(), decode, h200);
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->read_bytes, 64.0 * 27152);
  EXPECT_DOUBLE_EQ(p->written_bytes, 64.0 * 27136);
  EXPECT_EQ(p->flops, 0);
}

TEST(WorkModel, SlidingDecodeReadsTheWindowOnly) {
  LayerWorkShape shape = mimoFull();
  shape.sliding_window = 128;
  Result<KernelWork> w =
      attentionWork(shape, {Phase::Decode, 1, 100000}, Machine{});
  ASSERT_TRUE(w.ok());
  // 128 keys * 2560 = 327680, + 24576 (q) + 8 pages * 4 + 8 = 352296.
  EXPECT_DOUBLE_EQ(w->read_bytes, 352296.0);
  EXPECT_DOUBLE_EQ(w->flops, 128.0 * 40960);
}

TEST(WorkModel, CausalPrefillIsComputeBound) {
  // Hq 2, Hkv 1, Dqk 4, Dv 3, bf16, pages of 4; 3 sequences of 10 tokens
  // on a machine of 1000 B/s and 1000 FLOP/s.
  LayerWorkShape shape;
  shape.heads = {2, 1, 4, 3, GateLayout::None};
  shape.block_size = 4;
  Machine slow{1000, 1000};
  Result<KernelWork> w = attentionWork(shape, {Phase::Prefill, 3, 10}, slow);
  ASSERT_TRUE(w.ok()) << w.status().message();
  // Per sequence: 10 keys * 14 + 10 queries * 16 + 3 pages * 4 + 8 = 320
  // read, 10 * 12 = 120 written; 3 sequences: 960 and 360.
  EXPECT_DOUBLE_EQ(w->read_bytes, 960.0);
  EXPECT_DOUBLE_EQ(w->written_bytes, 360.0);
  // 3 * 55 pairs * 28 FLOPs = 4620.
  EXPECT_DOUBLE_EQ(w->flops, 4620.0);
  EXPECT_DOUBLE_EQ(w->memory_seconds, 1.32);
  EXPECT_DOUBLE_EQ(w->compute_seconds, 4.62);
  EXPECT_DOUBLE_EQ(w->floorSeconds(), 4.62);
  EXPECT_FALSE(w->memoryBound());
  // Prefill's preprocess handles all 30 tokens: (2*4+1*4+1*3) * 2 + 8 = 38
  // bytes read per token (no rope).
  Result<KernelWork> p = preprocessWork(shape, {Phase::Prefill, 3, 10}, slow);
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->read_bytes, 30.0 * 38);
}

TEST(WorkModel, ErrorsNameTheField) {
  LayerWorkShape shape = mimoFull();
  Result<KernelWork> w = attentionWork(shape, {Phase::Decode, 0, 8}, Machine{});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().field, "batch");
  w = attentionWork(shape, {Phase::Prefill, 1, 0}, Machine{});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().field, "context");
  w = attentionWork(shape, {Phase::Decode, 1, (int64_t(1) << 31) + 1},
                    Machine{});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().field, "context");
  w = attentionWork(shape, {Phase::Decode, int64_t(1) << 20, int64_t(1) << 21},
                    Machine{});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().field, "context");
  shape.heads.num_kv_heads = 3; // 64 % 3 != 0
  Result<PreprocessTraffic> t = preprocessTraffic(shape);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().field, "num_kv_heads");
  shape = mimoFull();
  shape.sliding_window = -1;
  t = preprocessTraffic(shape);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().field, "sliding_window");
}

// MLA, DeepSeek-V3 on one rank: H 128, R 512, P 64, nope 128, Dv 128, bf16,
// pages of 64. Every number below is worked out by hand from the header's
// rules.
MlaWorkShape deepSeekV3() {
  MlaWorkShape shape;
  shape.num_heads = 128;
  shape.kv_lora_rank = 512;
  shape.rope_head_dim = 64;
  shape.nope_head_dim = 128;
  shape.v_head_dim = 128;
  return shape;
}

TEST(MlaWorkModel, AbsorbedDecodeIsComputeBoundAtH128) {
  Machine h200;
  Workload decode{Phase::Decode, 64, 4096};
  Result<KernelWork> work = latentAttentionWork(deepSeekV3(), decode, h200);
  ASSERT_TRUE(work) << work.error().message();
  // Per sequence: 4096 rows x 576 x 2 = 4718592, the query 128 x 576 x 2 =
  // 147456, 64 pages x 4 = 256, length and start 8: 4866312; x 64.
  EXPECT_EQ(work->read_bytes, 64.0 * 4866312);
  // The output 128 x 512 x 2 = 131072 per sequence.
  EXPECT_EQ(work->written_bytes, 64.0 * 131072);
  // Per pair 2 x 128 x 576 + 2 x 128 x 512 = 278528; 4096 pairs a sequence.
  EXPECT_EQ(work->flops, 64.0 * 4096 * 278528);
  // 7.30e10 FLOPs at 780 TFLOP/s (93.6 us) against 3.20e8 B at 4.25 TB/s
  // (75.3 us).
  EXPECT_FALSE(work->memoryBound());
  EXPECT_NEAR(work->floorSeconds(), 64.0 * 4096 * 278528 / 780e12, 1e-12);

  // TP 8 (H 16) at B 128, L 8192: the latent rows dominate, memory bound.
  MlaWorkShape tp8 = deepSeekV3();
  tp8.num_heads = 16;
  work = latentAttentionWork(tp8, Workload{Phase::Decode, 128, 8192}, h200);
  ASSERT_TRUE(work) << work.error().message();
  // 8192 x 576 x 2 + 16 x 576 x 2 + 128 pages x 4 + 8 = 9437184 + 18432 +
  // 512 + 8 = 9456136 per sequence.
  EXPECT_EQ(work->read_bytes, 128.0 * 9456136);
  EXPECT_TRUE(work->memoryBound());

  // An fp8 cache halves the row bytes (576 per row).
  MlaWorkShape fp8 = deepSeekV3();
  fp8.cache_bytes = 1;
  work = latentAttentionWork(fp8, decode, h200);
  ASSERT_TRUE(work) << work.error().message();
  EXPECT_EQ(work->read_bytes, 64.0 * (4096.0 * 576 + 147456 + 256 + 8));
}

TEST(MlaWorkModel, PreprocessPrefillAndGather) {
  Machine h200;
  // Preprocess, per token: read (576 + 128 x 64) x 2 + 16 = 17552; write
  // the cache row 576 x 2, latent 576 x 2 and q_rope_out 8192 x 2 = 18688.
  Result<KernelWork> pre =
      mlaPreprocessWork(deepSeekV3(), Workload{Phase::Decode, 64, 4096}, h200);
  ASSERT_TRUE(pre) << pre.error().message();
  EXPECT_EQ(pre->read_bytes, 64.0 * 17552);
  EXPECT_EQ(pre->written_bytes, 64.0 * 18688);
  EXPECT_EQ(pre->flops, 0);

  // Decompressed prefill of 8192 tokens: q 8192 x 128 x 192 x 2 =
  // 402653184, k and v 8192 x 128 x 320 x 2 = 671088640, cu_seqlens 8;
  // output 8192 x 128 x 128 x 2; 8192 x 8193 / 2 = 33558528 pairs of
  // 2 x 128 x 320 = 81920 FLOPs.
  Result<KernelWork> prefill = varlenAttentionWork(
      deepSeekV3(), Workload{Phase::Prefill, 1, 8192}, h200);
  ASSERT_TRUE(prefill) << prefill.error().message();
  EXPECT_EQ(prefill->read_bytes, 402653184.0 + 671088640.0 + 8);
  EXPECT_EQ(prefill->written_bytes, 268435456.0);
  EXPECT_EQ(prefill->flops, 33558528.0 * 81920);
  EXPECT_FALSE(prefill->memoryBound());

  // Gather of 100 rows from an fp8 cache, two sequences: read 100 x 576 +
  // 2 pages x 4 + 4 = 57612, write 100 x 576 x 2 = 115200, per sequence.
  MlaWorkShape fp8 = deepSeekV3();
  fp8.cache_bytes = 1;
  Result<KernelWork> gather =
      latentGatherWork(fp8, Workload{Phase::Prefill, 2, 100}, h200);
  ASSERT_TRUE(gather) << gather.error().message();
  EXPECT_EQ(gather->read_bytes, 2.0 * 57612);
  EXPECT_EQ(gather->written_bytes, 2.0 * 115200);
}

TEST(MlaWorkModel, ErrorsNameTheField) {
  MlaWorkShape shape = deepSeekV3();
  shape.num_heads = 0;
  Result<KernelWork> work =
      latentAttentionWork(shape, Workload{Phase::Decode, 1, 16}, Machine{});
  ASSERT_FALSE(work);
  EXPECT_EQ(work.error().field, "num_heads");
  shape = deepSeekV3();
  shape.nope_head_dim = -1;
  work = varlenAttentionWork(shape, Workload{Phase::Prefill, 1, 16}, Machine{});
  ASSERT_FALSE(work);
  EXPECT_EQ(work.error().field, "nope_head_dim");
  work = mlaPreprocessWork(deepSeekV3(), Workload{Phase::Decode, 0, 16},
                           Machine{});
  ASSERT_FALSE(work);
  EXPECT_EQ(work.error().field, "batch");
}

} // namespace
} // namespace attnc::plan
