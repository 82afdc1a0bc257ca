//===- Explain.h - `attnc explain`: the plan and the floor of each kernel -*- C++ -*-===//
//
// What attnc builds for a model and what it costs at best: per layer kind,
// the features present and absent; per kernel, the plan attn-specialize
// recorded (form, tiles, stages, split-KV rule), the launch for the asked
// workload (grid, split count), the shared memory, the registers and stack
// ptxas allocated (read from the cubin), and the bytes and FLOPs of the
// plan library's work model with the floor time they take at a GPU's
// bandwidth and matmul rate.
//
// The result is one JSON document (docs/explain.md lists its keys); the
// table is printed from that document, so both say the same.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_TOOLS_EXPLAIN_H
#define ATTNC_TOOLS_EXPLAIN_H

#include "attnc/Dialect/Attn/LayerBuilder.h"
#include "attnc/Model/ModelConfig.h"
#include "attnc/Plan/WorkModel.h"
#include "attnc/Support/Status.h"

#include <nlohmann/json.hpp>

#include <string>

namespace attnc::tools {

struct ExplainOptions {
  /// The config file, as given (printed, not read again).
  std::string config_path;
  /// Tensor parallelism, block size, dtypes: as `attnc compile` takes them.
  LayerBuildOptions layer;
  std::string arch = "sm_90a";
  plan::Workload workload;
  plan::Machine machine;
  /// Whether the machine figures are the H200 defaults (said in the table).
  bool default_machine = true;
  /// Compile with NVRTC (or take the kernel cache's binaries) to read the
  /// registers; false: leave them out and say so.
  bool compile = true;
};

/// Runs the pipeline (and, with options.compile, NVRTC) on a config and
/// describes every layer kind and kernel. A config the pipeline or the
/// kernels cannot take is an InvalidArgument naming the field; a failed
/// NVRTC load or compile keeps its code.
Result<nlohmann::json> explainModel(const ModelConfig &config,
                                    const ExplainOptions &options);

/// The readable table of an explainModel document.
std::string explainTable(const nlohmann::json &document);

} // namespace attnc::tools

#endif // ATTNC_TOOLS_EXPLAIN_H
