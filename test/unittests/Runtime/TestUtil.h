//===- TestUtil.h - Shared helpers for the runtime tests --------*- C++ -*-===//
#ifndef ATTNC_TEST_RUNTIME_TESTUTIL_H
#define ATTNC_TEST_RUNTIME_TESTUTIL_H

#include "attnc/Runtime/NvrtcCompiler.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace attnc::runtime::test {

namespace {
// The tests assert cache outcomes, so a developer's ATTNC_DISABLE_CACHE=1
// must not leak into them; the tests that need it set it themselves.
[[maybe_unused]] const bool kDisableCacheCleared =
    (::unsetenv("ATTNC_DISABLE_CACHE"), true);
} // namespace

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/attnc-test-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()))
      path_ = buffer.data();
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }
  std::string operator/(const std::string &child) const {
    return path_ + "/" + child;
  }

private:
  std::string path_;
};

inline std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

/// Files directly in `dir` (names only).
inline std::vector<std::string> listFiles(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator(dir, error))
    names.push_back(entry.path().filename().string());
  return names;
}

/// Sets an environment variable for one scope, restoring the old value.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) {
      had_old_ = true;
      old_ = old;
    }
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_old_)
      ::setenv(name_.c_str(), old_.c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }

private:
  std::string name_;
  bool had_old_ = false;
  std::string old_;
};

/// A small source: a helper header from memory, fp16/bf16 headers from the
/// toolkit include paths, two extern "C" kernels and a device function.
inline const char *kTestSource = R"cuda(#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "attnc/test_helpers.cuh"

__device__ float device_only(float v) { return v * 0.5f; }

extern "C" __global__ void attnc_test_scale(float *data, int count,
                                            float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    data[i] = attnc_test::twice(data[i]) * factor;
}

extern "C" __global__ void attnc_test_round_bf16(__nv_bfloat16 *out,
                                                 const __half *in,
                                                 long long count) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < count)
    out[i] = __float2bfloat16(device_only(__half2float(in[i])));
}
)cuda";

inline const char *kTestHelperName = "attnc/test_helpers.cuh";
inline const char *kTestHelperSource = R"cuda(#pragma once
namespace attnc_test {
__device__ __forceinline__ float twice(float v) { return 2.0f * v; }
} // namespace attnc_test
)cuda";

/// The ABI of kTestSource.
inline const char *kTestAbiJson = R"json({
  "kernels": [
    {
      "name": "attnc_test_scale",
      "params": [
        {"name": "data", "kind": "pointer", "dtype": "f32", "shape": ["count"]},
        {"name": "count", "kind": "i32"},
        {"name": "factor", "kind": "f32"}
      ],
      "block": [128, 1, 1],
      "grid": [{"value": "count", "divisor": 128}, 1, 1],
      "dynamic_shared_memory_bytes": 0
    },
    {
      "name": "attnc_test_round_bf16",
      "params": [
        {"name": "out", "kind": "pointer", "dtype": "bf16"},
        {"name": "in", "kind": "pointer", "dtype": "f16"},
        {"name": "count", "kind": "i64"}
      ],
      "launch_scalars": ["num_sequences"],
      "block": [256, 1, 1],
      "grid": [{"value": "count", "divisor": 256},
               {"value": "num_sequences"}, 1],
      "dynamic_shared_memory_bytes": 65536
    }
  ]
})json";

inline CompileRequest testRequest() {
  CompileRequest request;
  request.source = kTestSource;
  request.source_name = "attnc_test.cu";
  request.headers[kTestHelperName] = kTestHelperSource;
  return request;
}

/// NVRTC as the tests use it (failed sources under `failed_dir`), or null
/// with the reason when it cannot be loaded.
inline Result<std::shared_ptr<const NvrtcCompiler>>
testCompiler(const std::string &failed_dir = "") {
  NvrtcCompiler::Options options;
  options.failed_source_dir = failed_dir;
  return NvrtcCompiler::create(options);
}

} // namespace attnc::runtime::test

/// NVRTC tests skip, and say so, where NVRTC cannot be loaded; they never
/// pass silently.
#define ATTNC_REQUIRE_NVRTC()                                                  \
  do {                                                                         \
    auto nvrtc_probe = ::attnc::runtime::NvrtcLibrary::load();                 \
    if (!nvrtc_probe.ok())                                                     \
      GTEST_SKIP() << "skipped: NVRTC not available ("                         \
                   << nvrtc_probe.status().message() << ")";                   \
  } while (0)

#endif // ATTNC_TEST_RUNTIME_TESTUTIL_H
