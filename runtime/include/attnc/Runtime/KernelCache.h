//===- KernelCache.h - Memory and disk kernel cache -------------*- C++ -*-===//
//
// Two levels, as in Triton and jitify2:
// - memory: compiled binaries by key, and loaded modules by (CUDA context,
//   binary key) -- a module belongs to one context;
// - disk: one file per (key, arch) under
//   $ATTNC_CACHE_DIR, else $XDG_CACHE_HOME/attnc, else ~/.cache/attnc:
//     kernels/<sha256 key>-<arch>-nvrtc<major.minor>.bin
//     locks/<sha256 key>.lock
//     models/<sha256 key>.idx (the JIT's model index: a model's kernels by
//       the compile's input, so a warm start skips the compiler; see
//       attnc/Jit/ModelIndex.h)
//     failed/<id>-<arch>/ (sources NVRTC rejected, with their headers)
//
// The key is the SHA-256 of everything that changes the binary: the source
// text and name, every in-memory header, the arch, the exact NVRTC option
// list (which includes the include paths), the NVRTC version and the attnc
// version (each field length-prefixed, so boundaries cannot shift).
//
// An entry is: magic "ATTNCKCE", format version, payload length, the key and
// the SHA-256 of the payload, then the payload (arch, NVRTC version, cubin,
// PTX, log). It is written to "<name>.tmp.<pid>.<tid>" and renamed into place,
// so no reader ever sees half an entry.
//
// The cache trusts no path it did not write. An entry's name is made of the
// key digest, the validated arch and the NVRTC version only. The root may be
// a symbolic link (the user's choice, e.g. ~/.cache on another disk), but
// kernels/ and locks/ must be real directories: anything else there is
// removed and replaced by one, with a warning. An entry is read only if it
// is a regular file, opened without following a link (O_NOFOLLOW) or waiting
// on a FIFO (O_NONBLOCK), of at most kMaxCacheEntryBytes by fstat (checked
// before reading) and of that exact size when read. Anything else at its
// name -- a link, a FIFO, a device, a directory, an oversized, truncated or
// altered file -- is a miss: reported once through the warning handler,
// removed (a link itself, a directory with its tree, never following a link
// out of it), recompiled and replaced by a fresh entry, so the next run is a
// clean disk hit. Lock files are treated the same way.
//
// Concurrent requests for one key compile once: threads of one process wait
// for the compile already in flight; processes take an flock() on the key's
// lock file and look at the disk again once they hold it.
//
// ATTNC_DISABLE_CACHE=1 (or KernelCacheOptions::disabled) bypasses both
// levels: every request compiles, nothing is read or written.
//
// Thread safety: every method may be called from any number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_KERNELCACHE_H
#define ATTNC_RUNTIME_KERNELCACHE_H

#include "attnc/Runtime/Driver.h"
#include "attnc/Runtime/NvrtcCompiler.h"
#include "attnc/Support/Status.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace attnc::runtime {

/// The largest disk entry the cache reads or writes: the header and one
/// kernel set's cubin, PTX and log, with room to spare (real ones are well
/// under 16 MiB).
inline constexpr std::size_t kMaxCacheEntryBytes = std::size_t(256) << 20;

/// The attnc version that goes into every cache key ("0.1.0").
const char *attncVersion();

/// Where a kernel binary came from.
enum class BuildOutcome {
  MemoryHit,        ///< this process had it (maybe after waiting for a thread)
  DiskHit,          ///< read from the disk cache
  Compiled,         ///< NVRTC ran
  LoadedFromBundle, ///< read from an AOT bundle (no NVRTC)
};
/// "memory_hit", "disk_hit", "compiled", "bundle".
const char *buildOutcomeName(BuildOutcome outcome);

/// What a cache request did, with timings.
struct CacheReport {
  std::string arch;
  std::string key; ///< 64 hex digits
  BuildOutcome outcome = BuildOutcome::Compiled;
  /// A memory hit that waited for another thread's compile of this key.
  bool waited_for_in_flight = false;
  /// The disk entry's path; empty when there is no disk cache.
  std::string entry_path;
  double total_ms = 0;     ///< the whole request
  double compile_ms = 0;   ///< NVRTC, when it ran
  double lock_wait_ms = 0; ///< waiting for another process's compile
};

/// A compiled binary as the cache holds it. Immutable once made.
struct CachedBinary {
  std::string arch;
  std::string key;
  std::string nvrtc_version;
  std::string cubin;
  std::string ptx;
  std::string log;
};

/// A binary and how it was obtained.
struct CacheLookup {
  std::shared_ptr<const CachedBinary> binary;
  CacheReport report;
};

/// Receives warnings the runtime must not swallow (a corrupt cache entry, a
/// cache directory that cannot be written). Called from the thread that
/// found the problem.
using WarningHandler = std::function<void(const std::string &message)>;

struct KernelCacheOptions {
  /// The cache root; empty: memory only.
  std::string directory;
  /// Bypass memory and disk entirely.
  bool disabled = false;
  /// Null: print "attnc: warning: ..." to stderr.
  WarningHandler warning;

  /// $ATTNC_CACHE_DIR, else $XDG_CACHE_HOME/attnc, else $HOME/.cache/attnc,
  /// else "" (no disk cache).
  static std::string defaultDirectory();
  /// True when ATTNC_DISABLE_CACHE is set to anything but "", "0", "false".
  static bool disabledByEnvironment();
  /// defaultDirectory() and disabledByEnvironment().
  static KernelCacheOptions fromEnvironment();
};

/// Counters, for reports and tests.
struct KernelCacheStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t compiles = 0;
  /// Bad entries (corrupt, or not a regular file of a sane size) detected,
  /// deleted and recompiled.
  uint64_t corrupt_entries = 0;
  uint64_t modules_loaded = 0;
};

class KernelCache {
public:
  /// Creates the directories when there is a disk cache; if that fails the
  /// cache warns once and works in memory only.
  explicit KernelCache(KernelCacheOptions options);
  /// Unloads the modules this cache loaded (each in its own context). Destroy
  /// the cache before the CUDA contexts it loaded into.
  ~KernelCache();
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;

  const KernelCacheOptions &options() const { return options_; }
  /// False when disabled, when there is no directory, or when it could not
  /// be created.
  bool diskEnabled() const { return disk_enabled_; }

  /// The key of `request` compiled for `arch` by `compiler` (64 hex digits).
  std::string computeKey(const NvrtcCompiler &compiler,
                         const CompileRequest &request,
                         const std::string &arch) const;
  /// The disk entry's path for a key (empty without a disk cache, or when
  /// `key` is not a digest or `arch` not a valid arch).
  std::string entryPath(const std::string &key, const std::string &arch,
                        const NvrtcVersion &version) const;

  /// The binary of `request` for `arch`: from memory, else disk, else NVRTC
  /// (storing it in both). Compile failures are returned, never cached.
  Result<CacheLookup> getOrCompile(const NvrtcCompiler &compiler,
                                   const CompileRequest &request,
                                   const std::string &arch);

  /// getOrCompile without the compile: the binary when memory or disk has
  /// it, else nullopt. (A bad disk entry is reported, removed and a miss.)
  std::optional<CacheLookup> find(const NvrtcCompiler &compiler,
                                  const CompileRequest &request,
                                  const std::string &arch);
  /// The binary of a known `key` for `arch`, compiled by NVRTC
  /// `nvrtc_version` ("13.0"), from memory or disk: no NVRTC needed.
  /// nullopt when neither has it, or the arguments are malformed.
  std::optional<CacheLookup> findByKey(const std::string &key,
                                       const std::string &arch,
                                       const std::string &nvrtc_version);

  /// Model index entries: opaque bytes under a 64-hex-digit key, on disk
  /// only, in the kernel entries' format (checksummed, written atomically;
  /// a bad one is reported, removed and a miss). nullopt / no-op without a
  /// disk cache.
  std::optional<std::string> readIndexEntry(const std::string &key);
  void writeIndexEntry(const std::string &key, const std::string &payload);

  /// Drops the in-memory binaries (not the loaded modules); later requests
  /// go to disk.
  void clearMemory();
  KernelCacheStats stats() const;

  /// The kernel `name` of the module made from `image` in `context`, loading
  /// the module on first use (keyed by context and `binary_key`) and raising
  /// the function's dynamic shared memory limit when it needs more than
  /// 48 KiB.
  Result<CUfunction> getFunction(const CudaDriver &driver, CUcontext context,
                                 const std::string &binary_key,
                                 const std::string &image,
                                 const std::string &name,
                                 uint32_t dynamic_shared_memory_bytes);

private:
  using SharedResult = Result<std::shared_ptr<const CachedBinary>>;
  SharedResult loadOrCompile(const NvrtcCompiler &compiler,
                             const CompileRequest &request,
                             const std::string &arch, const std::string &key,
                             CacheReport &report);
  /// A disk entry (kernel or index) at `path` for `key`, checked against
  /// `arch` and `nvrtc_version`: nullopt when absent or bad (reported,
  /// removed, counted as corrupt).
  std::optional<CachedBinary> readCheckedEntry(const std::string &path,
                                               const std::string &key,
                                               const std::string &arch,
                                               const std::string &nvrtc_version);
  /// The root, kernels/ and locks/ (the last two real directories, see the
  /// file comment); warns about anything replaced.
  Status makeDirectories() const;
  void warn(const std::string &message) const;

  KernelCacheOptions options_;
  bool disk_enabled_ = false;

  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const CachedBinary>> memory_;
  std::unordered_map<std::string, std::shared_future<SharedResult>> in_flight_;
  KernelCacheStats stats_;

  struct LoadedModule {
    const CudaDriver *driver = nullptr;
    CUcontext context = nullptr;
    CUmodule module = nullptr;
    std::map<std::string, CUfunction> functions;
  };
  std::mutex modules_mutex_;
  std::map<std::pair<CUcontext, std::string>, LoadedModule> modules_;
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_KERNELCACHE_H
