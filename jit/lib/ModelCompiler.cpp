//===- ModelCompiler.cpp - Model config to launchable kernels -------------===//
#include "attnc/Jit/ModelCompiler.h"

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

#include <functional>
#include <chrono>
#include <future>
#include <mutex>

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

/// attnc-pipeline, then the emitter's preparation, one stage at a time so
/// that the IR after each can be kept.
std::vector<PipelineStage> compileStages(const std::string &arch) {
  PipelineOptions pipeline;
  pipeline.arch = arch;
  std::vector<PipelineStage> stages = attncPipelineStages(pipeline);
  stages.push_back({"attn-prepare-emission",
                    [] { return createAttnPrepareEmission(); }});
  return stages;
}

/// Runs the pipeline on a layer-form module, emits the kernels and compiles
/// each with NVRTC (in parallel: NVRTC is thread-safe per program).
Result<CompiledModel> compileModule(runtime::Context &context,
                                    MLIRContext &mlirContext, ModuleOp module,
                                    const ModelCompileOptions &options,
                                    CompiledModel model) {
  model.arch = options.arch;
  if (auto type = module->getAttrOfType<StringAttr>("attn.model_type"))
    model.model_type = type.str();
  DiagnosticCollector diagnostics(mlirContext);
  if (options.keep_stage_ir)
    model.stages.push_back({"import", print(module)});
  for (const PipelineStage &stage : compileStages(options.arch)) {
    PassManager pm(&mlirContext);
    pm.addPass(stage.create());
    if (failed(pm.run(module)))
      return diagnostics.status(StatusCode::InvalidArgument, stage.name,
                                "the pipeline stage failed");
    if (options.keep_stage_ir)
      model.stages.push_back({stage.name, print(module)});
  }
  FailureOr<std::vector<EmittedKernel>> emitted = emitCudaKernels(module);
  if (failed(emitted))
    return diagnostics.status(StatusCode::Internal, "codegen",
                              "CUDA emission failed");

  for (EmittedKernel &kernel : *emitted) {
    CompiledKernel compiled;
    compiled.name = kernel.name;
    compiled.kind = kernel.kind;
    compiled.layer = kernel.layer;
    compiled.source = std::move(kernel.source);
    if (auto function = module.lookupSymbol<func::FuncOp>(kernel.name)) {
      compiled.kernel_ir = print(function);
      function.walk([&](Operation *op) {
        if (Attribute schedule = op->getAttr("schedule"))
          compiled.schedule = printAttr(schedule);
      });
    }
    model.kernels.push_back(std::move(compiled));
  }

  runtime::SourceOptions sourceOptions;
  sourceOptions.headers = runtime::deviceHeaders();
  sourceOptions.archs = {options.arch};
  std::vector<std::future<Result<std::shared_ptr<const runtime::KernelSet>>>>
      futures;
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
  for (size_t i = 0; i < model.kernels.size(); ++i) {
    runtime::SourceOptions perKernel = sourceOptions;
    perKernel.source_name = model.kernels[i].name + ".cu";
    futures.push_back(std::async(
        std::launch::async,
        [&context, &report, perKernel, abi = (*emitted)[i].abi,
         name = model.kernels[i].name, source = model.kernels[i].source]() {
          auto set = context.compile(
              source, std::vector<runtime::KernelAbi>{abi}, perKernel);
          report(name, set);
          return set;
        }));
  }
  Status firstError;
  for (size_t i = 0; i < futures.size(); ++i) {
    Result<std::shared_ptr<const runtime::KernelSet>> set = futures[i].get();
    if (!set) {
      if (firstError.ok())
        firstError = set.status();
      continue;
    }
    model.kernels[i].set = *set;
  }
  if (!firstError.ok())
    return firstError;
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

Result<CompiledModel> compileModel(runtime::Context &context,
                                   const ModelConfig &config,
                                   const ModelCompileOptions &options) {
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
                       std::move(model));
}

Result<CompiledModel> compileModelJson(runtime::Context &context,
                                       std::string_view config_json,
                                       const ModelCompileOptions &options) {
  Result<ModelConfig> config = importModelConfig(config_json);
  if (!config)
    return config.status();
  return compileModel(context, *config, options);
}

Result<CompiledModel> compileModelIr(runtime::Context &context,
                                     std::string_view mlir_text,
                                     const ModelCompileOptions &options) {
  if (Status status = runtime::validateArch(options.arch); !status.ok())
    return status;
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
  return compileModule(context, mlirContext, *module, options, CompiledModel());
}

Status writeModelBundle(const CompiledModel &model,
                        const std::string &directory) {
  namespace fu = file_util;
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
