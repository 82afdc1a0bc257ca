//===- ProgrammaticLaunchTest.cpp - PDL launches against the fake driver --===//
//
// A kernel whose ABI says "programmatic_dependent_launch" is launched with
// cuLaunchKernelEx and CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
// = 1 on all three launch paths (plan, unchecked, checked); a kernel without
// the flag, a context with disable_pdl and a driver without
// cuLaunchKernelEx launch plainly (cuLaunchKernel, no attribute).
//
//===----------------------------------------------------------------------===//

#include "attnc-c/Runtime.h"
#include "attnc/Runtime/LaunchPlan.h"

#include "FakeCuda.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <dlfcn.h>
#include <string>

using namespace attnc::runtime::test;

namespace {

const char *kSource = R"cuda(
extern "C" __global__ void attnc_test_pdl(float *x, int n) {}
extern "C" __global__ void attnc_test_scaled(float *x, int n) {}
)cuda";

// The same kernel twice, one PDL-aware: grid ceil(n / 128).
const char *kAbi = R"json({"kernels": [
  {"name": "attnc_test_pdl",
   "params": [
     {"name": "x", "kind": "pointer", "dtype": "f32", "shape": ["n"],
      "writes": true},
     {"name": "n", "kind": "i32"}
   ],
   "block": [128, 1, 1],
   "grid": [{"value": "n", "divisor": 128}, 1, 1],
   "dynamic_shared_memory_bytes": 1024,
   "programmatic_dependent_launch": true},
  {"name": "attnc_test_scaled",
   "params": [
     {"name": "x", "kind": "pointer", "dtype": "f32", "shape": ["n"],
      "writes": true},
     {"name": "n", "kind": "i32"}
   ],
   "block": [128, 1, 1],
   "grid": [{"value": "n", "divisor": 128}, 1, 1],
   "dynamic_shared_memory_bytes": 1024}
]})json";

std::string lastError() { return attnc_last_error(); }

/// The state of the fake library at `path` (dlopen'ed by the runtime).
FakeCudaState *fakeStateOf(const char *path) {
  void *handle = ::dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!handle)
    handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  auto state = handle ? reinterpret_cast<FakeCudaState *(*)()>(
                            ::dlsym(handle, "attnc_fake_cuda_state"))
                      : nullptr;
  return state ? state() : nullptr;
}

class ProgrammaticLaunchTest : public ::testing::Test {
protected:
  /// A context on the driver at `driver_path`, the set and its two kernels.
  void open(const char *driver_path, bool disable_pdl) {
    ATTNC_REQUIRE_NVRTC();
    if (!attnc::runtime::programmaticLaunchFromEnvironment())
      GTEST_SKIP() << "skipped: ATTNC_PDL turns programmatic launch off in this environment";
    state = fakeStateOf(driver_path);
    ASSERT_NE(state, nullptr);
    state->has_context = true;
    state->device = 0;
    attnc_context_options_t options;
    attnc_context_options_initialize(&options);
    EXPECT_EQ(options.disable_pdl, 0) << "PDL is on by default";
    options.cache_dir = dir.path().c_str();
    options.cuda_driver_library = driver_path;
    options.disable_pdl = disable_pdl ? 1 : 0;
    ASSERT_EQ(attnc_context_create(&options, &context), ATTNC_STATUS_OK) << lastError();
    ASSERT_EQ(attnc_kernel_set_compile(context, kSource, kAbi, nullptr, &set), ATTNC_STATUS_OK)
        << lastError();
    ASSERT_EQ(attnc_kernel_set_find_kernel(set, "attnc_test_pdl", &pdl), ATTNC_STATUS_OK);
    ASSERT_EQ(attnc_kernel_set_find_kernel(set, "attnc_test_scaled", &plain), ATTNC_STATUS_OK);
  }
  void TearDown() override {
    attnc_kernel_set_destroy(set);
    attnc_context_destroy(context);
  }

  /// What one launch did.
  struct Launch {
    int launches = 0;    ///< launches seen by the driver (either call)
    int launches_ex = 0; ///< of which through cuLaunchKernelEx
    bool programmatic = false;
    unsigned attributes = 0;
  };
  template <typename F> Launch observe(F &&launch) {
    int launches = state->launches, launches_ex = state->launches_ex;
    state->last_launch_programmatic = true; // each launch must set it
    state->last_launch_attributes = 99;
    EXPECT_EQ(launch(), ATTNC_STATUS_OK) << lastError();
    Launch seen;
    seen.launches = state->launches - launches;
    seen.launches_ex = state->launches_ex - launches_ex;
    seen.programmatic = state->last_launch_programmatic;
    seen.attributes = state->last_launch_attributes;
    // The geometry travels either way: 300 elements, 3 blocks of 128.
    EXPECT_EQ(state->grid[0], 3u);
    EXPECT_EQ(state->grid[1], 1u);
    EXPECT_EQ(state->block[0], 128u);
    EXPECT_EQ(state->shared_memory_bytes, 1024u);
    EXPECT_EQ(state->stream, reinterpret_cast<void *>(0x5));
    return seen;
  }

  /// The kernel launched once on each path: plan, unchecked, checked.
  /// Returns the three launches and the plan's report.
  std::array<Launch, 3> launchAllPaths(attnc_kernel_t kernel, int *plan_programmatic) {
    void *x = reinterpret_cast<void *>(0x10000);
    int32_t n = 300;
    void *args[] = {&x, &n};
    auto stream = reinterpret_cast<void *>(0x5);
    attnc_launch_plan_t plan = nullptr;
    EXPECT_EQ(attnc_launch_plan_create(kernel, &plan), ATTNC_STATUS_OK) << lastError();
    *plan_programmatic = attnc_launch_plan_programmatic_launch(plan);
    std::array<Launch, 3> seen;
    seen[0] = observe([&] { return attnc_launch_plan_run(plan, stream, args, nullptr); });
    EXPECT_EQ(state->params[0], args[0]) << "the plan passes the caller's arguments";
    attnc_launch_plan_destroy(plan);
    seen[1] = observe([&] { return attnc_kernel_launch(kernel, stream, args, 2, nullptr, 0); });
    attnc_tensor_t tensor;
    std::memset(&tensor, 0, sizeof(tensor));
    tensor.data = x;
    tensor.dtype = ATTNC_DTYPE_F32;
    tensor.ndim = 1;
    tensor.shape[0] = n;
    tensor.strides[0] = 1;
    seen[2] = observe(
        [&] { return attnc_kernel_launch_checked(kernel, stream, &tensor, 1, nullptr, 0); });
    return seen;
  }

  /// Every path launched once through plain cuLaunchKernel: no
  /// cuLaunchKernelEx, no programmatic attribute.
  static void expectPlainLaunches(const std::array<Launch, 3> &seen) {
    for (size_t path = 0; path < seen.size(); ++path) {
      SCOPED_TRACE("path " + std::to_string(path) + " (plan, unchecked, checked)");
      EXPECT_EQ(seen[path].launches, 1) << "the kernel launches";
      EXPECT_EQ(seen[path].launches_ex, 0);
      EXPECT_FALSE(seen[path].programmatic);
      EXPECT_EQ(seen[path].attributes, 0u);
    }
  }

  TempDir dir;
  FakeCudaState *state = nullptr;
  attnc_context_t context = nullptr;
  attnc_kernel_set_t set = nullptr;
  attnc_kernel_t pdl = nullptr, plain = nullptr;
};

} // namespace

TEST_F(ProgrammaticLaunchTest, PdlKernelCarriesTheAttributeOnEveryPath) {
  open(ATTNC_FAKE_CUDA_PATH, /*disable_pdl=*/false);
  if (HasFatalFailure() || IsSkipped())
    return;
  int plan_programmatic = -1;
  auto seen = launchAllPaths(pdl, &plan_programmatic);
  EXPECT_EQ(plan_programmatic, 1);
  for (size_t path = 0; path < seen.size(); ++path) {
    SCOPED_TRACE("path " + std::to_string(path) + " (plan, unchecked, checked)");
    EXPECT_EQ(seen[path].launches, 1);
    EXPECT_EQ(seen[path].launches_ex, 1);
    EXPECT_TRUE(seen[path].programmatic);
    EXPECT_EQ(seen[path].attributes, 1u);
  }
}

TEST_F(ProgrammaticLaunchTest, KernelWithoutTheFlagLaunchesPlainly) {
  open(ATTNC_FAKE_CUDA_PATH, /*disable_pdl=*/false);
  if (HasFatalFailure() || IsSkipped())
    return;
  int plan_programmatic = -1;
  auto seen = launchAllPaths(plain, &plan_programmatic);
  EXPECT_EQ(plan_programmatic, 0);
  expectPlainLaunches(seen);
  EXPECT_EQ(attnc_launch_plan_programmatic_launch(nullptr), 0);
}

TEST_F(ProgrammaticLaunchTest, ContextSwitchTurnsItOff) {
  open(ATTNC_FAKE_CUDA_PATH, /*disable_pdl=*/true);
  if (HasFatalFailure() || IsSkipped())
    return;
  int plan_programmatic = -1;
  auto seen = launchAllPaths(pdl, &plan_programmatic);
  EXPECT_EQ(plan_programmatic, 0);
  expectPlainLaunches(seen);
}

TEST_F(ProgrammaticLaunchTest, DriverWithoutLaunchKernelExFallsBack) {
  open(ATTNC_FAKE_CUDA_NOLAUNCHEX_PATH, /*disable_pdl=*/false);
  if (HasFatalFailure() || IsSkipped())
    return;
  int plan_programmatic = -1;
  auto seen = launchAllPaths(pdl, &plan_programmatic);
  EXPECT_EQ(plan_programmatic, 0) << "no cuLaunchKernelEx: no programmatic launch";
  expectPlainLaunches(seen);
}

TEST(ProgrammaticLaunchSwitch, ReadsTheEnvironmentText) {
  using attnc::runtime::programmaticLaunchSwitch;
  EXPECT_TRUE(programmaticLaunchSwitch(nullptr)) << "unset: on";
  EXPECT_TRUE(programmaticLaunchSwitch("1"));
  EXPECT_TRUE(programmaticLaunchSwitch(""));
  EXPECT_FALSE(programmaticLaunchSwitch("0"));
  EXPECT_FALSE(programmaticLaunchSwitch("off"));
  EXPECT_FALSE(programmaticLaunchSwitch("FALSE"));
  EXPECT_FALSE(programmaticLaunchSwitch("no"));
}
