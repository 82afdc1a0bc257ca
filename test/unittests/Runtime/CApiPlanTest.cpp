//===- CApiPlanTest.cpp - attnc_split_kv_count ----------------------------===//
#include "attnc-c/Runtime.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(CApiPlan, SplitRuleAndOverride) {
  int64_t splits = 0;
  // Decode B8 of 16/2 heads on an H200: base 18, busy 16 -> 16 splits.
  ASSERT_EQ(attnc_split_kv_count(264, 64, 18, 16, nullptr, nullptr, &splits),
            ATTNC_STATUS_OK);
  EXPECT_EQ(splits, 16);
  int64_t three = 3;
  ASSERT_EQ(attnc_split_kv_count(264, 64, 144, 128, &three, nullptr, &splits),
            ATTNC_STATUS_OK);
  EXPECT_EQ(splits, 3);
}

TEST(CApiPlan, BadCountsNameTheRule) {
  int64_t splits = -7;
  int64_t zero = 0, four = 4;
  EXPECT_EQ(attnc_split_kv_count(264, 64, 144, 128, &zero, nullptr, &splits),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(attnc_last_error()).rfind(
                "num_kv_splits: must be in [1, max_kv_splits] = [1, 64] (got 0)", 0),
            0u)
      << attnc_last_error();
  // 4 x 144 = 576 CTAs > 528; the axes given are named.
  EXPECT_EQ(attnc_split_kv_count(264, 64, 144, 128, &four, "x * y", &splits),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attnc_last_error()).find("(grid x * y) need 576 CTAs"),
            std::string::npos)
      << attnc_last_error();
  EXPECT_EQ(splits, 0) << "a failed call clears its output";
  EXPECT_EQ(attnc_split_kv_count(0, 64, 1, 1, nullptr, nullptr, &splits),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(attnc_split_kv_count(264, 64, 1, 1, nullptr, nullptr, nullptr),
            ATTNC_STATUS_INVALID_ARGUMENT);
}

} // namespace
