//===- KernelCache.cpp - Memory and disk cache of compiled kernels --------===//

#include "attnc/Runtime/KernelCache.h"

#include "attnc/Support/FileUtil.h"
#include "attnc/Support/Sha256.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ATTNC_VERSION_STRING
#error                                                                         \
    "ATTNC_VERSION_STRING must be defined by the build (runtime/CMakeLists.txt)"
#endif

namespace attnc::runtime {

const char *attncVersion() { return ATTNC_VERSION_STRING; }

const char *buildOutcomeName(BuildOutcome outcome) {
  switch (outcome) {
  case BuildOutcome::MemoryHit:
    return "memory_hit";
  case BuildOutcome::DiskHit:
    return "disk_hit";
  case BuildOutcome::Compiled:
    return "compiled";
  case BuildOutcome::LoadedFromBundle:
    return "bundle";
  }
  return "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

//===----------------------------------------------------------------------===//
// Entry format
//===----------------------------------------------------------------------===//

constexpr char kMagic[8] = {'A', 'T', 'T', 'N', 'C', 'K', 'C', 'E'};
constexpr uint32_t kFormatVersion = 1;
// magic, version, reserved, payload length, key digest, payload digest.
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 32 + 32;

void putU32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(char(uint8_t(v >> (8 * i))));
}
void putU64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(char(uint8_t(v >> (8 * i))));
}
uint64_t getLE(std::string_view bytes, size_t offset, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i)
    v |= uint64_t(uint8_t(bytes[offset + size_t(i)])) << (8 * i);
  return v;
}

/// Hex key -> raw digest bytes (the header stores 32 bytes, not 64 chars).
std::string keyBytes(const std::string &hex) {
  std::string bytes;
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(char((nibble(hex[i]) << 4) | nibble(hex[i + 1])));
  return bytes;
}

std::string encodeEntry(const CachedBinary &binary) {
  std::string payload;
  for (const std::string *field : {&binary.arch, &binary.nvrtc_version,
                                   &binary.cubin, &binary.ptx, &binary.log}) {
    putU64(payload, field->size());
    payload += *field;
  }
  Sha256::Digest checksum = Sha256::hash(payload);
  std::string out(kMagic, sizeof(kMagic));
  putU32(out, kFormatVersion);
  putU32(out, 0); // reserved
  putU64(out, payload.size());
  out += keyBytes(binary.key);
  out.append(reinterpret_cast<const char *>(checksum.data()), checksum.size());
  out += payload;
  return out;
}

/// Decodes an entry; on failure returns why it is not a valid entry for
/// `key` (the caller reports it, deletes the file and recompiles).
Result<CachedBinary> decodeEntry(std::string_view file, const std::string &key,
                                 const std::string &arch,
                                 const std::string &nvrtc_version) {
  auto corrupt = [](std::string why) {
    return Status(StatusCode::Corrupt, "", std::move(why));
  };
  if (file.size() < kHeaderSize)
    return corrupt("truncated: " + std::to_string(file.size()) +
                   " bytes, shorter than the " + std::to_string(kHeaderSize) +
                   "-byte header");
  if (std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0)
    return corrupt("bad magic (not an attnc kernel cache entry)");
  uint64_t version = getLE(file, 8, 4);
  if (version != kFormatVersion)
    return corrupt("format version " + std::to_string(version) + ", expected " +
                   std::to_string(kFormatVersion));
  if (getLE(file, 12, 4) != 0)
    return corrupt("reserved header field is not zero");
  uint64_t payload_size = getLE(file, 16, 8);
  if (payload_size != file.size() - kHeaderSize)
    return corrupt("truncated or extended: the header says " +
                   std::to_string(payload_size) +
                   " payload bytes, the file "
                   "has " +
                   std::to_string(file.size() - kHeaderSize));
  if (file.substr(24, 32) != keyBytes(key))
    return corrupt("holds a different key");
  std::string_view payload = file.substr(kHeaderSize);
  Sha256::Digest checksum = Sha256::hash(payload);
  if (std::memcmp(checksum.data(), file.data() + 56, 32) != 0)
    return corrupt("payload checksum mismatch");

  CachedBinary binary;
  binary.key = key;
  size_t offset = 0;
  for (std::string *field : {&binary.arch, &binary.nvrtc_version, &binary.cubin,
                             &binary.ptx, &binary.log}) {
    if (payload.size() - offset < 8)
      return corrupt("payload ends inside a field length");
    uint64_t length = getLE(payload, offset, 8);
    offset += 8;
    if (length > payload.size() - offset)
      return corrupt("payload field runs past the end");
    field->assign(payload.substr(offset, size_t(length)));
    offset += size_t(length);
  }
  if (offset != payload.size())
    return corrupt("trailing bytes after the payload fields");
  if (binary.arch != arch || binary.nvrtc_version != nvrtc_version)
    return corrupt("holds " + binary.arch + "/NVRTC " + binary.nvrtc_version +
                   ", expected " + arch + "/NVRTC " + nvrtc_version);
  if (binary.cubin.empty())
    return corrupt("empty cubin");
  return binary;
}

/// An exclusive flock() on a lock file, held for the object's lifetime.
class FileLock {
public:
  explicit FileLock(const std::string &path) {
    // O_NOFOLLOW | O_NONBLOCK: a link or a FIFO at the name is neither
    // followed nor waited on. Anything there that is not a regular file
    // (attnc only ever creates those) is replaced, once.
    constexpr int kFlags =
        O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    for (int attempt = 0;; ++attempt) {
      fd_ = ::open(path.c_str(), kFlags, 0644);
      int error = fd_ < 0 ? errno : 0;
      struct stat info;
      if (fd_ >= 0 && ::fstat(fd_, &info) == 0 && S_ISREG(info.st_mode))
        break;
      if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
      }
      // ELOOP: a link; EISDIR: a directory; ENXIO: a socket.
      bool not_a_file =
          error == 0 || error == ELOOP || error == EISDIR || error == ENXIO;
      if (attempt == 0 && not_a_file) {
        Status removed = file_util::removeTree(path);
        replaced_ = "lock file " + path + " was not a regular file; " +
                    (removed ? "replaced" : removed.message());
        if (removed)
          continue;
      }
      error_ = "cannot open lock file " + path + ": " +
               (error ? file_util::errnoText(error) : "not a regular file");
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR)
        continue;
      error_ = "flock " + path + " failed: " + file_util::errnoText(errno);
      ::close(fd_);
      fd_ = -1;
      return;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  bool held() const { return fd_ >= 0; }
  const std::string &error() const { return error_; }
  /// Non-empty when something else stood at the lock file's name.
  const std::string &replaced() const { return replaced_; }

private:
  int fd_ = -1;
  std::string error_;
  std::string replaced_;
};

/// Makes `path` a real directory: created when missing, and whatever else
/// stands there (a link, a file, a FIFO) removed first -- without following
/// it -- and said in `replaced`.
Status makeRealDirectory(const std::string &path, std::string &replaced) {
  struct stat info;
  if (::lstat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      return Status();
    replaced = path + " was " +
               (S_ISLNK(info.st_mode) ? "a symbolic link" : "not a directory") +
               "; replaced by a directory";
    if (Status s = file_util::removeTree(path); !s)
      return s;
  } else if (errno != ENOENT) {
    return Status(StatusCode::IoError, path,
                  "cannot stat: " + file_util::errnoText(errno));
  }
  return file_util::makeDirectories(path);
}

/// 64 lowercase hex digits.
bool isKeyDigest(const std::string &key) {
  return key.size() == 64 &&
         key.find_first_not_of("0123456789abcdef") == std::string::npos;
}

} // namespace

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

std::string KernelCacheOptions::defaultDirectory() {
  auto env = [](const char *name) -> std::string {
    const char *value = std::getenv(name);
    return value && *value ? value : "";
  };
  if (std::string dir = env("ATTNC_CACHE_DIR"); !dir.empty())
    return dir;
  if (std::string dir = env("XDG_CACHE_HOME"); !dir.empty())
    return dir + "/attnc";
  if (std::string dir = env("HOME"); !dir.empty())
    return dir + "/.cache/attnc";
  return "";
}

bool KernelCacheOptions::disabledByEnvironment() {
  const char *value = std::getenv("ATTNC_DISABLE_CACHE");
  if (!value)
    return false;
  std::string text = value;
  return !(text.empty() || text == "0" || text == "false");
}

KernelCacheOptions KernelCacheOptions::fromEnvironment() {
  KernelCacheOptions options;
  options.directory = defaultDirectory();
  options.disabled = disabledByEnvironment();
  return options;
}

//===----------------------------------------------------------------------===//
// KernelCache
//===----------------------------------------------------------------------===//

KernelCache::KernelCache(KernelCacheOptions options)
    : options_(std::move(options)) {
  if (options_.disabled || options_.directory.empty())
    return;
  if (Status made = makeDirectories(); !made) {
    warn("kernel cache directory unusable, caching in memory only: " +
         made.message());
    return;
  }
  disk_enabled_ = true;
}

KernelCache::~KernelCache() {
  for (auto &[key, loaded] : modules_) {
    Status s = loaded.driver->unloadModule(loaded.context, loaded.module);
    if (!s)
      warn("unloading a kernel module failed: " + s.message());
  }
}

Status KernelCache::makeDirectories() const {
  // The root may be a link (a ~/.cache on another disk is the user's
  // choice); kernels/, locks/ and models/ are attnc's and must be real directories,
  // so that an entry's path leads nowhere else.
  if (Status s = file_util::makeDirectories(options_.directory); !s)
    return s;
  for (const char *child : {"/kernels", "/locks", "/models"}) {
    std::string replaced;
    Status made = makeRealDirectory(options_.directory + child, replaced);
    if (!replaced.empty())
      warn("kernel cache: " + replaced);
    if (!made)
      return made;
  }
  return Status();
}

void KernelCache::warn(const std::string &message) const {
  if (options_.warning)
    options_.warning(message);
  else
    std::fprintf(stderr, "attnc: warning: %s\n", message.c_str());
}

std::string KernelCache::computeKey(const NvrtcCompiler &compiler,
                                    const CompileRequest &request,
                                    const std::string &arch) const {
  Sha256 hasher;
  hasher.updateField("attnc-kernel-cache-key-v1");
  hasher.updateField(attncVersion());
  hasher.updateField(compiler.version().str());
  hasher.updateField(arch);
  hasher.updateField(request.source_name);
  hasher.updateField(request.source);
  hasher.updateField(std::to_string(request.headers.size()));
  for (const auto &[name, text] : request.headers)
    hasher.updateField(name).updateField(text);
  std::vector<std::string> options = compiler.optionsFor(request, arch);
  hasher.updateField(std::to_string(options.size()));
  for (const std::string &option : options)
    hasher.updateField(option);
  return Sha256::hex(hasher.finish());
}

std::string KernelCache::entryPath(const std::string &key,
                                   const std::string &arch,
                                   const NvrtcVersion &version) const {
  // The name is made only of the key digest, a validated arch and two
  // numbers, so it stays inside kernels/ (getOrCompile validated the arch).
  if (!disk_enabled_ || !isKeyDigest(key) || !validateArch(arch))
    return "";
  return options_.directory + "/kernels/" + key + "-" + arch + "-nvrtc" +
         version.str() + ".bin";
}

Result<CacheLookup> KernelCache::getOrCompile(const NvrtcCompiler &compiler,
                                              const CompileRequest &request,
                                              const std::string &arch) {
  auto start = Clock::now();
  if (Status s = compiler.validate(request, arch); !s)
    return s;
  CacheLookup lookup;
  CacheReport &report = lookup.report;
  report.arch = arch;
  report.key = computeKey(compiler, request, arch);

  if (options_.disabled) {
    auto compiled = compiler.compile(request, arch);
    if (!compiled)
      return compiled.status();
    auto binary = std::make_shared<CachedBinary>();
    binary->arch = arch;
    binary->key = report.key;
    binary->nvrtc_version = compiler.version().str();
    binary->cubin = std::move(compiled->cubin);
    binary->ptx = std::move(compiled->ptx);
    binary->log = std::move(compiled->log);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.compiles;
    }
    lookup.binary = std::move(binary);
    report.outcome = BuildOutcome::Compiled;
    report.compile_ms = compiled->compile_ms;
    report.total_ms = millisecondsSince(start);
    return lookup;
  }

  report.entry_path = entryPath(report.key, arch, compiler.version());
  std::shared_future<SharedResult> pending;
  std::promise<SharedResult> promise;
  bool owner = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto hit = memory_.find(report.key); hit != memory_.end()) {
      ++stats_.memory_hits;
      lookup.binary = hit->second;
      report.outcome = BuildOutcome::MemoryHit;
      report.total_ms = millisecondsSince(start);
      return lookup;
    }
    if (auto it = in_flight_.find(report.key); it != in_flight_.end()) {
      pending = it->second;
    } else {
      owner = true;
      pending = promise.get_future().share();
      in_flight_.emplace(report.key, pending);
    }
  }

  if (!owner) {
    // Another thread is producing this key; its result (or error) is ours.
    const SharedResult &result = pending.get();
    if (!result.ok())
      return result.status();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.memory_hits;
    }
    lookup.binary = *result;
    report.outcome = BuildOutcome::MemoryHit;
    report.waited_for_in_flight = true;
    report.total_ms = millisecondsSince(start);
    return lookup;
  }

  // This thread owns the key: the waiters must be released on every path.
  SharedResult result = Status(StatusCode::Internal, "", "not computed");
  try {
    result = loadOrCompile(compiler, request, arch, report.key, report);
  } catch (const std::exception &e) {
    result = Status(StatusCode::Internal, "",
                    std::string("kernel cache: ") + e.what());
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (result.ok())
      memory_[report.key] = *result;
    in_flight_.erase(report.key);
  }
  promise.set_value(result);
  if (!result.ok())
    return result.status();
  lookup.binary = *result;
  report.total_ms = millisecondsSince(start);
  return lookup;
}

KernelCache::SharedResult KernelCache::loadOrCompile(
    const NvrtcCompiler &compiler, const CompileRequest &request,
    const std::string &arch, const std::string &key, CacheReport &report) {
  const std::string nvrtc_version = compiler.version().str();
  const std::string &path = report.entry_path;

  // None when there is no entry, else the binary or why the thing at the
  // entry's name is not a valid entry. Only a regular file, never through a
  // link, and refused by size before it is read (see readFile).
  auto readEntry = [&]() -> std::optional<Result<CachedBinary>> {
    auto file = file_util::readFile(path, kMaxCacheEntryBytes,
                                    file_util::Symlinks::Refuse);
    if (!file) {
      if (file.status().code() == StatusCode::NotFound)
        return std::nullopt;
      return Result<CachedBinary>(
          Status(StatusCode::Corrupt, "", file.status().rule));
    }
    return decodeEntry(*file, key, arch, nvrtc_version);
  };
  auto diskHit = [&](CachedBinary binary) -> SharedResult {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.disk_hits;
    report.outcome = BuildOutcome::DiskHit;
    return std::shared_ptr<const CachedBinary>(
        std::make_shared<CachedBinary>(std::move(binary)));
  };

  const bool use_disk = disk_enabled_ && !path.empty();
  std::unique_ptr<FileLock> file_lock;
  if (use_disk) {
    // Fast path without the lock: entries appear by rename, so a present
    // file is complete (or bad for some other reason: reported and repaired
    // below, under the lock, once).
    if (auto entry = readEntry(); entry && entry->ok())
      return diskHit(std::move(**entry));

    // The directories may have been removed (a cleaned ~/.cache) or
    // replaced since the cache was made: remake them rather than lose the
    // disk cache. Only on this miss path, where a compile follows anyway.
    if (Status made = makeDirectories(); !made)
      warn("kernel cache: " + made.message());

    auto lock_start = Clock::now();
    file_lock = std::make_unique<FileLock>(options_.directory + "/locks/" +
                                           key + ".lock");
    report.lock_wait_ms = millisecondsSince(lock_start);
    if (!file_lock->replaced().empty())
      warn("kernel cache: " + file_lock->replaced());
    if (!file_lock->held())
      warn("kernel cache: " + file_lock->error() +
           "; compiling without cross-process exclusion");

    // Another process may have compiled it while we waited for the lock.
    if (auto entry = readEntry(); entry) {
      if (entry->ok())
        return diskHit(std::move(**entry));
      // A symlink, FIFO, device, directory, oversized or corrupt file: a
      // miss. Removed (a link itself, never its target; a directory with
      // its tree), so the rename below can put a good entry in its place.
      warn("kernel cache: corrupt entry " + path + " (" + entry->status().rule +
           "); deleted, recompiling");
      if (Status removed = file_util::removeTree(path); !removed)
        warn("kernel cache: cannot delete " + path + ": " + removed.message());
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.corrupt_entries;
    }
  }

  auto compiled = compiler.compile(request, arch);
  if (!compiled)
    return compiled.status();
  auto binary = std::make_shared<CachedBinary>();
  binary->arch = arch;
  binary->key = key;
  binary->nvrtc_version = nvrtc_version;
  binary->cubin = std::move(compiled->cubin);
  binary->ptx = std::move(compiled->ptx);
  binary->log = std::move(compiled->log);
  report.compile_ms = compiled->compile_ms;
  report.outcome = BuildOutcome::Compiled;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.compiles;
  }
  if (use_disk) {
    // Still under the file lock: the next process finds the entry.
    std::string entry = encodeEntry(*binary);
    if (entry.size() > kMaxCacheEntryBytes)
      warn("kernel cache: not storing an entry of " +
           std::to_string(entry.size()) + " bytes, over the " +
           std::to_string(kMaxCacheEntryBytes >> 20) +
           " MiB an entry may have");
    else if (Status s = file_util::writeFileAtomic(path, entry); !s)
      warn("kernel cache: cannot store entry: " + s.message());
  }
  return std::shared_ptr<const CachedBinary>(std::move(binary));
}

namespace {
/// "13.0": digits and one dot, as NvrtcVersion::str() writes it.
bool isVersionText(const std::string &text) {
  size_t dot = text.find('.');
  return dot != std::string::npos && dot > 0 && dot + 1 < text.size() &&
         text.find_first_not_of("0123456789.") == std::string::npos &&
         text.find('.', dot + 1) == std::string::npos;
}
/// The kind of entry an index entry is stored as (its "arch" field).
constexpr const char *kIndexEntryArch = "model-index";
} // namespace

std::optional<CachedBinary>
KernelCache::readCheckedEntry(const std::string &path, const std::string &key,
                              const std::string &arch,
                              const std::string &nvrtc_version) {
  auto file = file_util::readFile(path, kMaxCacheEntryBytes,
                                  file_util::Symlinks::Refuse);
  std::string why;
  if (!file) {
    if (file.status().code() == StatusCode::NotFound)
      return std::nullopt;
    why = file.status().rule;
  } else {
    auto entry = decodeEntry(*file, key, arch, nvrtc_version);
    if (entry)
      return std::move(*entry);
    why = entry.status().rule;
  }
  warn("kernel cache: corrupt entry " + path + " (" + why + "); deleted");
  if (Status removed = file_util::removeTree(path); !removed)
    warn("kernel cache: cannot delete " + path + ": " + removed.message());
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.corrupt_entries;
  return std::nullopt;
}

std::optional<CacheLookup>
KernelCache::findByKey(const std::string &key, const std::string &arch,
                       const std::string &nvrtc_version) {
  auto start = Clock::now();
  if (options_.disabled || !isKeyDigest(key) || !validateArch(arch) ||
      !isVersionText(nvrtc_version))
    return std::nullopt;
  CacheLookup lookup;
  lookup.report.arch = arch;
  lookup.report.key = key;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto hit = memory_.find(key); hit != memory_.end() &&
                                      hit->second->arch == arch &&
                                      hit->second->nvrtc_version ==
                                          nvrtc_version) {
      ++stats_.memory_hits;
      lookup.binary = hit->second;
      lookup.report.outcome = BuildOutcome::MemoryHit;
      lookup.report.total_ms = millisecondsSince(start);
      return lookup;
    }
  }
  if (!disk_enabled_)
    return std::nullopt;
  // Same name as entryPath, with the version as text.
  lookup.report.entry_path = options_.directory + "/kernels/" + key + "-" +
                             arch + "-nvrtc" + nvrtc_version + ".bin";
  std::optional<CachedBinary> entry = readCheckedEntry(
      lookup.report.entry_path, key, arch, nvrtc_version);
  if (!entry)
    return std::nullopt;
  auto binary = std::make_shared<const CachedBinary>(std::move(*entry));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.disk_hits;
    memory_.emplace(key, binary);
  }
  lookup.binary = std::move(binary);
  lookup.report.outcome = BuildOutcome::DiskHit;
  lookup.report.total_ms = millisecondsSince(start);
  return lookup;
}

std::optional<CacheLookup> KernelCache::find(const NvrtcCompiler &compiler,
                                             const CompileRequest &request,
                                             const std::string &arch) {
  if (options_.disabled || !compiler.validate(request, arch))
    return std::nullopt;
  return findByKey(computeKey(compiler, request, arch), arch,
                   compiler.version().str());
}

std::optional<std::string> KernelCache::readIndexEntry(const std::string &key) {
  if (!disk_enabled_ || !isKeyDigest(key))
    return std::nullopt;
  std::optional<CachedBinary> entry =
      readCheckedEntry(options_.directory + "/models/" + key + ".idx", key,
                       kIndexEntryArch, "0.0");
  if (!entry)
    return std::nullopt;
  return std::move(entry->cubin);
}

void KernelCache::writeIndexEntry(const std::string &key,
                                  const std::string &payload) {
  if (!disk_enabled_ || !isKeyDigest(key) || payload.empty())
    return;
  CachedBinary entry;
  entry.arch = kIndexEntryArch;
  entry.key = key;
  entry.nvrtc_version = "0.0";
  entry.cubin = payload;
  std::string bytes = encodeEntry(entry);
  if (bytes.size() > kMaxCacheEntryBytes)
    return;
  // models/ may have been removed since the cache was made.
  if (Status made = makeDirectories(); !made) {
    warn("kernel cache: " + made.message());
    return;
  }
  if (Status s = file_util::writeFileAtomic(
          options_.directory + "/models/" + key + ".idx", bytes);
      !s)
    warn("kernel cache: cannot store a model index entry: " + s.message());
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.clear();
}

KernelCacheStats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  KernelCacheStats copy = stats_;
  return copy;
}

Result<CUfunction>
KernelCache::getFunction(const CudaDriver &driver, CUcontext context,
                         const std::string &binary_key,
                         const std::string &image, const std::string &name,
                         uint32_t dynamic_shared_memory_bytes) {
  // One lock for all modules: loading is rare (once per context and binary)
  // and a function lookup under it is a map find.
  std::lock_guard<std::mutex> lock(modules_mutex_);
  auto key = std::make_pair(context, binary_key);
  auto it = modules_.find(key);
  if (it == modules_.end()) {
    auto module = driver.loadModule(image);
    if (!module)
      return module.status();
    LoadedModule loaded;
    loaded.driver = &driver;
    loaded.context = context;
    loaded.module = *module;
    it = modules_.emplace(key, std::move(loaded)).first;
    std::lock_guard<std::mutex> stats_lock(mutex_);
    ++stats_.modules_loaded;
  }
  LoadedModule &loaded = it->second;
  if (auto fn = loaded.functions.find(name); fn != loaded.functions.end())
    return fn->second;
  auto function = driver.getFunction(loaded.module, name);
  if (!function)
    return function.status();
  // Above 48 KiB a kernel must opt in to its dynamic shared memory.
  if (dynamic_shared_memory_bytes > 48 * 1024)
    if (Status s = driver.setMaxDynamicSharedMemory(
            *function, dynamic_shared_memory_bytes);
        !s)
      return s;
  loaded.functions.emplace(name, *function);
  return *function;
}

} // namespace attnc::runtime
