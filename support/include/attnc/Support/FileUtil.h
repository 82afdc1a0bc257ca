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

/// The whole file, refusing one larger than `max_bytes`. Failures name the
/// path: "cannot read file: <strerror>" (NotFound if it does not exist,
/// IoError otherwise, a directory included), or "file is larger than N MiB"
/// (IoError).
Result<std::string> readFile(const std::string &path,
                             std::size_t max_bytes = SIZE_MAX);

/// Writes `data` to `path` atomically: to "<path>.tmp.<pid>.<tid>" first,
/// then rename(2), so readers (in any process) see the old file or the whole
/// new one, never a prefix. No fsync: the cache checksums every entry, so a
/// file torn by a power loss is detected and recompiled, and bundles are
/// checksummed by their manifest.
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
