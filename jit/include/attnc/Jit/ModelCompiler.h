//===- ModelCompiler.h - Model config to launchable kernels -----*- C++ -*-===//
//
// The embedded JIT and the AOT CLI share this: a model description (or attn
// IR) goes through the attn pipeline and the CUDA emitter, and every kernel
// through NVRTC and the runtime's kernel cache. One CUDA source, and one
// runtime KernelSet, per kernel.
//
// Model bundle (what `attnc compile -o DIR` writes and loadModelBundle
// reads, with no NVRTC or MLIR work):
//   DIR/manifest.json                 the model manifest (below)
//   DIR/kernels/<name>/<name>.cu      the kernel's CUDA source
//   DIR/kernels/<name>/manifest.json  its runtime kernel-set bundle
//   DIR/kernels/<name>/kernels.<arch>.cubin
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_JIT_MODELCOMPILER_H
#define ATTNC_JIT_MODELCOMPILER_H

#include "attnc/Dialect/Attn/LayerBuilder.h"
#include "attnc/Model/ModelConfig.h"
#include "attnc/Runtime/Context.h"
#include "attnc/Runtime/PendingKernelSet.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnc::jit {

/// One kernel's build has ended (ModelCompileOptions::on_kernel_built).
struct KernelBuildEvent {
  std::string name;       ///< entry point
  size_t done = 0;        ///< kernels ended so far, this one included
  size_t total = 0;       ///< kernels of the model
  double elapsed_ms = 0;  ///< since the first kernel's build started
  bool ok = true;         ///< false: the build failed (the error follows)
  runtime::BuildOutcome outcome = runtime::BuildOutcome::Compiled;
};

/// Tiered compilation. A model's attention kernels whose optimised form
/// (the wgmma tiles on sm_90a) differs from the baseline (attn-specialize's
/// `baseline`: the same tiles on mma.sync, which NVRTC compiles several
/// times faster) can be compiled in two tiers: the baseline first, which the
/// compile waits for, and the optimised kernel on a background thread,
/// handed over through CompiledKernel::optimised. Kernels whose forms do
/// not differ, and kernels whose optimised binary is already cached, get
/// one tier.
enum class Tiering {
  Off,          ///< one tier: the compile waits for the optimised kernels
  On,           ///< baseline first, optimised in the background
  BaselineOnly, ///< the baseline kernels only (tests and benchmarks)
};

struct ModelCompileOptions {
  /// Target arch; the kernels are compiled for this one only.
  std::string arch = "sm_90a";
  /// Tensor parallelism, block size, dtypes (used for config input).
  LayerBuildOptions layer;
  /// Keep the module's IR after each pipeline stage (for `attnc compile`).
  /// Also bypasses the disk index (the stages must run).
  bool keep_stage_ir = false;
  Tiering tiering = Tiering::Off;
  /// The most NVRTC compiles this compile runs at once, one thread each (0:
  /// the machine's hardware threads). The first tier's kernels are shared
  /// out over them; background (optimised-tier) compiles take one thread
  /// per kernel beside them.
  unsigned max_parallel_compiles = 0;
  /// Called as each kernel's build ends (NVRTC, a cache hit or an error),
  /// one call at a time, from the thread that built it: `done` of `total`
  /// kernels have ended. For progress reports; may be empty.
  std::function<void(const KernelBuildEvent &)> on_kernel_built;
};

/// The module after one stage of the pipeline.
struct StageIr {
  std::string stage;  ///< "import", "attn-canonicalize", ...
  std::string module; ///< printed IR
};

/// One kernel of a model.
struct CompiledKernel {
  std::string name;   ///< entry point, "<layer>__<kind>"
  std::string kind;   ///< "preprocess" | "attention"
  std::string layer;  ///< the layer kind
  std::string source; ///< CUDA C++
  std::string schedule; ///< the schedule attribute as printed in IR
  std::string kernel_ir; ///< the kernel function in the kernel form
  std::shared_ptr<const runtime::KernelSet> set;
  /// Tiering::On only, for a kernel with two tiers: `set`, `source`,
  /// `schedule` and `kernel_ir` are the baseline's, and this is the
  /// optimised set, compiling on a background thread (its source, schedule
  /// and IR below). Null otherwise.
  std::shared_ptr<runtime::PendingKernelSet> optimised;
  std::string optimised_source;
  std::string optimised_schedule;
  std::string optimised_kernel_ir;
};

struct CompiledModel {
  std::string arch;
  std::string model_type;
  /// The config in attnc spec form (JSON); empty when compiled from IR.
  std::string config_spec;
  std::vector<StageIr> stages; ///< empty unless keep_stage_ir
  std::vector<CompiledKernel> kernels;

  /// The model manifest (JSON): format, versions, arch, config, and per
  /// kernel its kind, layer, schedule, ABI, files and how it was built.
  /// A kernel with a pending optimised tier is described by its baseline.
  std::string manifestJson() const;

  /// Waits for every kernel's optimised tier (if any) to finish compiling:
  /// Ok, or the first failure.
  Status waitOptimised() const;
};

/// Compiles a model description. Kernels are compiled concurrently (see
/// ModelCompileOptions::max_parallel_compiles) through the context's kernel
/// cache; results are in the pipeline's kernel order whatever order the
/// compiles end in, and the first failing kernel (in that order) is the
/// error, naming it. Thread-safe: any number of compiles may run at once in
/// one context (concurrent requests for one kernel compile once).
/// compileModelJson and compileModelIr first look in the disk index
/// (ModelIndex.h) and write it after a full compile (after the background
/// tier, when there is one).
Result<CompiledModel> compileModel(runtime::Context &context,
                                   const ModelConfig &config,
                                   const ModelCompileOptions &options);

/// Compiles a model configuration given as JSON text (HF config or spec).
Result<CompiledModel> compileModelJson(runtime::Context &context,
                                       std::string_view config_json,
                                       const ModelCompileOptions &options);

/// Compiles attn IR text in layer form (one function per layer kind).
Result<CompiledModel> compileModelIr(runtime::Context &context,
                                     std::string_view mlir_text,
                                     const ModelCompileOptions &options);

/// Writes / reads a model bundle (layout in the file comment). A kernel
/// with a pending optimised tier is written in its optimised form (waiting
/// for it).
Status writeModelBundle(const CompiledModel &model,
                        const std::string &directory);
Result<CompiledModel> loadModelBundle(const std::string &directory);

/// Whether `directory` holds a model bundle: a manifest.json (read with the
/// bundle's size and depth caps) whose "format" is the bundle format. The
/// rest of the manifest is not checked (loadModelBundle does that).
bool isModelBundle(const std::string &directory);

/// The manifest part of loadModelBundle: reads the text of a model manifest
/// (format, version, arch, model type, config spec; each kernel's name, kind,
/// layer and schedule) and opens no file, so the kernels have no source or
/// set. Errors are Corrupt, their field prefixed with `document`.
Result<CompiledModel> parseModelManifest(std::string_view text,
                                         const std::string &document);

} // namespace attnc::jit

#endif // ATTNC_JIT_MODELCOMPILER_H
