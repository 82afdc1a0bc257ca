//===- KernelCacheTest.cpp - Memory/disk cache, corruption, concurrency ---===//

#include "attnc/Runtime/KernelCache.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <mutex>
#include <sys/resource.h>
#include <sys/stat.h>
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

/// The process's peak resident set so far, in bytes.
long peakRssBytes() {
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024L;
}

bool isRegularFile(const std::string &path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

/// Compiles once into `dir`, damages the entry with `damage`, and checks that
/// a fresh cache reports it once, deletes it, recompiles and stores a good
/// one (a regular file), without reading more than a bounded amount, and
/// that the next cache is a clean disk hit.
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
  long rss_before = peakRssBytes();
  auto again = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
  // Far below what reading /dev/zero or a 1 GiB file would cost.
  EXPECT_LT(peakRssBytes() - rss_before, 128L << 20);
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
  EXPECT_TRUE(isRegularFile(path));

  // The rewritten entry is good.
  Warnings none;
  KernelCache after(diskOptions(dir.path(), &none));
  auto hit = after.getOrCompile(*compiler, testRequest(), "sm_90a");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->report.outcome, BuildOutcome::DiskHit);
  EXPECT_TRUE(none.messages.empty());
}

/// A path one thread sets and another reads.
class SharedPath {
public:
  void set(const std::string &path) {
    std::lock_guard<std::mutex> lock(mutex_);
    path_ = path;
  }
  std::string get() {
    std::lock_guard<std::mutex> lock(mutex_);
    return path_;
  }

private:
  std::mutex mutex_;
  std::string path_;
};

/// Runs `body` on another thread, failing the test if it has not finished
/// within 60 s; it is then released by opening and closing the write end of
/// the FIFO at `fifo` (what a blocked read of it waits for) until it
/// finishes -- the cache reads an entry twice -- so a regression fails
/// instead of hanging the suite.
void runGuardedAgainstFifo(SharedPath &fifo,
                           const std::function<void()> &body) {
  auto future = std::async(std::launch::async, body);
  if (future.wait_for(std::chrono::seconds(60)) == std::future_status::ready)
    return future.get();
  std::string path = fifo.get();
  ADD_FAILURE() << "blocked on the FIFO " << path;
  do {
    int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer >= 0)
      ::close(writer);
  } while (future.wait_for(std::chrono::milliseconds(100)) !=
           std::future_status::ready);
  future.get();
}

/// Puts `make` in the entry's place (after removing the entry).
std::function<void(const std::string &)>
replaceEntry(std::function<void(const std::string &)> make) {
  return [make](const std::string &path) {
    ASSERT_TRUE(std::filesystem::remove(path));
    make(path);
  };
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

// Anything but a regular file of a sane size at an entry's name is a miss:
// reported once, removed, recompiled and replaced by a good entry.

TEST(KernelCache, EntryLinkedToDevZeroIsRefusedAndReplaced) {
  ATTNC_REQUIRE_NVRTC();
  auto start = std::chrono::steady_clock::now();
  expectCorruptionRecovered(replaceEntry([](const std::string &path) {
                              ASSERT_EQ(::symlink("/dev/zero", path.c_str()),
                                        0);
                            }),
                            "it is a symbolic link");
  // Two compiles, no read of /dev/zero (that ran to 24 GB before).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST(KernelCache, FifoEntryDoesNotBlockAndIsReplaced) {
  ATTNC_REQUIRE_NVRTC();
  SharedPath fifo;
  runGuardedAgainstFifo(fifo, [&] {
    expectCorruptionRecovered(replaceEntry([&](const std::string &path) {
                                fifo.set(path);
                                ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
                              }),
                              "not a regular file (a FIFO)");
  });
}

TEST(KernelCache, OversizedSparseEntryIsRefusedBeforeReading) {
  ATTNC_REQUIRE_NVRTC();
  static_assert(kMaxCacheEntryBytes < (std::size_t(1) << 30));
  expectCorruptionRecovered(
      replaceEntry([](const std::string &path) {
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::ftruncate(fd, off_t(1) << 30), 0);
        ::close(fd);
      }),
      "file is larger than 256 MiB");
}

// A folder in an entry's place was never repaired (a recompile and three
// warnings on every run); now it is removed with its contents.
TEST(KernelCache, DirectoryInAnEntrysPlaceIsRemovedAndReplaced) {
  ATTNC_REQUIRE_NVRTC();
  expectCorruptionRecovered(replaceEntry([](const std::string &path) {
                              ASSERT_TRUE(std::filesystem::create_directories(
                                  path + "/inner/deeper"));
                              writeText(path + "/inner/file", "x");
                            }),
                            "not a regular file (a directory)");
}

// A link to a good entry is not followed (the cache reads only what it
// wrote), and the file it points to is left alone.
TEST(KernelCache, LinkToAValidEntryElsewhereIsNotFollowed) {
  ATTNC_REQUIRE_NVRTC();
  TempDir outside; // outlives the cache's directory
  std::string elsewhere = outside / "elsewhere.bin", bytes;
  expectCorruptionRecovered(
      [&](const std::string &path) {
        bytes = readText(path);
        std::filesystem::copy_file(path, elsewhere);
        ASSERT_TRUE(std::filesystem::remove(path));
        ASSERT_EQ(::symlink(elsewhere.c_str(), path.c_str()), 0);
      },
      "it is a symbolic link");
  EXPECT_TRUE(isRegularFile(elsewhere));
  EXPECT_FALSE(bytes.empty());
  EXPECT_TRUE(readText(elsewhere) == bytes); // (no dump of a cubin)
}

TEST(KernelCache, DanglingLinkEntryIsReplaced) {
  ATTNC_REQUIRE_NVRTC();
  expectCorruptionRecovered(
      replaceEntry([](const std::string &path) {
        ASSERT_EQ(::symlink((path + ".absent").c_str(), path.c_str()), 0);
      }),
      "it is a symbolic link");
}

// The cache root may be a link (the user's choice), but kernels/ is attnc's:
// a link there is replaced by a real directory and its target left alone.
TEST(KernelCache, LinkedKernelsDirectoryIsReplacedByARealOne) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = requireCompiler();
  TempDir dir;
  std::string root = dir / "root";
  std::string entry_name;
  {
    KernelCache cache(diskOptions(root, nullptr));
    auto cold = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(cold);
    entry_name = std::filesystem::path(cold->report.entry_path).filename();
  }
  std::string outside = dir / "outside-kernels";
  std::filesystem::rename(root + "/kernels", outside);
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/kernels").c_str()), 0);
  // A linked root is used as it is.
  std::string linked_root = dir / "linked-root";
  ASSERT_EQ(::symlink(root.c_str(), linked_root.c_str()), 0);

  Warnings warnings;
  {
    KernelCache cache(diskOptions(linked_root, &warnings));
    ASSERT_TRUE(cache.diskEnabled());
    ASSERT_EQ(warnings.messages.size(), 1u);
    EXPECT_NE(warnings.messages[0].find("kernels was a symbolic link; "
                                        "replaced by a directory"),
              std::string::npos)
        << warnings.messages[0];
    auto again = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->report.outcome, BuildOutcome::Compiled);
  }
  EXPECT_TRUE(std::filesystem::is_directory(
      std::filesystem::symlink_status(root + "/kernels")));
  EXPECT_TRUE(isRegularFile(outside + "/" + entry_name));
  EXPECT_TRUE(isRegularFile(root + "/kernels/" + entry_name));

  Warnings none;
  KernelCache after(diskOptions(linked_root, &none));
  auto hit = after.getOrCompile(*compiler, testRequest(), "sm_90a");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->report.outcome, BuildOutcome::DiskHit);
  EXPECT_TRUE(none.messages.empty()) << none.messages.front();
}

// A lock file replaced by a directory would make every miss compile without
// cross-process exclusion (and warn); it is replaced by a regular file.
TEST(KernelCache, DirectoryInALockFilesPlaceIsReplaced) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = requireCompiler();
  TempDir dir;
  std::string key, entry;
  {
    KernelCache cache(diskOptions(dir.path(), nullptr));
    auto cold = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(cold);
    key = cold->report.key;
    entry = cold->report.entry_path;
  }
  std::string lock = dir.path() + "/locks/" + key + ".lock";
  ASSERT_TRUE(std::filesystem::remove(lock));
  ASSERT_TRUE(std::filesystem::create_directories(lock + "/inner"));
  ASSERT_TRUE(std::filesystem::remove(entry)); // a miss takes the lock

  Warnings warnings;
  {
    KernelCache cache(diskOptions(dir.path(), &warnings));
    auto again = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->report.outcome, BuildOutcome::Compiled);
  }
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_NE(warnings.messages[0].find("was not a regular file; replaced"),
            std::string::npos)
      << warnings.messages[0];
  EXPECT_TRUE(isRegularFile(lock));
  EXPECT_TRUE(isRegularFile(entry));
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

// find / findByKey: the binary without a compile, from memory or disk, by
// the request or by its key and NVRTC version; a miss compiles nothing.
TEST(KernelCache, FindAndFindByKeyNeverCompile) {
  ATTNC_REQUIRE_NVRTC();
  auto compiler = requireCompiler();
  TempDir dir;
  std::string key;
  {
    KernelCache cache(diskOptions(dir.path(), nullptr));
    EXPECT_FALSE(cache.find(*compiler, testRequest(), "sm_90a"));
    auto cold = cache.getOrCompile(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(cold) << cold.status().message();
    key = cold->report.key;
    auto hit = cache.find(*compiler, testRequest(), "sm_90a");
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->report.outcome, BuildOutcome::MemoryHit);
    EXPECT_EQ(hit->binary->cubin, cold->binary->cubin);
  }
  KernelCache fresh(diskOptions(dir.path(), nullptr));
  const std::string version = compiler->version().str();
  // Another NVRTC version, another arch, a malformed key: misses.
  EXPECT_FALSE(fresh.findByKey(key, "sm_90a", "99.9"));
  EXPECT_FALSE(fresh.findByKey(key, "sm_80", version));
  EXPECT_FALSE(fresh.findByKey("../" + key.substr(3), "sm_90a", version));
  auto disk = fresh.findByKey(key, "sm_90a", version);
  ASSERT_TRUE(disk);
  EXPECT_EQ(disk->report.outcome, BuildOutcome::DiskHit);
  auto memory = fresh.findByKey(key, "sm_90a", version);
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->report.outcome, BuildOutcome::MemoryHit);
  EXPECT_EQ(fresh.stats().compiles, 0u);
}

// Model index entries: written atomically in the entries' format, read back
// exactly; a corrupt one is reported, removed and a miss; none without a
// disk cache.
TEST(KernelCache, IndexEntriesRoundTripAndACorruptOneIsRemoved) {
  TempDir dir;
  Warnings warnings;
  const std::string key(64, 'a');
  const std::string path = dir.path() + "/models/" + key + ".idx";
  {
    KernelCache cache(diskOptions(dir.path(), &warnings));
    EXPECT_FALSE(cache.readIndexEntry(key));
    cache.writeIndexEntry(key, "{\"kernels\": []}");
    auto entry = cache.readIndexEntry(key);
    ASSERT_TRUE(entry);
    EXPECT_EQ(*entry, "{\"kernels\": []}");
    EXPECT_FALSE(cache.readIndexEntry(std::string(64, 'b')));
    EXPECT_FALSE(cache.readIndexEntry("../escape"));
    EXPECT_TRUE(warnings.messages.empty());
  }
  // One payload byte flipped: the checksum fails.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 100u);
  bytes[bytes.size() - 3] ^= 1;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  KernelCache cache(diskOptions(dir.path(), &warnings));
  EXPECT_FALSE(cache.readIndexEntry(key));
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_NE(warnings.messages[0].find("checksum"), std::string::npos)
      << warnings.messages[0];
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(cache.stats().corrupt_entries, 1u);
  // Rewritten, it reads again.
  cache.writeIndexEntry(key, "fresh");
  EXPECT_EQ(cache.readIndexEntry(key).value_or(""), "fresh");

  KernelCacheOptions memoryOnly;
  KernelCache noDisk(memoryOnly);
  noDisk.writeIndexEntry(key, "x");
  EXPECT_FALSE(noDisk.readIndexEntry(key));
}
