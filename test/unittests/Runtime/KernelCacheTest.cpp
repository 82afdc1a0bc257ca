//===- KernelCacheTest.cpp - Memory/disk cache, corruption, concurrency ---===//

#include "attnc/Runtime/KernelCache.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace attnc;
using namespace attnc::runtime;
using namespace attnc::runtime::test;

namespace {

/// Collects warnings so tests can check they were reported.
struct Warnings {
  std::mutex mutex;
  std::vector<std::string> messages;
  WarningHandler handler() {
    return [this](const std::string &message) {
      std::lock_guard<std::mutex> lock(mutex);
      messages.push_back(message);
    };
  }
};

KernelCacheOptions diskOptions(const std::string &dir, Warnings *warnings) {
  KernelCacheOptions options;
  options.directory = dir;
  if (warnings)
    options.warning = warnings->handler();
  return options;
}

std::shared_ptr<const NvrtcCompiler>
requireCompiler(const std::string &failed_dir = "") {
  auto compiler = testCompiler(failed_dir);
  EXPECT_TRUE(compiler) << compiler.status().message();
  return compiler ? *compiler : nullptr;
}

} // namespace

TEST(KernelCache, ColdCompileThenDiskHitInAFreshCache) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = requireCompiler();
  TempDir dir;
  std::string cubin;
  std::string path;
  {
    KernelCache cache(diskOptions(dir.path(), nullptr));
    ASSERT_TRUE(cache.diskEnabled());
    auto cold = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(cold) << cold.status().message();
    EXPECT_EQ(cold->report.outcome, BuildOutcome::Compiled);
    EXPECT_GT(cold->report.compile_ms, 0.0);
    EXPECT_GE(cold->report.total_ms, cold->report.compile_ms);
    EXPECT_EQ(cold->report.key.size(), 64u);
    cubin = cold->binary->cubin;
    path = cold->report.entry_path;
    EXPECT_EQ(cache.stats().compiles, 1u);
  }
  // The file name says the arch and the NVRTC version.
  EXPECT_EQ(path.rfind(dir.path() + "/kernels/", 0), 0u);
  EXPECT_NE(path.find("-sm_90a-nvrtc" + compiler->version().str() + ".bin"),
            std::string::npos)
      << path;
  EXPECT_TRUE(std::filesystem::exists(path));

  KernelCache fresh(diskOptions(dir.path(), nullptr));
  auto warm = fresh.getOrCompile(*compiler, testRequest(), "sm_90a");
  ASSERT_TRUE(warm) << warm.status().message();
  EXPECT_EQ(warm->report.outcome, BuildOutcome::DiskHit);
  EXPECT_EQ(warm->report.compile_ms, 0.0);
  EXPECT_EQ(warm->binary->cubin, cubin);
  EXPECT_NE(warm->binary->ptx.find(".entry attnc_test_scale("),
            std::string::npos);
  EXPECT_EQ(fresh.stats().compiles, 0u);
  EXPECT_EQ(fresh.stats().disk_hits, 1u);
}

// A cache directory removed while the cache is in use (a cleaned ~/.cache)
// is recreated on the next compile, silently, and the entry is stored.
TEST(KernelCache, RemovedDirectoryIsRecreated) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = requireCompiler();
  TempDir dir;
  Warnings warnings;
  std::string root = dir.path() + "/cache";
  {
    KernelCache cache(diskOptions(root, &warnings));
    ASSERT_TRUE(cache.diskEnabled());
    std::filesystem::remove_all(root);
    auto cold = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(cold) << cold.status().message();
    EXPECT_EQ(cold->report.outcome, BuildOutcome::Compiled);
    EXPECT_TRUE(std::filesystem::exists(cold->report.entry_path));
  }
  EXPECT_TRUE(warnings.messages.empty())
      << warnings.messages.front();
  KernelCache fresh(diskOptions(root, nullptr));
  auto warm = fresh.getOrCompile(*compiler, testRequest(), "sm_90a");
  ASSERT_TRUE(warm) << warm.status().message();
  EXPECT_EQ(warm->report.outcome, BuildOutcome::DiskHit);
}

TEST(KernelCache, MemoryHitInTheSameCache) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = requireCompiler();
  TempDir dir;
  KernelCache cache(diskOptions(dir.path(), nullptr));
  auto first = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
  ASSERT_TRUE(first);
  // Even with the disk entry gone, the second request never looks at disk.
  std::filesystem::remove(first->report.entry_path);
  auto second = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->report.outcome, BuildOutcome::MemoryHit);
  EXPECT_FALSE(second->report.waited_for_in_flight);
  EXPECT_EQ(second->binary.get(), first->binary.get()); // the same object
  EXPECT_EQ(cache.stats().memory_hits, 1u);
  EXPECT_EQ(cache.stats().compiles, 1u);

  cache.clearMemory();
  auto third = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
  ASSERT_TRUE(third);
  EXPECT_EQ(third->report.outcome, BuildOutcome::Compiled);
}

TEST(KernelCache, KeyCoversEverythingThatChangesTheBinary) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = requireCompiler();
  KernelCache cache(KernelCacheOptions{});
  CompileRequest base = testRequest();
  std::string key = cache.computeKey(*compiler, base, "sm_90a");
  EXPECT_EQ(key, KernelCache(KernelCacheOptions{})
                     .computeKey(*compiler, testRequest(), "sm_90a"));

  std::vector<std::pair<const char *, std::string>> variants;
  CompileRequest r = base;
  r.source += " ";
  variants.push_back({"source", cache.computeKey(*compiler, r, "sm_90a")});
  r = base;
  r.headers[kTestHelperName] += "\n";
  variants.push_back({"header text", cache.computeKey(*compiler, r, "sm_90a")});
  r = base;
  r.headers["attnc/extra.cuh"] = "";
  variants.push_back(
      {"extra header", cache.computeKey(*compiler, r, "sm_90a")});
  r = base;
  r.extra_options = {"-lineinfo"};
  variants.push_back({"option", cache.computeKey(*compiler, r, "sm_90a")});
  r = base;
  r.source_name = "other.cu";
  variants.push_back({"source name", cache.computeKey(*compiler, r, "sm_90a")});
  variants.push_back({"arch", cache.computeKey(*compiler, base, "sm_80")});
  for (const auto &[what, variant] : variants)
    EXPECT_NE(variant, key) << what << " does not change the key";
}

namespace {

/// Compiles once into `dir`, damages the entry with `damage`, and checks that
/// a fresh cache reports it, deletes it, recompiles and stores a good one.
void expectCorruptionRecovered(
    const std::function<void(const std::string &path)> &damage,
    const std::string &expected_reason) {
  auto compiler = requireCompiler();
  ASSERT_TRUE(compiler);
  TempDir dir;
  std::string path, cubin;
  {
    KernelCache cache(diskOptions(dir.path(), nullptr));
    auto cold = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(cold);
    path = cold->report.entry_path;
    cubin = cold->binary->cubin;
  }
  damage(path);

  Warnings warnings;
  KernelCache cache(diskOptions(dir.path(), &warnings));
  auto again = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_EQ(again->report.outcome, BuildOutcome::Compiled);
  EXPECT_EQ(again->binary->cubin, cubin);
  EXPECT_EQ(cache.stats().corrupt_entries, 1u);
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_NE(warnings.messages[0].find(path), std::string::npos)
      << warnings.messages[0];
  EXPECT_NE(warnings.messages[0].find(expected_reason), std::string::npos)
      << warnings.messages[0];
  EXPECT_NE(warnings.messages[0].find("recompiling"), std::string::npos);

  // The rewritten entry is good.
  Warnings none;
  KernelCache after(diskOptions(dir.path(), &none));
  auto hit = after.getOrCompile(*compiler, testRequest(), "sm_90a");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->report.outcome, BuildOutcome::DiskHit);
  EXPECT_TRUE(none.messages.empty());
}

void flipByte(const std::string &path, long offset_from_end) {
  std::string bytes = readText(path);
  ASSERT_GT(long(bytes.size()), offset_from_end);
  bytes[bytes.size() - size_t(offset_from_end)] ^= 0x5a;
  writeText(path, bytes);
}

} // namespace

TEST(KernelCache, TruncatedEntryIsReportedDeletedAndRecompiled) {
  ATTNC_REQUIRE_NVRTC();
  expectCorruptionRecovered(
      [](const std::string &path) {
        std::filesystem::resize_file(path,
                                     std::filesystem::file_size(path) / 2);
      },
      "truncated");
}

TEST(KernelCache, EntryTruncatedInsideTheHeaderIsDetected) {
  ATTNC_REQUIRE_NVRTC();
  expectCorruptionRecovered(
      [](const std::string &path) { std::filesystem::resize_file(path, 20); },
      "shorter than the");
}

TEST(KernelCache, FlippedPayloadByteIsReportedDeletedAndRecompiled) {
  ATTNC_REQUIRE_NVRTC();
  expectCorruptionRecovered(
      [](const std::string &path) { flipByte(path, 100); },
      "checksum mismatch");
}

TEST(KernelCache, FlippedMagicByteIsDetected) {
  ATTNC_REQUIRE_NVRTC();
  expectCorruptionRecovered(
      [](const std::string &path) {
        std::string bytes = readText(path);
        bytes[0] ^= 0x01;
        writeText(path, bytes);
      },
      "bad magic");
}

TEST(KernelCache, DisableCacheEnvironmentBypassesBothLevels) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = requireCompiler();
  TempDir dir;
  ScopedEnv cache_dir("ATTNC_CACHE_DIR", dir.path().c_str());
  ScopedEnv disable("ATTNC_DISABLE_CACHE", "1");
  KernelCacheOptions options = KernelCacheOptions::fromEnvironment();
  EXPECT_TRUE(options.disabled);
  EXPECT_EQ(options.directory, dir.path());
  KernelCache cache(options);
  EXPECT_FALSE(cache.diskEnabled());
  for (int i = 0; i < 2; ++i) {
    auto result = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(result) << result.status().message();
    EXPECT_EQ(result->report.outcome, BuildOutcome::Compiled) << i;
    EXPECT_TRUE(result->report.entry_path.empty());
  }
  EXPECT_EQ(cache.stats().compiles, 2u);
  EXPECT_TRUE(listFiles(dir.path()).empty()); // nothing written at all
}

TEST(KernelCacheOptions, EnvironmentResolution) {
  {
    ScopedEnv a("ATTNC_CACHE_DIR", "/explicit/cache");
    ScopedEnv b("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(KernelCacheOptions::defaultDirectory(), "/explicit/cache");
  }
  {
    ScopedEnv a("ATTNC_CACHE_DIR", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(KernelCacheOptions::defaultDirectory(), "/xdg/attnc");
  }
  {
    ScopedEnv a("ATTNC_CACHE_DIR", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", nullptr);
    ScopedEnv c("HOME", "/home/someone");
    EXPECT_EQ(KernelCacheOptions::defaultDirectory(),
              "/home/someone/.cache/attnc");
  }
  for (const char *off : {"0", "", "false"}) {
    ScopedEnv d("ATTNC_DISABLE_CACHE", off);
    EXPECT_FALSE(KernelCacheOptions::disabledByEnvironment()) << off;
  }
  ScopedEnv d("ATTNC_DISABLE_CACHE", "1");
  EXPECT_TRUE(KernelCacheOptions::disabledByEnvironment());
}

TEST(KernelCache, UnwritableDirectoryWarnsAndFallsBackToMemory) {
  Warnings warnings;
  TempDir dir;
  std::string file = dir / "not-a-directory";
  writeText(file, "x");
  KernelCache cache(diskOptions(file + "/cache", &warnings));
  EXPECT_FALSE(cache.diskEnabled());
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_NE(warnings.messages[0].find("caching in memory only"),
            std::string::npos);
}

TEST(KernelCache, EightThreadsCompileOneKeyOnce) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = requireCompiler();
  TempDir dir;
  KernelCache cache(diskOptions(dir.path(), nullptr));
  constexpr int kThreads = 8;
  std::vector<Result<CacheLookup>> results(
      kThreads, Status(StatusCode::Internal, "", "not run"));
  // Start together so the requests overlap the one compile.
  std::mutex mutex;
  std::condition_variable go;
  int ready = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (++ready == kThreads)
          go.notify_all();
        else
          go.wait(lock, [&] { return ready == kThreads; });
      }
      results[size_t(t)] =
          cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    });
  for (std::thread &thread : threads)
    thread.join();

  int compiled = 0, memory = 0;
  for (const auto &result : results) {
    ASSERT_TRUE(result) << result.status().message();
    compiled += result->report.outcome == BuildOutcome::Compiled;
    memory += result->report.outcome == BuildOutcome::MemoryHit;
    EXPECT_EQ(result->binary.get(), results[0]->binary.get());
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(memory, kThreads - 1);
  EXPECT_EQ(cache.stats().compiles, 1u);
}

TEST(KernelCache, ThreadsWaitingOnAFailedCompileGetTheError) {
  ATTNC_REQUIRE_NVRTC();
  TempDir failed;
  auto compiler = requireCompiler(failed.path());
  KernelCache cache(KernelCacheOptions{});
  CompileRequest bad;
  bad.source = "extern \"C\" __global__ void k() { not_declared(); }\n";
  std::vector<std::thread> threads;
  std::atomic<int> compile_errors{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      auto result = cache.getOrCompile(*compiler, bad, "sm_90a");
      if (!result && result.status().code() == StatusCode::CompileError &&
          result.status().diagnostics())
        ++compile_errors;
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(compile_errors.load(), 4);
  EXPECT_EQ(cache.stats().compiles, 0u); // failures are never cached
  auto good = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
  EXPECT_TRUE(good);
}

//===----------------------------------------------------------------------===//
// Two processes
//
// The test re-executes this binary twice with a gtest filter selecting itself
// and ATTNC_TEST_CHILD_RESULT set; in that mode it is the child: it waits on
// a pipe until the parent releases both children at once, requests the key
// and writes its outcome to the result file.
//===----------------------------------------------------------------------===//

TEST(KernelCacheCrossProcess, TwoProcessesCompileOneKeyOnce) {
  ATTNC_REQUIRE_NVRTC();
  if (const char *result_file = std::getenv("ATTNC_TEST_CHILD_RESULT")) {
    int start_fd = std::atoi(std::getenv("ATTNC_TEST_CHILD_START_FD"));
    char byte;
    while (::read(start_fd, &byte, 1) < 0 && errno == EINTR) {
    } // EOF when the parent closes its end
    auto compiler = requireCompiler();
    ASSERT_TRUE(compiler);
    KernelCache cache(
        diskOptions(std::getenv("ATTNC_TEST_CHILD_CACHE"), nullptr));
    auto result = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    writeText(result_file, result ? buildOutcomeName(result->report.outcome)
                                  : "error: " + result.status().message());
    return;
  }

  TempDir dir;
  int start[2];
  ASSERT_EQ(::pipe2(start, O_CLOEXEC), 0);
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter =
      "--gtest_filter=KernelCacheCrossProcess.TwoProcessesCompileOneKeyOnce";

  std::vector<pid_t> children;
  std::vector<std::string> result_files, log_files;
  for (int child = 0; child < 2; ++child) {
    result_files.push_back(dir / ("result" + std::to_string(child)));
    log_files.push_back(dir / ("log" + std::to_string(child)));
    // Everything the child needs is built before fork(): after it, only
    // async-signal-safe calls are allowed until exec.
    std::vector<std::string> env;
    for (char **e = environ; *e; ++e)
      if (std::strncmp(*e, "GTEST_", 6) != 0) // no sharding, no XML output
        env.push_back(*e);
    env.push_back("ATTNC_TEST_CHILD_RESULT=" + result_files.back());
    env.push_back("ATTNC_TEST_CHILD_START_FD=" + std::to_string(start[0]));
    env.push_back("ATTNC_TEST_CHILD_CACHE=" + dir.path() + "/cache");
    std::vector<char *> envp;
    for (std::string &entry : env)
      envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::vector<char *> argv = {self.data(), filter.data(), nullptr};
    int log = ::open(log_files.back().c_str(),
                     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(log, 0);

    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
      ::fcntl(start[0], F_SETFD, 0); // the read end survives exec
      ::execve(self.c_str(), argv.data(), envp.data());
      _exit(127);
    }
    ::close(log);
    children.push_back(pid);
  }
  // Both children are blocked on the pipe; closing it releases them at once.
  ::close(start[0]);
  ::close(start[1]);
  for (size_t i = 0; i < children.size(); ++i) {
    int status = 0;
    ASSERT_EQ(::waitpid(children[i], &status, 0), children[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << i << " failed:\n"
        << readText(log_files[i]);
  }

  std::vector<std::string> outcomes = {readText(result_files[0]),
                                       readText(result_files[1])};
  std::sort(outcomes.begin(), outcomes.end());
  EXPECT_EQ(outcomes, (std::vector<std::string>{"compiled", "disk_hit"}))
      << "child logs:\n"
      << readText(log_files[0]) << readText(log_files[1]);
}
