//===- NvrtcCompiler.cpp - CUDA C++ to cubin with a dlopen'd NVRTC --------===//

#include "attnc/Runtime/NvrtcCompiler.h"

#include "NvrtcSymbols.h"
#include "attnc/Support/FileUtil.h"
#include "attnc/Support/Sha256.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <climits>
#include <dlfcn.h>
#include <sys/stat.h>
#include <filesystem>
#include <mutex>

namespace attnc::runtime {

namespace fs = std::filesystem;

namespace {

constexpr const char *kNvrtcSoname = "libnvrtc.so.13";

std::string cudaHome() {
  const char *home = std::getenv("CUDA_HOME");
  return home && *home ? home : "";
}

/// "sm_90a" -> 90; -1 if not of the form sm_<digits>[a|f].
int archNumber(const std::string &arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0)
    return -1;
  size_t end = arch.size();
  if (arch.back() == 'a' || arch.back() == 'f')
    --end;
  if (end - 3 < 2 || end - 3 > 4)
    return -1;
  int number = 0;
  for (size_t i = 3; i < end; ++i) {
    if (arch[i] < '0' || arch[i] > '9')
      return -1;
    number = number * 10 + (arch[i] - '0');
  }
  return number;
}

/// The include directory beside a CUDA lib directory, if it has the headers.
std::string includeDirBeside(const std::string &library_path) {
  fs::path include = (fs::path(library_path).parent_path() / ".." / "include")
                         .lexically_normal();
  if (file_util::exists((include / "cuda_fp16.h").string()))
    return include.string();
  return "";
}

/// Frees an nvrtcProgram on every path out of compile().
class ProgramGuard {
public:
  ProgramGuard(const NvrtcSymbols &symbols) : symbols_(symbols) {}
  ~ProgramGuard() {
    if (program)
      symbols_.nvrtcDestroyProgram(&program);
  }
  nvrtcProgram program = nullptr;

private:
  const NvrtcSymbols &symbols_;
};

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// The libraries NvrtcLibrary::load(path) tries, in order.
std::vector<std::string> candidateLibraries(const std::string &path) {
  std::vector<std::string> candidates;
  if (!path.empty()) {
    candidates.push_back(path);
    return candidates;
  }
  if (!cudaHome().empty())
    candidates.push_back(cudaHome() + "/lib64/" + kNvrtcSoname);
  std::string usual = std::string("/usr/local/cuda/lib64/") + kNvrtcSoname;
  if (candidates.empty() ||
      fs::path(candidates[0]).lexically_normal() != fs::path(usual))
    candidates.push_back(usual);
  candidates.push_back(kNvrtcSoname); // the loader's search path
  return candidates;
}

} // namespace

std::string NvrtcLibrary::identity(const std::string &path) {
  for (const std::string &candidate : candidateLibraries(path)) {
    if (candidate.empty() || candidate[0] != '/')
      return ""; // dlopen would search: only loading says what it finds
    struct stat info;
    if (::stat(candidate.c_str(), &info) != 0 || !S_ISREG(info.st_mode))
      continue; // load() would go on to the next candidate too
    char real[PATH_MAX];
    if (!::realpath(candidate.c_str(), real))
      continue;
    return std::string(real) + " " + std::to_string(info.st_size) + " " +
           std::to_string(int64_t(info.st_mtim.tv_sec) * 1000000000 +
                          info.st_mtim.tv_nsec) +
           " " + std::to_string(uint64_t(info.st_dev)) + " " +
           std::to_string(uint64_t(info.st_ino));
  }
  return "";
}

NvrtcLibrary::~NvrtcLibrary() = default;

Result<std::shared_ptr<const NvrtcLibrary>>
NvrtcLibrary::load(const std::string &path) {
  // One load per requested path for the whole process: dlopen is reference
  // counted anyway, and the version/arch queries need not be repeated.
  static std::mutex mutex;
  static std::map<std::string, Result<std::shared_ptr<const NvrtcLibrary>>>
      loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end())
    return it->second;

  auto attempt = [&]() -> Result<std::shared_ptr<const NvrtcLibrary>> {
    std::vector<std::string> candidates = candidateLibraries(path);
    std::string reasons;
    void *handle = nullptr;
    std::string opened;
    for (const std::string &candidate : candidates) {
      dlerror();
      handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) {
        opened = candidate;
        break;
      }
      const char *why = dlerror();
      reasons += "\n  dlopen " + candidate +
                 " failed: " + (why ? why : "unknown error");
    }
    if (!handle)
      return Status(StatusCode::NoDriver, "", "NVRTC not available:" + reasons);

    std::shared_ptr<NvrtcLibrary> library(new NvrtcLibrary());
    library->symbols_ = std::make_unique<NvrtcSymbols>();
    NvrtcSymbols &symbols = *library->symbols_;
    symbols.handle = handle;
#define ATTNC_NVRTC_SYMBOL(name)                                               \
  symbols.name =                                                               \
      reinterpret_cast<decltype(symbols.name)>(::dlsym(handle, #name));        \
  if (!symbols.name)                                                           \
    return Status(StatusCode::NoDriver, "",                                    \
                  "NVRTC not usable: " + opened + " has no symbol " #name);
#include "NvrtcSymbols.def"
#undef ATTNC_NVRTC_SYMBOL

    // The file actually loaded (the loader may have searched for it).
    Dl_info info;
    if (::dladdr(reinterpret_cast<void *>(symbols.nvrtcVersion), &info) &&
        info.dli_fname && info.dli_fname[0] == '/')
      library->path_ = info.dli_fname;
    else
      library->path_ = opened;
    if (symbols.nvrtcVersion(&library->version_.major,
                             &library->version_.minor) != NVRTC_SUCCESS)
      return Status(StatusCode::NoDriver, "",
                    "NVRTC not usable: nvrtcVersion failed in " + opened);
    int count = 0;
    if (symbols.nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS &&
        count > 0) {
      library->supported_archs_.resize(size_t(count));
      if (symbols.nvrtcGetSupportedArchs(library->supported_archs_.data()) !=
          NVRTC_SUCCESS)
        library->supported_archs_.clear();
    }
    library->include_dir_ = includeDirBeside(library->path_);
    return std::shared_ptr<const NvrtcLibrary>(std::move(library));
  };
  auto result = attempt();
  loaded.emplace(path, result);
  return result;
}

Status validateArch(const std::string &arch) {
  if (archNumber(arch) < 0)
    return Status(StatusCode::InvalidArgument, "arch",
                  "'" + arch +
                      "' is not a real GPU arch of the form sm_<digits>[a|f] "
                      "(e.g. sm_90a); a cubin needs a real arch");
  return Status();
}

Result<std::shared_ptr<const NvrtcCompiler>>
NvrtcCompiler::create(Options options) {
  auto library = NvrtcLibrary::load(options.nvrtc_library_path);
  if (!library)
    return library.status();
  std::shared_ptr<NvrtcCompiler> compiler(new NvrtcCompiler());
  compiler->library_ = *library;
  compiler->failed_source_dir_ = options.failed_source_dir;

  std::vector<std::string> roots = options.cuda_include_dirs;
  if (roots.empty()) {
    // Headers that match the NVRTC in use first; then the usual places.
    std::string candidates[] = {(*library)->bundledIncludeDir(),
                                cudaHome().empty() ? ""
                                                   : cudaHome() + "/include",
                                "/usr/local/cuda/include"};
    for (const std::string &candidate : candidates)
      if (!candidate.empty() && file_util::exists(candidate + "/cuda_fp16.h")) {
        roots.push_back(candidate);
        break;
      }
  }
  for (const std::string &root : roots) {
    compiler->include_dirs_.push_back(root);
    if (file_util::exists(root + "/cccl"))
      compiler->include_dirs_.push_back(root + "/cccl");
  }
  return std::shared_ptr<const NvrtcCompiler>(std::move(compiler));
}

std::vector<std::string>
NvrtcCompiler::optionsFor(const CompileRequest &request,
                          const std::string &arch) const {
  std::vector<std::string> options;
  // A real arch makes NVRTC produce a cubin (and still the PTX).
  options.push_back("--gpu-architecture=" + arch);
  options.push_back("-std=c++17");
  for (const std::string &dir : include_dirs_)
    options.push_back("-I" + dir);
  options.insert(options.end(), request.extra_options.begin(),
                 request.extra_options.end());
  return options;
}

Status NvrtcCompiler::validate(const CompileRequest &request,
                               const std::string &arch) const {
  if (Status s = validateArch(arch); !s)
    return s;
  const std::vector<int> &supported = library_->supportedArchs();
  if (!supported.empty() && std::find(supported.begin(), supported.end(),
                                      archNumber(arch)) == supported.end()) {
    std::string list;
    for (int number : supported)
      list += (list.empty() ? "sm_" : ", sm_") + std::to_string(number);
    return Status(StatusCode::InvalidArgument, "arch",
                  "'" + arch + "' is not supported by NVRTC " +
                      version().str() + " (it supports " + list + ")");
  }
  if (request.source.find('\0') != std::string::npos)
    return Status(StatusCode::InvalidArgument, "source",
                  "contains a NUL byte (NVRTC takes C strings)");
  if (request.source_name.empty())
    return Status(StatusCode::InvalidArgument, "source_name",
                  "must not be empty");
  for (const auto &[name, text] : request.headers) {
    std::string field = "headers['" + name + "']";
    fs::path path(name);
    bool escapes = std::any_of(path.begin(), path.end(),
                               [](const fs::path &p) { return p == ".."; });
    if (name.empty() || path.is_absolute() || escapes ||
        name.find('\0') != std::string::npos)
      return Status(StatusCode::InvalidArgument, field,
                    "a header name must be a non-empty relative path "
                    "without '..'");
    if (text.find('\0') != std::string::npos)
      return Status(StatusCode::InvalidArgument, field,
                    "contains a NUL byte (NVRTC takes C strings)");
  }
  for (size_t i = 0; i < request.extra_options.size(); ++i)
    if (request.extra_options[i].empty() ||
        request.extra_options[i].find('\0') != std::string::npos)
      return Status(StatusCode::InvalidArgument,
                    "extra_options[" + std::to_string(i) + "]",
                    "must be a non-empty string without NUL bytes");
  return Status();
}

Status NvrtcCompiler::saveFailedSource(const CompileRequest &request,
                                       const std::string &arch,
                                       const std::vector<std::string> &options,
                                       const std::string &log,
                                       CompileDiagnostics &diagnostics) const {
  // One directory per distinct failure (same inputs: same directory), named
  // so that a listing shows what failed for which arch.
  Sha256 hasher;
  hasher.updateField(request.source);
  for (const auto &[name, text] : request.headers)
    hasher.updateField(name).updateField(text);
  for (const std::string &option : options)
    hasher.updateField(option);
  std::string id = Sha256::hex(hasher.finish()).substr(0, 16) + "-" + arch;

  auto write = [&](const std::string &base) -> Result<std::string> {
    std::string dir = base + "/" + id;
    if (Status s = file_util::makeDirectories(dir); !s)
      return s;
    // The source under its own name (a path-free version of it).
    std::string file = fs::path(request.source_name).filename().string();
    if (file.empty() || file == "." || file == "..")
      file = "source.cu";
    std::string source_path = dir + "/" + file;
    if (Status s = file_util::writeFileAtomic(source_path, request.source); !s)
      return s;
    // Headers at their include paths, so "-I<dir>" reproduces the compile.
    for (const auto &[name, text] : request.headers) {
      fs::path header = fs::path(dir) / name;
      if (Status s = file_util::makeDirectories(header.parent_path().string());
          !s)
        return s;
      if (Status s = file_util::writeFileAtomic(header.string(), text); !s)
        return s;
    }
    std::string report = "arch: " + arch + "\noptions:\n";
    for (const std::string &option : options)
      report += "  " + option + "\n";
    report += "log:\n" + log;
    if (Status s = file_util::writeFileAtomic(dir + "/compile.txt", report); !s)
      return s;
    return source_path;
  };

  Status first_error;
  if (!failed_source_dir_.empty()) {
    auto saved = write(failed_source_dir_);
    if (saved) {
      diagnostics.saved_source_path = *saved;
      return Status();
    }
    first_error = saved.status();
  }
  auto temp = file_util::makeTempDirectory("attnc-failed-");
  if (temp) {
    auto saved = write(*temp);
    if (saved) {
      diagnostics.saved_source_path = *saved;
      return Status();
    }
    diagnostics.save_error = saved.status().message();
  } else {
    diagnostics.save_error = temp.status().message();
  }
  if (!first_error.ok())
    diagnostics.save_error =
        first_error.message() + "; " + diagnostics.save_error;
  return Status(StatusCode::IoError, "", diagnostics.save_error);
}

Result<ArchCompileResult>
NvrtcCompiler::compile(const CompileRequest &request,
                       const std::string &arch) const {
  if (Status s = validate(request, arch); !s)
    return s;
  const NvrtcSymbols &nvrtc = library_->symbols();
  auto start = std::chrono::steady_clock::now();
  ArchCompileResult result;
  result.arch = arch;
  result.options = optionsFor(request, arch);

  std::vector<const char *> header_names, header_texts;
  for (const auto &[name, text] : request.headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  ProgramGuard guard(nvrtc);
  nvrtcResult status = nvrtc.nvrtcCreateProgram(
      &guard.program, request.source.c_str(), request.source_name.c_str(),
      int(header_names.size()), header_texts.data(), header_names.data());
  if (status != NVRTC_SUCCESS)
    return Status(StatusCode::Internal, request.source_name,
                  std::string("nvrtcCreateProgram failed: ") +
                      nvrtc.nvrtcGetErrorString(status));

  std::vector<const char *> option_pointers;
  for (const std::string &option : result.options)
    option_pointers.push_back(option.c_str());
  status = nvrtc.nvrtcCompileProgram(guard.program, int(option_pointers.size()),
                                     option_pointers.data());

  size_t log_size = 0;
  if (nvrtc.nvrtcGetProgramLogSize(guard.program, &log_size) == NVRTC_SUCCESS &&
      log_size > 1) {
    result.log.resize(log_size);
    if (nvrtc.nvrtcGetProgramLog(guard.program, result.log.data()) !=
        NVRTC_SUCCESS)
      result.log.clear();
    while (!result.log.empty() && result.log.back() == '\0')
      result.log.pop_back();
  }

  if (status != NVRTC_SUCCESS) {
    CompileDiagnostics diagnostics;
    diagnostics.arch = arch;
    diagnostics.log = result.log;
    diagnostics.options = result.options;
    (void)saveFailedSource(request, arch, result.options, result.log,
                           diagnostics);
    return Status(StatusCode::CompileError, request.source_name,
                  "NVRTC " + version().str() + " failed to compile for " +
                      arch + " (" + nvrtc.nvrtcGetErrorString(status) + ")")
        .withDiagnostics(std::move(diagnostics));
  }

  size_t cubin_size = 0;
  if (nvrtc.nvrtcGetCUBINSize(guard.program, &cubin_size) != NVRTC_SUCCESS ||
      cubin_size == 0)
    return Status(StatusCode::Internal, request.source_name,
                  "NVRTC produced no cubin for " + arch);
  result.cubin.resize(cubin_size);
  if (nvrtc.nvrtcGetCUBIN(guard.program, result.cubin.data()) != NVRTC_SUCCESS)
    return Status(StatusCode::Internal, request.source_name,
                  "nvrtcGetCUBIN failed for " + arch);

  size_t ptx_size = 0;
  if (nvrtc.nvrtcGetPTXSize(guard.program, &ptx_size) == NVRTC_SUCCESS &&
      ptx_size > 1) {
    result.ptx.resize(ptx_size);
    if (nvrtc.nvrtcGetPTX(guard.program, result.ptx.data()) != NVRTC_SUCCESS)
      result.ptx.clear();
    while (!result.ptx.empty() && result.ptx.back() == '\0')
      result.ptx.pop_back();
  }
  result.compile_ms = millisecondsSince(start);
  return result;
}

Result<CompileOutput>
NvrtcCompiler::compileForArchs(const CompileRequest &request,
                               const std::vector<std::string> &archs) const {
  if (archs.empty())
    return Status(StatusCode::InvalidArgument, "archs",
                  "at least one arch is needed (e.g. sm_90a)");
  CompileOutput output;
  for (const std::string &arch : archs) {
    auto one = compile(request, arch);
    if (!one)
      return one.status();
    output.compile_ms += one->compile_ms;
    output.archs.push_back(std::move(*one));
  }
  return output;
}

} // namespace attnc::runtime
