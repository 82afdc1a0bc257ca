//===- Context.cpp - The runtime's entry point ----------------------------===//

#include "attnc/Runtime/Context.h"

#include "attnc/Runtime/Driver.h"
#include "attnc/Runtime/LaunchPlan.h"

namespace attnc::runtime {

Result<std::shared_ptr<Context>> Context::create(ContextOptions options) {
  if (options.archs.empty())
    return Status(StatusCode::InvalidArgument, "archs",
                  "at least one arch is needed (e.g. sm_90a)");
  for (size_t i = 0; i < options.archs.size(); ++i)
    if (Status s = validateArch(options.archs[i]); !s)
      return Status(StatusCode::InvalidArgument,
                    "archs[" + std::to_string(i) + "]", s.rule);
  if (options.cuda_driver_library.empty())
    options.cuda_driver_library = kCudaDriverLibrary;

  KernelCacheOptions cache_options;
  cache_options.directory = options.cache_dir.empty()
                                ? KernelCacheOptions::defaultDirectory()
                                : options.cache_dir;
  cache_options.disabled =
      options.disable_cache || KernelCacheOptions::disabledByEnvironment();
  cache_options.warning = options.warning;
  options.cache_dir = cache_options.directory;
  options.disable_cache = cache_options.disabled;

  std::shared_ptr<Context> context(new Context());
  context->cache_ = std::make_unique<KernelCache>(std::move(cache_options));
  context->options_ = std::move(options);
  return context;
}

Result<std::shared_ptr<const NvrtcCompiler>> Context::compiler() {
  std::lock_guard<std::mutex> lock(compiler_mutex_);
  if (compiler_)
    return compiler_;
  NvrtcCompiler::Options options;
  options.nvrtc_library_path = options_.nvrtc_library_path;
  options.cuda_include_dirs = options_.cuda_include_dirs;
  if (!options_.cache_dir.empty())
    options.failed_source_dir = options_.cache_dir + "/failed";
  auto compiler = NvrtcCompiler::create(std::move(options));
  if (!compiler)
    return compiler.status(); // NvrtcLibrary::load remembers the failure
  compiler_ = *compiler;
  return compiler_;
}

Result<std::shared_ptr<const KernelSet>>
Context::compile(const std::string &source, const std::string &abi_json,
                 const SourceOptions &options) {
  auto kernels = kernelAbiListFromJson(abi_json);
  if (!kernels)
    return kernels.status();
  return compile(source, std::move(*kernels), options);
}

namespace {
KernelBinary binaryOf(const std::string &arch, const CacheLookup &lookup) {
  KernelBinary binary;
  binary.arch = arch;
  binary.cubin = lookup.binary->cubin;
  binary.ptx = lookup.binary->ptx;
  binary.nvrtc_version = lookup.binary->nvrtc_version;
  binary.key = lookup.binary->key;
  binary.report = lookup.report;
  return binary;
}

/// A kernel set of the binaries, shared (every Context entry point's end).
Result<std::shared_ptr<const KernelSet>>
sharedSet(std::vector<KernelAbi> kernels, std::vector<KernelBinary> binaries) {
  auto set = KernelSet::create(std::move(kernels), std::move(binaries));
  if (!set)
    return set.status();
  return std::make_shared<const KernelSet>(std::move(*set));
}
} // namespace

CompileRequest Context::request(const std::string &source,
                                const SourceOptions &options) const {
  CompileRequest request;
  request.source = source;
  if (!options.source_name.empty())
    request.source_name = options.source_name;
  request.headers = options.headers;
  request.extra_options = options.extra_options;
  return request;
}

Result<std::shared_ptr<const KernelSet>>
Context::findCompiled(const std::string &source, std::vector<KernelAbi> kernels,
                      const SourceOptions &options) {
  auto nvrtc = compiler();
  if (!nvrtc)
    return nvrtc.status();
  CompileRequest request = this->request(source, options);
  std::vector<KernelBinary> binaries;
  for (const std::string &arch :
       options.archs.empty() ? options_.archs : options.archs) {
    std::optional<CacheLookup> lookup = cache_->find(**nvrtc, request, arch);
    if (!lookup)
      return std::shared_ptr<const KernelSet>();
    binaries.push_back(binaryOf(arch, *lookup));
  }
  return sharedSet(std::move(kernels), std::move(binaries));
}

Result<std::shared_ptr<const KernelSet>>
Context::setFromCache(std::vector<KernelAbi> kernels,
                      const std::vector<CachedBinaryRef> &binaries,
                      const std::string &nvrtc_version) {
  std::vector<KernelBinary> found;
  for (const CachedBinaryRef &ref : binaries) {
    std::optional<CacheLookup> lookup =
        cache_->findByKey(ref.key, ref.arch, nvrtc_version);
    if (!lookup)
      return std::shared_ptr<const KernelSet>();
    found.push_back(binaryOf(ref.arch, *lookup));
  }
  return sharedSet(std::move(kernels), std::move(found));
}

Result<std::shared_ptr<const KernelSet>>
Context::compile(const std::string &source, std::vector<KernelAbi> kernels,
                 const SourceOptions &options) {
  auto nvrtc = compiler();
  if (!nvrtc)
    return nvrtc.status();
  CompileRequest request = this->request(source, options);
  const std::vector<std::string> &archs =
      options.archs.empty() ? options_.archs : options.archs;

  std::vector<KernelBinary> binaries;
  for (const std::string &arch : archs) {
    auto lookup = cache_->getOrCompile(**nvrtc, request, arch);
    if (!lookup)
      return lookup.status();
    binaries.push_back(binaryOf(arch, *lookup));
  }
  return sharedSet(std::move(kernels), std::move(binaries));
}

Result<std::shared_ptr<const KernelSet>>
Context::loadBundle(const std::string &directory) const {
  auto set = KernelSet::loadBundle(directory);
  if (!set)
    return set.status();
  return std::make_shared<const KernelSet>(std::move(*set));
}

namespace {
Status noSuchKernel(const KernelSet &set, const std::string &kernel_name) {
  std::string names;
  for (const KernelAbi &kernel : set.kernels())
    names += (names.empty() ? "" : ", ") + kernel.name;
  return Status(StatusCode::NotFound, "kernel",
                "no kernel '" + kernel_name + "' in this set (it has " + names +
                    ")");
}
} // namespace

Status Context::launchChecked(const KernelSet &set,
                              const std::string &kernel_name, void *stream,
                              const TensorView *tensors, size_t num_tensors,
                              const SymbolValue *symbols, size_t num_symbols) {
  const KernelAbi *abi = set.findKernel(kernel_name);
  if (!abi)
    return noSuchKernel(set, kernel_name);
  KernelLauncher launcher(*this, set, *abi);
  return launcher.launchChecked(stream, tensors, num_tensors, symbols,
                                num_symbols);
}

Status Context::launch(const KernelSet &set, const std::string &kernel_name,
                       void *stream, void *const *args, size_t num_args,
                       const int64_t *launch_scalars,
                       size_t num_launch_scalars) {
  const KernelAbi *abi = set.findKernel(kernel_name);
  if (!abi)
    return noSuchKernel(set, kernel_name);
  // The C API's launch path (bad arguments reported before the driver is
  // touched, an empty grid launches nothing), with a launcher for this call.
  KernelLauncher launcher(*this, set, *abi);
  return launcher.launch(stream, args, num_args, launch_scalars,
                         num_launch_scalars);
}

} // namespace attnc::runtime
