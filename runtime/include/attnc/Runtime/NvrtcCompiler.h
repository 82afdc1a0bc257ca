//===- NvrtcCompiler.h - CUDA C++ to cubin with NVRTC -----------*- C++ -*-===//
//
// NVRTC is loaded with dlopen at run time (libnvrtc.so.13 from
// $CUDA_HOME/lib64, /usr/local/cuda/lib64, then the loader's search path), so
// nothing links it at build time and a deployment that only loads AOT
// bundles never needs it.
//
// Each step returns a value that carries its error, as jitify2 and cuda.core's
// Program do: a failed compile's Status holds the NVRTC log, the exact option
// list and the path where the failing source (with its in-memory headers) was
// saved, so nothing is lost between the failure and the person reading it.
//
// Thread safety: NvrtcLibrary and NvrtcCompiler are immutable after creation;
// compile() may be called from any number of threads at once (each call uses
// its own nvrtcProgram).
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_RUNTIME_NVRTCCOMPILER_H
#define ATTNC_RUNTIME_NVRTCCOMPILER_H

#include "attnc/Support/Status.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnc::runtime {

/// NVRTC's version, as nvrtcVersion reports it.
struct NvrtcVersion {
  int major = 0;
  int minor = 0;
  /// "13.0".
  std::string str() const {
    return std::to_string(major) + "." + std::to_string(minor);
  }
};

struct NvrtcSymbols; // the dlsym'd entry points (lib/NvrtcSymbols.def)

/// A loaded libnvrtc. Loaded once per path and never unloaded (NVRTC keeps
/// process-wide state; unloading it under a running compile would crash).
class NvrtcLibrary {
public:
  /// Loads NVRTC. With an empty `path`, tries $CUDA_HOME/lib64/libnvrtc.so.13,
  /// /usr/local/cuda/lib64/libnvrtc.so.13, then "libnvrtc.so.13" through the
  /// loader's search path. Fails with NoDriver ("NVRTC not available: ...",
  /// listing every place tried and dlopen's reason).
  static Result<std::shared_ptr<const NvrtcLibrary>>
  load(const std::string &path = "");

  /// Which library load(`path`) would open, without opening it: the first
  /// of its candidates that is an absolute path to an existing file, as
  /// "<real path> <size> <mtime ns> <device> <inode>"; "" when that takes
  /// the loader's search (no absolute candidate exists). A stat() per
  /// candidate: the JIT's disk index keys on it instead of loading NVRTC
  /// (a dlopen of 100 MB) to ask its version.
  static std::string identity(const std::string &path = "");

  /// The file that was loaded.
  const std::string &path() const { return path_; }
  NvrtcVersion version() const { return version_; }
  /// The archs this NVRTC can target, e.g. {75, 80, ..., 90, 100, 120}.
  const std::vector<int> &supportedArchs() const { return supported_archs_; }
  /// The CUDA include directory that belongs to this NVRTC
  /// (<lib>/../include), or empty if there is none with cuda_fp16.h in it.
  const std::string &bundledIncludeDir() const { return include_dir_; }

  const NvrtcSymbols &symbols() const { return *symbols_; }
  ~NvrtcLibrary();

private:
  NvrtcLibrary() = default;
  std::string path_;
  NvrtcVersion version_;
  std::vector<int> supported_archs_;
  std::string include_dir_;
  std::unique_ptr<NvrtcSymbols> symbols_;
};

/// One CUDA source to compile. Everything here goes into the cache key.
struct CompileRequest {
  /// The CUDA C++ text. Kernels must be extern "C" so that their names are
  /// the names in the ABI.
  std::string source;
  /// The file name NVRTC reports in its log and __FILE__.
  std::string source_name = "attnc_kernels.cu";
  /// In-memory headers, by the name the source #includes them with (e.g.
  /// "attnc/vector.cuh"). Names are relative paths without "..".
  std::map<std::string, std::string> headers;
  /// Options appended after attnc's own (e.g. "-DNDEBUG", "-lineinfo").
  std::vector<std::string> extra_options;
};

/// The result of compiling one request for one arch.
struct ArchCompileResult {
  std::string arch;                 ///< "sm_90a"
  std::string cubin;                ///< ELF bytes for that arch
  std::string ptx;                  ///< the PTX NVRTC generated on the way
  std::string log;                  ///< NVRTC's log (warnings), maybe empty
  std::vector<std::string> options; ///< the exact options passed to NVRTC
  double compile_ms = 0;            ///< wall time of nvrtcCompileProgram etc.
};

/// The result of compiling one request for several archs.
struct CompileOutput {
  std::vector<ArchCompileResult> archs; ///< in the order asked for
  double compile_ms = 0;                ///< total
};

/// Checks that `arch` is spelled sm_<digits>[a|f] (e.g. "sm_90a").
Status validateArch(const std::string &arch);

/// Compiles CUDA C++ with a loaded NVRTC.
class NvrtcCompiler {
public:
  struct Options {
    /// Where libnvrtc is; empty: NvrtcLibrary::load's search.
    std::string nvrtc_library_path;
    /// Include directories for the CUDA headers; empty: the NVRTC's own
    /// include dir, else $CUDA_HOME/include, else /usr/local/cuda/include.
    /// The "cccl" subdirectory of each (CUDA 13 keeps cuda/std, cub and
    /// thrust there) is added when it exists.
    std::vector<std::string> cuda_include_dirs;
    /// Where failing sources are saved (a subdirectory per failure); empty:
    /// a fresh directory under $TMPDIR or /tmp.
    std::string failed_source_dir;
  };

  /// Loads NVRTC (NoDriver if it cannot) and resolves the include paths.
  static Result<std::shared_ptr<const NvrtcCompiler>> create(Options options);

  NvrtcVersion version() const { return library_->version(); }
  const NvrtcLibrary &library() const { return *library_; }
  /// The include directories in use (each becomes an -I option).
  const std::vector<std::string> &includeDirs() const { return include_dirs_; }

  /// The exact option list compile() passes for `arch`: the arch, -std=c++17,
  /// the include directories, then request.extra_options.
  std::vector<std::string> optionsFor(const CompileRequest &request,
                                      const std::string &arch) const;

  /// Checks what NVRTC would reject less clearly: the arch spelling and
  /// support, header names. InvalidArgument naming the field.
  Status validate(const CompileRequest &request, const std::string &arch) const;

  /// Compiles for one arch. A rejected source gives CompileError with
  /// CompileDiagnostics (log, options, saved source path).
  Result<ArchCompileResult> compile(const CompileRequest &request,
                                    const std::string &arch) const;
  /// Compiles for each arch in turn; stops at the first failure. (A separate
  /// name: {"sm_90a", "sm_80"} would also convert to one std::string.)
  Result<CompileOutput>
  compileForArchs(const CompileRequest &request,
                  const std::vector<std::string> &archs) const;

private:
  NvrtcCompiler() = default;
  Status saveFailedSource(const CompileRequest &request,
                          const std::string &arch,
                          const std::vector<std::string> &options,
                          const std::string &log,
                          CompileDiagnostics &diagnostics) const;

  std::shared_ptr<const NvrtcLibrary> library_;
  std::vector<std::string> include_dirs_;
  std::string failed_source_dir_;
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_NVRTCCOMPILER_H
