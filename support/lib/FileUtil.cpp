//===- FileUtil.cpp - Small file helpers ----------------------------------===//

#include "attnc/Support/FileUtil.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <string_view>
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

namespace {

/// What a file that is not a regular file is, for messages.
const char *fileTypeText(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISLNK(mode))
    return "a symbolic link";
  return "of an unknown type";
}

/// Closes a descriptor on every way out of a scope.
class ScopedFd {
public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  ScopedFd(const ScopedFd &) = delete;
  ScopedFd &operator=(const ScopedFd &) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

} // namespace

Result<std::string> readFile(const std::string &path, std::size_t max_bytes,
                             Symlinks symlinks) {
  auto fail = [&](const std::string &rule) {
    return Status(StatusCode::IoError, path, rule);
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer (regular files
  // ignore the flag). O_NOCTTY: a terminal never becomes ours.
  int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  if (symlinks == Symlinks::Refuse)
    flags |= O_NOFOLLOW;
  int raw_fd;
  do
    raw_fd = ::open(path.c_str(), flags);
  while (raw_fd < 0 && errno == EINTR);
  if (raw_fd < 0) {
    int error = errno;
    struct stat link;
    // ELOOP is also "too many links" above the last component: lstat says
    // whether the last one is the link that O_NOFOLLOW refused.
    if (error == ELOOP && symlinks == Symlinks::Refuse &&
        ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      return fail("cannot read file: it is a symbolic link");
    return Status(error == ENOENT ? StatusCode::NotFound : StatusCode::IoError,
                  path, "cannot read file: " + errnoText(error));
  }
  ScopedFd fd(raw_fd);
  struct stat info;
  if (::fstat(fd.get(), &info) != 0)
    return fail("cannot read file: fstat failed: " + errnoText(errno));
  if (!S_ISREG(info.st_mode))
    return fail(std::string("cannot read file: not a regular file (") +
                fileTypeText(info.st_mode) + ")");
  // Refused by size before a byte is read.
  if (info.st_size < 0 || uint64_t(info.st_size) > max_bytes)
    return fail("file is larger than " + sizeText(max_bytes));

  // Exactly the stat'ed size, asking for one byte more: getting it (or
  // reaching the end early) means the file changed under us.
  const std::size_t size = std::size_t(info.st_size);
  std::string data(size + 1, '\0');
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail("cannot read file: " + errnoText(errno));
    if (n == 0)
      break;
    done += std::size_t(n);
  }
  if (done != size)
    return fail("file changed size while being read (" + std::to_string(size) +
                " bytes by fstat, " + (done > size ? "more" : "fewer") +
                " read)");
  data.resize(size);
  return data;
}

namespace {

/// Removes `name` under the directory `parent_fd` (or AT_FDCWD) without
/// following a symbolic link; `path` is for messages.
Status removeAt(int parent_fd, const char *name, const std::string &path,
                int depth) {
  // Deep enough for anything real, and a bound on open descriptors.
  constexpr int kMaxDepth = 64;
  auto fail = [&](const std::string &why) {
    return Status(StatusCode::IoError, path, "cannot remove: " + why);
  };
  if (::unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT)
    return Status(); // a file, a link (never its target), a FIFO, a device
  int unlink_error = errno;
  // Linux says EISDIR for a directory, POSIX allows EPERM.
  if (unlink_error != EISDIR && unlink_error != EPERM)
    return fail(errnoText(unlink_error));
  if (depth >= kMaxDepth)
    return fail("directories nested more than " + std::to_string(kMaxDepth) +
                " deep");
  // O_NOFOLLOW | O_DIRECTORY: only a real directory is entered, so a link
  // swapped in meanwhile leads nowhere outside the tree.
  int dir_fd = ::openat(parent_fd, name,
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0)
    return fail(errnoText(errno == ENOTDIR ? unlink_error : errno));
  DIR *dir = ::fdopendir(dir_fd);
  if (!dir) {
    int error = errno;
    ::close(dir_fd);
    return fail(errnoText(error));
  }
  // Names first: removing entries while readdir walks them is unspecified.
  std::vector<std::string> names;
  while (const struct dirent *entry = ::readdir(dir)) {
    std::string_view child = entry->d_name;
    if (child != "." && child != "..")
      names.emplace_back(child);
  }
  Status removed;
  for (const std::string &child : names) {
    removed =
        removeAt(::dirfd(dir), child.c_str(), path + "/" + child, depth + 1);
    if (!removed)
      break;
  }
  ::closedir(dir);
  if (!removed)
    return removed;
  if (::unlinkat(parent_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
    return fail(errnoText(errno));
  return Status();
}

} // namespace

Status removeTree(const std::string &path) {
  if (path.empty())
    return Status(StatusCode::IoError, "<path>", "cannot remove: empty path");
  // The folders above the last component are the caller's; at the last one
  // removeAt never follows a link.
  return removeAt(AT_FDCWD, path.c_str(), path, 0);
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
  // O_EXCL | O_NOFOLLOW: never write through a link planted at the name. A
  // file already there is left by a dead process with our pid and tid.
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(temp.c_str(), kFlags, 0644);
  if (fd < 0 && errno == EEXIST && ::unlink(temp.c_str()) == 0)
    fd = ::open(temp.c_str(), kFlags, 0644);
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
