//===- FileUtil.h - Small file helpers --------------------------*- C++ -*-===//
//
// POSIX file handling for the kernel cache, kernel bundles and the JIT's
// model bundles, returning Status instead of throwing (std::filesystem is
// used only through its error_code overloads).
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_SUPPORT_FILEUTIL_H
#define ATTNC_SUPPORT_FILEUTIL_H

#include "attnc/Support/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnc::file_util {

/// strerror(error) as a std::string.
std::string errnoText(int error);

/// What readFile does when the last component of the path is a symbolic
/// link. Links in the folders above it are always followed.
enum class Symlinks {
  Follow, ///< read the file it names (a user's config may be a link)
  Refuse, ///< fail: the path must be the file itself (kernel cache entries)
};

/// The cap readFile applies unless told otherwise: every file attnc reads
/// (configs, manifests, cubins, cache entries) is far smaller.
inline constexpr std::size_t kDefaultMaxFileBytes = std::size_t(256) << 20;

/// The whole of a regular file of at most `max_bytes`. Safe on any path: it
/// opens with O_NONBLOCK (a FIFO does not wait for a writer), takes the size
/// from fstat on that descriptor, refuses anything that is not a regular
/// file and any size over the cap before reading a byte (a 1 GiB sparse
/// file costs nothing), then reads exactly that size. Failures name the
/// path, all IoError but the first:
///   "cannot read file: <strerror>"                  (NotFound: no such file)
///   "cannot read file: it is a symbolic link"       (Symlinks::Refuse)
///   "cannot read file: not a regular file (a FIFO)" (or a directory, ...)
///   "file is larger than N MiB"
///   "file changed size while being read"
Result<std::string> readFile(const std::string &path,
                             std::size_t max_bytes = kDefaultMaxFileBytes,
                             Symlinks symlinks = Symlinks::Follow);

/// Removes whatever is at `path` without following a symbolic link: a link,
/// a file, a FIFO or a device node is unlinked; a directory is emptied and
/// removed, descending only through real directories (openat with
/// O_NOFOLLOW), so nothing outside the tree at `path` is touched. Nothing
/// there is success. IoError naming what could not be removed.
Status removeTree(const std::string &path);

/// Writes `data` to `path` atomically: to "<path>.tmp.<pid>.<tid>" first,
/// then rename(2), so readers (in any process) see the old file or the whole
/// new one, never a prefix. The temporary is created exclusively and never
/// through a symbolic link, and rename(2) replaces a link at `path` rather
/// than writing where it points (a directory at `path` is an error). No fsync:
/// the cache checksums every entry, so a file torn by a power loss is detected
/// and recompiled, and bundles are checksummed by their manifest.
Status writeFileAtomic(const std::string &path, std::string_view data);

/// mkdir -p. IoError naming the path on failure.
Status makeDirectories(const std::string &path);

/// Creates a fresh directory "<$TMPDIR or /tmp>/<prefix>XXXXXX".
Result<std::string> makeTempDirectory(const std::string &prefix);

/// True if `path` exists (any type).
bool exists(const std::string &path);

/// The calling thread's kernel thread id (for temp-file names).
uint64_t threadId();

} // namespace attnc::file_util

#endif // ATTNC_SUPPORT_FILEUTIL_H
