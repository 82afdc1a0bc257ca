//===- TieredKernelSetTest.cpp - The tier swap of a kernel set ------------===//
//
// A tiered set (the JIT's tiered compilation, attnc-c/Compiler.h) through
// the C API and the fake driver: launches use the baseline until the
// optimised set has finished; the swap happens at a launch on a stream that
// is not capturing (never while cuStreamIsCapturing says it is), or at
// attnc_launch_plan_create / attnc_kernel_prepare; plans made before keep
// the baseline's CUfunction, plans made after get the optimised one; a
// failed optimised compile is reported once and the baseline stays.
//
// The two tiers are the test kernels compiled from two texts (the second
// with a comment added), so they are two binaries, two modules and, in the
// fake driver, two CUfunctions of the same name.
//
//===----------------------------------------------------------------------===//

#include "CApiInternal.h"
#include "attnc/Runtime/Driver.h"

#include "FakeCuda.h"
#include "TestUtil.h"

#include <gtest/gtest.h>


using namespace attnc;
using namespace attnc::runtime;
using namespace attnc::runtime::test;

namespace {

struct Warnings {
  std::vector<std::string> messages;
  static void record(void *self, const char *message) {
    static_cast<Warnings *>(self)->messages.push_back(message);
  }
};

class TieredKernelSet : public ::testing::Test {
protected:
  void SetUp() override {
    ATTNC_REQUIRE_NVRTC();
    attnc_context_options_t options;
    attnc_context_options_initialize(&options);
    options.cache_dir = dir_.path().c_str();
    options.cuda_driver_library = ATTNC_FAKE_CUDA_PATH;
    options.warning_callback = &Warnings::record;
    options.warning_user_data = &warnings_;
    ASSERT_EQ(attnc_context_create(&options, &context_), ATTNC_STATUS_OK)
        << attnc_last_error();
    baseline_ = compile(kTestSource);
    optimised_ = compile(std::string(kTestSource) + "\n// the optimised tier\n");
    ASSERT_TRUE(baseline_ && optimised_);
    ASSERT_NE(baseline_->binaries().front().key,
              optimised_->binaries().front().key);
    pending_ = std::make_shared<PendingKernelSet>();
    set_ = capi::wrapTiered(context_->context, baseline_, pending_);
    ASSERT_EQ(attnc_kernel_set_find_kernel(set_, "attnc_test_round_bf16",
                                           &kernel_),
              ATTNC_STATUS_OK);
    ASSERT_TRUE(CudaDriver::get(ATTNC_FAKE_CUDA_PATH).ok()); // loads the fake
    state_ = fakeCudaState();
    ASSERT_NE(state_, nullptr);
    state_->capturing = false;
  }
  void TearDown() override {
    if (state_)
      state_->capturing = false;
    attnc_kernel_set_destroy(set_);
    attnc_context_destroy(context_);
  }

  std::shared_ptr<const KernelSet> compile(const std::string &source) {
    SourceOptions options;
    options.source_name = "attnc_test.cu";
    options.headers = {{kTestHelperName, kTestHelperSource}};
    auto abi = kernelAbiListFromJson(kTestAbiJson);
    EXPECT_TRUE(abi.ok());
    auto set = context_->context->compile(source, std::move(*abi), options);
    EXPECT_TRUE(set.ok()) << set.status().message();
    return set.ok() ? *set : nullptr;
  }

  /// Launches the kernel on `stream` and returns the CUfunction launched.
  void *launch(void *stream = reinterpret_cast<void *>(0x7)) {
    void *out = nullptr, *in = nullptr;
    int64_t count = 513, num_sequences = 2;
    void *args[] = {&out, &in, &count};
    int before = state_->launches;
    EXPECT_EQ(attnc_kernel_launch(kernel_, stream, args, 3, &num_sequences, 1),
              ATTNC_STATUS_OK)
        << attnc_last_error();
    EXPECT_EQ(state_->launches, before + 1);
    return state_->function;
  }

  /// Runs `plan` and returns the CUfunction launched.
  void *run(attnc_launch_plan_t plan) {
    void *out = nullptr, *in = nullptr;
    int64_t count = 513, num_sequences = 2;
    void *args[] = {&out, &in, &count};
    EXPECT_EQ(attnc_launch_plan_run(plan, nullptr, args, &num_sequences),
              ATTNC_STATUS_OK)
        << attnc_last_error();
    return state_->function;
  }

  TempDir dir_;
  Warnings warnings_;
  attnc_context_t context_ = nullptr;
  std::shared_ptr<const KernelSet> baseline_, optimised_;
  std::shared_ptr<PendingKernelSet> pending_;
  attnc_kernel_set_t set_ = nullptr;
  attnc_kernel_t kernel_ = nullptr;
  FakeCudaState *state_ = nullptr;
};

} // namespace

TEST_F(TieredKernelSet, SwapsAtALaunchOutsideACaptureAndPlansKeepTheirs) {
  EXPECT_EQ(attnc_kernel_set_tier(set_), ATTNC_KERNEL_TIER_BASELINE);
  void *baselineFunction = launch();
  attnc_launch_plan_t before = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(kernel_, &before), ATTNC_STATUS_OK);
  // Not finished: launches and new plans stay on the baseline, and the
  // launch path asks the driver nothing about captures.
  int queries = state_->capture_queries;
  EXPECT_EQ(launch(), baselineFunction);
  EXPECT_EQ(state_->capture_queries, queries);
  EXPECT_EQ(attnc_kernel_set_tier(set_), ATTNC_KERNEL_TIER_BASELINE);

  pending_->finish(optimised_);
  // Finished, but the stream is capturing: no swap.
  state_->capturing = true;
  EXPECT_EQ(launch(), baselineFunction);
  EXPECT_GT(state_->capture_queries, queries);
  EXPECT_EQ(attnc_kernel_set_tier(set_), ATTNC_KERNEL_TIER_BASELINE);
  EXPECT_EQ(launch(), baselineFunction);

  // The capture has ended: the next launch takes the optimised tier.
  state_->capturing = false;
  void *optimisedFunction = launch();
  EXPECT_NE(optimisedFunction, baselineFunction);
  EXPECT_EQ(attnc_kernel_set_tier(set_), ATTNC_KERNEL_TIER_OPTIMISED);
  // The set's queries answer for the optimised tier now.
  attnc_build_report_t report;
  ASSERT_EQ(attnc_kernel_set_build_report(set_, 0, &report), ATTNC_STATUS_OK);
  EXPECT_EQ(std::string(report.cache_key), optimised_->binaries().front().key);

  // The plan made before keeps the baseline; a new plan uses the optimised.
  EXPECT_EQ(run(before), baselineFunction);
  attnc_launch_plan_t after = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(kernel_, &after), ATTNC_STATUS_OK);
  EXPECT_EQ(run(after), optimisedFunction);
  EXPECT_EQ(run(before), baselineFunction);
  // Swapped once: a capture now changes nothing and asks nothing.
  queries = state_->capture_queries;
  state_->capturing = true;
  EXPECT_EQ(launch(), optimisedFunction);
  EXPECT_EQ(state_->capture_queries, queries);
  attnc_launch_plan_destroy(before);
  attnc_launch_plan_destroy(after);
  EXPECT_TRUE(warnings_.messages.empty());
}

TEST_F(TieredKernelSet, PlanCreationTakesAFinishedTier) {
  attnc_launch_plan_t before = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(kernel_, &before), ATTNC_STATUS_OK);
  void *baselineFunction = run(before);
  pending_->finish(optimised_);
  attnc_launch_plan_t after = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(kernel_, &after), ATTNC_STATUS_OK);
  EXPECT_EQ(attnc_kernel_set_tier(set_), ATTNC_KERNEL_TIER_OPTIMISED);
  EXPECT_NE(run(after), baselineFunction);
  EXPECT_EQ(run(before), baselineFunction);
  attnc_launch_plan_destroy(before);
  attnc_launch_plan_destroy(after);
}

TEST_F(TieredKernelSet, AFailedOptimisedCompileKeepsTheBaseline) {
  void *baselineFunction = launch();
  pending_->finish(Status(StatusCode::CompileError, "nvrtc", "it broke"));
  EXPECT_EQ(launch(), baselineFunction);
  EXPECT_EQ(launch(), baselineFunction);
  EXPECT_EQ(attnc_kernel_set_tier(set_), ATTNC_KERNEL_TIER_BASELINE);
  ASSERT_EQ(warnings_.messages.size(), 1u);
  EXPECT_NE(warnings_.messages[0].find("attnc_test_round_bf16"),
            std::string::npos);
  EXPECT_NE(warnings_.messages[0].find("it broke"), std::string::npos);
}

TEST_F(TieredKernelSet, ACheckedLaunchIsALaunchBoundaryToo) {
  pending_->finish(optimised_);
  state_->capturing = true;
  // Checked launches check the arguments first; bad ones launch nothing,
  // but the boundary is the call (the tier does not change under capture).
  attnc_kernel_launch_checked(kernel_, reinterpret_cast<void *>(0x7), nullptr,
                              0, nullptr, 0);
  EXPECT_EQ(attnc_kernel_set_tier(set_), ATTNC_KERNEL_TIER_BASELINE);
  state_->capturing = false;
  attnc_kernel_launch_checked(kernel_, reinterpret_cast<void *>(0x7), nullptr,
                              0, nullptr, 0);
  EXPECT_EQ(attnc_kernel_set_tier(set_), ATTNC_KERNEL_TIER_OPTIMISED);
}
