//===- DriverTest.cpp - Driver loading and the launch path ----------------===//
//
// Three drivers: the real libcuda.so.1 (absent on CI: every entry point must
// say so), libraries that are not a usable driver, and the fake libcuda built
// beside this test, which records what the runtime asks of it.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/Driver.h"

#include "attnc/Runtime/Context.h"

#include "FakeCuda.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

using namespace attnc;
using namespace attnc::runtime;
using namespace attnc::runtime::test;

namespace {

std::shared_ptr<Context> contextWithDriver(const std::string &driver,
                                           const std::string &cache_dir) {
  ContextOptions options;
  options.cache_dir = cache_dir;
  options.cuda_driver_library = driver;
  auto context = Context::create(options);
  EXPECT_TRUE(context) << context.status().message();
  return context ? *context : nullptr;
}

std::shared_ptr<const KernelSet> compileTestSet(Context &context) {
  SourceOptions options;
  options.headers[kTestHelperName] = kTestHelperSource;
  auto set = context.compile(kTestSource, kTestAbiJson, options);
  EXPECT_TRUE(set) << set.status().message();
  return set ? *set : nullptr;
}

} // namespace

TEST(CudaDriver, AbsentDriverIsAClearErrorNotACrash) {
  void *probe = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (probe)
    GTEST_SKIP() << "skipped: a CUDA driver is installed here; the absent-"
                    "driver path is covered by MissingLibraryPath";
  auto driver = CudaDriver::get();
  ASSERT_FALSE(driver);
  EXPECT_EQ(driver.status().code(), StatusCode::NoDriver);
  EXPECT_EQ(driver.status().message().rfind(
                "CUDA driver not available: dlopen libcuda.so.1 failed: ", 0),
            0u)
      << driver.status().message();
  // Asking again gives the same answer (the failure is remembered).
  auto again = CudaDriver::get();
  ASSERT_FALSE(again);
  EXPECT_EQ(again.status().message(), driver.status().message());
}

TEST(CudaDriver, MissingLibraryPath) {
  auto driver = CudaDriver::get("/nonexistent/libcuda.so.1");
  ASSERT_FALSE(driver);
  EXPECT_EQ(driver.status().code(), StatusCode::NoDriver);
  EXPECT_EQ(driver.status().message().rfind(
                "CUDA driver not available: dlopen /nonexistent/libcuda.so.1 "
                "failed: ",
                0),
            0u)
      << driver.status().message();
}

TEST(CudaDriver, LibraryWithoutDriverSymbolsIsRejected) {
  auto driver = CudaDriver::get("libm.so.6");
  ASSERT_FALSE(driver);
  EXPECT_EQ(driver.status().code(), StatusCode::NoDriver);
  EXPECT_NE(driver.status().message().find("libm.so.6 has no symbol cuInit"),
            std::string::npos)
      << driver.status().message();
}

TEST(CudaDriver, FailedCallNamesTheCallTheErrorAndTheLine) {
  auto driver = CudaDriver::get(ATTNC_FAKE_CUDA_NODEVICE_PATH);
  ASSERT_FALSE(driver);
  EXPECT_EQ(driver.status().code(), StatusCode::CudaError);
  const std::string message = driver.status().message();
  EXPECT_EQ(message.rfind("Driver.cpp:", 0), 0u) << message;
  EXPECT_NE(message.find(": cuInit failed: CUDA_ERROR_NO_DEVICE (no "
                         "CUDA-capable device is detected)"),
            std::string::npos)
      << message;
}

TEST(CudaDriver, FakeDriverResolvesVersionedNames) {
  // The fake exports only cuDevicePrimaryCtxRelease_v2 (as cuda.h names it),
  // so loading succeeds only if the table resolves the versioned name.
  auto driver = CudaDriver::get(ATTNC_FAKE_CUDA_PATH);
  ASSERT_TRUE(driver) << driver.status().message();
  EXPECT_EQ((*driver)->version(), 13000);
  auto capability = (*driver)->computeCapability(0);
  ASSERT_TRUE(capability);
  EXPECT_EQ(*capability, (std::array<int, 2>{9, 0}));
  auto bad_image = (*driver)->loadModule("not a cubin");
  ASSERT_FALSE(bad_image);
  EXPECT_EQ(bad_image.status().code(), StatusCode::CudaError);
  EXPECT_NE(bad_image.status().message().find(
                "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE"),
            std::string::npos)
      << bad_image.status().message();
}

TEST(Launch, WithoutDriverArgumentsAreStillCheckedThenNoDriver) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  auto context = contextWithDriver("/nonexistent/libcuda.so.1", dir.path());
  auto set = compileTestSet(*context);
  ASSERT_TRUE(set);
  float *data = nullptr;
  int32_t count = 1000;
  float factor = 2.0f;
  void *args[] = {&data, &count, &factor};

  Status too_few =
      context->launch(*set, "attnc_test_scale", nullptr, args, 2, nullptr, 0);
  EXPECT_EQ(too_few.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(too_few.field, "args");

  Status unknown = context->launch(*set, "nope", nullptr, args, 3, nullptr, 0);
  EXPECT_EQ(unknown.code(), StatusCode::NotFound);

  Status no_driver =
      context->launch(*set, "attnc_test_scale", nullptr, args, 3, nullptr, 0);
  EXPECT_EQ(no_driver.code(), StatusCode::NoDriver);
  EXPECT_NE(no_driver.message().find("CUDA driver not available: dlopen "
                                     "/nonexistent/libcuda.so.1 failed"),
            std::string::npos)
      << no_driver.message();

  // Nothing to do needs no driver.
  count = 0;
  EXPECT_TRUE(
      context->launch(*set, "attnc_test_scale", nullptr, args, 3, nullptr, 0));
}

TEST(Launch, FakeDriverSeesTheAbiGeometryAndTheArguments) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  auto context = contextWithDriver(ATTNC_FAKE_CUDA_PATH, dir.path());
  auto set = compileTestSet(*context);
  ASSERT_TRUE(set);
  ASSERT_TRUE(CudaDriver::get(ATTNC_FAKE_CUDA_PATH));
  FakeCudaState *fake = fakeCudaState();
  ASSERT_NE(fake, nullptr);
  FakeCudaState before = *fake;

  float *data = reinterpret_cast<float *>(0x1000);
  int32_t count = 1000;
  float factor = 2.0f;
  void *args[] = {&data, &count, &factor};
  void *stream = reinterpret_cast<void *>(0x5);
  ASSERT_TRUE(
      context->launch(*set, "attnc_test_scale", stream, args, 3, nullptr, 0));
  EXPECT_EQ(fake->launches, before.launches + 1);
  EXPECT_EQ(fake->grid[0], 8u); // ceil(1000 / 128)
  EXPECT_EQ(fake->grid[1], 1u);
  EXPECT_EQ(fake->block[0], 128u);
  EXPECT_EQ(fake->shared_memory_bytes, 0u);
  EXPECT_EQ(fake->stream, stream);
  EXPECT_EQ(fake->params, static_cast<void **>(args)); // passed through
  EXPECT_EQ(fake->modules_loaded, before.modules_loaded + 1);

  // Second kernel: i64 count, a launch scalar for grid y, 64 KiB of dynamic
  // shared memory (needs the opt-in attribute). Same module: no new load.
  void *out = nullptr, *in = nullptr;
  int64_t elements = 1000;
  void *args2[] = {&out, &in, &elements};
  int64_t num_sequences = 3;
  ASSERT_TRUE(context->launch(*set, "attnc_test_round_bf16", nullptr, args2, 3,
                              &num_sequences, 1));
  EXPECT_EQ(fake->grid[0], 4u); // ceil(1000 / 256)
  EXPECT_EQ(fake->grid[1], 3u);
  EXPECT_EQ(fake->shared_memory_bytes, 65536u);
  EXPECT_EQ(fake->max_dynamic_shared_memory_set, 65536);
  EXPECT_EQ(fake->modules_loaded, before.modules_loaded + 1);
  EXPECT_EQ(context->cache().stats().modules_loaded, 1u);

  // No current context: a clear error, nothing launched.
  fake->has_context = false;
  Status no_context =
      context->launch(*set, "attnc_test_scale", nullptr, args, 3, nullptr, 0);
  fake->has_context = true;
  EXPECT_EQ(no_context.code(), StatusCode::InvalidArgument);
  EXPECT_NE(no_context.message().find("no current CUDA context"),
            std::string::npos);

  // A device the set has no binary for.
  fake->major = 8;
  Status wrong_device =
      context->launch(*set, "attnc_test_scale", nullptr, args, 3, nullptr, 0);
  fake->major = 9;
  EXPECT_EQ(wrong_device.code(), StatusCode::NotFound);
  EXPECT_NE(wrong_device.message().find("compute capability 8.0"),
            std::string::npos)
      << wrong_device.message();
  EXPECT_EQ(fake->launches, before.launches + 2);

  // Destroying the context unloads its module, also while a stream
  // captures a graph (a garbage-collected model during an engine's
  // capture): in the relaxed capture mode, the thread's mode restored.
  int unloaded = fake->modules_unloaded;
  fake->capturing = true;
  set.reset();
  context.reset();
  fake->capturing = false;
  EXPECT_EQ(fake->modules_unloaded, unloaded + 1);
  EXPECT_EQ(fake->unloads_refused, 0);
  EXPECT_EQ(fake->thread_capture_mode, 0);
}
