//===- LaunchPlanTest.cpp - Launch plans and the checked launch (C API) ---===//
//
// Against the fake driver: plans (grid from the rule, plus, launch scalars,
// empty grids, named errors), prepare, and one test per bad-argument class
// of the checked launch, each asserting the field, the rule and that
// nothing was launched.
//
//===----------------------------------------------------------------------===//

#include "attnc-c/Runtime.h"

#include "FakeCuda.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace attnc::runtime::test;

namespace {

/// A paged-attention-shaped kernel: shape symbols, a derived symbol, ABI
/// strides on a cache view, a scalar tensor, a workspace, split-KV; and one
/// with an f32 parameter.
const char *kSource = R"cuda(
extern "C" __global__ void attnc_test_paged(
    const void *q, void *k_cache, const int *block_table, const int *seq_lens,
    const int *query_start_loc, const float *scale, float *out,
    float *workspace, int num_tokens, int num_seqs, int max_blocks_per_seq,
    long long k_cache_block_stride, long long k_cache_token_stride,
    int num_kv_splits) {}
extern "C" __global__ void attnc_test_scaled(float *x, int n, float factor) {}
)cuda";

const char *kAbi = R"json({"kernels": [
  {"name": "attnc_test_paged",
   "params": [
     {"name": "q", "kind": "pointer", "dtype": "bf16",
      "shape": ["num_tokens", 4, 64]},
     {"name": "k_cache", "kind": "pointer", "dtype": "bf16",
      "shape": ["num_blocks", 16, 2, 64],
      "strides": ["k_cache_block_stride", "k_cache_token_stride", 64, 1],
      "writes": true},
     {"name": "block_table", "kind": "pointer", "dtype": "i32",
      "shape": ["num_seqs", "max_blocks_per_seq"]},
     {"name": "seq_lens", "kind": "pointer", "dtype": "i32",
      "shape": ["num_seqs"]},
     {"name": "query_start_loc", "kind": "pointer", "dtype": "i32",
      "shape": ["num_seqs_plus_one"]},
     {"name": "scale", "kind": "pointer", "dtype": "f32", "shape": []},
     {"name": "out", "kind": "pointer", "dtype": "f32",
      "shape": ["num_tokens", 4, 64], "writes": true},
     {"name": "workspace", "kind": "pointer", "dtype": "f32",
      "shape": [1024], "writes": true},
     {"name": "num_tokens", "kind": "i32"},
     {"name": "num_seqs", "kind": "i32"},
     {"name": "max_blocks_per_seq", "kind": "i32"},
     {"name": "k_cache_block_stride", "kind": "i64"},
     {"name": "k_cache_token_stride", "kind": "i64"},
     {"name": "num_kv_splits", "kind": "i32"}
   ],
   "launch_scalars": ["num_blocks"],
   "block": [128, 1, 1],
   "grid": [{"value": "num_tokens", "multiplier": 4, "divisor": 64,
             "plus": "num_seqs"}, 2, {"value": "num_kv_splits"}],
   "dynamic_shared_memory_bytes": 65536,
   "hints": {"target_ctas": 8, "max_kv_splits": 4}},
  {"name": "attnc_test_scaled",
   "params": [
     {"name": "x", "kind": "pointer", "dtype": "f32", "shape": ["n"],
      "writes": true},
     {"name": "n", "kind": "i32"},
     {"name": "factor", "kind": "f32"}
   ],
   "block": [128, 1, 1],
   "grid": [{"value": "n", "divisor": 128}, 1, 1],
   "dynamic_shared_memory_bytes": 0}
]})json";

enum Tensor { Q, KCache, BlockTable, SeqLens, QueryStartLoc, Scale, Out,
              Workspace, NumTensors };
constexpr size_t kNumParams = 14;

attnc_tensor_t tensor(void *data, attnc_dtype_t dtype,
                      std::vector<int64_t> shape,
                      std::vector<int64_t> strides = {}) {
  attnc_tensor_t t;
  std::memset(&t, 0, sizeof(t));
  t.data = data;
  t.dtype = dtype;
  t.device = 0;
  t.ndim = int32_t(shape.size());
  int64_t step = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    t.shape[d] = shape[size_t(d)];
    t.strides[d] = strides.empty() ? step : strides[size_t(d)];
    step *= shape[size_t(d)] > 1 ? shape[size_t(d)] : 1;
  }
  return t;
}

void *address(uintptr_t value) { return reinterpret_cast<void *>(value); }

/// A valid call: 3 tokens, 2 sequences of at most 5 blocks, 10 cache blocks
/// seen through the K half of a [10, 2, 16, 2, 64] allocation.
std::vector<attnc_tensor_t> goodTensors() {
  std::vector<attnc_tensor_t> t(NumTensors);
  t[Q] = tensor(address(0x10000), ATTNC_DTYPE_BF16, {3, 4, 64});
  t[KCache] = tensor(address(0x20000), ATTNC_DTYPE_BF16, {10, 16, 2, 64},
                     {4096, 128, 64, 1});
  t[BlockTable] = tensor(address(0x30000), ATTNC_DTYPE_I32, {2, 5});
  t[SeqLens] = tensor(address(0x40000), ATTNC_DTYPE_I32, {2});
  t[QueryStartLoc] = tensor(address(0x50000), ATTNC_DTYPE_I32, {3});
  t[Scale] = tensor(address(0x60000), ATTNC_DTYPE_F32, {});
  t[Out] = tensor(address(0x70000), ATTNC_DTYPE_F32, {3, 4, 64});
  t[Workspace] = tensor(address(0x80000), ATTNC_DTYPE_F32, {2048});
  t[Q].readonly = t[BlockTable].readonly = t[SeqLens].readonly =
      t[QueryStartLoc].readonly = t[Scale].readonly = 1;
  return t;
}

std::string lastError() { return attnc_last_error(); }

class LaunchPlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    ATTNC_REQUIRE_NVRTC();
    state = fakeCudaState();
    state->device = 0;
    state->has_context = true;
    attnc_context_options_t options;
    attnc_context_options_initialize(&options);
    options.cache_dir = dir.path().c_str();
    options.cuda_driver_library = ATTNC_FAKE_CUDA_PATH;
    ASSERT_EQ(attnc_context_create(&options, &context), ATTNC_STATUS_OK)
        << lastError();
    ASSERT_EQ(attnc_kernel_set_compile(context, kSource, kAbi, nullptr, &set),
              ATTNC_STATUS_OK)
        << lastError();
    ASSERT_EQ(attnc_kernel_set_find_kernel(set, "attnc_test_paged", &paged),
              ATTNC_STATUS_OK);
    ASSERT_EQ(attnc_kernel_set_find_kernel(set, "attnc_test_scaled", &scaled),
              ATTNC_STATUS_OK);
  }
  void TearDown() override {
    attnc_kernel_set_destroy(set);
    attnc_context_destroy(context);
    if (state)
      state->device = 0;
  }

  attnc_status_t check(const std::vector<attnc_tensor_t> &tensors,
                       std::vector<attnc_symbol_t> symbols = {}) {
    params.assign(kNumParams, -1);
    return attnc_kernel_check_tensors(paged, tensors.data(), tensors.size(),
                                      symbols.data(), symbols.size(),
                                      params.data(), params.size(),
                                      &num_blocks, 1);
  }

  /// The checks fail with `expected` (a prefix of the message: the field
  /// and the rule), and the checked launch fails the same way without
  /// launching.
  void expectRejected(const std::vector<attnc_tensor_t> &tensors,
                      const std::string &expected,
                      std::vector<attnc_symbol_t> symbols = {}) {
    EXPECT_EQ(check(tensors, symbols), ATTNC_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(lastError().rfind(expected, 0), 0u) << lastError();
    int launches = state->launches;
    EXPECT_EQ(attnc_kernel_launch_checked(paged, nullptr, tensors.data(),
                                          tensors.size(), symbols.data(),
                                          symbols.size()),
              ATTNC_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(lastError().rfind(expected, 0), 0u) << lastError();
    EXPECT_EQ(state->launches, launches) << "launched on a bad argument";
  }

  TempDir dir;
  FakeCudaState *state = nullptr;
  attnc_context_t context = nullptr;
  attnc_kernel_set_t set = nullptr;
  attnc_kernel_t paged = nullptr, scaled = nullptr;
  std::vector<int64_t> params;
  int64_t num_blocks = -1;
};

/// The argument pointers of a direct launch of attnc_test_paged.
struct PagedArgs {
  void *pointers[8] = {};
  int32_t num_tokens = 3, num_seqs = 2, max_blocks_per_seq = 5;
  int64_t block_stride = 4096, token_stride = 128;
  int32_t num_kv_splits = 2;
  void *args[kNumParams];
  PagedArgs() {
    for (int i = 0; i < 8; ++i)
      args[i] = &pointers[i];
    args[8] = &num_tokens;
    args[9] = &num_seqs;
    args[10] = &max_blocks_per_seq;
    args[11] = &block_stride;
    args[12] = &token_stride;
    args[13] = &num_kv_splits;
  }
};

} // namespace

TEST_F(LaunchPlanTest, PlanRunsTheGridRuleWithPlus) {
  attnc_launch_plan_t plan = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(paged, &plan), ATTNC_STATUS_OK)
      << lastError();
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(state->max_dynamic_shared_memory_set, 65536);
  PagedArgs a;
  a.num_tokens = 100; // ceil(100 * 4 / 64) + 2 = 9
  int64_t scalars[] = {10};
  int launches = state->launches, queries = state->queries;
  ASSERT_EQ(attnc_launch_plan_run(plan, address(0x7), a.args, scalars),
            ATTNC_STATUS_OK)
      << lastError();
  EXPECT_EQ(state->launches, launches + 1);
  EXPECT_EQ(state->queries, queries) << "a plan asks the driver nothing";
  EXPECT_EQ(state->grid[0], 9u);
  EXPECT_EQ(state->grid[1], 2u);
  EXPECT_EQ(state->grid[2], 2u);
  EXPECT_EQ(state->block[0], 128u);
  EXPECT_EQ(state->block[1], 1u);
  EXPECT_EQ(state->shared_memory_bytes, 65536u);
  EXPECT_EQ(state->stream, address(0x7));
  EXPECT_EQ(state->params, a.args);
  EXPECT_NE(state->function, nullptr);
  // Launch scalars the grid does not read may be NULL.
  ASSERT_EQ(attnc_launch_plan_run(plan, nullptr, a.args, nullptr),
            ATTNC_STATUS_OK);
  EXPECT_EQ(state->launches, launches + 2);
  attnc_launch_plan_destroy(plan);
  attnc_launch_plan_destroy(nullptr); // ignored
}

TEST_F(LaunchPlanTest, PlanReadsLaunchScalars) {
  // kTestAbiJson's attnc_test_round_bf16: grid y is a launch scalar.
  attnc_kernel_set_t test_set = nullptr;
  ASSERT_EQ(attnc_kernel_set_compile(context, kTestSource, kTestAbiJson,
                                     nullptr, &test_set),
            ATTNC_STATUS_COMPILE_ERROR); // needs the helper header
  const char *names[] = {kTestHelperName};
  const char *sources[] = {kTestHelperSource};
  attnc_compile_options_t options;
  attnc_compile_options_initialize(&options);
  options.header_names = names;
  options.header_sources = sources;
  options.num_headers = 1;
  ASSERT_EQ(attnc_kernel_set_compile(context, kTestSource, kTestAbiJson,
                                     &options, &test_set),
            ATTNC_STATUS_OK)
      << lastError();
  attnc_kernel_t round = nullptr;
  ASSERT_EQ(attnc_kernel_set_kernel_at(test_set, 1, &round), ATTNC_STATUS_OK);
  attnc_launch_plan_t plan = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(round, &plan), ATTNC_STATUS_OK);
  void *out = nullptr, *in = nullptr;
  int64_t count = 513;
  void *args[] = {&out, &in, &count};
  int64_t num_sequences = 3;
  ASSERT_EQ(attnc_launch_plan_run(plan, nullptr, args, &num_sequences),
            ATTNC_STATUS_OK);
  EXPECT_EQ(state->grid[0], 3u); // ceil(513 / 256)
  EXPECT_EQ(state->grid[1], 3u);
  EXPECT_EQ(state->block[0], 256u);
  int launches = state->launches;
  EXPECT_EQ(attnc_launch_plan_run(plan, nullptr, args, nullptr),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "launch_scalars: null array") << lastError();
  EXPECT_EQ(state->launches, launches);
  attnc_launch_plan_destroy(plan);
  attnc_kernel_set_destroy(test_set);
}

TEST_F(LaunchPlanTest, PlanErrorsAreNamedAndLaunchNothing) {
  attnc_launch_plan_t plan = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(paged, &plan), ATTNC_STATUS_OK);
  int launches = state->launches;
  PagedArgs a;

  a.num_kv_splits = 0; // an empty grid: OK, nothing launched
  EXPECT_EQ(attnc_launch_plan_run(plan, nullptr, a.args, nullptr),
            ATTNC_STATUS_OK);
  a.num_kv_splits = 2;

  a.num_tokens = -1;
  EXPECT_EQ(attnc_launch_plan_run(plan, nullptr, a.args, nullptr),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "grid[0]: value 'num_tokens' is negative (-1)");
  a.num_tokens = 3;

  a.num_kv_splits = 70000;
  EXPECT_EQ(attnc_launch_plan_run(plan, nullptr, a.args, nullptr),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("grid[2]: ceil_div(num_kv_splits (70000) * 1, "
                             "1) exceeds the CUDA grid limit 65535 along z"),
            std::string::npos)
      << lastError();
  a.num_kv_splits = 2;

  EXPECT_EQ(attnc_launch_plan_run(plan, nullptr, nullptr, nullptr),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError().rfind("args: NULL argument array", 0), 0u)
      << lastError();
  a.args[9] = nullptr; // num_seqs, which the grid reads
  EXPECT_EQ(attnc_launch_plan_run(plan, nullptr, a.args, nullptr),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError().rfind("args[9]: null", 0), 0u) << lastError();
  EXPECT_EQ(attnc_launch_plan_run(nullptr, nullptr, a.args, nullptr),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "plan: NULL");
  EXPECT_EQ(state->launches, launches);
  attnc_launch_plan_destroy(plan);
}

TEST_F(LaunchPlanTest, PrepareIsIdempotentAndNeedsAContext) {
  int loaded = state->modules_loaded, got = state->functions_got;
  ASSERT_EQ(attnc_kernel_prepare(paged), ATTNC_STATUS_OK) << lastError();
  ASSERT_EQ(attnc_kernel_prepare(paged), ATTNC_STATUS_OK);
  attnc_launch_plan_t plan = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(paged, &plan), ATTNC_STATUS_OK);
  EXPECT_EQ(state->modules_loaded, loaded + 1);
  EXPECT_EQ(state->functions_got, got + 1);
  EXPECT_EQ(state->max_dynamic_shared_memory_set, 65536);
  attnc_launch_plan_destroy(plan);
  EXPECT_EQ(attnc_kernel_prepare(nullptr), ATTNC_STATUS_INVALID_ARGUMENT);

  state->has_context = false;
  EXPECT_EQ(attnc_kernel_prepare(scaled), ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError().rfind("context: no current CUDA context", 0), 0u)
      << lastError();
  EXPECT_EQ(attnc_launch_plan_create(scaled, &plan),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
  state->has_context = true;
}

TEST_F(LaunchPlanTest, UncheckedLaunchAsksTheDriverOnceAfterTheFirst) {
  PagedArgs a;
  ASSERT_EQ(attnc_kernel_launch(paged, nullptr, a.args, kNumParams, nullptr, 0),
            ATTNC_STATUS_INVALID_ARGUMENT); // the launch scalar is missing
  int64_t scalars[] = {10};
  ASSERT_EQ(attnc_kernel_launch(paged, nullptr, a.args, kNumParams, scalars, 1),
            ATTNC_STATUS_OK)
      << lastError();
  int launches = state->launches, queries = state->queries;
  ASSERT_EQ(attnc_kernel_set_launch(set, "attnc_test_paged", nullptr, a.args,
                                    kNumParams, scalars, 1),
            ATTNC_STATUS_OK);
  EXPECT_EQ(state->launches, launches + 1);
  EXPECT_EQ(state->queries, queries + 1) << "cuCtxGetCurrent only";
  EXPECT_EQ(state->grid[0], 3u);
  EXPECT_EQ(state->grid[2], 2u);
}

TEST_F(LaunchPlanTest, CheckedLaunchFillsScalarsFromTheTensors) {
  std::vector<attnc_tensor_t> t = goodTensors();
  ASSERT_EQ(check(t), ATTNC_STATUS_OK) << lastError();
  // Pointers 0; num_tokens, num_seqs, max_blocks_per_seq from the shapes;
  // the cache strides from k_cache; num_kv_splits by the split rule
  // (busy = max(ceil(3 * 4 / 64), 2) * 2 = 4 of target 8: 2 splits).
  std::vector<int64_t> expected = {0, 0, 0, 0, 0, 0, 0, 0, 3, 2, 5, 4096, 128,
                                   2};
  EXPECT_EQ(params, expected);
  EXPECT_EQ(num_blocks, 10);

  int launches = state->launches;
  ASSERT_EQ(attnc_kernel_launch_checked(paged, address(0x9), t.data(),
                                        t.size(), nullptr, 0),
            ATTNC_STATUS_OK)
      << lastError();
  EXPECT_EQ(state->launches, launches + 1);
  EXPECT_EQ(state->grid[0], 3u); // ceil(12 / 64) + 2
  EXPECT_EQ(state->grid[1], 2u);
  EXPECT_EQ(state->grid[2], 2u);
  EXPECT_EQ(state->stream, address(0x9));
  // The arguments as the kernel got them.
  void **args = state->params;
  EXPECT_EQ(*static_cast<void **>(args[0]), t[Q].data);
  EXPECT_EQ(*static_cast<void **>(args[7]), t[Workspace].data);
  EXPECT_EQ(*static_cast<int32_t *>(args[8]), 3);
  EXPECT_EQ(*static_cast<int64_t *>(args[11]), 4096);
  EXPECT_EQ(*static_cast<int64_t *>(args[12]), 128);
  EXPECT_EQ(*static_cast<int32_t *>(args[13]), 2);

  // A requested split count; [1] for a scalar; a size-1 dim's stride
  // ignored and its symbol given the contiguous stride.
  t[Scale] = tensor(address(0x60000), ATTNC_DTYPE_F32, {1});
  t[KCache] = tensor(address(0x20000), ATTNC_DTYPE_BF16, {1, 16, 2, 64},
                     {7, 128, 64, 1});
  ASSERT_EQ(check(t, {{"num_kv_splits", 1}}), ATTNC_STATUS_OK) << lastError();
  EXPECT_EQ(params[11], 16 * 2 * 64);
  EXPECT_EQ(params[12], 128);
  EXPECT_EQ(params[13], 1);
  EXPECT_EQ(num_blocks, 1);
}

TEST_F(LaunchPlanTest, EmptyLaunchIsCheckedButNotLaunched) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[Q] = tensor(nullptr, ATTNC_DTYPE_BF16, {0, 4, 64});
  t[Out] = tensor(nullptr, ATTNC_DTYPE_F32, {0, 4, 64});
  t[BlockTable] = tensor(nullptr, ATTNC_DTYPE_I32, {0, 5});
  t[SeqLens] = tensor(nullptr, ATTNC_DTYPE_I32, {0});
  t[QueryStartLoc] = tensor(address(0x50000), ATTNC_DTYPE_I32, {1});
  int launches = state->launches;
  // No tokens, no sequences: the grid's x is 0.
  ASSERT_EQ(attnc_kernel_launch_checked(paged, nullptr, t.data(), t.size(),
                                        nullptr, 0),
            ATTNC_STATUS_OK)
      << lastError();
  EXPECT_EQ(state->launches, launches);
}

TEST_F(LaunchPlanTest, WrongDtype) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[Q].dtype = ATTNC_DTYPE_F16;
  expectRejected(t, "q: dtype is f16, expected bf16");
  t = goodTensors();
  t[SeqLens].dtype = 42;
  expectRejected(t, "seq_lens: dtype is 42 (not an attnc_dtype_t), expected "
                    "i32");
}

TEST_F(LaunchPlanTest, WrongRank) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[Q] = tensor(address(0x10000), ATTNC_DTYPE_BF16, {3, 256});
  expectRejected(t, "q: expected 3 dims [num_tokens, 4, 64], got 2 dims "
                    "[3, 256]");
  t = goodTensors();
  t[Scale] = tensor(address(0x60000), ATTNC_DTYPE_F32, {2});
  expectRejected(t, "scale: must be a scalar tensor (shape [] or [1]), got "
                    "shape [2]");
  t = goodTensors();
  t[Q].ndim = 9;
  expectRejected(t, "q: ndim is 9, must be 0..8");
}

TEST_F(LaunchPlanTest, ShapeThatDisagreesWithABoundSymbol) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[Out] = tensor(address(0x70000), ATTNC_DTYPE_F32, {4, 4, 64});
  expectRejected(t, "out: shape [4, 4, 64] does not match [num_tokens, 4, "
                    "64]: dim 0 is 4, but num_tokens is 3 (from q dim 0)");
  t = goodTensors();
  t[KCache] = tensor(address(0x20000), ATTNC_DTYPE_BF16, {10, 16, 2, 128},
                     {4096, 256, 128, 1});
  expectRejected(t, "k_cache: shape [10, 16, 2, 128] does not match "
                    "[num_blocks, 16, 2, 64]: dim 3 is 128, expected 64");
  // The derived symbol: num_seqs_plus_one = num_seqs + 1.
  t = goodTensors();
  t[QueryStartLoc] = tensor(address(0x50000), ATTNC_DTYPE_I32, {4});
  expectRejected(t, "query_start_loc: shape [4] does not match "
                    "[num_seqs_plus_one]: dim 0 is 4, but num_seqs_plus_one "
                    "is 3 (from num_seqs + 1, num_seqs from block_table dim "
                    "0)");
  // A caller's symbol binds before the tensors.
  t = goodTensors();
  expectRejected(t, "block_table: shape [2, 5] does not match [num_seqs, "
                    "max_blocks_per_seq]: dim 1 is 5, but max_blocks_per_seq "
                    "is 6 (from symbols[0])",
                 {{"max_blocks_per_seq", 6}});
}

TEST_F(LaunchPlanTest, Strides) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[Q].strides[0] = 512; // no ABI strides: must be C-contiguous
  expectRejected(t, "q: must be C-contiguous: strides [512, 64, 1] (in "
                    "elements) for shape [3, 4, 64], expected [256, 64, 1]");
  t = goodTensors();
  t[KCache].strides[2] = 128; // an ABI constant
  expectRejected(t, "k_cache: stride 2 is 128, expected 64");
  t = goodTensors();
  t[KCache].strides[3] = 2; // the ABI's constant 1
  expectRejected(t, "k_cache: stride 3 is 2, expected 1 (strides [4096, "
                    "128, 64, 2] for shape [10, 16, 2, 64])");
  t = goodTensors();
  t[KCache].strides[1] = 132; // 264 bytes
  expectRejected(t, "k_cache: stride 1 is 132 elements (264 bytes), must be "
                    "a positive multiple of 16 bytes");
  t = goodTensors();
  t[KCache].strides[0] = int64_t(1) << 31; // the kernels' strides are 32-bit
  expectRejected(t, "k_cache: stride 0 is 2147483648 elements, more than the "
                    "kernels' 32-bit strides hold (2^31 - 1)");
}

TEST_F(LaunchPlanTest, MisalignedOrNullPointer) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[Q].data = address(0x10008);
  expectRejected(t, "q: data pointer 0x10008 is not 16-byte aligned");
  t = goodTensors();
  t[Out].data = nullptr;
  expectRejected(t, "out: data pointer is NULL");
}

TEST_F(LaunchPlanTest, ReadOnlyTensorTheKernelWrites) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[KCache].readonly = 1;
  expectRejected(t, "k_cache: is read-only, but the kernel writes it");
}

TEST_F(LaunchPlanTest, WrongDevice) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[Out].device = 1;
  expectRejected(t, "out: is on cuda:1, but q is on cuda:0; all tensors must "
                    "be on one device");
  // Tensors agree, but the current context is on another device: only the
  // launch sees that.
  state->device = 1;
  attnc_kernel_set_t other = nullptr;
  ASSERT_EQ(attnc_kernel_set_compile(context, kSource, kAbi, nullptr, &other),
            ATTNC_STATUS_OK);
  attnc_kernel_t kernel = nullptr;
  ASSERT_EQ(attnc_kernel_set_kernel_at(other, 0, &kernel), ATTNC_STATUS_OK);
  t = goodTensors();
  t[Scale].device = -1; // unknown: not checked
  int launches = state->launches;
  EXPECT_EQ(attnc_kernel_launch_checked(kernel, nullptr, t.data(), t.size(),
                                        nullptr, 0),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "q: is on cuda:0, but the current CUDA context is on "
                         "cuda:1 (make the tensors' device current first)");
  EXPECT_EQ(state->launches, launches);
  for (attnc_tensor_t &tensor : t)
    tensor.device = tensor.device < 0 ? -1 : 1;
  EXPECT_EQ(attnc_kernel_launch_checked(kernel, nullptr, t.data(), t.size(),
                                        nullptr, 0),
            ATTNC_STATUS_OK)
      << lastError();
  EXPECT_EQ(state->launches, launches + 1);
  attnc_kernel_set_destroy(other);
}

TEST_F(LaunchPlanTest, SplitCountOutOfRange) {
  std::vector<attnc_tensor_t> t = goodTensors();
  expectRejected(t, "num_kv_splits: must be in [1, max_kv_splits] = [1, 4] "
                    "(got 5)",
                 {{"num_kv_splits", 5}});
  expectRejected(t, "num_kv_splits: must be in [1, max_kv_splits] = [1, 4] "
                    "(got 0)",
                 {{"num_kv_splits", 0}});
  // base = 3 * 2 CTAs; 3 splits need 18 > 2 * target_ctas = 16.
  expectRejected(t, "num_kv_splits: 3 splits of 6 CTAs (grid x * y) need 18 "
                    "CTAs of workspace, more than its capacity",
                 {{"num_kv_splits", 3}});
}

TEST_F(LaunchPlanTest, WorkspaceTooSmall) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[Workspace] = tensor(address(0x80000), ATTNC_DTYPE_F32, {512});
  expectRejected(t, "workspace: expected 1 dim of at least 1024 elements "
                    "([1024]), got shape [512]");
  t[Workspace] = tensor(address(0x80000), ATTNC_DTYPE_F32, {32, 64});
  expectRejected(t, "workspace: expected 1 dim of at least 1024 elements "
                    "([1024]), got shape [32, 64]");
  t[Workspace] = tensor(address(0x80000), ATTNC_DTYPE_F16, {4096});
  expectRejected(t, "workspace: dtype is f16, expected f32");
}

TEST_F(LaunchPlanTest, TokensWithoutSequences) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[BlockTable] = tensor(nullptr, ATTNC_DTYPE_I32, {0, 5});
  t[SeqLens] = tensor(nullptr, ATTNC_DTYPE_I32, {0});
  t[QueryStartLoc] = tensor(address(0x50000), ATTNC_DTYPE_I32, {1});
  expectRejected(t, "seq_lens: no sequences (num_seqs is 0), but there are 3 "
                    "query rows");
}

TEST_F(LaunchPlanTest, Int32Overflow) {
  std::vector<attnc_tensor_t> t = goodTensors();
  t[BlockTable] = tensor(address(0x30000), ATTNC_DTYPE_I32, {2, int64_t(1) << 31});
  expectRejected(t, "max_blocks_per_seq: 2147483648 does not fit the "
                    "kernel's int32");
}

TEST_F(LaunchPlanTest, BadSymbolsAndCounts) {
  std::vector<attnc_tensor_t> t = goodTensors();
  expectRejected(t, "symbols[0]: unknown symbol 'num_heads' (kernel "
                    "attnc_test_paged knows ",
                 {{"num_heads", 1}});
  expectRejected(t, "symbols[0]: 'k_cache_block_stride' is set from a "
                    "tensor's stride",
                 {{"k_cache_block_stride", 1}});
  std::vector<attnc_tensor_t> fewer(t.begin(), t.end() - 1);
  expectRejected(fewer, "tensors: kernel attnc_test_paged takes 8 pointer "
                        "parameters (q, k_cache, block_table, seq_lens, "
                        "query_start_loc, scale, out, workspace) but 7");
  // f32 parameters cannot be filled from tensors.
  attnc_tensor_t x = tensor(address(0x1000), ATTNC_DTYPE_F32, {4});
  int64_t values[3];
  EXPECT_EQ(attnc_kernel_check_tensors(scaled, &x, 1, nullptr, 0, values, 3,
                                       nullptr, 0),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError().rfind("factor: kernel attnc_test_scaled takes an f32 "
                              "parameter",
                              0),
            0u)
      << lastError();
  EXPECT_EQ(attnc_kernel_check_tensors(nullptr, &x, 1, nullptr, 0, values, 3,
                                       nullptr, 0),
            ATTNC_STATUS_INVALID_ARGUMENT);
}
