//===- KernelLimitsTest.cpp - What the generated kernels can take ---------===//
#include "attnc/Plan/KernelLimits.h"

#include <gtest/gtest.h>

using namespace attnc;
using namespace attnc::plan;

TEST(KernelLimits, BlockSizeIsAPowerOfTwoUpTo1024) {
  for (int64_t good : {1, 2, 16, 64, 256, 1024})
    EXPECT_TRUE(checkBlockSize(good).ok()) << good;
  for (int64_t bad : {int64_t(0), int64_t(-16), int64_t(3), int64_t(7),
                      int64_t(48), int64_t(2048), int64_t(1000000000),
                      int64_t(3000000000)}) {
    Status s = checkBlockSize(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.field, "block_size");
    EXPECT_NE(s.rule.find("got " + std::to_string(bad)), std::string::npos)
        << s.rule;
  }
}

TEST(KernelLimits, HeadDimPadsToAtMost512) {
  EXPECT_EQ(paddedHeadDim(1), 16);
  EXPECT_EQ(paddedHeadDim(192), 192);
  EXPECT_EQ(paddedHeadDim(500), 512);
  for (int64_t good : {1, 64, 100, 512})
    EXPECT_TRUE(checkHeadDim("qk_head_dim", good).ok()) << good;
  for (int64_t bad : {0, -1, 513, 576, 100000}) {
    Status s = checkHeadDim("v_head_dim", bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.field, "v_head_dim");
  }
}
