//===- CApi.cpp - C API of the attnc runtime ------------------------------===//
//
// A thin layer over attnc::runtime::Context: handles own shared_ptrs, every
// entry point catches exceptions (bad_alloc) so none crosses the C boundary,
// and failures set the thread-local last-error string.
//
//===----------------------------------------------------------------------===//

#include "attnc-c/Runtime.h"

#include "CApiInternal.h"
#include "attnc/Runtime/Context.h"
#include "attnc/Runtime/KernelAbi.h"

#include "attnc/Runtime/Driver.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

using namespace attnc;
using namespace attnc::runtime;

namespace {
thread_local std::string last_error;

// attnc_status_t is StatusCode, value for value (fail() casts one to the
// other); the C values are API and never change.
#define ATTNC_CHECK_STATUS(c, cxx)                                             \
  static_assert(int(c) == int(StatusCode::cxx), #c " != StatusCode::" #cxx)
ATTNC_CHECK_STATUS(ATTNC_STATUS_OK, Ok);
ATTNC_CHECK_STATUS(ATTNC_STATUS_INVALID_ARGUMENT, InvalidArgument);
ATTNC_CHECK_STATUS(ATTNC_STATUS_COMPILE_ERROR, CompileError);
ATTNC_CHECK_STATUS(ATTNC_STATUS_CUDA_ERROR, CudaError);
ATTNC_CHECK_STATUS(ATTNC_STATUS_NO_DRIVER, NoDriver);
ATTNC_CHECK_STATUS(ATTNC_STATUS_IO_ERROR, IoError);
ATTNC_CHECK_STATUS(ATTNC_STATUS_CORRUPT, Corrupt);
ATTNC_CHECK_STATUS(ATTNC_STATUS_NOT_FOUND, NotFound);
ATTNC_CHECK_STATUS(ATTNC_STATUS_INTERNAL, Internal);
#undef ATTNC_CHECK_STATUS
} // namespace

namespace attnc::runtime::capi {

attnc_status_t fail(const Status &status) {
  last_error = status.message();
  return attnc_status_t(status.code());
}

attnc_status_t invalid(const std::string &field, const std::string &rule) {
  return fail(Status(StatusCode::InvalidArgument, field, rule));
}

attnc_status_t checkArgs(std::initializer_list<NamedArg> args) {
  for (const NamedArg &arg : args)
    if (!arg.value)
      return invalid(arg.name, "NULL");
  return ATTNC_STATUS_OK;
}

namespace {
std::unique_ptr<attnc_kernel_tier_s> makeTier(Context &context,
                                              const KernelSet &set,
                                              const KernelAbi &abi) {
  auto tier = std::make_unique<attnc_kernel_tier_s>();
  tier->abi = &abi;
  tier->abi_json = kernelAbiToJson(abi);
  tier->launcher = std::make_unique<KernelLauncher>(context, set, abi);
  return tier;
}
} // namespace

attnc_kernel_set_t wrap(const std::shared_ptr<Context> &context,
                        std::shared_ptr<const KernelSet> set) {
  auto handle = std::make_unique<attnc_kernel_set_s>();
  handle->context = context;
  handle->set = std::move(set);
  handle->current.store(handle->set.get(), std::memory_order_release);
  for (const KernelAbi &abi : handle->set->kernels()) {
    auto kernel = std::make_unique<attnc_kernel_s>();
    kernel->set = handle.get();
    kernel->tiers.push_back(makeTier(*handle->context, *handle->set, abi));
    kernel->active.store(kernel->tiers.back().get(), std::memory_order_release);
    handle->kernels.push_back(std::move(kernel));
  }
  return handle.release();
}

attnc_kernel_set_t wrapTiered(const std::shared_ptr<Context> &context,
                              std::shared_ptr<const KernelSet> baseline,
                              std::shared_ptr<PendingKernelSet> upgrade) {
  attnc_kernel_set_t handle = wrap(context, std::move(baseline));
  handle->upgrade = std::move(upgrade);
  handle->upgrade_open.store(handle->upgrade != nullptr,
                             std::memory_order_release);
  return handle;
}

void upgradeSlow(attnc_kernel_set_s *set, void *stream, bool has_stream) {
  std::lock_guard<std::mutex> lock(set->upgrade_mutex);
  if (!set->upgrade_open.load(std::memory_order_relaxed))
    return;
  auto warn = [&](const std::string &message) {
    if (set->context->options().warning)
      set->context->options().warning(message);
    else
      std::fprintf(stderr, "attnc: warning: %s\n", message.c_str());
  };
  std::string name;
  for (const KernelAbi &abi : set->set->kernels())
    name += (name.empty() ? "" : ", ") + abi.name;
  PendingKernelSet::SetResult optimised = set->upgrade->result();
  if (!optimised) {
    warn("the optimised tier of kernels " + name +
         " failed to compile; the baseline tier stays: " +
         optimised.status().message());
    set->upgrade_open.store(false, std::memory_order_relaxed);
    return;
  }
  if (has_stream) {
    // Never inside a capture: a captured graph keeps the function it
    // recorded, and a module load in the middle of one is not allowed.
    auto driver = CudaDriver::get(set->context->options().cuda_driver_library);
    if (!driver)
      return; // nothing can launch either; the next boundary tries again
    auto capturing =
        (*driver)->isCapturing(static_cast<CUstream>(stream));
    if (!capturing || *capturing)
      return;
  }
  // Every kernel of the baseline set must be in the optimised one, with the
  // same parameters (the tiers differ in schedule, not in what a launch
  // passes); otherwise the baseline stays.
  std::vector<const KernelAbi *> abis;
  for (const auto &kernel : set->kernels) {
    const KernelAbi &old_abi = *kernel->tiers.front()->abi;
    const KernelAbi *abi = (*optimised)->findKernel(old_abi.name);
    bool same = abi && abi->params.size() == old_abi.params.size() &&
                abi->launch_scalars.size() == old_abi.launch_scalars.size();
    for (size_t i = 0; same && i < abi->params.size(); ++i)
      same = abi->params[i].name == old_abi.params[i].name &&
             abi->params[i].kind == old_abi.params[i].kind;
    if (!same) {
      warn("the optimised tier of kernel '" + old_abi.name +
           "' does not have the baseline's parameters; the baseline tier "
           "stays");
      set->upgrade_open.store(false, std::memory_order_relaxed);
      return;
    }
    abis.push_back(abi);
  }
  set->optimised = *optimised;
  for (size_t i = 0; i < set->kernels.size(); ++i) {
    attnc_kernel_s &kernel = *set->kernels[i];
    kernel.tiers.push_back(
        makeTier(*set->context, *set->optimised, *abis[i]));
    kernel.active.store(kernel.tiers.back().get(), std::memory_order_release);
  }
  set->current.store(set->optimised.get(), std::memory_order_release);
  set->upgrade_open.store(false, std::memory_order_release);
}

} // namespace attnc::runtime::capi

using namespace attnc::runtime::capi;

namespace {

/// A (pointer, count) array of C strings; null entries are errors.
Result<std::vector<std::string>> strings(const char *const *items, size_t count,
                                         const char *field) {
  std::vector<std::string> out;
  if (count > 0 && !items)
    return Status(StatusCode::InvalidArgument, field,
                  "NULL array with a non-zero count");
  for (size_t i = 0; i < count; ++i) {
    if (!items[i])
      return Status(StatusCode::InvalidArgument,
                    std::string(field) + "[" + std::to_string(i) + "]",
                    "NULL string");
    out.emplace_back(items[i]);
  }
  return out;
}


/// Hands a compiled or loaded set to the caller through `out_set`.
attnc_status_t deliver(attnc_context_t context,
                       Result<std::shared_ptr<const KernelSet>> set,
                       attnc_kernel_set_t *out_set) {
  if (!set)
    return fail(set.status());
  *out_set = wrap(context->context, std::move(*set));
  return ATTNC_STATUS_OK;
}

const KernelBinary *binaryFor(attnc_kernel_set_t set, const char *arch) {
  return arch ? set->currentSet().binaryForArch(arch) : nullptr;
}

attnc_status_t noSuchArch(attnc_kernel_set_t set, const char *arch) {
  std::string archs;
  for (const KernelBinary &binary : set->currentSet().binaries())
    archs += (archs.empty() ? "" : ", ") + binary.arch;
  return fail(Status(StatusCode::NotFound, "arch",
                     "no binary for '" + std::string(arch ? arch : "(null)") +
                         "' in this set (it has " + archs + ")"));
}

} // namespace

extern "C" {

const char *attnc_status_name(attnc_status_t status) {
  if (int(status) < 0 || int(status) > int(StatusCode::Internal))
    return "unknown";
  return statusCodeName(StatusCode(status));
}

const char *attnc_last_error(void) { return last_error.c_str(); }

const char *attnc_version(void) { return attncVersion(); }

void attnc_context_options_initialize(attnc_context_options_t *options) {
  if (options)
    *options = attnc_context_options_t{};
}

attnc_status_t attnc_context_create(const attnc_context_options_t *options,
                                    attnc_context_t *out_context) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s = checkArgs(out_context, "out_context"))
      return s;
    attnc_context_options_t defaults;
    attnc_context_options_initialize(&defaults);
    const attnc_context_options_t &in = options ? *options : defaults;

    ContextOptions cpp;
    if (in.cache_dir)
      cpp.cache_dir = in.cache_dir;
    if (in.num_archs > 0 || in.archs) {
      auto archs = strings(in.archs, in.num_archs, "archs");
      if (!archs)
        return fail(archs.status());
      if (!archs->empty())
        cpp.archs = std::move(*archs);
    }
    cpp.disable_cache = in.disable_cache != 0;
    cpp.disable_pdl = in.disable_pdl != 0;
    if (in.nvrtc_library_path)
      cpp.nvrtc_library_path = in.nvrtc_library_path;
    if (in.cuda_driver_library)
      cpp.cuda_driver_library = in.cuda_driver_library;
    if (in.warning_callback) {
      attnc_warning_callback_t callback = in.warning_callback;
      void *user_data = in.warning_user_data;
      cpp.warning = [callback, user_data](const std::string &message) {
        callback(user_data, message.c_str());
      };
    }
    auto context = Context::create(std::move(cpp));
    if (!context)
      return fail(context.status());
    auto handle = std::make_unique<attnc_context_s>();
    handle->context = std::move(*context);
    *out_context = handle.release();
    return ATTNC_STATUS_OK;
  });
}

void attnc_context_destroy(attnc_context_t context) { delete context; }

attnc_status_t attnc_context_nvrtc_version(attnc_context_t context,
                                           int *out_major, int *out_minor) {
  return guarded([&]() -> attnc_status_t {
    if (!out_major || !out_minor)
      return invalid(!out_major ? "out_major" : "out_minor", "NULL");
    *out_major = *out_minor = 0;
    if (!context)
      return invalid("context", "NULL");
    auto compiler = context->context->compiler();
    if (!compiler)
      return fail(compiler.status());
    *out_major = (*compiler)->version().major;
    *out_minor = (*compiler)->version().minor;
    return ATTNC_STATUS_OK;
  });
}

void attnc_compile_options_initialize(attnc_compile_options_t *options) {
  if (options)
    *options = attnc_compile_options_t{};
}

attnc_status_t attnc_kernel_set_compile(attnc_context_t context,
                                        const char *cuda_source,
                                        const char *abi_json,
                                        const attnc_compile_options_t *options,
                                        attnc_kernel_set_t *out_set) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s = checkArgs(out_set, "out_set",
                                     {{"context", context},
                                      {"cuda_source", cuda_source},
                                      {"abi_json", abi_json}}))
      return s;
    attnc_compile_options_t defaults;
    attnc_compile_options_initialize(&defaults);
    const attnc_compile_options_t &in = options ? *options : defaults;

    SourceOptions cpp;
    if (in.source_name)
      cpp.source_name = in.source_name;
    auto names = strings(in.header_names, in.num_headers, "header_names");
    if (!names)
      return fail(names.status());
    auto texts = strings(in.header_sources, in.num_headers, "header_sources");
    if (!texts)
      return fail(texts.status());
    for (size_t i = 0; i < names->size(); ++i)
      if (!cpp.headers.emplace((*names)[i], (*texts)[i]).second)
        return invalid("header_names[" + std::to_string(i) + "]",
                       "duplicate header '" + (*names)[i] + "'");
    auto extra =
        strings(in.extra_options, in.num_extra_options, "extra_options");
    if (!extra)
      return fail(extra.status());
    cpp.extra_options = std::move(*extra);
    auto archs = strings(in.archs, in.num_archs, "archs");
    if (!archs)
      return fail(archs.status());
    cpp.archs = std::move(*archs);

    return deliver(context,
                   context->context->compile(cuda_source, abi_json, cpp),
                   out_set);
  });
}

attnc_status_t attnc_kernel_set_load_bundle(attnc_context_t context,
                                            const char *directory,
                                            attnc_kernel_set_t *out_set) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s =
            checkArgs(out_set, "out_set",
                      {{"context", context}, {"directory", directory}}))
      return s;
    return deliver(context, context->context->loadBundle(directory), out_set);
  });
}

attnc_status_t attnc_kernel_set_write_bundle(attnc_kernel_set_t set,
                                             const char *directory) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s = checkArgs({{"set", set}, {"directory", directory}}))
      return s;
    if (Status s = set->currentSet().writeBundle(directory); !s)
      return fail(s);
    return ATTNC_STATUS_OK;
  });
}

void attnc_kernel_set_destroy(attnc_kernel_set_t set) { delete set; }

size_t attnc_kernel_set_kernel_count(attnc_kernel_set_t set) {
  return set ? set->kernels.size() : 0;
}

attnc_status_t attnc_kernel_set_kernel_at(attnc_kernel_set_t set, size_t index,
                                          attnc_kernel_t *out_kernel) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s = checkArgs(out_kernel, "out_kernel", {{"set", set}}))
      return s;
    if (index >= set->kernels.size())
      return fail(Status(StatusCode::NotFound, "index",
                         std::to_string(index) + " is past the " +
                             std::to_string(set->kernels.size()) +
                             " kernels of this set"));
    *out_kernel = set->kernels[index].get();
    return ATTNC_STATUS_OK;
  });
}

attnc_status_t attnc_kernel_set_find_kernel(attnc_kernel_set_t set,
                                            const char *name,
                                            attnc_kernel_t *out_kernel) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s =
            checkArgs(out_kernel, "out_kernel", {{"set", set}, {"name", name}}))
      return s;
    for (const auto &kernel : set->kernels)
      if (kernel->tier().abi->name == name) {
        *out_kernel = kernel.get();
        return ATTNC_STATUS_OK;
      }
    return fail(Status(StatusCode::NotFound, "name",
                       "no kernel '" + std::string(name) + "' in this set"));
  });
}

const char *attnc_kernel_name(attnc_kernel_t kernel) {
  return kernel ? kernel->tier().abi->name.c_str() : "";
}

const char *attnc_kernel_abi_json(attnc_kernel_t kernel) {
  return kernel ? kernel->tier().abi_json.c_str() : "";
}

size_t attnc_kernel_param_count(attnc_kernel_t kernel) {
  return kernel ? kernel->tier().abi->params.size() : 0;
}

size_t attnc_kernel_launch_scalar_count(attnc_kernel_t kernel) {
  return kernel ? kernel->tier().abi->launch_scalars.size() : 0;
}

attnc_kernel_tier_t attnc_kernel_set_tier(attnc_kernel_set_t set) {
  if (!set)
    return ATTNC_KERNEL_TIER_OPTIMISED;
  return set->upgrade && &set->currentSet() == set->set.get()
             ? ATTNC_KERNEL_TIER_BASELINE
             : ATTNC_KERNEL_TIER_OPTIMISED;
}

size_t attnc_kernel_set_arch_count(attnc_kernel_set_t set) {
  return set ? set->currentSet().binaries().size() : 0;
}

const char *attnc_kernel_set_arch(attnc_kernel_set_t set, size_t index) {
  if (!set || index >= set->currentSet().binaries().size())
    return nullptr;
  return set->currentSet().binaries()[index].arch.c_str();
}

attnc_status_t attnc_kernel_set_cubin(attnc_kernel_set_t set, const char *arch,
                                      const void **out_data, size_t *out_size) {
  return guarded([&]() -> attnc_status_t {
    if (!out_data || !out_size)
      return invalid(!out_data ? "out_data" : "out_size", "NULL");
    *out_data = nullptr;
    *out_size = 0;
    if (!set)
      return invalid("set", "NULL");
    const KernelBinary *binary = binaryFor(set, arch);
    if (!binary)
      return noSuchArch(set, arch);
    *out_data = binary->cubin.data();
    *out_size = binary->cubin.size();
    return ATTNC_STATUS_OK;
  });
}

attnc_status_t attnc_kernel_set_ptx(attnc_kernel_set_t set, const char *arch,
                                    const char **out_ptx) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s = checkArgs(out_ptx, "out_ptx", {{"set", set}}))
      return s;
    const KernelBinary *binary = binaryFor(set, arch);
    if (!binary)
      return noSuchArch(set, arch);
    *out_ptx = binary->ptx.c_str();
    return ATTNC_STATUS_OK;
  });
}

attnc_status_t attnc_kernel_set_build_report(attnc_kernel_set_t set,
                                             size_t arch_index,
                                             attnc_build_report_t *out_report) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s = checkArgs(out_report, "out_report", {{"set", set}}))
      return s;
    const auto &binaries = set->currentSet().binaries();
    if (arch_index >= binaries.size())
      return fail(Status(StatusCode::NotFound, "arch_index",
                         std::to_string(arch_index) + " is past the " +
                             std::to_string(binaries.size()) +
                             " binaries of this set"));
    const CacheReport &report = binaries[arch_index].report;
    out_report->arch = binaries[arch_index].arch.c_str();
    out_report->outcome = attnc_build_outcome_t(report.outcome);
    out_report->total_ms = report.total_ms;
    out_report->compile_ms = report.compile_ms;
    out_report->lock_wait_ms = report.lock_wait_ms;
    out_report->cache_key = report.key.c_str();
    out_report->cache_entry_path = report.entry_path.c_str();
    return ATTNC_STATUS_OK;
  });
}

attnc_status_t attnc_kernel_launch(attnc_kernel_t kernel, void *stream,
                                   void *const *args, size_t num_args,
                                   const int64_t *launch_scalars,
                                   size_t num_launch_scalars) {
  return guarded([&]() -> attnc_status_t {
    if (!kernel)
      return invalid("kernel", "NULL");
    takeUpgrade(kernel->set, stream, true);
    Status s = kernel->tier().launcher->launch(stream, args, num_args, launch_scalars,
                                        num_launch_scalars);
    return s ? ATTNC_STATUS_OK : fail(s);
  });
}

attnc_status_t attnc_kernel_set_launch(attnc_kernel_set_t set,
                                       const char *kernel_name, void *stream,
                                       void *const *args, size_t num_args,
                                       const int64_t *launch_scalars,
                                       size_t num_launch_scalars) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s =
            checkArgs({{"set", set}, {"kernel_name", kernel_name}}))
      return s;
    for (const auto &kernel : set->kernels)
      if (kernel->tier().abi->name == kernel_name)
        return attnc_kernel_launch(kernel.get(), stream, args, num_args,
                                   launch_scalars, num_launch_scalars);
    std::string names;
    for (const auto &kernel : set->kernels)
      names += (names.empty() ? "" : ", ") + kernel->tier().abi->name;
    return fail(Status(StatusCode::NotFound, "kernel",
                       "no kernel '" + std::string(kernel_name) +
                           "' in this set (it has " + names + ")"));
  });
}

} // extern "C"
