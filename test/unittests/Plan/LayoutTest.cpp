//===- LayoutTest.cpp - Tests for the fused QKV(G) layout and TP shards ---===//
//
// The exhaustive tests never ask the code under test what the answer should
// be. They describe every checkpoint tensor and every expected rank parameter
// as a vector of per-row labels (segment, global head, element within the
// head), written out directly from the layout's definition, then check that
// - each FusedLayout segment describes exactly the columns that carry its
//   labels, and
// - replaying a rank's RowCopy list on the labelled checkpoint tensors
//   assembles exactly the labels of the heads that rank should hold.
//
//===----------------------------------------------------------------------===//

#include "attnc/Plan/Layout.h"

#include <gtest/gtest.h>

#include <ostream>
#include <sstream>
#include <tuple>
#include <vector>

namespace attnc {

// Printers and comparisons so gtest can show RowCopy values in failures.
static bool operator==(const RowCopy &a, const RowCopy &b) {
  return a.segment == b.segment && a.source == b.source &&
         a.source_row == b.source_row && a.dest_row == b.dest_row &&
         a.rows == b.rows;
}
static void PrintTo(const RowCopy &c, std::ostream *os) {
  *os << "{" << segmentKindName(c.segment) << ", "
      << checkpointTensorName(c.source) << ", src " << c.source_row
      << ", dest " << c.dest_row << ", rows " << c.rows << "}";
}

} // namespace attnc

namespace {

using namespace attnc;

//===----------------------------------------------------------------------===//
// Labels: what a row of a tensor holds, from first principles.
//===----------------------------------------------------------------------===//

/// One row of a projection weight: element `elem` of head `head` (global head
/// index) of segment `kind`. kind == -1 marks a row nobody wrote.
struct Label {
  int kind = -1;
  int64_t head = -1;
  int64_t elem = -1;

  bool operator==(const Label &o) const {
    return kind == o.kind && head == o.head && elem == o.elem;
  }
  bool operator!=(const Label &o) const { return !(*this == o); }
};

std::string str(const Label &l) {
  if (l.kind < 0)
    return "<unwritten>";
  std::ostringstream os;
  os << segmentKindName(static_cast<SegmentKind>(l.kind)) << "[" << l.head
     << "][" << l.elem << "]";
  return os.str();
}

using Labels = std::vector<Label>;

void appendHeads(Labels &out, SegmentKind kind,
                 const std::vector<int64_t> &heads, int64_t head_size) {
  for (int64_t h : heads)
    for (int64_t e = 0; e < head_size; ++e)
      out.push_back(Label{static_cast<int>(kind), h, e});
}

std::vector<int64_t> range(int64_t begin, int64_t end) {
  std::vector<int64_t> r;
  for (int64_t i = begin; i < end; ++i)
    r.push_back(i);
  return r;
}

/// The fused output holding query heads `q_heads` and KV heads `kv_heads`,
/// written out straight from the layout's definition: [q | k | v | g] or
/// [q0 g0 q1 g1 ... | k | v].
Labels fusedLabels(GateLayout gate, const std::vector<int64_t> &q_heads,
                   const std::vector<int64_t> &kv_heads, int64_t dqk,
                   int64_t dv) {
  Labels out;
  if (gate == GateLayout::InterleavedWithQ) {
    for (int64_t h : q_heads) {
      appendHeads(out, SegmentKind::Q, {h}, dqk);
      appendHeads(out, SegmentKind::Gate, {h}, dv);
    }
  } else {
    appendHeads(out, SegmentKind::Q, q_heads, dqk);
  }
  appendHeads(out, SegmentKind::K, kv_heads, dqk);
  appendHeads(out, SegmentKind::V, kv_heads, dv);
  if (gate == GateLayout::Concatenated)
    appendHeads(out, SegmentKind::Gate, q_heads, dv);
  return out;
}

/// The labelled checkpoint tensors of a shape.
struct Checkpoint {
  Labels fused, q_proj, k_proj, v_proj, g_proj;

  const Labels *tensor(CheckpointTensor t) const {
    switch (t) {
    case CheckpointTensor::QProj:
      return &q_proj;
    case CheckpointTensor::KProj:
      return &k_proj;
    case CheckpointTensor::VProj:
      return &v_proj;
    case CheckpointTensor::GateProj:
      return &g_proj;
    case CheckpointTensor::Fused:
      return &fused;
    }
    return nullptr;
  }
};

Checkpoint makeCheckpoint(const HeadShape &s) {
  Checkpoint c;
  std::vector<int64_t> q = range(0, s.num_q_heads);
  std::vector<int64_t> kv = range(0, s.num_kv_heads);
  c.fused = fusedLabels(s.gate, q, kv, s.qk_head_dim, s.v_head_dim);
  // q_proj of an interleaved-gate model outputs [q_h | g_h] per head.
  if (s.gate == GateLayout::InterleavedWithQ) {
    for (int64_t h : q) {
      appendHeads(c.q_proj, SegmentKind::Q, {h}, s.qk_head_dim);
      appendHeads(c.q_proj, SegmentKind::Gate, {h}, s.v_head_dim);
    }
  } else {
    appendHeads(c.q_proj, SegmentKind::Q, q, s.qk_head_dim);
  }
  appendHeads(c.k_proj, SegmentKind::K, kv, s.qk_head_dim);
  appendHeads(c.v_proj, SegmentKind::V, kv, s.v_head_dim);
  if (s.gate == GateLayout::Concatenated)
    appendHeads(c.g_proj, SegmentKind::Gate, q, s.v_head_dim);
  return c;
}

//===----------------------------------------------------------------------===//
// Checkers.
//===----------------------------------------------------------------------===//

/// Checks `layout` against the labels it should describe: segments in order
/// q, k, v[, gate], head sizes Dqk/Dv, every column covered by exactly one
/// segment head element, and that element's label is the one expected there.
::testing::AssertionResult
layoutMatches(const FusedLayout &layout, const Labels &expected,
              const std::vector<int64_t> &q_heads,
              const std::vector<int64_t> &kv_heads, const HeadShape &shape) {
  const int64_t width = static_cast<int64_t>(expected.size());
  if (layout.width != width)
    return ::testing::AssertionFailure()
           << "width " << layout.width << ", expected " << width;

  std::vector<SegmentKind> order = {SegmentKind::Q, SegmentKind::K,
                                    SegmentKind::V};
  if (shape.gate != GateLayout::None)
    order.push_back(SegmentKind::Gate);
  if (layout.segments.size() != order.size())
    return ::testing::AssertionFailure()
           << layout.segments.size() << " segments, expected " << order.size();

  std::vector<int> marks(width, 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const Segment &s = layout.segments[i];
    if (s.kind != order[i])
      return ::testing::AssertionFailure()
             << "segment " << i << " is " << segmentKindName(s.kind);
    if (layout.find(s.kind) != &s)
      return ::testing::AssertionFailure()
             << "find(" << segmentKindName(s.kind) << ") is wrong";
    const bool is_qk = s.kind == SegmentKind::Q || s.kind == SegmentKind::K;
    const int64_t want_size = is_qk ? shape.qk_head_dim : shape.v_head_dim;
    if (s.head_size != want_size)
      return ::testing::AssertionFailure()
             << segmentKindName(s.kind) << " head_size " << s.head_size
             << ", expected " << want_size;
    const bool is_kv = s.kind == SegmentKind::K || s.kind == SegmentKind::V;
    const std::vector<int64_t> &heads = is_kv ? kv_heads : q_heads;
    if (s.num_heads != static_cast<int64_t>(heads.size()))
      return ::testing::AssertionFailure()
             << segmentKindName(s.kind) << " num_heads " << s.num_heads
             << ", expected " << heads.size();
    if (s.size() != s.num_heads * want_size)
      return ::testing::AssertionFailure() << "size() inconsistent";
    for (int64_t h = 0; h < s.num_heads; ++h) {
      for (int64_t e = 0; e < s.head_size; ++e) {
        const int64_t col = s.headOffset(h) + e;
        if (col < 0 || col >= width)
          return ::testing::AssertionFailure()
                 << segmentKindName(s.kind) << " head " << h << " elem " << e
                 << " at column " << col << " outside [0, " << width << ")";
        ++marks[col];
        const Label want{static_cast<int>(s.kind), heads[h], e};
        if (expected[col] != want)
          return ::testing::AssertionFailure()
                 << "column " << col << " is described as " << str(want)
                 << " but holds " << str(expected[col]);
      }
    }
  }
  if (layout.find(SegmentKind::Gate) && shape.gate == GateLayout::None)
    return ::testing::AssertionFailure() << "gate segment without a gate";
  for (int64_t col = 0; col < width; ++col)
    if (marks[col] != 1)
      return ::testing::AssertionFailure()
             << "column " << col << " covered " << marks[col] << " times";
  return ::testing::AssertionSuccess();
}

/// Heads rank `rank` should hold, from the TP rule: a contiguous block of
/// Hq/tp query heads; Hkv/tp KV heads, or, when tp > Hkv, the single KV head
/// replicated on each group of tp/Hkv consecutive ranks.
void expectedHeads(const HeadShape &s, int64_t tp, int64_t rank,
                   std::vector<int64_t> &q_heads,
                   std::vector<int64_t> &kv_heads) {
  const int64_t q_per = s.num_q_heads / tp;
  q_heads = range(rank * q_per, (rank + 1) * q_per);
  if (tp > s.num_kv_heads) {
    const int64_t ranks_per_kv = tp / s.num_kv_heads;
    kv_heads = {rank / ranks_per_kv};
  } else {
    const int64_t kv_per = s.num_kv_heads / tp;
    kv_heads = range(rank * kv_per, (rank + 1) * kv_per);
  }
}

bool isValidTp(const HeadShape &s, int64_t tp) {
  if (tp < 1 || s.num_q_heads % tp != 0)
    return false;
  if (tp > s.num_kv_heads)
    return tp % s.num_kv_heads == 0;
  return s.num_kv_heads % tp == 0;
}

/// Replays `shard.copies` on the labelled checkpoint and compares the result
/// with the labels of the heads the rank should hold. On success `assembled`
/// holds the rank's parameter.
::testing::AssertionResult shardMatches(const RankShard &shard,
                                        const HeadShape &s, int64_t tp,
                                        int64_t rank, CheckpointForm form,
                                        const Checkpoint &ckpt,
                                        Labels &assembled) {
  std::vector<int64_t> q_heads, kv_heads;
  expectedHeads(s, tp, rank, q_heads, kv_heads);

  // GQA consistency: every query head's KV head (q / (Hq/Hkv)) is on the
  // rank. This is what makes the expected head sets the right ones.
  const int64_t group = s.num_q_heads / s.num_kv_heads;
  for (int64_t q : q_heads) {
    bool found = false;
    for (int64_t kv : kv_heads)
      found |= kv == q / group;
    if (!found)
      return ::testing::AssertionFailure()
             << "test bug: q head " << q << " without its KV head";
  }

  if (shard.tp != tp || shard.rank != rank)
    return ::testing::AssertionFailure() << "tp/rank not recorded";
  if (shard.kv_replicated != (tp > s.num_kv_heads))
    return ::testing::AssertionFailure() << "kv_replicated wrong";
  if (shard.first_q_head != q_heads.front())
    return ::testing::AssertionFailure()
           << "first_q_head " << shard.first_q_head << ", expected "
           << q_heads.front();
  if (shard.first_kv_head != kv_heads.front())
    return ::testing::AssertionFailure()
           << "first_kv_head " << shard.first_kv_head << ", expected "
           << kv_heads.front();
  const HeadShape &ls = shard.local.shape;
  if (ls.num_q_heads != static_cast<int64_t>(q_heads.size()) ||
      ls.num_kv_heads != static_cast<int64_t>(kv_heads.size()) ||
      ls.qk_head_dim != s.qk_head_dim || ls.v_head_dim != s.v_head_dim ||
      ls.gate != s.gate)
    return ::testing::AssertionFailure() << "local shape wrong";

  const Labels expected =
      fusedLabels(s.gate, q_heads, kv_heads, s.qk_head_dim, s.v_head_dim);
  ::testing::AssertionResult local =
      layoutMatches(shard.local, expected, q_heads, kv_heads, s);
  if (!local)
    return ::testing::AssertionFailure() << "local layout: " << local.message();

  const int64_t width = static_cast<int64_t>(expected.size());
  assembled.assign(width, Label{});
  for (size_t i = 0; i < shard.copies.size(); ++i) {
    const RowCopy &c = shard.copies[i];
    if (c.rows <= 0)
      return ::testing::AssertionFailure() << "copy " << i << " is empty";
    if (i > 0) {
      const RowCopy &p = shard.copies[i - 1];
      if (p.dest_row >= c.dest_row)
        return ::testing::AssertionFailure()
               << "copies not sorted by dest_row at " << i;
      // Coverage is exact, so a mergeable pair would be consecutive.
      if (p.segment == c.segment && p.source == c.source &&
          p.dest_row + p.rows == c.dest_row &&
          p.source_row + p.rows == c.source_row)
        return ::testing::AssertionFailure()
               << "copies " << i - 1 << " and " << i << " not merged";
    }
    const bool allowed =
        form == CheckpointForm::Fused
            ? c.source == CheckpointTensor::Fused
            : (c.source == CheckpointTensor::QProj ||
               c.source == CheckpointTensor::KProj ||
               c.source == CheckpointTensor::VProj ||
               (c.source == CheckpointTensor::GateProj &&
                s.gate == GateLayout::Concatenated));
    if (!allowed)
      return ::testing::AssertionFailure()
             << "copy " << i << " reads " << checkpointTensorName(c.source);
    const Labels &src = *ckpt.tensor(c.source);
    if (c.source_row < 0 ||
        c.source_row + c.rows > static_cast<int64_t>(src.size()))
      return ::testing::AssertionFailure()
             << "copy " << i << " reads past " << checkpointTensorName(c.source);
    if (c.dest_row < 0 || c.dest_row + c.rows > width)
      return ::testing::AssertionFailure()
             << "copy " << i << " writes past the local width " << width;
    for (int64_t r = 0; r < c.rows; ++r) {
      const Label &from = src[c.source_row + r];
      if (from.kind != static_cast<int>(c.segment))
        return ::testing::AssertionFailure()
               << "copy " << i << " is tagged " << segmentKindName(c.segment)
               << " but reads " << str(from);
      Label &to = assembled[c.dest_row + r];
      if (to.kind >= 0)
        return ::testing::AssertionFailure()
               << "row " << c.dest_row + r << " written twice";
      to = from;
    }
  }
  for (int64_t row = 0; row < width; ++row)
    if (assembled[row] != expected[row])
      return ::testing::AssertionFailure()
             << "rank " << rank << " row " << row << " holds "
             << str(assembled[row]) << ", expected " << str(expected[row]);
  return ::testing::AssertionSuccess();
}

std::string describe(const HeadShape &s) {
  std::ostringstream os;
  os << "Hq=" << s.num_q_heads << " Hkv=" << s.num_kv_heads
     << " Dqk=" << s.qk_head_dim << " Dv=" << s.v_head_dim
     << " gate=" << gateLayoutName(s.gate);
  return os.str();
}

const GateLayout kGates[] = {GateLayout::None, GateLayout::Concatenated,
                             GateLayout::InterleavedWithQ};
const CheckpointForm kForms[] = {CheckpointForm::Separate,
                                 CheckpointForm::Fused};

/// Every valid shape with Hq, Hkv, Dqk, Dv in 1..8, for every gate layout.
std::vector<HeadShape> smallShapes() {
  std::vector<HeadShape> shapes;
  for (int64_t hkv = 1; hkv <= 8; ++hkv)
    for (int64_t hq = hkv; hq <= 8; hq += hkv)
      for (int64_t dqk = 1; dqk <= 8; ++dqk)
        for (int64_t dv = 1; dv <= 8; ++dv)
          for (GateLayout gate : kGates)
            shapes.push_back(HeadShape{hq, hkv, dqk, dv, gate});
  return shapes;
}

//===----------------------------------------------------------------------===//
// Exhaustive property tests.
//===----------------------------------------------------------------------===//

TEST(LayoutProperty, FusedLayoutMatchesDefinitionForAllSmallShapes) {
  int checked = 0;
  for (const HeadShape &s : smallShapes()) {
    Result<FusedLayout> layout = computeFusedLayout(s);
    ASSERT_TRUE(layout.ok()) << describe(s) << ": " << layout.error().message();
    const int64_t gate_cols =
        s.gate == GateLayout::None ? 0 : s.num_q_heads * s.v_head_dim;
    const int64_t want_width = s.num_q_heads * s.qk_head_dim +
                               s.num_kv_heads * s.qk_head_dim +
                               s.num_kv_heads * s.v_head_dim + gate_cols;
    ASSERT_EQ(layout->width, want_width) << describe(s);
    EXPECT_EQ(layout->shape.num_q_heads, s.num_q_heads);
    EXPECT_EQ(layout->shape.gate, s.gate);
    Checkpoint ckpt = makeCheckpoint(s);
    ASSERT_TRUE(layoutMatches(*layout, ckpt.fused, range(0, s.num_q_heads),
                              range(0, s.num_kv_heads), s))
        << describe(s);
    ++checked;
  }
  EXPECT_EQ(checked, 20 * 64 * 3); // 20 (Hq, Hkv) pairs x 8*8 dims x 3 gates
}

TEST(LayoutProperty, GroupedQueryRuleForAllSmallHeadCounts) {
  // Hkv must divide Hq; every other (Hq, Hkv) pair names num_kv_heads.
  for (int64_t hq = 1; hq <= 8; ++hq)
    for (int64_t hkv = 1; hkv <= 8; ++hkv)
      for (GateLayout gate : kGates) {
        const HeadShape s{hq, hkv, 3, 5, gate};
        Result<FusedLayout> l = computeFusedLayout(s);
        ASSERT_EQ(l.ok(), hq % hkv == 0) << describe(s);
        if (!l.ok()) {
          ASSERT_EQ(l.error().field, "num_kv_heads") << describe(s);
        }
      }
}

TEST(LayoutProperty, RankShardsAssembleTheRightHeadsForAllSmallShapes) {
  int64_t valid_requests = 0;
  for (const HeadShape &s : smallShapes()) {
    const Checkpoint ckpt = makeCheckpoint(s);
    const int64_t max_dim = std::max(s.qk_head_dim, s.v_head_dim);
    // Flat counter over (segment, head, elem): how often a row is loaded
    // across all ranks.
    auto cell = [&](const Label &l) {
      return (l.kind * s.num_q_heads + l.head) * max_dim + l.elem;
    };
    for (int64_t tp = 1; tp <= 8; ++tp) {
      const bool valid = isValidTp(s, tp);
      for (CheckpointForm form : kForms) {
        std::vector<int> loads(4 * s.num_q_heads * max_dim, 0);
        int64_t total_width = 0;
        for (int64_t rank = 0; rank < tp; ++rank) {
          Result<RankShard> shard = computeRankShard(s, tp, rank, form);
          if (!valid) {
            ASSERT_FALSE(shard.ok()) << describe(s) << " tp=" << tp;
            ASSERT_EQ(shard.error().field, "tp") << describe(s) << " tp=" << tp;
            continue;
          }
          ASSERT_TRUE(shard.ok()) << describe(s) << " tp=" << tp << " rank="
                                  << rank << ": " << shard.error().message();
          Labels assembled;
          ASSERT_TRUE(shardMatches(*shard, s, tp, rank, form, ckpt, assembled))
              << describe(s) << " tp=" << tp << " rank=" << rank << " form="
              << (form == CheckpointForm::Fused ? "fused" : "separate");
          for (const Label &l : assembled)
            ++loads[cell(l)];
          total_width += shard->local.width;
          ++valid_requests;
        }
        if (!valid)
          continue;
        // Just outside [0, tp) is refused, naming the rank.
        for (int64_t bad_rank : {int64_t{-1}, tp}) {
          Result<RankShard> bad = computeRankShard(s, tp, bad_rank, form);
          ASSERT_FALSE(bad.ok()) << describe(s) << " tp=" << tp;
          ASSERT_EQ(bad.error().field, "rank") << describe(s) << " tp=" << tp;
        }
        // Across ranks: q and gate heads exactly once; KV heads tp/Hkv times
        // when replicated, else once; nothing else.
        const int kv_loads =
            tp > s.num_kv_heads ? static_cast<int>(tp / s.num_kv_heads) : 1;
        std::vector<int> want(loads.size(), 0);
        int64_t want_total = 0;
        auto expect = [&](SegmentKind k, int64_t heads, int64_t size, int n) {
          for (int64_t h = 0; h < heads; ++h)
            for (int64_t e = 0; e < size; ++e)
              want[cell(Label{static_cast<int>(k), h, e})] = n;
          want_total += heads * size * n;
        };
        expect(SegmentKind::Q, s.num_q_heads, s.qk_head_dim, 1);
        expect(SegmentKind::K, s.num_kv_heads, s.qk_head_dim, kv_loads);
        expect(SegmentKind::V, s.num_kv_heads, s.v_head_dim, kv_loads);
        if (s.gate != GateLayout::None)
          expect(SegmentKind::Gate, s.num_q_heads, s.v_head_dim, 1);
        ASSERT_EQ(loads, want) << describe(s) << " tp=" << tp;
        ASSERT_EQ(total_width, want_total) << describe(s) << " tp=" << tp;
      }
    }
  }
  // Guard against the loops silently skipping everything (64128 today).
  EXPECT_GT(valid_requests, 50000);
}

//===----------------------------------------------------------------------===//
// Invalid requests.
//===----------------------------------------------------------------------===//

HeadShape shape(int64_t hq, int64_t hkv, int64_t dqk, int64_t dv,
                GateLayout gate = GateLayout::None) {
  return HeadShape{hq, hkv, dqk, dv, gate};
}

void expectShardError(const HeadShape &s, int64_t tp, int64_t rank,
                      const std::string &field, const std::string &rule) {
  for (CheckpointForm form : kForms) {
    Result<RankShard> r = computeRankShard(s, tp, rank, form);
    ASSERT_FALSE(r.ok()) << describe(s) << " tp=" << tp << " rank=" << rank;
    EXPECT_EQ(r.error().field, field) << r.error().message();
    EXPECT_EQ(r.error().rule, rule) << r.error().message();
  }
}

TEST(LayoutErrors, TpMustDivideQueryHeads) {
  expectShardError(shape(32, 8, 128, 128), 3, 0, "tp",
                   "must divide num_q_heads (32 % 3 != 0)");
  expectShardError(shape(12, 4, 64, 64), 8, 0, "tp",
                   "must divide num_q_heads (12 % 8 != 0)");
}

TEST(LayoutErrors, TpLargerThanKvHeadsMustBeAMultiple) {
  expectShardError(shape(24, 8, 128, 128), 12, 0, "tp",
                   "must be a multiple of num_kv_heads when larger than it "
                   "(12 % 8 != 0)");
  expectShardError(shape(6, 2, 8, 8), 3, 1, "tp",
                   "must be a multiple of num_kv_heads when larger than it "
                   "(3 % 2 != 0)");
}

TEST(LayoutErrors, TpSmallerThanKvHeadsMustDivideThem) {
  expectShardError(shape(12, 4, 64, 64), 3, 0, "tp",
                   "must divide num_kv_heads (4 % 3 != 0)");
  expectShardError(shape(8, 8, 64, 64), 3, 0, "tp",
                   "must divide num_q_heads (8 % 3 != 0)");
  expectShardError(shape(24, 6, 64, 64), 4, 0, "tp",
                   "must divide num_kv_heads (6 % 4 != 0)");
}

TEST(LayoutErrors, TpMustBePositive) {
  expectShardError(shape(32, 8, 128, 128), 0, 0, "tp", "must be >= 1 (got 0)");
  expectShardError(shape(32, 8, 128, 128), -2, 0, "tp",
                   "must be >= 1 (got -2)");
}

TEST(LayoutErrors, RankMustBeInRange) {
  expectShardError(shape(32, 8, 128, 128), 4, 4, "rank",
                   "must be in [0, tp) (got 4, tp = 4)");
  expectShardError(shape(32, 8, 128, 128), 4, -1, "rank",
                   "must be in [0, tp) (got -1, tp = 4)");
  expectShardError(shape(64, 4, 192, 128), 8, 8, "rank",
                   "must be in [0, tp) (got 8, tp = 8)");
  // The last valid rank is accepted.
  EXPECT_TRUE(computeRankShard(shape(32, 8, 128, 128), 4, 3,
                               CheckpointForm::Fused)
                  .ok());
}

void expectShapeError(const HeadShape &s, const std::string &field,
                      const std::string &rule) {
  Result<HeadShape> v = validateHeadShape(s);
  ASSERT_FALSE(v.ok()) << describe(s);
  EXPECT_EQ(v.error().field, field);
  EXPECT_EQ(v.error().rule, rule);
  Result<FusedLayout> l = computeFusedLayout(s);
  ASSERT_FALSE(l.ok()) << describe(s);
  EXPECT_EQ(l.error().field, field);
  // A bad shape is reported even when tp and rank are also bad.
  for (CheckpointForm form : kForms) {
    Result<RankShard> r = computeRankShard(s, 0, -1, form);
    ASSERT_FALSE(r.ok()) << describe(s);
    EXPECT_EQ(r.error().field, field);
  }
}

TEST(LayoutErrors, HeadShapeFields) {
  expectShapeError(shape(0, 1, 8, 8), "num_q_heads", "must be >= 1 (got 0)");
  expectShapeError(shape(-4, 1, 8, 8), "num_q_heads", "must be >= 1 (got -4)");
  expectShapeError(shape(8, 0, 8, 8), "num_kv_heads", "must be >= 1 (got 0)");
  expectShapeError(shape(8, -2, 8, 8), "num_kv_heads",
                   "must be >= 1 (got -2)");
  expectShapeError(shape(32, 5, 128, 128), "num_kv_heads",
                   "must divide num_q_heads (32 % 5 != 0)");
  expectShapeError(shape(2, 4, 8, 8), "num_kv_heads",
                   "must divide num_q_heads (2 % 4 != 0)");
  expectShapeError(shape(8, 2, 0, 8), "qk_head_dim", "must be >= 1 (got 0)");
  expectShapeError(shape(8, 2, -1, 8, GateLayout::Concatenated), "qk_head_dim",
                   "must be >= 1 (got -1)");
  expectShapeError(shape(8, 2, 8, 0, GateLayout::InterleavedWithQ),
                   "v_head_dim", "must be >= 1 (got 0)");
  expectShapeError(shape(8, 2, 8, -3), "v_head_dim", "must be >= 1 (got -3)");
  Result<HeadShape> bad_gate =
      validateHeadShape(shape(8, 2, 8, 8, static_cast<GateLayout>(7)));
  ASSERT_FALSE(bad_gate.ok());
  EXPECT_EQ(bad_gate.error().field, "gate");
}

TEST(LayoutErrors, ValidShapeRoundTrips) {
  Result<HeadShape> v =
      validateHeadShape(shape(16, 2, 256, 256, GateLayout::InterleavedWithQ));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->num_q_heads, 16);
  EXPECT_EQ(v->gate, GateLayout::InterleavedWithQ);
}

//===----------------------------------------------------------------------===//
// Named cases with hand-computed numbers.
//===----------------------------------------------------------------------===//

using SegTuple = std::tuple<SegmentKind, int64_t, int64_t, int64_t, int64_t>;

/// (kind, offset, num_heads, head_size, head_stride) of every segment.
std::vector<SegTuple> segs(const FusedLayout &l) {
  std::vector<SegTuple> out;
  for (const Segment &s : l.segments)
    out.emplace_back(s.kind, s.offset, s.num_heads, s.head_size,
                     s.head_stride);
  return out;
}

FusedLayout layoutOrDie(const HeadShape &s) {
  Result<FusedLayout> l = computeFusedLayout(s);
  EXPECT_TRUE(l.ok()) << l.error().message();
  return l.ok() ? *l : FusedLayout{};
}

RankShard shardOrDie(const HeadShape &s, int64_t tp, int64_t rank,
                     CheckpointForm form) {
  Result<RankShard> r = computeRankShard(s, tp, rank, form);
  EXPECT_TRUE(r.ok()) << r.error().message();
  return r.ok() ? *r : RankShard{};
}

constexpr SegmentKind Q = SegmentKind::Q, K = SegmentKind::K,
                      V = SegmentKind::V, G = SegmentKind::Gate;
constexpr CheckpointTensor QP = CheckpointTensor::QProj,
                           KP = CheckpointTensor::KProj,
                           VP = CheckpointTensor::VProj,
                           GP = CheckpointTensor::GateProj,
                           FU = CheckpointTensor::Fused;

TEST(LayoutNamed, Dqk2Dv3NoGate) {
  FusedLayout l = layoutOrDie(shape(4, 2, 2, 3));
  EXPECT_EQ(l.width, 18); // 4*2 + 2*2 + 2*3
  EXPECT_EQ(segs(l), (std::vector<SegTuple>{{Q, 0, 4, 2, 2},
                                            {K, 8, 2, 2, 2},
                                            {V, 12, 2, 3, 3}}));
  EXPECT_EQ(l.find(G), nullptr);
  EXPECT_EQ(l.find(V)->headOffset(1), 15);
  EXPECT_EQ(l.find(V)->size(), 6);
}

TEST(LayoutNamed, Dqk2Dv3ConcatenatedGate) {
  FusedLayout l = layoutOrDie(shape(4, 2, 2, 3, GateLayout::Concatenated));
  EXPECT_EQ(l.width, 30); // 18 + 4*3
  EXPECT_EQ(segs(l), (std::vector<SegTuple>{{Q, 0, 4, 2, 2},
                                            {K, 8, 2, 2, 2},
                                            {V, 12, 2, 3, 3},
                                            {G, 18, 4, 3, 3}}));
  EXPECT_EQ(l.find(G)->headOffset(3), 27);

  // tp=2, rank 1: q heads 2,3, KV head 1. Local [q 0..4 | k 4..6 | v 6..9 |
  // g 9..15].
  RankShard sep = shardOrDie(l.shape, 2, 1, CheckpointForm::Separate);
  EXPECT_EQ(sep.local.width, 15);
  EXPECT_EQ(sep.copies, (std::vector<RowCopy>{{Q, QP, 4, 0, 4},
                                              {K, KP, 2, 4, 2},
                                              {V, VP, 3, 6, 3},
                                              {G, GP, 6, 9, 6}}));
  RankShard fused = shardOrDie(l.shape, 2, 1, CheckpointForm::Fused);
  EXPECT_EQ(fused.copies, (std::vector<RowCopy>{{Q, FU, 4, 0, 4},
                                                {K, FU, 10, 4, 2},
                                                {V, FU, 15, 6, 3},
                                                {G, FU, 24, 9, 6}}));
  // tp=1 with the fused checkpoint is one copy per segment.
  RankShard whole = shardOrDie(l.shape, 1, 0, CheckpointForm::Fused);
  EXPECT_EQ(whole.copies, (std::vector<RowCopy>{{Q, FU, 0, 0, 8},
                                                {K, FU, 8, 8, 4},
                                                {V, FU, 12, 12, 6},
                                                {G, FU, 18, 18, 12}}));
}

TEST(LayoutNamed, Dqk2Dv3InterleavedGate) {
  FusedLayout l = layoutOrDie(shape(4, 2, 2, 3, GateLayout::InterleavedWithQ));
  EXPECT_EQ(l.width, 30); // 4*(2+3) + 2*2 + 2*3
  EXPECT_EQ(segs(l), (std::vector<SegTuple>{{Q, 0, 4, 2, 5},
                                            {K, 20, 2, 2, 2},
                                            {V, 24, 2, 3, 3},
                                            {G, 2, 4, 3, 5}}));
  EXPECT_EQ(l.find(Q)->headOffset(3), 15);
  EXPECT_EQ(l.find(G)->headOffset(3), 17);

  // tp=2, rank 1: local [q2 g2 q3 g3 | k1 | v1] = [0,2 2,5 5,7 7,10 | 10,12 |
  // 12,15]. q and gate are adjacent but different segments: not merged.
  RankShard sep = shardOrDie(l.shape, 2, 1, CheckpointForm::Separate);
  EXPECT_EQ(sep.local.width, 15);
  EXPECT_EQ(sep.first_q_head, 2);
  EXPECT_EQ(sep.first_kv_head, 1);
  EXPECT_EQ(sep.copies, (std::vector<RowCopy>{{Q, QP, 10, 0, 2},
                                              {G, QP, 12, 2, 3},
                                              {Q, QP, 15, 5, 2},
                                              {G, QP, 17, 7, 3},
                                              {K, KP, 2, 10, 2},
                                              {V, VP, 3, 12, 3}}));
  RankShard fused = shardOrDie(l.shape, 2, 1, CheckpointForm::Fused);
  EXPECT_EQ(fused.copies, (std::vector<RowCopy>{{Q, FU, 10, 0, 2},
                                                {G, FU, 12, 2, 3},
                                                {Q, FU, 15, 5, 2},
                                                {G, FU, 17, 7, 3},
                                                {K, FU, 22, 10, 2},
                                                {V, FU, 27, 12, 3}}));
}

TEST(LayoutNamed, MiMoV2Flash192x128) {
  const HeadShape mimo = shape(64, 4, 192, 128);
  FusedLayout l = layoutOrDie(mimo);
  EXPECT_EQ(l.width, 13568); // 64*192 + 4*192 + 4*128
  EXPECT_EQ(segs(l), (std::vector<SegTuple>{{Q, 0, 64, 192, 192},
                                            {K, 12288, 4, 192, 192},
                                            {V, 13056, 4, 128, 128}}));

  // tp=4: 16 q heads and 1 KV head per rank, no replication.
  RankShard r2 = shardOrDie(mimo, 4, 2, CheckpointForm::Fused);
  EXPECT_FALSE(r2.kv_replicated);
  EXPECT_EQ(r2.first_q_head, 32);
  EXPECT_EQ(r2.first_kv_head, 2);
  EXPECT_EQ(r2.local.width, 3392); // 16*192 + 192 + 128
  EXPECT_EQ(segs(r2.local), (std::vector<SegTuple>{{Q, 0, 16, 192, 192},
                                                   {K, 3072, 1, 192, 192},
                                                   {V, 3264, 1, 128, 128}}));
  EXPECT_EQ(r2.copies, (std::vector<RowCopy>{{Q, FU, 6144, 0, 3072},
                                             {K, FU, 12672, 3072, 192},
                                             {V, FU, 13312, 3264, 128}}));
  RankShard r2s = shardOrDie(mimo, 4, 2, CheckpointForm::Separate);
  EXPECT_EQ(r2s.copies, (std::vector<RowCopy>{{Q, QP, 6144, 0, 3072},
                                              {K, KP, 384, 3072, 192},
                                              {V, VP, 256, 3264, 128}}));

  // tp=8 > Hkv=4: each KV head replicated on 2 ranks; rank r holds KV head
  // r*4/8.
  const int64_t kv_of_rank[8] = {0, 0, 1, 1, 2, 2, 3, 3};
  for (int64_t rank = 0; rank < 8; ++rank) {
    RankShard r = shardOrDie(mimo, 8, rank, CheckpointForm::Fused);
    EXPECT_TRUE(r.kv_replicated);
    EXPECT_EQ(r.first_q_head, rank * 8);
    EXPECT_EQ(r.first_kv_head, kv_of_rank[rank]);
    EXPECT_EQ(r.local.shape.num_kv_heads, 1);
    EXPECT_EQ(r.local.width, 1856); // 8*192 + 192 + 128
  }
  RankShard r5 = shardOrDie(mimo, 8, 5, CheckpointForm::Fused);
  EXPECT_EQ(r5.copies, (std::vector<RowCopy>{{Q, FU, 7680, 0, 1536},
                                             {K, FU, 12672, 1536, 192},
                                             {V, FU, 13312, 1728, 128}}));
  RankShard r5s = shardOrDie(mimo, 8, 5, CheckpointForm::Separate);
  EXPECT_EQ(r5s.copies, (std::vector<RowCopy>{{Q, QP, 7680, 0, 1536},
                                              {K, KP, 384, 1536, 192},
                                              {V, VP, 256, 1728, 128}}));
  RankShard r4s = shardOrDie(mimo, 8, 4, CheckpointForm::Separate);
  EXPECT_EQ(r4s.copies, (std::vector<RowCopy>{{Q, QP, 6144, 0, 1536},
                                              {K, KP, 384, 1536, 192},
                                              {V, VP, 256, 1728, 128}}));
}

TEST(LayoutNamed, Qwen3_8B) {
  const HeadShape qwen = shape(32, 8, 128, 128);
  FusedLayout l = layoutOrDie(qwen);
  EXPECT_EQ(l.width, 6144); // 4096 + 1024 + 1024
  EXPECT_EQ(segs(l), (std::vector<SegTuple>{{Q, 0, 32, 128, 128},
                                            {K, 4096, 8, 128, 128},
                                            {V, 5120, 8, 128, 128}}));
  RankShard r3 = shardOrDie(qwen, 8, 3, CheckpointForm::Fused);
  EXPECT_FALSE(r3.kv_replicated);
  EXPECT_EQ(r3.local.width, 768);
  EXPECT_EQ(r3.copies, (std::vector<RowCopy>{{Q, FU, 1536, 0, 512},
                                             {K, FU, 4480, 512, 128},
                                             {V, FU, 5504, 640, 128}}));
  // tp=2: 4 KV heads per rank, contiguous in both forms, so one copy each.
  RankShard h1 = shardOrDie(qwen, 2, 1, CheckpointForm::Separate);
  EXPECT_EQ(h1.local.width, 3072);
  EXPECT_EQ(h1.copies, (std::vector<RowCopy>{{Q, QP, 2048, 0, 2048},
                                             {K, KP, 512, 2048, 512},
                                             {V, VP, 512, 2560, 512}}));
}

TEST(LayoutNamed, Qwen3NextInterleavedGate) {
  const HeadShape next = shape(16, 2, 256, 256, GateLayout::InterleavedWithQ);
  FusedLayout l = layoutOrDie(next);
  EXPECT_EQ(l.width, 9216); // 16*(256+256) + 2*256 + 2*256
  EXPECT_EQ(segs(l), (std::vector<SegTuple>{{Q, 0, 16, 256, 512},
                                            {K, 8192, 2, 256, 256},
                                            {V, 8704, 2, 256, 256},
                                            {G, 256, 16, 256, 512}}));

  // tp=2, rank 1: q/gate heads 8..15 from q_proj (pitch 512), KV head 1.
  RankShard r1 = shardOrDie(next, 2, 1, CheckpointForm::Separate);
  EXPECT_EQ(r1.local.width, 4608);
  std::vector<RowCopy> want;
  for (int64_t h = 0; h < 8; ++h) {
    want.push_back({Q, QP, (8 + h) * 512, h * 512, 256});
    want.push_back({G, QP, (8 + h) * 512 + 256, h * 512 + 256, 256});
  }
  want.push_back({K, KP, 256, 4096, 256});
  want.push_back({V, VP, 256, 4352, 256});
  EXPECT_EQ(r1.copies, want);

  // The same rank from the fused checkpoint: q/gate at the same rows (the q
  // block leads the fused tensor), KV from the k and v segments.
  RankShard f1 = shardOrDie(next, 2, 1, CheckpointForm::Fused);
  want.pop_back();
  want.pop_back();
  for (RowCopy &c : want)
    c.source = FU;
  want.push_back({K, FU, 8448, 4096, 256});
  want.push_back({V, FU, 8960, 4352, 256});
  EXPECT_EQ(f1.copies, want);

  // tp=4 > Hkv=2: replicated, rank r holds KV head r*2/4.
  RankShard r3 = shardOrDie(next, 4, 3, CheckpointForm::Fused);
  EXPECT_TRUE(r3.kv_replicated);
  EXPECT_EQ(r3.first_q_head, 12);
  EXPECT_EQ(r3.first_kv_head, 1);
  EXPECT_EQ(r3.local.width, 2560); // 4*512 + 256 + 256
  EXPECT_EQ(r3.copies.back(), (RowCopy{V, FU, 8960, 2304, 256}));
}

//===----------------------------------------------------------------------===//
// Names.
//===----------------------------------------------------------------------===//

TEST(LayoutNames, GateLayoutSpellingsRoundTrip) {
  EXPECT_STREQ(gateLayoutName(GateLayout::None), "none");
  EXPECT_STREQ(gateLayoutName(GateLayout::Concatenated), "qkvg");
  EXPECT_STREQ(gateLayoutName(GateLayout::InterleavedWithQ), "interleaved");
  for (GateLayout g : kGates) {
    std::optional<GateLayout> parsed = parseGateLayout(gateLayoutName(g));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, g);
  }
  EXPECT_FALSE(parseGateLayout("").has_value());
  EXPECT_FALSE(parseGateLayout("QKVG").has_value());
  EXPECT_FALSE(parseGateLayout("concatenated").has_value());
  EXPECT_FALSE(parseGateLayout("interleaved ").has_value());
}

TEST(LayoutNames, SegmentAndTensorNames) {
  EXPECT_STREQ(segmentKindName(SegmentKind::Q), "q");
  EXPECT_STREQ(segmentKindName(SegmentKind::K), "k");
  EXPECT_STREQ(segmentKindName(SegmentKind::V), "v");
  EXPECT_STREQ(segmentKindName(SegmentKind::Gate), "gate");
  EXPECT_STREQ(checkpointTensorName(CheckpointTensor::QProj), "q_proj");
  EXPECT_STREQ(checkpointTensorName(CheckpointTensor::KProj), "k_proj");
  EXPECT_STREQ(checkpointTensorName(CheckpointTensor::VProj), "v_proj");
  EXPECT_STREQ(checkpointTensorName(CheckpointTensor::GateProj), "g_proj");
  EXPECT_STREQ(checkpointTensorName(CheckpointTensor::Fused), "fused");
}

} // namespace

using namespace attnc;

// Values past kMaxHeadsOrDim are refused by name, so widths never overflow.
TEST(LayoutErrors, HugeValuesAreRefusedNotWrapped) {
  HeadShape shape{int64_t(1) << 62, 1, 1, 2, GateLayout::None};
  Result<FusedLayout> layout = computeFusedLayout(shape);
  ASSERT_FALSE(layout);
  EXPECT_EQ(layout.error().field, "num_q_heads");
  EXPECT_NE(layout.error().rule.find("must be <= 1048576"), std::string::npos);
  shape = {8, 8, 128, kMaxHeadsOrDim + 1, GateLayout::Concatenated};
  layout = computeFusedLayout(shape);
  ASSERT_FALSE(layout);
  EXPECT_EQ(layout.error().field, "v_head_dim");
  shape.v_head_dim = kMaxHeadsOrDim;
  EXPECT_TRUE(computeFusedLayout(shape));
}

// MLA's latent cache: rows of R + P values, c_kv first, V aliasing it.
TEST(LatentCacheLayout, DeepSeekAndMistralRows) {
  Result<LatentCacheLayout> ds = computeLatentCacheLayout(512, 64, 64);
  ASSERT_TRUE(ds) << ds.error().message();
  EXPECT_EQ(ds->row_width, 576);
  EXPECT_EQ(ds->value_width, 512);
  EXPECT_EQ(ds->k_pe_offset, 512);
  EXPECT_EQ(ds->block_size, 64);
  EXPECT_EQ(ds->bytesPerToken(2), 1152); // bf16
  EXPECT_EQ(ds->bytesPerToken(1), 576);  // fp8
  // Mistral 4: R 256, pages of 16.
  Result<LatentCacheLayout> mistral = computeLatentCacheLayout(256, 64, 16);
  ASSERT_TRUE(mistral) << mistral.error().message();
  EXPECT_EQ(mistral->row_width, 320);
  EXPECT_EQ(mistral->bytesPerToken(2), 640);
}

TEST(LatentCacheLayout, Errors) {
  auto fails = [](Result<LatentCacheLayout> r, const std::string &field,
                  const std::string &phrase) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().field, field);
    EXPECT_NE(r.error().rule.find(phrase), std::string::npos)
        << r.error().message();
  };
  fails(computeLatentCacheLayout(0, 64, 64), "kv_lora_rank", "got 0");
  fails(computeLatentCacheLayout(kMaxHeadsOrDim + 1, 64, 64), "kv_lora_rank",
        "must be in [1, 1048576]");
  fails(computeLatentCacheLayout(512, 63, 64), "rope_head_dim", "even");
  fails(computeLatentCacheLayout(512, 0, 64), "rope_head_dim", "got 0");
  fails(computeLatentCacheLayout(512, 64, 32), "block_size",
        "must be 16 or 64");
}
