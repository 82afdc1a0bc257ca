//===- CApiTest.cpp - The C API, as an engine would use it ----------------===//

#include "attnc-c/Runtime.h"

#include "attnc/Runtime/KernelAbi.h"

#include "FakeCuda.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <dlfcn.h>
#include <thread>

using namespace attnc;
using namespace attnc::runtime;
using namespace attnc::runtime::test;

namespace {

/// A context whose cache lives in `cache_dir`; other options as given.
attnc_context_t makeContext(const std::string &cache_dir,
                            attnc_context_options_t options = {}) {
  options.cache_dir = cache_dir.c_str();
  attnc_context_t context = nullptr;
  attnc_status_t status = attnc_context_create(&options, &context);
  EXPECT_EQ(status, ATTNC_STATUS_OK) << attnc_last_error();
  return context;
}

attnc_compile_options_t testCompileOptions() {
  static const char *names[] = {kTestHelperName};
  static const char *sources[] = {kTestHelperSource};
  attnc_compile_options_t options;
  attnc_compile_options_initialize(&options);
  options.source_name = "attnc_test.cu";
  options.header_names = names;
  options.header_sources = sources;
  options.num_headers = 1;
  return options;
}

attnc_kernel_set_t compileTestSet(attnc_context_t context) {
  attnc_compile_options_t options = testCompileOptions();
  attnc_kernel_set_t set = nullptr;
  attnc_status_t status = attnc_kernel_set_compile(
      context, kTestSource, kTestAbiJson, &options, &set);
  EXPECT_EQ(status, ATTNC_STATUS_OK) << attnc_last_error();
  return set;
}

std::string lastError() { return attnc_last_error(); }

} // namespace

TEST(CApi, StatusNamesAndVersion) {
  EXPECT_STREQ(attnc_status_name(ATTNC_STATUS_OK), "ok");
  EXPECT_STREQ(attnc_status_name(ATTNC_STATUS_COMPILE_ERROR), "compile_error");
  EXPECT_STREQ(attnc_status_name(ATTNC_STATUS_NO_DRIVER), "no_driver");
  EXPECT_STREQ(attnc_status_name(ATTNC_STATUS_INTERNAL), "internal");
  EXPECT_STREQ(attnc_status_name(attnc_status_t(99)), "unknown");
  EXPECT_GT(std::strlen(attnc_version()), 0u);
}

TEST(CApi, OptionsInitialisersClearEveryField) {
  attnc_context_options_t context_options;
  std::memset(&context_options, 0xff, sizeof(context_options));
  attnc_context_options_initialize(&context_options);
  EXPECT_EQ(context_options.cache_dir, nullptr);
  EXPECT_EQ(context_options.num_archs, 0u);
  EXPECT_EQ(context_options.disable_cache, 0);
  EXPECT_EQ(context_options.warning_callback, nullptr);
  attnc_compile_options_t compile_options;
  std::memset(&compile_options, 0xff, sizeof(compile_options));
  attnc_compile_options_initialize(&compile_options);
  EXPECT_EQ(compile_options.num_headers, 0u);
  EXPECT_EQ(compile_options.archs, nullptr);
}

TEST(CApi, NullArgumentsAreInvalid) {
  EXPECT_EQ(attnc_context_create(nullptr, nullptr),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("out_context"), std::string::npos);
  attnc_kernel_set_t set = nullptr;
  EXPECT_EQ(attnc_kernel_set_compile(nullptr, "", "", nullptr, &set),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(attnc_kernel_launch(nullptr, nullptr, nullptr, 0, nullptr, 0),
            ATTNC_STATUS_INVALID_ARGUMENT);
  attnc_context_destroy(nullptr);    // ignored
  attnc_kernel_set_destroy(nullptr); // ignored
}

TEST(CApi, BadArchInOptionsNamesTheField) {
  const char *archs[] = {"sm_90a", "compute_90"};
  attnc_context_options_t options;
  attnc_context_options_initialize(&options);
  options.archs = archs;
  options.num_archs = 2;
  attnc_context_t context = nullptr;
  EXPECT_EQ(attnc_context_create(&options, &context),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(context, nullptr);
  EXPECT_EQ(lastError().rfind("archs[1]: ", 0), 0u) << lastError();
}

TEST(CApi, CompileQueryAndCacheOutcomes) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  attnc_context_t context = makeContext(dir.path());
  ASSERT_NE(context, nullptr);
  attnc_kernel_set_t set = compileTestSet(context);
  ASSERT_NE(set, nullptr);

  ASSERT_EQ(attnc_kernel_set_kernel_count(set), 2u);
  attnc_kernel_t scale = nullptr, round = nullptr;
  ASSERT_EQ(attnc_kernel_set_kernel_at(set, 0, &scale), ATTNC_STATUS_OK);
  ASSERT_EQ(attnc_kernel_set_kernel_at(set, 1, &round), ATTNC_STATUS_OK);
  EXPECT_STREQ(attnc_kernel_name(scale), "attnc_test_scale");
  EXPECT_STREQ(attnc_kernel_name(round), "attnc_test_round_bf16");
  EXPECT_EQ(attnc_kernel_param_count(scale), 3u);
  EXPECT_EQ(attnc_kernel_launch_scalar_count(round), 1u);
  attnc_kernel_t found = nullptr;
  ASSERT_EQ(attnc_kernel_set_find_kernel(set, "attnc_test_round_bf16", &found),
            ATTNC_STATUS_OK);
  EXPECT_EQ(found, round);
  EXPECT_EQ(attnc_kernel_set_find_kernel(set, "missing", &found),
            ATTNC_STATUS_NOT_FOUND);
  EXPECT_EQ(found, nullptr);
  EXPECT_NE(lastError().find("no kernel 'missing'"), std::string::npos);
  EXPECT_EQ(attnc_kernel_set_kernel_at(set, 2, &found), ATTNC_STATUS_NOT_FOUND);

  // The ABI JSON of a kernel reads back as the ABI it was compiled with.
  auto abi = kernelAbiFromJson(attnc_kernel_abi_json(round));
  ASSERT_TRUE(abi) << abi.status().message();
  auto expected = kernelAbiListFromJson(kTestAbiJson);
  ASSERT_TRUE(expected);
  EXPECT_EQ(*abi, (*expected)[1]);

  // Binaries.
  ASSERT_EQ(attnc_kernel_set_arch_count(set), 1u);
  EXPECT_STREQ(attnc_kernel_set_arch(set, 0), "sm_90a");
  EXPECT_EQ(attnc_kernel_set_arch(set, 1), nullptr);
  const void *cubin = nullptr;
  size_t cubin_size = 0;
  ASSERT_EQ(attnc_kernel_set_cubin(set, "sm_90a", &cubin, &cubin_size),
            ATTNC_STATUS_OK);
  ASSERT_GT(cubin_size, 4u);
  EXPECT_EQ(std::memcmp(cubin,
                        "\x7f"
                        "ELF",
                        4),
            0);
  const char *ptx = nullptr;
  ASSERT_EQ(attnc_kernel_set_ptx(set, "sm_90a", &ptx), ATTNC_STATUS_OK);
  EXPECT_NE(std::strstr(ptx, ".entry attnc_test_scale("), nullptr);
  EXPECT_EQ(attnc_kernel_set_cubin(set, "sm_80", &cubin, &cubin_size),
            ATTNC_STATUS_NOT_FOUND);
  EXPECT_NE(lastError().find("it has sm_90a"), std::string::npos);

  attnc_build_report_t report;
  ASSERT_EQ(attnc_kernel_set_build_report(set, 0, &report), ATTNC_STATUS_OK);
  EXPECT_EQ(report.outcome, ATTNC_BUILD_COMPILED);
  EXPECT_GT(report.compile_ms, 0.0);
  EXPECT_EQ(std::strlen(report.cache_key), 64u);
  EXPECT_TRUE(std::filesystem::exists(report.cache_entry_path));

  // Same context again: memory. A fresh context on the same cache: disk.
  attnc_kernel_set_t again = compileTestSet(context);
  ASSERT_EQ(attnc_kernel_set_build_report(again, 0, &report), ATTNC_STATUS_OK);
  EXPECT_EQ(report.outcome, ATTNC_BUILD_MEMORY_HIT);
  attnc_context_t fresh = makeContext(dir.path());
  attnc_kernel_set_t from_disk = compileTestSet(fresh);
  ASSERT_EQ(attnc_kernel_set_build_report(from_disk, 0, &report),
            ATTNC_STATUS_OK);
  EXPECT_EQ(report.outcome, ATTNC_BUILD_DISK_HIT);
  EXPECT_EQ(report.compile_ms, 0.0);

  attnc_kernel_set_destroy(from_disk);
  attnc_context_destroy(fresh);
  attnc_kernel_set_destroy(again);
  // Sets outlive their context.
  attnc_context_destroy(context);
  EXPECT_STREQ(attnc_kernel_name(scale), "attnc_test_scale");
  attnc_kernel_set_destroy(set);
}

TEST(CApi, DisableCacheOptionCompilesEveryTime) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  attnc_context_options_t options;
  attnc_context_options_initialize(&options);
  options.disable_cache = 1;
  attnc_context_t context = makeContext(dir.path(), options);
  for (int i = 0; i < 2; ++i) {
    attnc_kernel_set_t set = compileTestSet(context);
    ASSERT_NE(set, nullptr);
    attnc_build_report_t report;
    ASSERT_EQ(attnc_kernel_set_build_report(set, 0, &report), ATTNC_STATUS_OK);
    EXPECT_EQ(report.outcome, ATTNC_BUILD_COMPILED) << i;
    attnc_kernel_set_destroy(set);
  }
  attnc_context_destroy(context);
}

TEST(CApi, CompileErrorMessageHasLogOptionsAndSavedSource) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  attnc_context_t context = makeContext(dir.path());
  attnc_compile_options_t options;
  attnc_compile_options_initialize(&options);
  options.source_name = "engine_kernel.cu";
  attnc_kernel_set_t set = nullptr;
  const char *source = "extern \"C\" __global__ void attnc_test_scale() {\n"
                       "  return 1;\n"
                       "}\n";
  EXPECT_EQ(
      attnc_kernel_set_compile(context, source, kTestAbiJson, &options, &set),
      ATTNC_STATUS_COMPILE_ERROR);
  EXPECT_EQ(set, nullptr);
  std::string message = lastError();
  EXPECT_NE(message.find("engine_kernel.cu(2)"), std::string::npos) << message;
  EXPECT_NE(message.find("options: --gpu-architecture=sm_90a -std=c++17"),
            std::string::npos)
      << message;
  std::string marker = "source saved to: ";
  size_t at = message.find(marker);
  ASSERT_NE(at, std::string::npos) << message;
  std::string path = message.substr(at + marker.size(), message.find('\n', at) -
                                                            at - marker.size());
  EXPECT_EQ(path.rfind(dir.path() + "/failed/", 0), 0u) << path;
  EXPECT_EQ(readText(path), source);
  attnc_context_destroy(context);
}

TEST(CApi, BadAbiJsonNamesTheField) {
  TempDir dir;
  attnc_context_t context = makeContext(dir.path());
  attnc_kernel_set_t set = nullptr;
  EXPECT_EQ(attnc_kernel_set_compile(
                context, kTestSource,
                R"({"kernels": [{"name": "k", "params": [{"name": "x",
                    "kind": "pointer", "dtype": "bf32"}], "block": [1,1,1],
                    "grid": [1,1,1], "dynamic_shared_memory_bytes": 0}]})",
                nullptr, &set),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(lastError().rfind("kernels[0].params[0].dtype: unknown element "
                              "type 'bf32'",
                              0),
            0u)
      << lastError();
  attnc_context_destroy(context);
}

TEST(CApi, LastErrorIsPerThread) {
  attnc_context_t context = nullptr;
  ASSERT_EQ(attnc_context_create(nullptr, nullptr),
            ATTNC_STATUS_INVALID_ARGUMENT);
  std::string mine = lastError();
  std::thread other([] {
    EXPECT_STREQ(attnc_last_error(), ""); // nothing failed on this thread
    attnc_kernel_set_t set = nullptr;
    attnc_kernel_set_load_bundle(nullptr, "/x", &set);
    EXPECT_NE(std::string(attnc_last_error()).find("context"),
              std::string::npos);
  });
  other.join();
  EXPECT_EQ(lastError(), mine);
  (void)context;
}

TEST(CApi, BundleRoundTripLoadsWithoutNvrtc) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  attnc_context_t context = makeContext(dir / "cache");
  attnc_kernel_set_t set = compileTestSet(context);
  ASSERT_NE(set, nullptr);
  std::string bundle = dir / "bundle";
  ASSERT_EQ(attnc_kernel_set_write_bundle(set, bundle.c_str()), ATTNC_STATUS_OK)
      << lastError();

  // A deployment without NVRTC.
  attnc_context_options_t options;
  attnc_context_options_initialize(&options);
  options.nvrtc_library_path = "/nonexistent/libnvrtc.so.13";
  attnc_context_t deployed = makeContext(dir / "cache2", options);
  attnc_kernel_set_t loaded = nullptr;
  ASSERT_EQ(attnc_kernel_set_load_bundle(deployed, bundle.c_str(), &loaded),
            ATTNC_STATUS_OK)
      << lastError();
  ASSERT_EQ(attnc_kernel_set_kernel_count(loaded), 2u);
  for (size_t i = 0; i < 2; ++i) {
    attnc_kernel_t a = nullptr, b = nullptr;
    attnc_kernel_set_kernel_at(set, i, &a);
    attnc_kernel_set_kernel_at(loaded, i, &b);
    EXPECT_STREQ(attnc_kernel_name(a), attnc_kernel_name(b));
    EXPECT_STREQ(attnc_kernel_abi_json(a), attnc_kernel_abi_json(b));
  }
  const void *original = nullptr, *copy = nullptr;
  size_t original_size = 0, copy_size = 0;
  attnc_kernel_set_cubin(set, "sm_90a", &original, &original_size);
  ASSERT_EQ(attnc_kernel_set_cubin(loaded, "sm_90a", &copy, &copy_size),
            ATTNC_STATUS_OK);
  ASSERT_EQ(copy_size, original_size);
  EXPECT_EQ(std::memcmp(copy, original, copy_size), 0);
  attnc_build_report_t report;
  ASSERT_EQ(attnc_kernel_set_build_report(loaded, 0, &report), ATTNC_STATUS_OK);
  EXPECT_EQ(report.outcome, ATTNC_BUILD_BUNDLE);

  // That context cannot compile, and says why.
  int major = -1, minor = -1;
  EXPECT_EQ(attnc_context_nvrtc_version(deployed, &major, &minor),
            ATTNC_STATUS_NO_DRIVER);
  EXPECT_EQ(major, 0);
  ASSERT_EQ(attnc_context_nvrtc_version(context, &major, &minor),
            ATTNC_STATUS_OK);
  EXPECT_GE(major, 12);
  attnc_kernel_set_t compiled = nullptr;
  EXPECT_EQ(attnc_kernel_set_compile(deployed, kTestSource, kTestAbiJson,
                                     nullptr, &compiled),
            ATTNC_STATUS_NO_DRIVER);
  EXPECT_NE(lastError().find("NVRTC not available"), std::string::npos);

  // A missing bundle.
  EXPECT_EQ(
      attnc_kernel_set_load_bundle(deployed, (dir / "none").c_str(), &compiled),
      ATTNC_STATUS_NOT_FOUND);

  attnc_kernel_set_destroy(loaded);
  attnc_context_destroy(deployed);
  attnc_kernel_set_destroy(set);
  attnc_context_destroy(context);
}

namespace {
struct CallbackLog {
  std::vector<std::string> messages;
};
void recordWarning(void *user_data, const char *message) {
  static_cast<CallbackLog *>(user_data)->messages.push_back(message);
}
} // namespace

TEST(CApi, CorruptCacheEntryReachesTheWarningCallback) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  attnc_context_t context = makeContext(dir.path());
  attnc_kernel_set_t set = compileTestSet(context);
  attnc_build_report_t report;
  ASSERT_EQ(attnc_kernel_set_build_report(set, 0, &report), ATTNC_STATUS_OK);
  std::string entry = report.cache_entry_path;
  attnc_kernel_set_destroy(set);
  attnc_context_destroy(context);
  std::string bytes = readText(entry);
  bytes[bytes.size() - 10] ^= 0x01;
  writeText(entry, bytes);

  CallbackLog log;
  attnc_context_options_t options;
  attnc_context_options_initialize(&options);
  options.warning_callback = recordWarning;
  options.warning_user_data = &log;
  attnc_context_t again = makeContext(dir.path(), options);
  attnc_kernel_set_t recompiled = compileTestSet(again);
  ASSERT_NE(recompiled, nullptr);
  ASSERT_EQ(attnc_kernel_set_build_report(recompiled, 0, &report),
            ATTNC_STATUS_OK);
  EXPECT_EQ(report.outcome, ATTNC_BUILD_COMPILED);
  ASSERT_EQ(log.messages.size(), 1u);
  EXPECT_NE(log.messages[0].find("corrupt entry"), std::string::npos);
  attnc_kernel_set_destroy(recompiled);
  attnc_context_destroy(again);
}

TEST(CApi, LaunchChecksArgumentsThenNeedsADriver) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  attnc_context_t context = makeContext(dir.path());
  attnc_kernel_set_t set = compileTestSet(context);
  ASSERT_NE(set, nullptr);
  float *data = nullptr;
  int32_t count = 256;
  float factor = 1.0f;
  void *args[] = {&data, &count, &factor};

  EXPECT_EQ(attnc_kernel_set_launch(set, "attnc_test_scale", nullptr, args, 2,
                                    nullptr, 0),
            ATTNC_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("takes 3 parameters (data, count, factor) but 2"),
            std::string::npos)
      << lastError();
  EXPECT_EQ(attnc_kernel_set_launch(set, "nope", nullptr, args, 3, nullptr, 0),
            ATTNC_STATUS_NOT_FOUND);

  // The default driver: absent here, so NO_DRIVER with the dlopen reason.
  void *driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    attnc_kernel_t kernel = nullptr;
    ASSERT_EQ(attnc_kernel_set_find_kernel(set, "attnc_test_scale", &kernel),
              ATTNC_STATUS_OK);
    EXPECT_EQ(attnc_kernel_launch(kernel, nullptr, args, 3, nullptr, 0),
              ATTNC_STATUS_NO_DRIVER);
    EXPECT_EQ(lastError().rfind(
                  "CUDA driver not available: dlopen libcuda.so.1 failed: ", 0),
              0u)
        << lastError();
  }
  attnc_kernel_set_destroy(set);
  attnc_context_destroy(context);

  // A driver path that does not exist: NO_DRIVER on any machine.
  attnc_context_options_t options;
  attnc_context_options_initialize(&options);
  options.cuda_driver_library = "/nonexistent/libcuda.so.1";
  attnc_context_t no_driver = makeContext(dir.path(), options);
  set = compileTestSet(no_driver);
  EXPECT_EQ(attnc_kernel_set_launch(set, "attnc_test_scale", nullptr, args, 3,
                                    nullptr, 0),
            ATTNC_STATUS_NO_DRIVER);
  EXPECT_NE(lastError().find("/nonexistent/libcuda.so.1"), std::string::npos);
  attnc_kernel_set_destroy(set);
  attnc_context_destroy(no_driver);
}

TEST(CApi, LaunchThroughTheFakeDriver) {
  ATTNC_REQUIRE_NVRTC();
  TempDir dir;
  attnc_context_options_t options;
  attnc_context_options_initialize(&options);
  options.cuda_driver_library = ATTNC_FAKE_CUDA_PATH;
  attnc_context_t context = makeContext(dir.path(), options);
  attnc_kernel_set_t set = compileTestSet(context);
  ASSERT_NE(set, nullptr);
  void *out = nullptr, *in = nullptr;
  int64_t count = 513;
  void *args[] = {&out, &in, &count};
  int64_t num_sequences = 2;
  ASSERT_EQ(attnc_kernel_set_launch(set, "attnc_test_round_bf16",
                                    reinterpret_cast<void *>(0x7), args, 3,
                                    &num_sequences, 1),
            ATTNC_STATUS_OK)
      << lastError();
  void *handle = ::dlopen(ATTNC_FAKE_CUDA_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto state = reinterpret_cast<FakeCudaState *(*)()>(
      ::dlsym(handle, "attnc_fake_cuda_state"))();
  EXPECT_EQ(state->grid[0], 3u); // ceil(513 / 256)
  EXPECT_EQ(state->grid[1], 2u);
  EXPECT_EQ(state->block[0], 256u);
  EXPECT_EQ(state->stream, reinterpret_cast<void *>(0x7));
  // Missing launch scalar.
  EXPECT_EQ(attnc_kernel_set_launch(set, "attnc_test_round_bf16", nullptr, args,
                                    3, nullptr, 0),
            ATTNC_STATUS_INVALID_ARGUMENT);
  attnc_kernel_set_destroy(set);
  attnc_context_destroy(context);
}
