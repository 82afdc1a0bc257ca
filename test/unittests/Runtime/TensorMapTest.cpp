//===- TensorMapTest.cpp - tensor_map kernel parameters -------------------===//
//
// The ABI's tensor_map parameters (KernelAbi.h): JSON round trip and the
// validation rules, each named; and, against the fake driver, that every
// launch path (launch plan, unchecked launch, checked launch) encodes the
// map from the launch's own pointer, dims and strides, passes it 64-byte
// aligned at the parameter's position whatever the caller put there, and
// refuses by name (launching nothing) what cannot be encoded.
//
//===----------------------------------------------------------------------===//

#include "attnc-c/Runtime.h"
#include "attnc/Runtime/KernelAbi.h"

#include "FakeCuda.h"
#include "TestUtil.h"

#include <cuda.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace attnc::runtime;
using namespace attnc::runtime::test;

namespace {

/// A latent-cache-shaped view [num_blocks, 64, 576] (bf16, strides of a
/// view) and its map: boxes of 64 rows x 64 values, 128-byte swizzle.
const char *kSource = R"cuda(
struct __align__(64) TensorMap { unsigned long long bytes[16]; };
extern "C" __global__ void attnc_test_tma(const __grid_constant__ TensorMap cache_map,
                                          const void *cache, float *out,
                                          long long cache_block_stride,
                                          long long cache_token_stride, int n) {}
)cuda";

std::string abiJson(const std::string &map_fields) {
  return R"json({"kernels": [
  {"name": "attnc_test_tma",
   "params": [
     {"name": "cache_map", "kind": "tensor_map", )json" +
         map_fields + R"json(},
     {"name": "cache", "kind": "pointer", "dtype": "bf16",
      "shape": ["num_blocks", 64, 576],
      "strides": ["cache_block_stride", "cache_token_stride", 1]},
     {"name": "out", "kind": "pointer", "dtype": "f32", "shape": ["n"],
      "writes": true},
     {"name": "cache_block_stride", "kind": "i64"},
     {"name": "cache_token_stride", "kind": "i64"},
     {"name": "n", "kind": "i32"}
   ],
   "launch_scalars": ["num_blocks"],
   "block": [128, 1, 1],
   "grid": [{"value": "n", "divisor": 128}, 1, 1],
   "dynamic_shared_memory_bytes": 0}
]})json";
}

const std::string kMapFields =
    R"("tensor": "cache", "box": [1, 64, 64], "swizzle": 128)";

std::string lastError() { return attnc_last_error(); }

/// The ABI text with the tensor map's fields replaced, validated.
attnc::Status validateWith(const std::string &map_fields) {
  auto abis = kernelAbiListFromJson(abiJson(map_fields));
  return abis ? attnc::Status() : abis.status();
}

TEST(TensorMapAbi, RoundTripsThroughJson) {
  auto abis = kernelAbiListFromJson(abiJson(kMapFields));
  ASSERT_TRUE(abis) << abis.status().message();
  const KernelParam &map = (*abis)[0].params[0];
  EXPECT_EQ(map.kind, ParamKind::TensorMap);
  ASSERT_TRUE(map.tensor_map);
  EXPECT_EQ(map.tensor_map->tensor, "cache");
  EXPECT_EQ(map.tensor_map->box, (std::vector<int64_t>{1, 64, 64}));
  EXPECT_EQ(map.tensor_map->swizzle, 128);
  EXPECT_EQ(map.byteSize(), 128u);
  auto again = kernelAbiListFromJson(kernelAbiListToJson(*abis));
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_EQ(*again, *abis);
}

TEST(TensorMapAbi, RulesAreNamed) {
  struct Case {
    std::string fields, expected;
  } cases[] = {
      {R"("box": [1, 64, 64], "swizzle": 128)", "tensor: required field is missing"},
      {R"("tensor": "out", "box": [64], "swizzle": 0)",
       "'out' must have a shape and strides"},
      {R"("tensor": "n", "box": [1, 64, 64], "swizzle": 128)",
       "'n' must name a pointer parameter"},
      {R"("tensor": "nothing", "box": [1, 64, 64], "swizzle": 128)",
       "'nothing' must name a pointer parameter"},
      {R"("tensor": "cache", "box": [64, 64], "swizzle": 128)",
       "params[0].box: has 2 entries, but 'cache' has 3 dims"},
      {R"("tensor": "cache", "box": [1, 64, 0], "swizzle": 128)", "box[2]"},
      {R"("tensor": "cache", "box": [1, 64, 512], "swizzle": 128)", "box[2]"},
      {R"("tensor": "cache", "box": [1, 64, 64], "swizzle": 96)",
       "params[0].swizzle: must be 0, 32, 64 or 128 (got 96)"},
      {R"("tensor": "cache", "box": [1, 64, 4], "swizzle": 0)",
       "the innermost box row is 8 bytes; it must be a multiple of 16"},
      {R"("tensor": "cache", "box": [1, 64, 128], "swizzle": 128)",
       "the innermost box row is 256 bytes, more than the 128-byte swizzle span"},
  };
  for (const Case &c : cases) {
    attnc::Status s = validateWith(c.fields);
    EXPECT_FALSE(s) << c.fields;
    EXPECT_NE(s.message().find(c.expected), std::string::npos)
        << c.fields << " -> " << s.message();
  }
  // A dim the launch cannot know: num_blocks is no launch scalar.
  std::string text = abiJson(kMapFields);
  std::string scalars = R"("launch_scalars": ["num_blocks"],)";
  text.replace(text.find(scalars), scalars.size(), "");
  auto abis = kernelAbiListFromJson(text);
  ASSERT_FALSE(abis);
  EXPECT_NE(abis.status().message().find(
                "'num_blocks', which is neither an i32/i64 parameter nor a launch scalar"),
            std::string::npos)
      << abis.status().message();
  // Tensor-map fields on another kind.
  text = abiJson(kMapFields);
  std::string n = R"({"name": "n", "kind": "i32"})";
  text.replace(text.find(n), n.size(), R"({"name": "n", "kind": "i32", "swizzle": 0})");
  abis = kernelAbiListFromJson(text);
  ASSERT_FALSE(abis);
  EXPECT_NE(abis.status().message().find("only tensor_map parameters have tensor, box"),
            std::string::npos)
      << abis.status().message();
}

class TensorMapLaunch : public ::testing::Test {
protected:
  void SetUp() override {
    ATTNC_REQUIRE_NVRTC();
    state = fakeCudaState();
    state->device = 0;
    state->has_context = true;
    state->tensor_map_result = 0;
    state->tensor_map_param = 0;
    attnc_context_options_t options;
    attnc_context_options_initialize(&options);
    options.cache_dir = dir.path().c_str();
    options.cuda_driver_library = ATTNC_FAKE_CUDA_PATH;
    ASSERT_EQ(attnc_context_create(&options, &context), ATTNC_STATUS_OK) << lastError();
    std::string abi = abiJson(kMapFields);
    ASSERT_EQ(attnc_kernel_set_compile(context, kSource, abi.c_str(), nullptr, &set),
              ATTNC_STATUS_OK)
        << lastError();
    ASSERT_EQ(attnc_kernel_set_find_kernel(set, "attnc_test_tma", &kernel), ATTNC_STATUS_OK);
  }
  void TearDown() override {
    if (state) {
      state->tensor_map_param = -1;
      state->tensor_map_result = 0;
    }
    attnc_kernel_set_destroy(set);
    attnc_context_destroy(context);
  }

  /// What the driver was asked for and what the kernel received.
  void expectEncoded(uintptr_t cache, int64_t blocks, int64_t block_stride,
                     int64_t token_stride) {
    const FakeCudaState::TensorMapRequest &r = state->last_tensor_map;
    EXPECT_EQ(r.data_type, int(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16));
    EXPECT_EQ(r.rank, 3u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.address), cache);
    EXPECT_EQ(r.dims[0], 576u); // innermost first
    EXPECT_EQ(r.dims[1], 64u);
    EXPECT_EQ(r.dims[2], uint64_t(blocks));
    EXPECT_EQ(r.strides[0], uint64_t(token_stride * 2)); // bytes
    EXPECT_EQ(r.strides[1], uint64_t(block_stride * 2));
    EXPECT_EQ(r.box[0], 64u);
    EXPECT_EQ(r.box[1], 64u);
    EXPECT_EQ(r.box[2], 1u);
    EXPECT_EQ(r.swizzle, int(CU_TENSOR_MAP_SWIZZLE_128B));
    EXPECT_TRUE(state->launched_tensor_map_aligned);
    uintptr_t launched = 0;
    std::memcpy(&launched, state->launched_tensor_map, sizeof(launched));
    EXPECT_EQ(launched, cache) << "the kernel's tensor_map argument is not the encoded map";
  }

  TempDir dir;
  FakeCudaState *state = nullptr;
  attnc_context_t context = nullptr;
  attnc_kernel_set_t set = nullptr;
  attnc_kernel_t kernel = nullptr;
};

/// Direct arguments: the map's slot holds garbage the launch must ignore.
struct Args {
  int64_t garbage = 0x1234;
  void *cache = reinterpret_cast<void *>(0x100000), *out = reinterpret_cast<void *>(0x200000);
  int64_t block_stride = 2 * 64 * 576, token_stride = 576;
  int32_t n = 256;
  void *args[6] = {&garbage, &cache, &out, &block_stride, &token_stride, &n};
};

TEST_F(TensorMapLaunch, EveryLaunchPathEncodesTheMap) {
  Args a;
  int64_t blocks = 40;
  // Launch plan.
  attnc_launch_plan_t plan = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(kernel, &plan), ATTNC_STATUS_OK) << lastError();
  int encoded = state->tensor_maps_encoded, launches = state->launches;
  ASSERT_EQ(attnc_launch_plan_run(plan, nullptr, a.args, &blocks), ATTNC_STATUS_OK)
      << lastError();
  EXPECT_EQ(state->launches, launches + 1);
  EXPECT_EQ(state->tensor_maps_encoded, encoded + 1);
  expectEncoded(0x100000, 40, a.block_stride, a.token_stride);
  // A new pointer and view on the same plan: encoded again, from them.
  a.cache = reinterpret_cast<void *>(0x300000);
  a.token_stride = 1152;
  blocks = 7;
  ASSERT_EQ(attnc_launch_plan_run(plan, nullptr, a.args, &blocks), ATTNC_STATUS_OK)
      << lastError();
  expectEncoded(0x300000, 7, a.block_stride, 1152);
  attnc_launch_plan_destroy(plan);

  // Unchecked launch, NULL at the map's position.
  a.args[0] = nullptr;
  blocks = 9;
  ASSERT_EQ(attnc_kernel_launch(kernel, nullptr, a.args, 6, &blocks, 1), ATTNC_STATUS_OK)
      << lastError();
  expectEncoded(0x300000, 9, a.block_stride, 1152);

  // Checked launch: the tensors give the pointer, dims and strides.
  attnc_tensor_t tensors[2];
  std::memset(tensors, 0, sizeof(tensors));
  tensors[0].data = reinterpret_cast<void *>(0x400000);
  tensors[0].dtype = ATTNC_DTYPE_BF16;
  tensors[0].ndim = 3;
  int64_t shape[3] = {12, 64, 576}, strides[3] = {2 * 64 * 576, 576, 1};
  for (int d = 0; d < 3; ++d) {
    tensors[0].shape[d] = shape[d];
    tensors[0].strides[d] = strides[d];
  }
  tensors[0].readonly = 1;
  tensors[1].data = reinterpret_cast<void *>(0x500000);
  tensors[1].dtype = ATTNC_DTYPE_F32;
  tensors[1].ndim = 1;
  tensors[1].shape[0] = 256;
  tensors[1].strides[0] = 1;
  ASSERT_EQ(attnc_kernel_launch_checked(kernel, nullptr, tensors, 2, nullptr, 0),
            ATTNC_STATUS_OK)
      << lastError();
  expectEncoded(0x400000, 12, 2 * 64 * 576, 576);
}

TEST_F(TensorMapLaunch, WhatCannotBeEncodedIsRefusedByName) {
  Args a;
  int64_t blocks = 40;
  attnc_launch_plan_t plan = nullptr;
  ASSERT_EQ(attnc_launch_plan_create(kernel, &plan), ATTNC_STATUS_OK) << lastError();
  int launches = state->launches;

  a.token_stride = 577; // 1154 bytes: not a multiple of 16
  EXPECT_EQ(attnc_launch_plan_run(plan, nullptr, a.args, &blocks),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError().rfind("cache_map: cannot map 'cache'", 0), 0u) << lastError();
  EXPECT_NE(lastError().find("multiple of 16 bytes"), std::string::npos) << lastError();
  a.token_stride = 576;

  state->tensor_map_result = CUDA_ERROR_INVALID_VALUE; // e.g. a misaligned address
  EXPECT_EQ(attnc_launch_plan_run(plan, nullptr, a.args, &blocks),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError().rfind("cache_map: cannot map 'cache'", 0), 0u) << lastError();
  EXPECT_NE(lastError().find("cuTensorMapEncodeTiled failed"), std::string::npos) << lastError();
  EXPECT_EQ(attnc_kernel_launch(kernel, nullptr, a.args, 6, &blocks, 1),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError().rfind("cache_map: cannot map 'cache'", 0), 0u) << lastError();
  state->tensor_map_result = 0;

  EXPECT_EQ(state->launches, launches) << "launched with a map that did not encode";
  attnc_launch_plan_destroy(plan);
}

} // namespace
