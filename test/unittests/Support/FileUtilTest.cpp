//===- FileUtilTest.cpp - Atomic writes and reads -------------------------===//

#include "attnc/Support/FileUtil.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <future>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attnc;
namespace fs = std::filesystem;

namespace {

class FileUtilTest : public ::testing::Test {
protected:
  void SetUp() override {
    Result<std::string> dir = file_util::makeTempDirectory("attnc-fileutil-");
    ASSERT_TRUE(dir.ok()) << dir.status().message();
    dir_ = *dir;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string dir_;
};

/// The process's peak resident set so far, in bytes.
long peakRssBytes() {
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024L;
}

/// readFile(path) on another thread, failing the test if it has not
/// returned within 10 s. A read blocked on the FIFO `path` is then released
/// by opening and closing its write end, so a regression fails instead of
/// hanging the suite.
Result<std::string> readFifoWithTimeout(const std::string &path) {
  auto future =
      std::async(std::launch::async, [&] { return file_util::readFile(path); });
  if (future.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "readFile blocked on the FIFO " << path;
    int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer >= 0)
      ::close(writer);
  }
  return future.get();
}

} // namespace

TEST_F(FileUtilTest, WriteThenReadLeavesNoTemporaryFile) {
  std::string path = dir_ + "/entry.bin";
  std::string data("binary\0data", 11);
  ASSERT_TRUE(file_util::writeFileAtomic(path, data).ok());
  Result<std::string> read = file_util::readFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, data);
  // Rewriting replaces the whole file.
  ASSERT_TRUE(file_util::writeFileAtomic(path, "new").ok());
  EXPECT_EQ(*file_util::readFile(path), "new");
  int files = 0;
  for (const auto &entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename(), "entry.bin");
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(FileUtilTest, ReadErrorsNameThePath) {
  Result<std::string> missing = file_util::readFile(dir_ + "/absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::NotFound);
  EXPECT_EQ(missing.status().field, dir_ + "/absent");
  EXPECT_EQ(missing.status().rule.rfind("cannot read file: ", 0), 0u);

  Result<std::string> directory = file_util::readFile(dir_);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::IoError);
  EXPECT_EQ(directory.status().rule,
            "cannot read file: not a regular file (a directory)");
}

// Nothing but a regular file is read: a device would never end, a FIFO
// would wait for a writer forever.
TEST_F(FileUtilTest, ReadRefusesADeviceQuicklyEvenThroughALink) {
  std::string link = dir_ + "/zero";
  ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
  long rss_before = peakRssBytes();
  auto start = std::chrono::steady_clock::now();
  for (const std::string &path : {std::string("/dev/zero"), link}) {
    Result<std::string> zero = file_util::readFile(path);
    ASSERT_FALSE(zero.ok()) << path;
    EXPECT_EQ(zero.status().code(), StatusCode::IoError);
    EXPECT_EQ(zero.status().field, path);
    EXPECT_EQ(zero.status().rule,
              "cannot read file: not a regular file (a character device)");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_LT(peakRssBytes() - rss_before, 16L << 20);
}

TEST_F(FileUtilTest, ReadRefusesAFifoWithoutBlocking) {
  std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  Result<std::string> read = readFifoWithTimeout(fifo);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().rule,
            "cannot read file: not a regular file (a FIFO)");
}

// The size comes from fstat, before reading: a 1 GiB sparse file costs
// neither the time nor the memory of reading it.
TEST_F(FileUtilTest, ReadRefusesAnOversizedSparseFileBeforeReading) {
  std::string path = dir_ + "/sparse";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t(1) << 30), 0);
  ::close(fd);
  long rss_before = peakRssBytes();
  Result<std::string> big = file_util::readFile(path);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().rule, "file is larger than 256 MiB");
  EXPECT_EQ(file_util::kDefaultMaxFileBytes, std::size_t(256) << 20);
  EXPECT_LT(peakRssBytes() - rss_before, 16L << 20);
}

// /proc files say size 0 by fstat and then have content: a file that
// changes size under the read is refused, not half-read.
TEST_F(FileUtilTest, ReadRefusesAFileThatChangesSize) {
  Result<std::string> status = file_util::readFile("/proc/self/status");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().rule.rfind("file changed size while being read", 0),
            0u)
      << status.status().rule;
}

TEST_F(FileUtilTest, SymlinksAreFollowedOrRefusedAsAsked) {
  std::string target = dir_ + "/target";
  std::string link = dir_ + "/link";
  ASSERT_TRUE(file_util::writeFileAtomic(target, "text").ok());
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  Result<std::string> followed = file_util::readFile(link);
  ASSERT_TRUE(followed.ok()) << followed.status().message();
  EXPECT_EQ(*followed, "text");
  Result<std::string> refused = file_util::readFile(
      link, file_util::kDefaultMaxFileBytes, file_util::Symlinks::Refuse);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::IoError);
  EXPECT_EQ(refused.status().rule, "cannot read file: it is a symbolic link");
  // A dangling link is refused the same way, not reported missing.
  std::string dangling = dir_ + "/dangling";
  ASSERT_EQ(::symlink((dir_ + "/absent").c_str(), dangling.c_str()), 0);
  EXPECT_EQ(file_util::readFile(dangling, 100, file_util::Symlinks::Refuse)
                .status()
                .rule,
            "cannot read file: it is a symbolic link");
  EXPECT_EQ(file_util::readFile(dangling).status().code(),
            StatusCode::NotFound);
  // A regular file reads the same either way.
  EXPECT_EQ(*file_util::readFile(target, 100, file_util::Symlinks::Refuse),
            "text");
}

TEST_F(FileUtilTest, ReadRefusesFilesOverTheLimit) {
  std::string path = dir_ + "/big";
  ASSERT_TRUE(file_util::writeFileAtomic(path, std::string(3 << 20, 'x')).ok());
  EXPECT_TRUE(file_util::readFile(path, 3 << 20).ok());
  Result<std::string> big = file_util::readFile(path, 2 << 20);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::IoError);
  EXPECT_EQ(big.status().rule, "file is larger than 2 MiB");
  EXPECT_EQ(file_util::readFile(path, 1000).status().rule,
            "file is larger than 1000 bytes");
}

// rename(2) replaces a link at the destination; the file it pointed to is
// untouched.
TEST_F(FileUtilTest, WriteReplacesALinkInsteadOfWritingThroughIt) {
  std::string outside = dir_ + "/outside";
  std::string path = dir_ + "/entry";
  ASSERT_TRUE(file_util::writeFileAtomic(outside, "keep").ok());
  ASSERT_EQ(::symlink(outside.c_str(), path.c_str()), 0);
  ASSERT_TRUE(file_util::writeFileAtomic(path, "new").ok());
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(*file_util::readFile(path), "new");
  EXPECT_EQ(*file_util::readFile(outside), "keep");
}

// The temporary's name is predictable: a link planted there is removed,
// not written through.
TEST_F(FileUtilTest, WriteNeverFollowsALinkAtTheTemporaryName) {
  std::string outside = dir_ + "/outside";
  std::string path = dir_ + "/entry";
  ASSERT_TRUE(file_util::writeFileAtomic(outside, "keep").ok());
  std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                     std::to_string(file_util::threadId());
  ASSERT_EQ(::symlink(outside.c_str(), temp.c_str()), 0);
  ASSERT_TRUE(file_util::writeFileAtomic(path, "new").ok());
  EXPECT_EQ(*file_util::readFile(path), "new");
  EXPECT_EQ(*file_util::readFile(outside), "keep");
  EXPECT_FALSE(fs::exists(fs::symlink_status(temp)));
}

TEST_F(FileUtilTest, RemoveTreeNeverFollowsALinkOutOfIt) {
  std::string outside = dir_ + "/outside";
  ASSERT_TRUE(file_util::makeDirectories(outside + "/sub").ok());
  ASSERT_TRUE(file_util::writeFileAtomic(outside + "/sub/file", "keep").ok());
  std::string tree = dir_ + "/tree";
  ASSERT_TRUE(file_util::makeDirectories(tree + "/a/b").ok());
  ASSERT_TRUE(file_util::writeFileAtomic(tree + "/a/b/file", "x").ok());
  ASSERT_EQ(::symlink(outside.c_str(), (tree + "/a/to-outside").c_str()), 0);
  ASSERT_EQ(::mkfifo((tree + "/a/fifo").c_str(), 0644), 0);
  ASSERT_TRUE(file_util::removeTree(tree).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  EXPECT_EQ(*file_util::readFile(outside + "/sub/file"), "keep");

  // A link itself is removed, never its target.
  std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(outside.c_str(), link.c_str()), 0);
  ASSERT_TRUE(file_util::removeTree(link).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(link)));
  EXPECT_EQ(*file_util::readFile(outside + "/sub/file"), "keep");

  EXPECT_TRUE(file_util::removeTree(dir_ + "/absent").ok());
}

TEST_F(FileUtilTest, WriteIntoAMissingDirectoryFails) {
  Status written = file_util::writeFileAtomic(dir_ + "/no/such/file", "x");
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.code(), StatusCode::IoError);
  EXPECT_NE(written.rule.find("cannot create"), std::string::npos);
}

TEST_F(FileUtilTest, MakeDirectories) {
  std::string nested = dir_ + "/a/b/c";
  ASSERT_TRUE(file_util::makeDirectories(nested).ok());
  EXPECT_TRUE(file_util::exists(nested));
  EXPECT_TRUE(file_util::makeDirectories(nested).ok()); // already there
  ASSERT_TRUE(file_util::writeFileAtomic(dir_ + "/file", "x").ok());
  EXPECT_EQ(file_util::makeDirectories(dir_ + "/file/sub").code(),
            StatusCode::IoError);
}
