//===- Context.h - The runtime's entry point (C++) --------------*- C++ -*-===//
//
// A Context ties the pieces together for one embedding: the options (cache
// directory, archs), the kernel cache, NVRTC (loaded on the first compile, so
// a context that only loads bundles never needs it) and the CUDA driver
// (loaded on the first launch). The C API (attnc-c/Runtime.h) is a thin layer
// over this class.
//
// Thread safety: every method may be called from any number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_CONTEXT_H
#define ATTNC_RUNTIME_CONTEXT_H

#include "attnc/Runtime/KernelAbi.h"
#include "attnc/Runtime/KernelCache.h"
#include "attnc/Runtime/KernelSet.h"
#include "attnc/Runtime/LaunchChecks.h"
#include "attnc/Runtime/NvrtcCompiler.h"
#include "attnc/Support/Status.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace attnc::runtime {

struct ContextOptions {
  /// The disk cache root; empty: KernelCacheOptions::defaultDirectory()
  /// ($ATTNC_CACHE_DIR, $XDG_CACHE_HOME/attnc, ~/.cache/attnc).
  std::string cache_dir;
  /// Archs every compile targets unless the compile says otherwise.
  std::vector<std::string> archs = {"sm_90a"};
  /// Bypass the memory and disk caches (ATTNC_DISABLE_CACHE=1 does too).
  bool disable_cache = false;
  /// Launch PDL-aware kernels without programmatic dependent launch
  /// (ATTNC_PDL=0 in the environment does the same; LaunchPlan.h).
  bool disable_pdl = false;
  /// libnvrtc to load; empty: NvrtcLibrary::load's search.
  std::string nvrtc_library_path;
  /// The CUDA driver library to dlopen.
  std::string cuda_driver_library = kCudaDriverLibrary;
  /// CUDA include directories for NVRTC; empty: found next to NVRTC.
  std::vector<std::string> cuda_include_dirs;
  /// Warnings (corrupt cache entries, unwritable cache); null: stderr.
  WarningHandler warning;
};

/// Per-compile settings for Context::compile.
struct SourceOptions {
  /// File name for NVRTC's log; empty: "attnc_kernels.cu".
  std::string source_name;
  /// In-memory headers by include name (attnc's device helpers go here).
  std::map<std::string, std::string> headers;
  /// Options after attnc's own.
  std::vector<std::string> extra_options;
  /// Archs for this compile; empty: the context's.
  std::vector<std::string> archs;
};

class Context : public std::enable_shared_from_this<Context> {
public:
  /// Validates the options and sets up the cache. Loads neither NVRTC nor
  /// the driver.
  static Result<std::shared_ptr<Context>> create(ContextOptions options);

  const ContextOptions &options() const { return options_; }
  KernelCache &cache() { return *cache_; }

  /// NVRTC, loaded on first use (NoDriver with the places tried if absent).
  Result<std::shared_ptr<const NvrtcCompiler>> compiler();

  /// Compiles `source` for each arch (through the cache) and checks the
  /// result against `abi_json` ({"kernels": [...]}, see KernelAbi.h).
  Result<std::shared_ptr<const KernelSet>>
  compile(const std::string &source, const std::string &abi_json,
          const SourceOptions &options = {});
  /// The same with the ABI already parsed.
  Result<std::shared_ptr<const KernelSet>>
  compile(const std::string &source, std::vector<KernelAbi> kernels,
          const SourceOptions &options = {});

  /// compile() when every arch's binary is already in the cache (memory or
  /// disk); null when one is not (nothing is compiled). Needs NVRTC (the
  /// key has its version and options).
  Result<std::shared_ptr<const KernelSet>>
  findCompiled(const std::string &source, std::vector<KernelAbi> kernels,
               const SourceOptions &options = {});

  /// One cached binary of a kernel set: its arch and cache key.
  struct CachedBinaryRef {
    std::string arch;
    std::string key;
  };
  /// A kernel set from binaries the cache already has, by key, compiled by
  /// NVRTC `nvrtc_version`: no NVRTC is loaded. Null when one is missing.
  Result<std::shared_ptr<const KernelSet>>
  setFromCache(std::vector<KernelAbi> kernels,
               const std::vector<CachedBinaryRef> &binaries,
               const std::string &nvrtc_version);

  /// Loads an AOT bundle (no NVRTC, no GPU needed).
  Result<std::shared_ptr<const KernelSet>>
  loadBundle(const std::string &directory) const;

  /// Launches `kernel_name` of `set` on `stream` (a CUstream; null is the
  /// legacy default stream) in the calling thread's current CUDA context.
  /// The arguments are checked against the ABI and the grid computed from
  /// its rule before the driver is touched; an empty grid returns Ok without
  /// launching. NoDriver without a driver.
  Status launch(const KernelSet &set, const std::string &kernel_name,
                void *stream, void *const *args, size_t num_args,
                const int64_t *launch_scalars, size_t num_launch_scalars);

  /// launch() with the arguments made from `tensors` (one per pointer
  /// parameter, ABI order) and `symbols` by the launch checks
  /// (LaunchChecks.h), and every tensor's known device checked against the
  /// current context's. Nothing is launched on any error. (The C API's
  /// kernel handles keep a KernelLauncher that does this without finding
  /// the kernel by name or the checks' set-up.)
  Status launchChecked(const KernelSet &set, const std::string &kernel_name,
                       void *stream, const TensorView *tensors,
                       size_t num_tensors, const SymbolValue *symbols,
                       size_t num_symbols);

private:
  Context() = default;
  CompileRequest request(const std::string &source,
                         const SourceOptions &options) const;
  ContextOptions options_;
  std::unique_ptr<KernelCache> cache_;
  std::mutex compiler_mutex_;
  std::shared_ptr<const NvrtcCompiler> compiler_;
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_CONTEXT_H
