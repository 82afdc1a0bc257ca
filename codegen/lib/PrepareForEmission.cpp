//===- PrepareForEmission.cpp - attn-prepare-emission ---------------------===//
//
// Everything the CUDA printer needs that is not spelled out in the kernel
// op is derived here, once, and recorded as the op's `attn.emission`
// attribute (#attn.preprocess_emission, #attn.attention_emission,
// #attn.mla_preprocess_emission); everything the printer cannot print is a
// diagnostic here.
//
//===----------------------------------------------------------------------===//
#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Plan/AttentionTiling.h"
#include "attnc/Plan/LatentAttention.h"
#include "attnc/Plan/Layout.h"
#include "attnc/Support/FloatConstant.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>

namespace attnc {
#define GEN_PASS_DEF_ATTNPREPAREEMISSION
#include "attnc/Codegen/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc::attn;
using namespace attnc::plan;

namespace {

/// "bf16" / "fp16" for activations the emitter supports, else empty.
StringRef activationName(Type type) {
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "fp16";
  return {};
}

/// Kernels are emitted for bf16 and f16 activations only.
LogicalResult checkActivation(Operation *op, Type activation) {
  if (activationName(activation).empty())
    return op->emitOpError() << "cannot be emitted: activation type "
                             << activation << " is not supported (bf16 or f16)";
  return success();
}

/// Cache element spelling of the runtime ABI ("fp8_e4m3" for f8E4M3FN).
StringRef cacheName(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return "fp8_e4m3";
  return activationName(type);
}

// The rotary inverse frequencies, as Hugging Face's rope initialisation
// computes them (transformers/modeling_rope_utils.py), in double precision.

double yarnMscale(double factor, double mscale) {
  return factor <= 1.0 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0;
}

/// Fills `invFreq` (rotary_dim / 2 entries) and the factor that multiplies
/// cos and sin (yarn's attention factor; 1 otherwise).
void computeRopeTable(int64_t rotaryDim, double theta, RopeScalingAttr scaling,
                      SmallVectorImpl<double> &invFreq,
                      SmallVectorImpl<double> &invFreqLong,
                      double &attentionFactor) {
  int64_t half = rotaryDim / 2;
  invFreq.resize(half);
  for (int64_t i = 0; i < half; ++i)
    invFreq[i] =
        1.0 / std::pow(theta, static_cast<double>(2 * i) / rotaryDim);
  attentionFactor = 1.0;
  if (!scaling)
    return;
  double factor = scaling.getFactor();
  switch (scaling.getKind()) {
  case RopeScalingKind::none:
  case RopeScalingKind::dynamic: // refused before this is called
    return;
  case RopeScalingKind::linear:
    for (double &f : invFreq)
      f /= factor;
    return;
  case RopeScalingKind::llama3: {
    double original = static_cast<double>(scaling.getOriginalMaxPosition());
    double lowWavelen = original / scaling.getLowFreqFactor();
    double highWavelen = original / scaling.getHighFreqFactor();
    for (double &f : invFreq) {
      double wavelen = 2.0 * M_PI / f;
      if (wavelen < highWavelen)
        continue;
      if (wavelen > lowWavelen) {
        f /= factor;
        continue;
      }
      // Equal factors (Llama 4) leave no band between the two: wavelen ==
      // lowWavelen stays unscaled instead of dividing by zero.
      if (lowWavelen == highWavelen)
        continue;
      double smooth = (original / wavelen - scaling.getLowFreqFactor()) /
                      (scaling.getHighFreqFactor() - scaling.getLowFreqFactor());
      f = (1.0 - smooth) * f / factor + smooth * f;
    }
    return;
  }
  case RopeScalingKind::longrope: {
    // Phi-3: each inverse frequency divided by its factor, the short list
    // below original_max_position and the long one from there on.
    // Hugging Face's default attention factor grows with the context
    // extension factor (_compute_longrope_parameters).
    double original = static_cast<double>(scaling.getOriginalMaxPosition());
    invFreqLong.assign(invFreq.begin(), invFreq.end());
    ArrayRef<double> shortFactor = scaling.getShortFactor().asArrayRef();
    ArrayRef<double> longFactor = scaling.getLongFactor().asArrayRef();
    for (int64_t i = 0; i < half; ++i) {
      invFreq[i] /= shortFactor[i];
      invFreqLong[i] /= longFactor[i];
    }
    attentionFactor =
        scaling.getAttentionFactor() != 0
            ? scaling.getAttentionFactor().value
            : (factor <= 1.0
                   ? 1.0
                   : std::sqrt(1.0 + std::log(factor) / std::log(original)));
    return;
  }
  case RopeScalingKind::yarn: {
    double original = static_cast<double>(scaling.getOriginalMaxPosition());
    double mscale = scaling.getMscale(), mscaleAllDim = scaling.getMscaleAllDim();
    attentionFactor = (mscale != 0 && mscaleAllDim != 0)
                          ? yarnMscale(factor, mscale) /
                                yarnMscale(factor, mscaleAllDim)
                          : yarnMscale(factor, 1.0);
    if (scaling.getAttentionFactor() != 0)
      attentionFactor = scaling.getAttentionFactor().value;
    auto correctionDim = [&](double rotations) {
      return rotaryDim * std::log(original / (rotations * 2.0 * M_PI)) /
             (2.0 * std::log(theta));
    };
    double low = correctionDim(scaling.getBetaFast());
    double high = correctionDim(scaling.getBetaSlow());
    if (scaling.getTruncate()) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, static_cast<double>(rotaryDim - 1));
    if (low == high)
      high += 0.001; // the ramp would divide by zero
    for (int64_t i = 0; i < half; ++i) {
      double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
      double extrapolationWeight = 1.0 - ramp;
      double extrapolated = invFreq[i];
      double interpolated = invFreq[i] / factor;
      invFreq[i] = interpolated * (1.0 - extrapolationWeight) +
                   extrapolated * extrapolationWeight;
    }
    return;
  }
  }
}

/// Cache block size (dim 1) of a [blocks, block_size, heads, dim] cache.
int64_t blockSizeOf(Value cache) {
  return cast<RankedTensorType>(cache.getType()).getDimSize(1);
}

/// Block tables and sequence metadata must hold int32: the kernels index
/// them as int32, as engines store them.
LogicalResult checkInt32(Operation *op,
                         ArrayRef<std::pair<StringRef, Value>> values) {
  for (auto [name, value] : values)
    if (!cast<RankedTensorType>(value.getType()).getElementType().isInteger(32))
      return op->emitOpError()
             << "cannot be emitted: " << name << " must hold i32, got "
             << cast<RankedTensorType>(value.getType()).getElementType();
  return success();
}

/// Head counts and dims and the cache block size must be static: they are
/// baked into the generated code.
LogicalResult checkStatic(Operation *op, ArrayRef<std::pair<StringRef, Value>> values) {
  for (auto [name, value] : values) {
    auto type = cast<RankedTensorType>(value.getType());
    for (int64_t i = 1; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        return op->emitOpError()
               << "cannot be emitted: " << name << " dim " << i
               << " is dynamic, but head counts, head dims and the cache "
                  "block size are baked into the kernel";
  }
  return success();
}

/// The pair layout keeps both elements of every rotation pair in one lane:
/// it needs a neox rotation over the whole q/k head whose half, in vectors,
/// the lanes of a head divide.
LogicalResult checkPairLayout(FusedPreprocessOp op) {
  PreprocessScheduleAttr schedule = op.getScheduleAttr();
  if (!schedule.getPairLayout())
    return success();
  int64_t qkHeadDim = op.getQkHeadDim();
  int64_t vectorWidth = schedule.getVectorWidth();
  int64_t threadsPerHead = schedule.getThreadsPerHead();
  bool fullNeox = op.hasStage(PreprocessStage::rope) &&
                  *op.getRopeStyle() == RopeStyle::neox &&
                  *op.getRotaryOffset() == 0 && *op.getRotaryDim() == qkHeadDim;
  if (fullNeox && (qkHeadDim / 2) % vectorWidth == 0 &&
      (qkHeadDim / 2 / vectorWidth) % threadsPerHead == 0)
    return success();
  return op.emitOpError()
         << "cannot be emitted: the schedule's pair_layout needs a neox rope "
            "over the whole q/k head (rotary_offset 0, rotary_dim "
         << qkHeadDim << ") whose half (" << qkHeadDim / 2
         << " elements) is a multiple of vector_width (" << vectorWidth
         << ") x threads_per_head (" << threadsPerHead << ")";
}

/// A value the printer writes as a float literal must be one (see
/// attnc/Support/FloatConstant.h); hand-written IR can hold any f64.
LogicalResult checkFloatConstant(Operation *op, StringRef name, double value) {
  if (attnc::isKernelFloat(value))
    return success();
  return op->emitOpError() << "cannot be emitted: " << name << " "
                           << attnc::kKernelFloatRule << ", got " << value;
}

/// What the kernel's norm takes: weights and biases of the activation type
/// (the kernel reads them as act_t), and projection statistics from the
/// unrotated values (a prologue reads each token's whole q and k segment
/// before any head is rotated).
LogicalResult checkNorm(FusedPreprocessOp op, Type activation) {
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"q_norm_weight", op.getQNormWeight()},
        {"k_norm_weight", op.getKNormWeight()},
        {"q_norm_bias", op.getQNormBias()},
        {"k_norm_bias", op.getKNormBias()}}) {
    if (!value)
      continue;
    Type element = cast<RankedTensorType>(value.getType()).getElementType();
    if (element != activation)
      return op.emitOpError() << "cannot be emitted: " << name
                              << " element type " << element
                              << " must be the activation type " << activation;
  }
  if (op.normScope() == NormScope::projection && op.normAfterRope())
    return op.emitOpError()
           << "cannot be emitted: norm_scope projection after rope (the "
              "kernel takes a token's statistics over the whole projection "
              "before rotating any head)";
  return success();
}

LogicalResult prepare(FusedPreprocessOp op) {
  Builder b(op.getContext());
  if (!op.getSchedule())
    return op.emitOpError() << "cannot be emitted without a schedule (run "
                               "attn-specialize first)";
  if (failed(checkStatic(op, {{"k_cache", op.getKCache()},
                              {"v_cache", op.getVCache()}})))
    return failure();
  Type activation = cast<RankedTensorType>(op.getQkv().getType()).getElementType();
  Type cacheElement =
      cast<RankedTensorType>(op.getKCache().getType()).getElementType();
  if (failed(checkActivation(op, activation)) || failed(checkPairLayout(op)) ||
      failed(checkNorm(op, activation)))
    return failure();
  if (op.hasStage(PreprocessStage::rope) && op.getScalingAttr() &&
      op.getScalingAttr().getKind() == RopeScalingKind::dynamic)
    return op.emitOpError()
           << "cannot be emitted: dynamic NTK rope scaling depends on the "
              "sequence length at run time, which the generated kernel does "
              "not take";

  // I64Attr getters return the bits as uint64_t; the casts restore the sign,
  // and computeFusedLayout refuses a value that is not positive or too big.
  attnc::HeadShape shape{static_cast<int64_t>(op.getNumQHeads()),
                         static_cast<int64_t>(op.getNumKvHeads()),
                         static_cast<int64_t>(op.getQkHeadDim()),
                         static_cast<int64_t>(op.getVHeadDim()),
                         static_cast<attnc::GateLayout>(op.getGateLayout())};
  attnc::Result<attnc::FusedLayout> layout = attnc::computeFusedLayout(shape);
  if (!layout)
    return op.emitOpError() << layout.error().message();
  const attnc::Segment *q = layout->find(attnc::SegmentKind::Q);
  const attnc::Segment *k = layout->find(attnc::SegmentKind::K);
  const attnc::Segment *v = layout->find(attnc::SegmentKind::V);
  const attnc::Segment *gate = layout->find(attnc::SegmentKind::Gate);

  // The gate is read from its own segment only when the kernel outputs it.
  std::optional<int64_t> gateOffset, gateHeadStride;
  if (gate && op.getGate()) {
    gateOffset = gate->offset;
    gateHeadStride = gate->head_stride;
  }
  DenseF64ArrayAttr invFreqAttr, invFreqLongAttr;
  int64_t longFrom = 0;
  double attentionFactor = 1.0;
  if (op.hasStage(PreprocessStage::rope)) {
    SmallVector<double> invFreq, invFreqLong;
    computeRopeTable(*op.getRotaryDim(), op.getThetaAttr().getValueAsDouble(),
                     op.getScalingAttr(), invFreq, invFreqLong,
                     attentionFactor);
    invFreqAttr = b.getDenseF64ArrayAttr(invFreq);
    if (!invFreqLong.empty()) {
      invFreqLongAttr = b.getDenseF64ArrayAttr(invFreqLong);
      longFrom = op.getScalingAttr().getOriginalMaxPosition();
    }
    if (failed(checkFloatConstant(op, "the rope attention factor",
                                  attentionFactor)))
      return failure();
    for (double frequency : llvm::concat<double>(invFreq, invFreqLong))
      if (failed(checkFloatConstant(op, "a rope inverse frequency", frequency)))
        return failure();
  }
  if (op.hasStage(PreprocessStage::q_temperature) &&
      (failed(checkFloatConstant(
           op, "temperature_floor_scale",
           op.getTemperatureFloorScaleAttr().getValueAsDouble())) ||
       failed(checkFloatConstant(
           op, "temperature_scale",
           op.getTemperatureScaleAttr().getValueAsDouble()))))
    return failure();
  if ((op.hasStage(PreprocessStage::q_norm) ||
       op.hasStage(PreprocessStage::k_norm)) &&
      failed(checkFloatConstant(op, "norm_eps",
                                op.getNormEpsAttr().getValueAsDouble())))
    return failure();
  op->setAttr(attnc::kEmissionAttr,
              PreprocessEmissionAttr::get(
                  op.getContext(), activationName(activation),
                  cacheName(cacheElement), blockSizeOf(op.getKCache()),
                  layout->width, q->offset, q->head_stride, k->offset,
                  v->offset, gateOffset, gateHeadStride, invFreqAttr,
                  attentionFactor, invFreqLongAttr, longFrom));
  return success();
}

/// What the warp-specialised kernel takes of a schedule (the verifier has
/// checked its tile shapes): its one row tiling, no split, and a shared
/// memory map (Q, the stages of K and V, the barriers) within the limit.
LogicalResult checkWarpSpecializedSchedule(Operation *op,
                                           AttentionScheduleAttr schedule) {
  if (schedule.getBlockM() != kWsBlockM ||
      schedule.getNumWarps() != kWsWarps || schedule.getMaxKvSplits() != 1)
    return op->emitOpError()
           << "cannot be emitted: the warp-specialised form needs block_m "
           << kWsBlockM << ", num_warps " << kWsWarps
           << " and max_kv_splits 1, got " << schedule.getBlockM() << ", "
           << schedule.getNumWarps() << " and " << schedule.getMaxKvSplits();
  int64_t bytes = wsAttentionSharedMap(schedule.getQkDimPadded(),
                                       schedule.getVDimPadded(),
                                       schedule.getBlockN(),
                                       schedule.getPipelineStages(),
                                       schedule.getPersistent())
                      .totalBytes;
  if (bytes > kWsMaxSharedBytes)
    return op->emitOpError()
           << "cannot be emitted: the warp-specialised form's shared memory "
              "(Q, pipeline_stages "
           << schedule.getPipelineStages() << " of block_n "
           << schedule.getBlockN() << " K and V rows, barriers"
           << (schedule.getPersistent() ? ", tile info" : "") << ") is "
           << bytes << " bytes, over the " << kWsMaxSharedBytes
           << " a block may have";
  return success();
}

/// What the attention templates take of a schedule (the printer prints
/// whatever it is given): the tensor-core form's one tiling (block_m 128 of
/// 4 warps, block_n 64 at 2 stages: attnc_attention.cuh), 16-bit
/// activations with a cache of their type or fp8, and wgmma only on a cache
/// of the activation type with the v_dim_padded its wrappers have.
LogicalResult checkAttentionSchedule(Operation *op,
                                     AttentionScheduleAttr schedule,
                                     Type activation, Type cacheElement) {
  if (schedule.getForm() == AttentionForm::cuda_core)
    return success();
  if (schedule.getMma() == "wgmma_ws")
    return op->emitOpError()
           << "cannot be emitted: schedule mma \"wgmma_ws\" is the "
              "warp-specialised kernel of varlen_attention; this op takes "
              "\"mma.sync\" or \"wgmma\"";
  if (schedule.getBlockM() != 128 || schedule.getBlockN() != 64 ||
      schedule.getNumWarps() != 4 || schedule.getPipelineStages() != 2)
    return op->emitOpError()
           << "cannot be emitted: the tensor-core form needs block_m 128, "
              "block_n 64, num_warps 4 and pipeline_stages 2, got "
           << schedule.getBlockM() << ", " << schedule.getBlockN() << ", "
           << schedule.getNumWarps() << " and " << schedule.getPipelineStages()
           << " (attn-specialize records other shapes as form = cuda_core)";
  bool sixteenBit = activation.isBF16() || activation.isF16();
  bool fp8 = cacheName(cacheElement) == "fp8_e4m3";
  if (!takesTensorCoreForm(schedule.getVDimPadded(), sixteenBit,
                           fp8 || cacheElement == activation))
    return op->emitOpError()
           << "cannot be emitted: the tensor-core form needs 16-bit "
              "activations, a cache of their type or fp8 and v_dim_padded <= "
              "256, got "
           << activationName(activation) << ", " << cacheName(cacheElement)
           << " and " << schedule.getVDimPadded()
           << " (attn-specialize records such layers as form = cuda_core)";
  if (schedule.getMma() != "wgmma")
    return success();
  if (fp8 || cacheElement != activation)
    return op->emitOpError()
           << "schedule mma \"wgmma\" needs a cache of the activation type "
              "(fp8 and other caches take mma.sync), got "
           << cacheName(cacheElement) << " for " << activationName(activation);
  if (schedule.getVDimPadded() != 64 && schedule.getVDimPadded() != 128)
    return op->emitOpError()
           << "schedule mma \"wgmma\" needs v_dim_padded 64 or 128 (the "
              "O += P V wrappers of attnc_wgmma.cuh), got "
           << schedule.getVDimPadded();
  return success();
}

LogicalResult prepare(PagedAttentionOp op, OutputGateOp gate) {
  Builder b(op.getContext());
  if (!op.getSchedule())
    return op.emitOpError() << "cannot be emitted without a schedule (run "
                               "attn-specialize first)";
  if (failed(checkStatic(op, {{"query", op.getQuery()},
                              {"k_cache", op.getKCache()},
                              {"v_cache", op.getVCache()}})))
    return failure();
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  Type activation = queryType.getElementType();
  Type cacheElement =
      cast<RankedTensorType>(op.getKCache().getType()).getElementType();
  if (failed(checkActivation(op, activation)))
    return failure();
  if (failed(checkInt32(op, {{"block_tables", op.getBlockTables()},
                             {"seq_lens", op.getSeqLens()},
                             {"query_start_loc", op.getQueryStartLoc()}})))
    return failure();
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  auto kernelKind =
      op->getParentOfType<func::FuncOp>()->getAttrOfType<StringAttr>(
          "attn.kernel");
  bool prefillKernel = kernelKind && kernelKind.getValue() == "prefill_attention";
  if (prefillKernel != (schedule.getMma() == "wgmma_ws"))
    return op.emitOpError()
           << "cannot be emitted: schedule mma \"wgmma_ws\" is the "
              "prefill_attention kernel's (and that kernel's only), got mma \""
           << schedule.getMma() << "\" in a"
           << (prefillKernel ? " prefill_attention" : "n attention")
           << " kernel";
  if (prefillKernel) {
    // The warp-specialised paged kernel (attnc_attention_ws.cuh with
    // kPagedKv): the schedule verifier's shape rules, one row tiling, a
    // 16-bit cache of the activation type in pages of whole swizzle atoms.
    int64_t blockSize =
        cast<RankedTensorType>(op.getKCache().getType()).getDimSize(1);
    if (failed(checkWarpSpecializedSchedule(op, schedule)))
      return failure();
    if (cacheElement != activation || blockSize < kWsMinPageRows)
      return op.emitOpError()
             << "cannot be emitted: the warp-specialised prefill kernel reads "
                "a cache of the activation type in pages of at least "
             << kWsMinPageRows << " tokens, got " << cacheElement
             << " pages of " << blockSize;
    int64_t blockN = schedule.getBlockN();
    if (blockN % std::min(blockSize, blockN) != 0)
      return op.emitOpError()
             << "cannot be emitted: the warp-specialised prefill kernel loads "
                "a K/V tile as boxes of min(page, block_n) rows, so block_n "
                "must be a multiple of them, got block_n "
             << blockN << " and pages of " << blockSize;
  } else if (failed(checkAttentionSchedule(op, schedule, activation,
                                           cacheElement))) {
    return failure();
  }
  double softmaxScale = op.getSoftmaxScale().convertToDouble();
  for (auto [name, value] :
       {std::pair<StringRef, double>{"softmax_scale", softmaxScale},
        {"softmax_scale * log2(e)", softmaxScale * M_LOG2E},
        {"logit_softcap", op.getLogitSoftcap().convertToDouble()},
        {"value_scale", op.getValueScale().convertToDouble()}})
    if (failed(checkFloatConstant(op, name, value)))
      return failure();
  int64_t numQHeads = queryType.getDimSize(1);
  int64_t numKvHeads =
      cast<RankedTensorType>(op.getKCache().getType()).getDimSize(2);
  // exp2 is one instruction; exp(x) = exp2(x * log2(e)).
  op->setAttr(attnc::kEmissionAttr,
              AttentionEmissionAttr::get(
                  op.getContext(), activationName(activation),
                  cacheName(cacheElement), blockSizeOf(op.getKCache()),
                  numQHeads / numKvHeads,
                  softmaxScale * M_LOG2E,
                  static_cast<bool>(gate)));
  return success();
}

/// MLA's preprocess: the latent cache's block size must be static, the
/// activation 16-bit, the schedule's vector width must divide kv_lora_rank
/// and rope_head_dim / 2 (a rope unit, vector_width pairs, never straddles
/// a half), and the rope tables are computed here as for the fused
/// preprocess.
LogicalResult prepare(MlaPreprocessOp op) {
  Builder b(op.getContext());
  MlaPreprocessScheduleAttr schedule = op.getScheduleAttr();
  if (!schedule)
    return op.emitOpError() << "cannot be emitted without a schedule (run "
                               "attn-specialize first)";
  if (failed(checkStatic(op, {{"latent_cache", op.getLatentCache()}})))
    return failure();
  Type activation =
      cast<RankedTensorType>(op.getKvA().getType()).getElementType();
  Type cacheElement =
      cast<RankedTensorType>(op.getLatentCache().getType()).getElementType();
  if (failed(checkActivation(op, activation)))
    return failure();
  int64_t rank = static_cast<int64_t>(op.getKvLoraRank());
  int64_t ropeDim = static_cast<int64_t>(op.getRopeHeadDim());
  int64_t vectorWidth = schedule.getVectorWidth();
  // Activations are 16-bit (checked above).
  if (rank % vectorWidth != 0 || (ropeDim / 2) % vectorWidth != 0 ||
      vectorWidth * 2 > 16)
    return op.emitOpError()
           << "cannot be emitted: the schedule's vector_width ("
           << vectorWidth << ") must divide kv_lora_rank (" << rank
           << ") and rope_head_dim / 2 (" << ropeDim / 2
           << ") and span at most 16 bytes";
  // De-interleaving in place, a head's units meet at a __syncwarp between
  // their loads and stores: they must sit in one warp.
  int64_t units = ropeDim / 2 / vectorWidth;
  if (op.getRopeDeinterleave() && 32 % units != 0)
    return op.emitOpError()
           << "cannot be emitted: rope_deinterleave needs the rope units of "
              "a head (rope_head_dim / 2 / vector_width = "
           << units << ") to divide 32 (one warp)";
  if (op.getScalingAttr() &&
      op.getScalingAttr().getKind() == RopeScalingKind::dynamic)
    return op.emitOpError()
           << "cannot be emitted: dynamic NTK rope scaling depends on the "
              "sequence length at run time, which the generated kernel does "
              "not take";
  if (op.getScalingAttr() &&
      op.getScalingAttr().getKind() == RopeScalingKind::longrope)
    return op.emitOpError()
           << "cannot be emitted: longrope scaling is not supported by the "
              "MLA preprocess kernel (one inverse-frequency table)";
  SmallVector<double> invFreq, invFreqLong;
  double attentionFactor = 1.0;
  computeRopeTable(ropeDim, op.getThetaAttr().getValueAsDouble(),
                   op.getScalingAttr(), invFreq, invFreqLong, attentionFactor);
  if (failed(checkFloatConstant(op, "the rope attention factor",
                                attentionFactor)) ||
      failed(checkFloatConstant(op, "norm_eps",
                                op.getNormEpsAttr().getValueAsDouble())) ||
      failed(checkFloatConstant(op, "latent_scale",
                                op.getLatentScaleAttr().getValueAsDouble())))
    return failure();
  for (double frequency : invFreq)
    if (failed(checkFloatConstant(op, "a rope inverse frequency", frequency)))
      return failure();
  op->setAttr(attnc::kEmissionAttr,
              MlaPreprocessEmissionAttr::get(
                  op.getContext(), activationName(activation),
                  cacheName(cacheElement), blockSizeOf(op.getLatentCache()),
                  b.getDenseF64ArrayAttr(invFreq), attentionFactor));
  return success();
}

/// MLA's absorbed decode (runtime/device/attnc_mla_decode.cuh): a latent
/// cache of the activation type or fp8 e4m3 with its cache_scale (the op's
/// verifier allows no other), kv_lora_rank a multiple of 128 up to 512
/// (plan/LatentAttention.h) and a rope part that keeps rows whole 64-value
/// column blocks, a block size the cache type fixes. The emission records the
/// element types, the block size, the heads sharing the one latent head
/// (group_size = H) and the scale in log2 units.
LogicalResult prepare(LatentAttentionOp op) {
  if (!op.getSchedule())
    return op.emitOpError() << "cannot be emitted without a schedule (run "
                               "attn-specialize first)";
  if (failed(checkStatic(op, {{"query", op.getQuery()},
                              {"latent_cache", op.getLatentCache()}})))
    return failure();
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  Type activation = queryType.getElementType();
  Type cacheElement =
      cast<RankedTensorType>(op.getLatentCache().getType()).getElementType();
  if (failed(checkActivation(op, activation)))
    return failure();
  int64_t rank = static_cast<int64_t>(op.getKvLoraRank());
  int64_t qkDim = queryType.getDimSize(2);
  if (!latentRankSupported(rank))
    return op.emitOpError() << "cannot be emitted: kv_lora_rank must be "
                            << kLatentRankRule << ", got " << rank;
  if (qkDim % 64 != 0)
    return op.emitOpError()
           << "cannot be emitted: kv_lora_rank + rope_head_dim (" << qkDim
           << ") must be a multiple of 64 (128-byte swizzled column blocks)";
  if (failed(checkInt32(op, {{"block_tables", op.getBlockTables()},
                             {"seq_lens", op.getSeqLens()},
                             {"query_start_loc", op.getQueryStartLoc()}})))
    return failure();
  double softmaxScale = op.getSoftmaxScale().convertToDouble();
  for (auto [name, value] :
       {std::pair<StringRef, double>{"softmax_scale", softmaxScale},
        {"softmax_scale * log2(e)", softmaxScale * M_LOG2E}})
    if (failed(checkFloatConstant(op, name, value)))
      return failure();
  op->setAttr(attnc::kEmissionAttr,
              AttentionEmissionAttr::get(
                  op.getContext(), activationName(activation),
                  cacheName(cacheElement), blockSizeOf(op.getLatentCache()),
                  queryType.getDimSize(1), softmaxScale * M_LOG2E,
                  /*gate=*/false));
  return success();
}

/// attn.varlen_attention: the paged attention's emission attribute for the
/// contiguous K/V form (K/V rows of the activation type, "blocks" of one
/// token, no gate); the tensor-core form only.
LogicalResult prepare(VarlenAttentionOp op) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  if (!schedule)
    return op.emitOpError() << "cannot be emitted without a schedule (run "
                               "attn-specialize first)";
  if (failed(checkStatic(op, {{"query", op.getQuery()},
                              {"key", op.getKey()},
                              {"value", op.getValue()}})))
    return failure();
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  Type activation = queryType.getElementType();
  if (failed(checkActivation(op, activation)))
    return failure();
  if (failed(checkInt32(op, {{"cu_seqlens_q", op.getCuSeqlensQ()},
                             {"cu_seqlens_k", op.getCuSeqlensK()}})))
    return failure();
  if (schedule.getForm() == AttentionForm::cuda_core)
    return op.emitOpError() << "cannot be emitted: varlen_attention has the "
                               "tensor-core form only, the schedule says "
                               "form = cuda_core";
  if (schedule.getMma() == "wgmma_ws") {
    // The warp-specialised kernel (attnc_attention_ws.cuh).
    if (failed(checkWarpSpecializedSchedule(op, schedule)))
      return failure();
  } else if (failed(checkAttentionSchedule(op, schedule, activation,
                                           activation))) {
    return failure();
  }
  double softmaxScale = op.getSoftmaxScale().convertToDouble();
  for (auto [name, value] :
       {std::pair<StringRef, double>{"softmax_scale", softmaxScale},
        {"softmax_scale * log2(e)", softmaxScale * M_LOG2E}})
    if (failed(checkFloatConstant(op, name, value)))
      return failure();
  int64_t numQHeads = queryType.getDimSize(1);
  int64_t numKvHeads =
      cast<RankedTensorType>(op.getKey().getType()).getDimSize(1);
  op->setAttr(attnc::kEmissionAttr,
              AttentionEmissionAttr::get(
                  op.getContext(), activationName(activation),
                  activationName(activation), /*blockSize=*/1,
                  numQHeads / numKvHeads, softmaxScale * M_LOG2E,
                  /*gate=*/false));
  return success();
}

/// attn.latent_gather: the types and the latent cache's block size must be
/// ones the copy kernel takes (the printer reads them from the op).
LogicalResult prepare(LatentGatherOp op) {
  if (failed(checkStatic(op, {{"latent_cache", op.getLatentCache()},
                              {"output", op.getOutput()}})))
    return failure();
  Type activation =
      cast<RankedTensorType>(op.getOutput().getType()).getElementType();
  if (failed(checkActivation(op, activation)))
    return failure();
  return checkInt32(op, {{"block_tables", op.getBlockTables()},
                         {"cu_seqlens", op.getCuSeqlens()}});
}

struct PrepareEmission
    : attnc::impl::AttnPrepareEmissionBase<PrepareEmission> {
  void runOnOperation() override {
    bool anyKernel = false;
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      auto kind = function->getAttrOfType<StringAttr>("attn.kernel");
      if (!kind)
        continue;
      anyKernel = true;
      LogicalResult result = success();
      if (kind.getValue() == "preprocess") {
        auto ops = function.getOps<FusedPreprocessOp>();
        if (ops.empty())
          result = function.emitOpError()
                   << "is a preprocess kernel without an attn.fused_preprocess";
        else
          result = prepare(*ops.begin());
      } else if (kind.getValue() == "mla_preprocess") {
        auto ops = function.getOps<MlaPreprocessOp>();
        if (ops.empty())
          result = function.emitOpError()
                   << "is an mla_preprocess kernel without an "
                      "attn.mla_preprocess";
        else
          result = prepare(*ops.begin());
      } else if (kind.getValue() == "attention" ||
                 kind.getValue() == "prefill_attention") {
        auto ops = function.getOps<PagedAttentionOp>();
        auto gates = function.getOps<OutputGateOp>();
        if (ops.empty())
          result = function.emitOpError()
                   << "is an" << (kind.getValue() == "attention" ? " " : " prefill_")
                   << "attention kernel without an attn.paged_attention";
        else
          result = prepare(*ops.begin(),
                           gates.empty() ? OutputGateOp() : *gates.begin());
      } else if (kind.getValue() == "varlen_attention") {
        auto ops = function.getOps<VarlenAttentionOp>();
        if (ops.empty())
          result = function.emitOpError() << "is a varlen_attention kernel "
                                             "without an attn.varlen_attention";
        else
          result = prepare(*ops.begin());
      } else if (kind.getValue() == "latent_gather") {
        auto ops = function.getOps<LatentGatherOp>();
        if (ops.empty())
          result = function.emitOpError()
                   << "is a latent_gather kernel without an attn.latent_gather";
        else
          result = prepare(*ops.begin());
      } else if (kind.getValue() == "latent_attention") {
        auto ops = function.getOps<LatentAttentionOp>();
        if (ops.empty())
          result = function.emitOpError() << "is a latent_attention kernel "
                                             "without an attn.latent_attention";
        else
          result = prepare(*ops.begin());
      } else {
        result = function.emitOpError()
                 << "has unknown attn.kernel kind '" << kind.getValue() << "'";
      }
      if (failed(result))
        return signalPassFailure();
    }
    if (!anyKernel) {
      getOperation().emitError()
          << "no kernel functions to emit (run attn-outline-kernels first)";
      signalPassFailure();
    }
  }
};

} // namespace
