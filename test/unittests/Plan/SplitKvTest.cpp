//===- SplitKvTest.cpp - The split-KV rule and workspace ------------------===//
#include "attnc/Plan/SplitKv.h"

#include <gtest/gtest.h>

namespace attnc::plan {
namespace {

// An H200: 132 SMs, two CTAs each.
constexpr SplitKvLimits kH200{264, 64};

TEST(SplitKv, MaxSplitsIsSixtyFourOrTheTarget) {
  EXPECT_EQ(maxKvSplitsFor(264), 64);
  EXPECT_EQ(maxKvSplitsFor(40), 40);
}

TEST(SplitKv, RuleFillsOneWave) {
  // Decode B8 of 16/2 heads: 8 sequences x 2 KV heads = 16 busy CTAs,
  // floor(264 / 16) = 16 splits (256 CTAs).
  EXPECT_EQ(chooseKvSplits(kH200, 16), 16);
  // 100 busy CTAs: floor(264 / 100) = 2.
  EXPECT_EQ(chooseKvSplits(kH200, 100), 2);
  // One sequence and one KV head: capped at 64.
  EXPECT_EQ(chooseKvSplits(kH200, 1), 64);
  // A full wave or more, or nothing busy: no split.
  EXPECT_EQ(chooseKvSplits(kH200, 264), 1);
  EXPECT_EQ(chooseKvSplits(kH200, 1000), 1);
  EXPECT_EQ(chooseKvSplits(kH200, 0), 1);
  // 133 busy CTAs: floor(264 / 133) = 1.
  EXPECT_EQ(chooseKvSplits(kH200, 133), 1);
}

TEST(SplitKv, WorkspaceHoldsTwiceTheTarget) {
  // 528 CTAs x 128 rows x (128 + 2) floats + 264 counters.
  EXPECT_EQ(kH200.capacityCtas(), 528);
  EXPECT_EQ(attentionWorkspaceFloats(kH200, 128, 128), 528 * 128 * 130 + 264);
}

TEST(SplitKv, RequestedCountIsChecked) {
  ASSERT_TRUE(checkKvSplits(kH200, 16, 16).ok());
  EXPECT_EQ(*checkKvSplits(kH200, 16, 16), 16);
  // One split never needs the workspace, whatever the base.
  EXPECT_TRUE(checkKvSplits(kH200, 5000, 1).ok());
  Result<int64_t> zero = checkKvSplits(kH200, 16, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().field, "num_kv_splits");
  EXPECT_NE(zero.error().rule.find("[1, 64]"), std::string::npos);
  EXPECT_FALSE(checkKvSplits(kH200, 16, 65).ok());
  // 100 CTAs x 6 splits = 600 > 528; 5 fit.
  Result<int64_t> over = checkKvSplits(kH200, 100, 6);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().rule,
            "6 splits of 100 CTAs (grid x * y) need 600 CTAs of workspace, "
            "more than its capacity 2 * target_ctas = 528: base * "
            "num_kv_splits must be <= 528 (at most 5 splits here); None picks "
            "it by the split rule: 1 if busy >= target_ctas (264), else "
            "min(max_kv_splits (64), floor(target_ctas / busy)), busy = the "
            "CTAs per split that surely have rows");
  EXPECT_TRUE(checkKvSplits(kH200, 100, 5).ok());
}

} // namespace
} // namespace attnc::plan
