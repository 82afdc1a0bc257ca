//===- LayerBuilder.h - Model description to attn IR ------------*- C++ -*-===//
//
// Builds the `attn` dialect form of a model: one func.func per layer kind,
// the ops present exactly as the model's features say (no rms_norm for a
// model without q/k norm, no output_gate without a gate).
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_DIALECT_ATTN_LAYERBUILDER_H
#define ATTNC_DIALECT_ATTN_LAYERBUILDER_H

#include "attnc/Model/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>

namespace attnc {

/// Activation / cache element types as spelled on the command line.
enum class KvCacheDtype { SameAsActivation, BF16, FP16, FP8E4M3 };

struct LayerBuildOptions {
  /// Tensor-parallel degree and rank: the functions describe rank `rank`'s
  /// share of the heads (computeRankShard's local shape).
  int64_t tp = 1;
  int64_t rank = 0;
  /// Tokens per KV-cache block (page).
  int64_t block_size = 16;
  /// Overrides ModelConfig::dtype when not empty ("bf16" | "fp16").
  std::string dtype;
  KvCacheDtype kv_dtype = KvCacheDtype::SameAsActivation;
};

/// Builds the module. Errors (invalid tp/rank, an unsupported dtype) name the
/// field and the rule.
Result<mlir::OwningOpRef<mlir::ModuleOp>>
buildModelModule(mlir::MLIRContext &context, const ModelConfig &config,
                 const LayerBuildOptions &options);

} // namespace attnc

#endif // ATTNC_DIALECT_ATTN_LAYERBUILDER_H
