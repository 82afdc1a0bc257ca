//===- FileUtilTest.cpp - Atomic writes and reads -------------------------===//

#include "attnc/Support/FileUtil.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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
  EXPECT_EQ(directory.status().rule.rfind("cannot read file: ", 0), 0u);
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
