//===- ModelCompiler.cpp - Model config to launchable kernels -------------===//
#include "attnc/Jit/ModelCompiler.h"

#include "attnc/Jit/ModelIndex.h"

#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Runtime/DeviceHeaders.h"
#include "attnc/Support/FileUtil.h"
#include "attnc/Support/Json.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <thread>

using namespace mlir;

namespace attnc::jit {
namespace {

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

std::string printAttr(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

/// Collects MLIR error diagnostics so that they become one Status.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == DiagnosticSeverity::Error) {
            std::string text;
            llvm::raw_string_ostream os(text);
            os << diagnostic.getLocation() << ": " << diagnostic;
            messages.push_back(text);
          }
          return success();
        }) {}

  Status status(StatusCode code, const std::string &field,
                const std::string &what) const {
    std::string rule = what;
    for (const std::string &message : messages)
      rule += "\n  " + message;
    return Status(code, field, rule);
  }

private:
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler;
};

/// attnc-pipeline (with attn-specialize's `baseline` option for the
/// baseline tier), then the emitter's preparation, one stage at a time so
/// that the IR after each can be kept.
std::vector<PipelineStage> compileStages(const std::string &arch,
                                         bool baseline) {
  PipelineOptions pipeline;
  pipeline.arch = arch;
  pipeline.baseline = baseline;
  std::vector<PipelineStage> stages = attncPipelineStages(pipeline);
  stages.push_back({"attn-prepare-emission",
                    [] { return createAttnPrepareEmission(); }});
  return stages;
}

/// One kernel as the pipeline and the emitter made it.
struct KernelForm {
  std::string name, kind, layer, source, schedule, kernel_ir;
  runtime::KernelAbi abi;
  /// Its attention schedule takes wgmma (so a baseline form differs).
  bool wgmma = false;
};

/// Runs the pipeline on `module` (in place) and emits its kernels, in the
/// module's order; the IR after each stage goes to `stages` when given.
Result<std::vector<KernelForm>>
lowerModule(ModuleOp module, const std::string &arch, bool baseline,
            std::vector<StageIr> *stages,
            const DiagnosticCollector &diagnostics) {
  MLIRContext &mlirContext = *module.getContext();
  for (const PipelineStage &stage : compileStages(arch, baseline)) {
    PassManager pm(&mlirContext);
    pm.addPass(stage.create());
    if (failed(pm.run(module)))
      return diagnostics.status(StatusCode::InvalidArgument, stage.name,
                                "the pipeline stage failed");
    if (stages)
      stages->push_back({stage.name, print(module)});
  }
  FailureOr<std::vector<EmittedKernel>> emitted = emitCudaKernels(module);
  if (failed(emitted))
    return diagnostics.status(StatusCode::Internal, "codegen",
                              "CUDA emission failed");
  std::vector<KernelForm> forms;
  for (EmittedKernel &kernel : *emitted) {
    KernelForm form;
    form.name = kernel.name;
    form.kind = kernel.kind;
    form.layer = kernel.layer;
    form.source = std::move(kernel.source);
    form.abi = std::move(kernel.abi);
    if (auto function = module.lookupSymbol<func::FuncOp>(kernel.name)) {
      form.kernel_ir = print(function);
      function.walk([&](Operation *op) {
        if (Attribute schedule = op->getAttr("schedule"))
          form.schedule = printAttr(schedule);
        if (auto attention =
                op->getAttrOfType<attn::AttentionScheduleAttr>("schedule"))
          form.wgmma |= attention.getMma() == "wgmma";
      });
    }
    forms.push_back(std::move(form));
  }
  return forms;
}

/// Runs `work(i)` for i in [0, count) on at most `limit` threads (the
/// calling one among them).
void runParallel(size_t count, unsigned limit,
                 const std::function<void(size_t)> &work) {
  size_t threads = std::min<size_t>(count, std::max(1u, limit));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++)
      work(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
}

unsigned parallelLimit(const ModelCompileOptions &options) {
  if (options.max_parallel_compiles)
    return options.max_parallel_compiles;
  return std::max(1u, std::thread::hardware_concurrency());
}

/// The background compiles of optimised tiers. They hold their context
/// alive; the process joins them at exit (this object's destructor), so
/// that none runs NVRTC while the statics it uses are destroyed -- made
/// after NVRTC is loaded, it is destroyed before NVRTC's statics are.
class BackgroundCompiles {
public:
  static BackgroundCompiles &get() {
    static BackgroundCompiles instance;
    return instance;
  }
  void start(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Join what has ended, so the list stays short.
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    threads_.push_back({std::thread([work = std::move(work), done] {
                          work();
                          done->store(true);
                        }),
                        done});
  }
  ~BackgroundCompiles() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Entry &entry : threads_)
      entry.thread.join();
  }

private:
  struct Entry {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex mutex_;
  std::list<Entry> threads_;
};

/// ATTNC_TIERING_TEST_HOLD_MS: how long a background tier waits before it
/// starts compiling (0 when unset or not a number in [0, 60000]). A testing
/// knob: on a machine with many cores the optimised tier can be ready
/// before a test has made the baseline's plans, and the swap tests need the
/// baseline to still be in use then.
std::chrono::milliseconds tierHoldForTests() {
  const char *value = std::getenv("ATTNC_TIERING_TEST_HOLD_MS");
  if (!value || !*value)
    return std::chrono::milliseconds(0);
  char *end = nullptr;
  long ms = std::strtol(value, &end, 10);
  if (*end != '\0' || ms < 0 || ms > 60000)
    return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(ms);
}

/// Whether the NVRTC the context loaded is the library the disk index key
/// names (NvrtcLibrary::identity); only then may an entry be written.
bool loadedNvrtcIsIndexed(runtime::Context &context) {
  auto compiler = context.compiler();
  if (!compiler)
    return false;
  std::string identity =
      runtime::NvrtcLibrary::identity(context.options().nvrtc_library_path);
  char real[PATH_MAX];
  if (identity.empty() ||
      !::realpath((*compiler)->library().path().c_str(), real))
    return false;
  std::string prefix = std::string(real) + " ";
  return identity.compare(0, prefix.size(), prefix) == 0;
}

void storeIndex(runtime::Context &context, const std::string &index_key,
                const CompiledModel &model) {
  if (index_key.empty() || !loadedNvrtcIsIndexed(context))
    return;
  std::string payload = encodeModelIndex(model);
  if (!payload.empty())
    context.cache().writeIndexEntry(index_key, payload);
}

/// Runs the pipeline on a layer-form module, emits the kernels and compiles
/// them concurrently (NVRTC is thread-safe per program), in tiers when
/// asked; writes the disk index entry under `index_key` (if not empty) once
/// the final kernels are there.
Result<CompiledModel> compileModule(runtime::Context &context,
                                    MLIRContext &mlirContext, ModuleOp module,
                                    const ModelCompileOptions &options,
                                    CompiledModel model,
                                    const std::string &index_key) {
  model.arch = options.arch;
  if (auto type = module->getAttrOfType<StringAttr>("attn.model_type"))
    model.model_type = type.str();
  DiagnosticCollector diagnostics(mlirContext);
  // The baseline tier starts from the same imported module.
  OwningOpRef<ModuleOp> baselineInput;
  if (options.tiering == Tiering::On)
    baselineInput = module.clone();
  if (options.keep_stage_ir)
    model.stages.push_back({"import", print(module)});
  Result<std::vector<KernelForm>> forms = lowerModule(
      module, options.arch, options.tiering == Tiering::BaselineOnly,
      options.keep_stage_ir ? &model.stages : nullptr, diagnostics);
  if (!forms)
    return forms.status();

  // Baseline forms of the kernels whose optimised form differs.
  std::map<std::string, KernelForm> baselines;
  if (options.tiering == Tiering::On &&
      llvm::any_of(*forms, [](const KernelForm &f) { return f.wgmma; })) {
    Result<std::vector<KernelForm>> lowered = lowerModule(
        *baselineInput, options.arch, /*baseline=*/true, nullptr, diagnostics);
    if (!lowered)
      return lowered.status();
    for (KernelForm &form : *lowered)
      if (!form.wgmma)
        baselines.emplace(form.name, std::move(form));
  }

  runtime::SourceOptions sourceOptions;
  sourceOptions.headers = runtime::deviceHeaders();
  sourceOptions.archs = {options.arch};
  auto optionsFor = [&](const std::string &name) {
    runtime::SourceOptions perKernel = sourceOptions;
    perKernel.source_name = name + ".cu";
    return perKernel;
  };

  // What each kernel compiles now (its first tier) and, for two-tier
  // kernels, in the background.
  struct Job {
    size_t kernel;
    const KernelForm *form;
  };
  std::vector<Job> firstTier, background;
  for (size_t i = 0; i < forms->size(); ++i) {
    const KernelForm &form = (*forms)[i];
    CompiledKernel compiled;
    compiled.name = form.name;
    compiled.kind = form.kind;
    compiled.layer = form.layer;
    compiled.source = form.source;
    compiled.schedule = form.schedule;
    compiled.kernel_ir = form.kernel_ir;
    auto baseline = form.wgmma ? baselines.find(form.name) : baselines.end();
    if (baseline != baselines.end()) {
      // An optimised binary already cached needs no baseline.
      auto cached = context.findCompiled(form.source, {form.abi},
                                         optionsFor(form.name));
      if (cached && *cached) {
        compiled.set = *cached;
      } else {
        const KernelForm &first = baseline->second;
        compiled.optimised = std::make_shared<runtime::PendingKernelSet>();
        compiled.optimised_source = form.source;
        compiled.optimised_schedule = form.schedule;
        compiled.optimised_kernel_ir = form.kernel_ir;
        compiled.source = first.source;
        compiled.schedule = first.schedule;
        compiled.kernel_ir = first.kernel_ir;
        firstTier.push_back({i, &first});
        background.push_back({i, &form});
      }
    } else {
      firstTier.push_back({i, &form});
    }
    model.kernels.push_back(std::move(compiled));
  }

  // Progress: one report at a time, in the order the builds end.
  std::mutex progressMutex;
  size_t built = 0;
  const auto start = std::chrono::steady_clock::now();
  auto report = [&](const std::string &name,
                    const Result<std::shared_ptr<const runtime::KernelSet>>
                        &set) {
    if (!options.on_kernel_built)
      return;
    std::lock_guard<std::mutex> lock(progressMutex);
    KernelBuildEvent event;
    event.name = name;
    event.done = ++built;
    event.total = model.kernels.size();
    event.elapsed_ms = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start)
                           .count();
    event.ok = set.ok();
    if (set.ok() && !(*set)->binaries().empty())
      event.outcome = (*set)->binaries().front().report.outcome;
    options.on_kernel_built(event);
  };
  for (const CompiledKernel &kernel : model.kernels)
    if (kernel.set)
      report(kernel.name, kernel.set);

  // The background tier, with a snapshot of the model as it will end, for
  // the disk index.
  auto startBackground = [&] {
    struct Work {
      std::shared_ptr<runtime::PendingKernelSet> pending;
      std::string source;
      runtime::KernelAbi abi;
      runtime::SourceOptions options;
      size_t kernel;
    };
    std::vector<Work> works;
    for (const Job &job : background)
      works.push_back({model.kernels[job.kernel].optimised, job.form->source,
                       job.form->abi, optionsFor(job.form->name), job.kernel});
    CompiledModel final = model;
    final.stages.clear();
    const std::chrono::milliseconds hold = tierHoldForTests();
    // NVRTC is loaded by now (the first tier ran), so the registry is made
    // after NVRTC's statics and joined before they go (see the class).
    BackgroundCompiles::get().start(
        [context = context.shared_from_this(), works = std::move(works),
         final = std::move(final), index_key, hold]() mutable {
          if (hold.count() > 0)
            std::this_thread::sleep_for(hold);
          runParallel(works.size(), unsigned(works.size()), [&](size_t w) {
            Result<std::shared_ptr<const runtime::KernelSet>> set =
                Status(StatusCode::Internal, "", "not compiled");
            try {
              set = context->compile(works[w].source, {works[w].abi},
                                     works[w].options);
            } catch (const std::exception &e) {
              set = Status(StatusCode::Internal, "", e.what());
            }
            works[w].pending->finish(set);
          });
          bool all = true;
          for (Work &work : works) {
            auto set = work.pending->result();
            all &= set.ok();
            if (!set.ok())
              continue;
            CompiledKernel &kernel = final.kernels[work.kernel];
            kernel.set = *set;
            kernel.source = std::move(kernel.optimised_source);
            kernel.schedule = std::move(kernel.optimised_schedule);
            kernel.kernel_ir = std::move(kernel.optimised_kernel_ir);
            kernel.optimised.reset();
          }
          if (all)
            storeIndex(*context, index_key, final);
        });
  };

  const unsigned limit = parallelLimit(options);
  // Overlap the tiers only when the machine has a thread for every compile;
  // otherwise the background tier would slow the first one down.
  const bool overlap = firstTier.size() + background.size() <= limit;
  if (!background.empty() && overlap) {
    // NVRTC must be loaded before the registry is made (see above).
    if (auto nvrtc = context.compiler(); !nvrtc)
      return nvrtc.status();
    startBackground();
  }

  std::vector<Result<std::shared_ptr<const runtime::KernelSet>>> results(
      firstTier.size(), Status(StatusCode::Internal, "", "not compiled"));
  runParallel(firstTier.size(), limit, [&](size_t j) {
    const KernelForm &form = *firstTier[j].form;
    try {
      results[j] = context.compile(form.source, {form.abi},
                                   optionsFor(form.name));
    } catch (const std::exception &e) {
      results[j] = Status(StatusCode::Internal, form.name, e.what());
    }
    report(form.name, results[j]);
  });
  for (size_t j = 0; j < firstTier.size(); ++j) {
    if (!results[j])
      return results[j].status(); // the first failing kernel, in order
    model.kernels[firstTier[j].kernel].set = *results[j];
  }
  if (!background.empty() && !overlap)
    startBackground();
  if (background.empty())
    storeIndex(context, index_key, model);
  return model;
}

const char *kModelBundleFormat = "attnc-model-bundle";
constexpr int kModelBundleVersion = 1;
/// The manifest embeds kernel ABIs and the config spec, a few levels deep.
constexpr std::size_t kMaxManifestDepth = 64;
/// A manifest is kilobytes of JSON; refuse anything absurd before parsing.
constexpr std::size_t kMaxManifestBytes = std::size_t(64) << 20;

} // namespace

std::string CompiledModel::manifestJson() const {
  nlohmann::json kernelList = nlohmann::json::array();
  for (const CompiledKernel &kernel : kernels) {
    nlohmann::json entry = {
        {"name", kernel.name},
        {"kind", kernel.kind},
        {"layer", kernel.layer},
        {"schedule", kernel.schedule},
        {"source", "kernels/" + kernel.name + "/" + kernel.name + ".cu"},
        {"bundle", "kernels/" + kernel.name},
    };
    if (kernel.set) {
      entry["abi"] = nlohmann::json::parse(
          runtime::kernelAbiToJson(kernel.set->kernels().front(), -1));
      nlohmann::json builds = nlohmann::json::array();
      for (const runtime::KernelBinary &binary : kernel.set->binaries())
        builds.push_back({{"arch", binary.arch},
                          {"outcome", runtime::buildOutcomeName(
                                          binary.report.outcome)},
                          {"total_ms", binary.report.total_ms},
                          {"compile_ms", binary.report.compile_ms},
                          {"cubin_bytes", binary.cubin.size()},
                          {"ptx_bytes", binary.ptx.size()},
                          {"nvrtc_version", binary.nvrtc_version}});
      entry["builds"] = builds;
    }
    kernelList.push_back(entry);
  }
  nlohmann::json manifest = {
      {"format", kModelBundleFormat},
      {"format_version", kModelBundleVersion},
      {"attnc_version", runtime::attncVersion()},
      {"arch", arch},
      {"model_type", model_type},
      {"config", config_spec.empty() ? nlohmann::json()
                                     : nlohmann::json::parse(config_spec)},
      {"kernels", kernelList},
  };
  return manifest.dump(2);
}

Status CompiledModel::waitOptimised() const {
  for (const CompiledKernel &kernel : kernels)
    if (kernel.optimised)
      if (auto set = kernel.optimised->wait(); !set)
        return set.status();
  return Status();
}

namespace {

/// The disk index key of a compile (empty: no index for it), and the model
/// the index has for it, if any.
struct IndexLookup {
  std::string key;
  std::unique_ptr<CompiledModel> model;
};

IndexLookup lookUpIndex(runtime::Context &context, std::string_view front_end,
                        std::string_view text,
                        const ModelCompileOptions &options) {
  IndexLookup lookup;
  if (options.keep_stage_ir || context.cache().options().disabled ||
      !runtime::validateArch(options.arch))
    return lookup;
  // The final kernels of On and Off are the same.
  ModelCompileOptions final = options;
  if (final.tiering == Tiering::On)
    final.tiering = Tiering::Off;
  lookup.key =
      modelIndexKey(context, modelCompileInput(front_end, text, final));
  if (lookup.key.empty())
    return lookup;
  std::optional<std::string> payload =
      context.cache().readIndexEntry(lookup.key);
  if (payload)
    lookup.model = decodeModelIndex(context, *payload);
  if (lookup.model && lookup.model->arch != options.arch)
    lookup.model.reset();
  if (lookup.model && options.on_kernel_built) {
    size_t done = 0;
    for (const CompiledKernel &kernel : lookup.model->kernels) {
      KernelBuildEvent event;
      event.name = kernel.name;
      event.done = ++done;
      event.total = lookup.model->kernels.size();
      event.outcome = kernel.set->binaries().front().report.outcome;
      options.on_kernel_built(event);
    }
  }
  return lookup;
}

Result<CompiledModel> compileConfig(runtime::Context &context,
                                    const ModelConfig &config,
                                    const ModelCompileOptions &options,
                                    const std::string &index_key) {
  if (Status status = runtime::validateArch(options.arch); !status.ok())
    return status;
  // Before the layout splits heads: a projection-wide q/k norm cannot be.
  if (Status split = checkTensorParallel(config, options.layer.tp);
      !split.ok())
    return split;
  MLIRContext mlirContext;
  auto module = buildModelModule(mlirContext, config, options.layer);
  if (!module)
    return module.status();
  CompiledModel model;
  model.config_spec = toSpecJson(config);
  return compileModule(context, mlirContext, **module, options,
                       std::move(model), index_key);
}

} // namespace

Result<CompiledModel> compileModel(runtime::Context &context,
                                   const ModelConfig &config,
                                   const ModelCompileOptions &options) {
  return compileConfig(context, config, options, "");
}

Result<CompiledModel> compileModelJson(runtime::Context &context,
                                       std::string_view config_json,
                                       const ModelCompileOptions &options) {
  IndexLookup index = lookUpIndex(context, "config", config_json, options);
  if (index.model)
    return std::move(*index.model);
  Result<ModelConfig> config = importModelConfig(config_json);
  if (!config)
    return config.status();
  return compileConfig(context, *config, options, index.key);
}

Result<CompiledModel> compileModelIr(runtime::Context &context,
                                     std::string_view mlir_text,
                                     const ModelCompileOptions &options) {
  if (Status status = runtime::validateArch(options.arch); !status.ok())
    return status;
  IndexLookup index = lookUpIndex(context, "ir", mlir_text, options);
  if (index.model)
    return std::move(*index.model);
  MLIRContext mlirContext;
  mlirContext.loadDialect<attn::AttnDialect, func::FuncDialect,
                          arith::ArithDialect>();
  DiagnosticCollector diagnostics(mlirContext);
  // MLIR's lexer finds the end of its buffer by a NUL after the last byte;
  // parseSourceString does not add one, and a string_view need not have one
  // (the parser would read past the caller's buffer). A copy has it.
  const std::string text(mlir_text);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&mlirContext));
  if (!module)
    return diagnostics.status(StatusCode::InvalidArgument, "mlir",
                              "the IR does not parse or verify");
  return compileModule(context, mlirContext, *module, options, CompiledModel(),
                       index.key);
}

Status writeModelBundle(const CompiledModel &tiered,
                        const std::string &directory) {
  namespace fu = file_util;
  // The bundle holds the final kernels: the optimised tier where there is
  // one (waiting for it).
  CompiledModel model = tiered;
  for (CompiledKernel &kernel : model.kernels) {
    if (!kernel.optimised)
      continue;
    auto set = kernel.optimised->wait();
    if (!set)
      return set.status();
    kernel.set = *set;
    kernel.source = kernel.optimised_source;
    kernel.schedule = kernel.optimised_schedule;
    kernel.kernel_ir = kernel.optimised_kernel_ir;
    kernel.optimised.reset();
  }
  for (const CompiledKernel &kernel : model.kernels) {
    if (!kernel.set)
      return Status(StatusCode::InvalidArgument, kernel.name,
                    "has no compiled kernel set");
    std::string dir = directory + "/kernels/" + kernel.name;
    if (Status s = fu::makeDirectories(dir); !s.ok())
      return s;
    if (Status s = fu::writeFileAtomic(dir + "/" + kernel.name + ".cu",
                                       kernel.source);
        !s.ok())
      return s;
    if (Status s = kernel.set->writeBundle(dir); !s.ok())
      return s;
  }
  // The manifest last: a directory with a manifest is complete.
  return fu::writeFileAtomic(directory + "/manifest.json",
                             model.manifestJson() + "\n");
}

Result<CompiledModel> parseModelManifest(std::string_view text,
                                         const std::string &document) {
  auto corrupt = [&](const std::string &field, const std::string &rule) {
    return Status(StatusCode::Corrupt, document + ": " + field, rule);
  };
  Result<nlohmann::json> parsed =
      json_util::parseObject(text, "<json>", kMaxManifestDepth);
  if (!parsed)
    return corrupt(parsed.status().field, parsed.status().rule);
  const nlohmann::json &manifest = *parsed;
  // A missing or mistyped member reads as "" (json::value would throw).
  auto stringMember = [&](const char *key) -> std::string {
    auto it = manifest.find(key);
    return it != manifest.end() && it->is_string() ? it->get<std::string>()
                                                   : "";
  };
  if (stringMember("format") != kModelBundleFormat)
    return corrupt("format", std::string("must be \"") + kModelBundleFormat +
                                 "\"");
  if (!manifest.contains("format_version") ||
      manifest["format_version"] != kModelBundleVersion)
    return corrupt("format_version",
                   "must be " + std::to_string(kModelBundleVersion));
  if (!manifest.contains("kernels") || !manifest["kernels"].is_array())
    return corrupt("kernels", "must be an array");
  CompiledModel model;
  model.arch = stringMember("arch");
  model.model_type = stringMember("model_type");
  if (manifest.contains("config") && manifest["config"].is_object())
    model.config_spec = manifest["config"].dump(2);
  size_t index = 0;
  for (const nlohmann::json &entry : manifest["kernels"]) {
    std::string field = "kernels[" + std::to_string(index++) + "]";
    CompiledKernel kernel;
    for (auto [key, out] :
         {std::pair<const char *, std::string *>{"name", &kernel.name},
          {"kind", &kernel.kind},
          {"layer", &kernel.layer},
          {"schedule", &kernel.schedule}}) {
      if (!entry.is_object() || !entry.contains(key) || !entry[key].is_string())
        return corrupt(field + "." + key, "must be a string");
      *out = entry[key].get<std::string>();
    }
    // Names become paths: refuse anything that could leave the bundle.
    if (kernel.name.empty() ||
        kernel.name.find_first_of("/\\") != std::string::npos ||
        kernel.name.find("..") != std::string::npos)
      return corrupt(field + ".name", "is not a plain kernel name");
    model.kernels.push_back(std::move(kernel));
  }
  return model;
}

bool isModelBundle(const std::string &directory) {
  Result<std::string> text =
      file_util::readFile(directory + "/manifest.json", kMaxManifestBytes);
  if (!text)
    return false;
  Result<nlohmann::json> parsed =
      json_util::parseObject(*text, "<json>", kMaxManifestDepth);
  if (!parsed)
    return false;
  auto format = parsed->find("format");
  return format != parsed->end() && format->is_string() &&
         format->get<std::string>() == kModelBundleFormat;
}

Result<CompiledModel> loadModelBundle(const std::string &directory) {
  namespace fu = file_util;
  const std::string manifest_path = directory + "/manifest.json";
  Result<std::string> text = fu::readFile(manifest_path, kMaxManifestBytes);
  if (!text)
    return text.status();
  Result<CompiledModel> model = parseModelManifest(*text, manifest_path);
  if (!model)
    return model.status();
  for (size_t i = 0; i < model->kernels.size(); ++i) {
    CompiledKernel &kernel = model->kernels[i];
    std::string dir = directory + "/kernels/" + kernel.name;
    Result<std::string> source = fu::readFile(dir + "/" + kernel.name + ".cu");
    if (!source)
      return source.status();
    kernel.source = std::move(*source);
    Result<runtime::KernelSet> set = runtime::KernelSet::loadBundle(dir);
    if (!set)
      return set.status();
    if (!set->findKernel(kernel.name))
      return Status(StatusCode::Corrupt,
                    manifest_path + ": kernels[" + std::to_string(i) + "].name",
                    "kernel '" + kernel.name + "' is not in its bundle " + dir);
    kernel.set = std::make_shared<const runtime::KernelSet>(std::move(*set));
  }
  return model;
}

} // namespace attnc::jit
