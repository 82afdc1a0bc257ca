//===- CApiModel.cpp - C API of the attnc JIT compiler --------------------===//
#include "attnc-c/Compiler.h"

#include "CApiInternal.h"
#include "attnc/Jit/ModelCompiler.h"
#include "attnc/Jit/ModelIndex.h"

#include <memory>
#include <string>
#include <vector>

using namespace attnc;
using namespace attnc::runtime;
using namespace attnc::runtime::capi;

namespace {
/// A compiled model as handles share it: the memo of the context and every
/// handle of the same compile point to one.
struct SharedModel {
  jit::CompiledModel model;
  std::string manifest;
  /// One kernel-set handle per kernel, owned here (tiered where the kernel
  /// has two tiers, so every handle sees one swap).
  std::vector<attnc_kernel_set_t> sets;

  SharedModel() = default;
  SharedModel(const SharedModel &) = delete;
  SharedModel &operator=(const SharedModel &) = delete;
  ~SharedModel() {
    for (attnc_kernel_set_t set : sets)
      attnc_kernel_set_destroy(set);
  }
};
} // namespace

struct attnc_model_s {
  std::shared_ptr<const SharedModel> shared;
  const jit::CompiledModel &model() const { return shared->model; }
};

namespace {

/// Reads the C options into the compiler's; errors name the field.
Result<jit::ModelCompileOptions>
readOptions(attnc_context_t context, const attnc_model_options_t *options) {
  jit::ModelCompileOptions out;
  const std::vector<std::string> &archs = context->context->options().archs;
  if (!archs.empty())
    out.arch = archs.front();
  if (!options)
    return out;
  if (options->arch)
    out.arch = options->arch;
  if (options->tp < 0 || options->rank < 0 || options->block_size < 0)
    return Status(StatusCode::InvalidArgument,
                  options->tp < 0     ? "options.tp"
                  : options->rank < 0 ? "options.rank"
                                      : "options.block_size",
                  "must be >= 0 (0: the default)");
  if (options->tp)
    out.layer.tp = options->tp;
  out.layer.rank = options->rank;
  if (options->block_size)
    out.layer.block_size = options->block_size;
  if (options->dtype) {
    std::string dtype = options->dtype;
    if (dtype != "bf16" && dtype != "fp16")
      return Status(StatusCode::InvalidArgument, "options.dtype",
                    "must be \"bf16\" or \"fp16\", got \"" + dtype + "\"");
    out.layer.dtype = dtype;
  }
  switch (options->tiering) {
  case ATTNC_TIERING_ON:
    out.tiering = jit::Tiering::On;
    break;
  case ATTNC_TIERING_DEFAULT:
  case ATTNC_TIERING_OFF:
    out.tiering = jit::Tiering::Off;
    break;
  case ATTNC_TIERING_BASELINE_ONLY:
    out.tiering = jit::Tiering::BaselineOnly;
    break;
  default:
    return Status(StatusCode::InvalidArgument, "options.tiering",
                  "must be an attnc_tiering_t (0..3), got " +
                      std::to_string(int(options->tiering)));
  }
  if (options->kv_dtype) {
    std::string kv = options->kv_dtype;
    if (kv == "bf16")
      out.layer.kv_dtype = KvCacheDtype::BF16;
    else if (kv == "fp16")
      out.layer.kv_dtype = KvCacheDtype::FP16;
    else if (kv == "fp8")
      out.layer.kv_dtype = KvCacheDtype::FP8E4M3;
    else
      return Status(StatusCode::InvalidArgument, "options.kv_dtype",
                    "must be \"bf16\", \"fp16\" or \"fp8\", got \"" + kv +
                        "\"");
  }
  return out;
}

/// A shared model for `model`'s kernels (tiered sets where they have two
/// tiers).
Result<std::shared_ptr<const SharedModel>>
share(attnc_context_t context, Result<jit::CompiledModel> model) {
  if (!model)
    return model.status();
  auto shared = std::make_shared<SharedModel>();
  shared->model = std::move(*model);
  shared->manifest = shared->model.manifestJson();
  for (const jit::CompiledKernel &kernel : shared->model.kernels)
    shared->sets.push_back(
        kernel.optimised
            ? wrapTiered(context->context, kernel.set, kernel.optimised)
            : wrap(context->context, kernel.set));
  return std::shared_ptr<const SharedModel>(std::move(shared));
}

attnc_status_t deliver(Result<std::shared_ptr<const SharedModel>> shared,
                       attnc_model_t *out_model) {
  if (!shared)
    return fail(shared.status());
  auto handle = std::make_unique<attnc_model_s>();
  handle->shared = std::move(*shared);
  *out_model = handle.release();
  return ATTNC_STATUS_OK;
}

/// The common checks of the three constructors.
attnc_status_t checkCommon(attnc_context_t context, const void *input,
                           const char *inputName, attnc_model_t *out_model) {
  return checkArgs(out_model, "out_model",
                   {{"context", context}, {inputName, input}});
}

/// A compiler front end: jit::compileModelJson or jit::compileModelIr.
using FrontEnd = Result<jit::CompiledModel> (*)(
    runtime::Context &, std::string_view, const jit::ModelCompileOptions &);

/// attnc_model_compile_config and attnc_model_compile_ir: the same checks
/// and options around a different front end (`frontEndName` in the memo
/// key), reading `input`. The context's memo answers a compile it has seen
/// (the same input bytes and options) without running anything.
attnc_status_t compileWith(FrontEnd compile, const char *frontEndName,
                           attnc_context_t context, const char *input,
                           const char *inputName,
                           const attnc_model_options_t *options,
                           attnc_model_t *out_model) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s = checkCommon(context, input, inputName, out_model))
      return s;
    Result<jit::ModelCompileOptions> compileOptions =
        readOptions(context, options);
    if (!compileOptions)
      return fail(compileOptions.status());
    const bool memo = !context->context->cache().options().disabled;
    std::string key;
    if (memo) {
      key = jit::modelCompileInput(frontEndName, input, *compileOptions);
      std::lock_guard<std::mutex> lock(context->model_memo_mutex);
      if (auto hit = context->model_memo.find(key);
          hit != context->model_memo.end())
        return deliver(std::static_pointer_cast<const SharedModel>(
                           std::shared_ptr<void>(hit->second)),
                       out_model);
    }
    Result<std::shared_ptr<const SharedModel>> shared = share(
        context, compile(*context->context, input, *compileOptions));
    if (shared && memo) {
      std::lock_guard<std::mutex> lock(context->model_memo_mutex);
      // A concurrent compile of the same input may have got there first:
      // keep one, so every handle shares its tier swaps.
      auto [it, inserted] = context->model_memo.emplace(
          std::move(key), std::const_pointer_cast<SharedModel>(*shared));
      if (!inserted)
        shared = std::static_pointer_cast<const SharedModel>(it->second);
    }
    return deliver(std::move(shared), out_model);
  });
}

} // namespace

extern "C" {

void attnc_model_options_initialize(attnc_model_options_t *options) {
  if (options)
    *options = attnc_model_options_t{};
}

attnc_status_t attnc_model_compile_config(attnc_context_t context,
                                          const char *config_json,
                                          const attnc_model_options_t *options,
                                          attnc_model_t *out_model) {
  return compileWith(jit::compileModelJson, "config", context, config_json,
                     "config_json", options, out_model);
}

attnc_status_t attnc_model_compile_ir(attnc_context_t context,
                                      const char *mlir_text,
                                      const attnc_model_options_t *options,
                                      attnc_model_t *out_model) {
  return compileWith(jit::compileModelIr, "ir", context, mlir_text,
                     "mlir_text", options, out_model);
}

attnc_status_t attnc_model_load_bundle(attnc_context_t context,
                                       const char *directory,
                                       attnc_model_t *out_model) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s = checkCommon(context, directory, "directory", out_model))
      return s;
    return deliver(share(context, jit::loadModelBundle(directory)), out_model);
  });
}

attnc_status_t attnc_model_write_bundle(attnc_model_t model,
                                        const char *directory) {
  return guarded([&]() -> attnc_status_t {
    if (attnc_status_t s =
            checkArgs({{"model", model}, {"directory", directory}}))
      return s;
    if (Status s = jit::writeModelBundle(model->model(), directory); !s.ok())
      return fail(s);
    return ATTNC_STATUS_OK;
  });
}

void attnc_model_destroy(attnc_model_t model) { delete model; }

const char *attnc_model_manifest_json(attnc_model_t model) {
  return model ? model->shared->manifest.c_str() : nullptr;
}

size_t attnc_model_kernel_count(attnc_model_t model) {
  return model ? model->model().kernels.size() : 0;
}

namespace {
const jit::CompiledKernel *kernelAt(attnc_model_t model, size_t i) {
  return model && i < model->model().kernels.size() ? &model->model().kernels[i]
                                                    : nullptr;
}
} // namespace

const char *attnc_model_kernel_name(attnc_model_t model, size_t i) {
  const jit::CompiledKernel *kernel = kernelAt(model, i);
  return kernel ? kernel->name.c_str() : nullptr;
}
const char *attnc_model_kernel_kind(attnc_model_t model, size_t i) {
  const jit::CompiledKernel *kernel = kernelAt(model, i);
  return kernel ? kernel->kind.c_str() : nullptr;
}
const char *attnc_model_kernel_layer(attnc_model_t model, size_t i) {
  const jit::CompiledKernel *kernel = kernelAt(model, i);
  return kernel ? kernel->layer.c_str() : nullptr;
}
const char *attnc_model_kernel_source(attnc_model_t model, size_t i) {
  const jit::CompiledKernel *kernel = kernelAt(model, i);
  return kernel ? kernel->source.c_str() : nullptr;
}
attnc_kernel_set_t attnc_model_kernel_set(attnc_model_t model, size_t i) {
  return kernelAt(model, i) ? model->shared->sets[i] : nullptr;
}

attnc_status_t attnc_model_wait_optimised(attnc_model_t model) {
  return guarded([&]() -> attnc_status_t {
    if (!model)
      return invalid("model", "NULL");
    if (Status s = model->model().waitOptimised(); !s.ok())
      return fail(s);
    return ATTNC_STATUS_OK;
  });
}

} // extern "C"
