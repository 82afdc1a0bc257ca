//===- FileUtil.cpp - Small file helpers ----------------------------------===//

#include "attnc/Support/FileUtil.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace attnc::file_util {

namespace {

/// "64 MiB" for a whole number of MiB, else "N bytes".
std::string sizeText(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  if (bytes >= kMiB && bytes % kMiB == 0)
    return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

} // namespace

std::string errnoText(int error) {
  char buffer[256];
  // GNU strerror_r returns the message (maybe not in buffer).
  return strerror_r(error, buffer, sizeof(buffer));
}

Result<std::string> readFile(const std::string &path, std::size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    return Status(error == ENOENT ? StatusCode::NotFound : StatusCode::IoError,
                  path, "cannot read file: " + errnoText(error));
  }
  std::string data;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      // open(2) succeeds on a directory; the read is what fails (EISDIR).
      int error = errno;
      ::close(fd);
      return Status(StatusCode::IoError, path,
                    "cannot read file: " + errnoText(error));
    }
    if (n == 0)
      break;
    data.append(buffer, size_t(n));
    if (data.size() > max_bytes) {
      ::close(fd);
      return Status(StatusCode::IoError, path,
                    "file is larger than " + sizeText(max_bytes));
    }
  }
  ::close(fd);
  return data;
}

namespace {

Status writeAll(int fd, std::string_view data, const std::string &path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Status(StatusCode::IoError, path,
                    "write failed: " + errnoText(errno));
    done += size_t(n);
  }
  return Status();
}

} // namespace

Status writeFileAtomic(const std::string &path, std::string_view data) {
  std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                     std::to_string(threadId());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status(StatusCode::IoError, temp,
                  "cannot create: " + errnoText(errno));
  Status written = writeAll(fd, data, temp);
  if (::close(fd) != 0 && written)
    written =
        Status(StatusCode::IoError, temp, "close failed: " + errnoText(errno));
  if (written && ::rename(temp.c_str(), path.c_str()) != 0)
    written = Status(StatusCode::IoError, path,
                     "rename from " + temp + " failed: " + errnoText(errno));
  if (!written)
    ::unlink(temp.c_str());
  return written;
}

Status makeDirectories(const std::string &path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error)
    return Status(StatusCode::IoError, path,
                  "cannot create directory: " + error.message());
  return Status();
}

Result<std::string> makeTempDirectory(const std::string &prefix) {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr)
    return Status(StatusCode::IoError, pattern,
                  "cannot create temporary directory: " + errnoText(errno));
  return std::string(buffer.data());
}

bool exists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

uint64_t threadId() { return uint64_t(::syscall(SYS_gettid)); }

} // namespace attnc::file_util
