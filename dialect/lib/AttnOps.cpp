//===- AttnOps.cpp - Verifiers of the attn operations ---------------------===//
//
// Every consistency rule of the dialect lives here, each with a message that
// names the attribute or operand and the rule. Shapes and offsets of the
// fused projection come from the layout library, the single source of truth.
//
//===----------------------------------------------------------------------===//
#include "attnc/Dialect/Attn/AttnOps.h"

#include "attnc/Plan/Layout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace attnc::attn;

namespace {

/// Reads an integer attribute as signed: ODS's I64Attr getters return it
/// zero-extended, which would turn -1 into 18446744073709551615.
int64_t signedValue(IntegerAttr attr) { return attr.getValue().getSExtValue(); }

/// Emits "<name> must be >= <min>, got <v>" unless value >= min.
LogicalResult checkAtLeast(Operation *op, StringRef name, int64_t value,
                           int64_t min) {
  if (value >= min)
    return success();
  return op->emitOpError() << name << " must be >= " << min << ", got "
                           << value;
}

/// A dimension that may be dynamic in the type: `?` matches anything.
constexpr int64_t kAny = ShapedType::kDynamic;

/// A dimension as the type spells it: `?` for a dynamic one.
std::string describeDim(int64_t dim) {
  return dim == kAny ? std::string("?") : std::to_string(dim);
}

std::string describeShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (i)
      text += ", ";
    text += describeDim(dim);
  }
  return text + "]";
}

/// Two dimensions agree unless both are static and differ.
bool dimsAgree(int64_t x, int64_t y) {
  return x == kAny || y == kAny || x == y;
}

/// Checks that `type` has `expected.size()` dims and that every static
/// dimension agrees with `expected` (kAny on either side matches). `what`
/// names the value and `meaning` spells the expected dims in domain terms.
LogicalResult checkShape(Operation *op, StringRef what, RankedTensorType type,
                         ArrayRef<int64_t> expected, StringRef meaning) {
  bool ok = type.getRank() == static_cast<int64_t>(expected.size());
  for (size_t i = 0; ok && i < expected.size(); ++i) {
    int64_t dim = type.getDimSize(i);
    ok = dim == kAny || expected[i] == kAny || dim == expected[i];
  }
  if (ok)
    return success();
  return op->emitOpError() << what << " must have shape "
                           << describeShape(expected) << " (" << meaning
                           << "), got " << type;
}

bool isActivationType(Type type) {
  return type.isBF16() || type.isF16() || type.isF32();
}

/// Activations are bf16, f16 or f32; `what` names the value.
LogicalResult checkActivationType(Operation *op, StringRef what, Type type) {
  if (isActivationType(type))
    return success();
  return op->emitOpError() << what
                           << " element type must be bf16, f16 or f32, got "
                           << type;
}

LogicalResult checkSameElementType(Operation *op, StringRef what, Type type,
                                   StringRef reference, Type expected) {
  if (type == expected)
    return success();
  return op->emitOpError() << what << " element type (" << type
                           << ") must equal the " << reference
                           << " element type (" << expected << ")";
}

/// An integer tensor of rank `rank` (slot mappings, positions, tables).
LogicalResult checkIndexTensor(Operation *op, StringRef what,
                               RankedTensorType type, int64_t rank) {
  if (type.getRank() == rank && type.getElementType().isSignlessInteger() &&
      (type.getElementType().isInteger(32) ||
       type.getElementType().isInteger(64)))
    return success();
  return op->emitOpError() << what << " must be a rank-" << rank
                           << " tensor of i32 or i64, got " << type;
}

/// Dimension `index` of two types agree where both are static.
LogicalResult checkSameDim(Operation *op, RankedTensorType a, StringRef aName,
                           RankedTensorType b, StringRef bName, int64_t ai,
                           int64_t bi, StringRef meaning) {
  int64_t x = a.getDimSize(ai), y = b.getDimSize(bi);
  if (dimsAgree(x, y))
    return success();
  return op->emitOpError() << meaning << " of " << aName << " (" << x
                           << ") must equal that of " << bName << " (" << y
                           << ")";
}

/// Optional per-tensor fp8 scales: present exactly when the caches are fp8;
/// each a rank-0 f32 tensor.
LogicalResult checkCacheScales(Operation *op, Type cacheElementType,
                               Value kScale, Value vScale) {
  bool fp8 = isa<Float8E4M3FNType>(cacheElementType);
  if (fp8 && (!kScale || !vScale))
    return op->emitOpError() << "an f8E4M3FN cache needs the k_scale and "
                                "v_scale operands";
  if (!fp8 && (kScale || vScale))
    return op->emitOpError() << "k_scale and v_scale are only allowed with an "
                                "f8E4M3FN cache, the cache is "
                             << cacheElementType;
  for (auto [name, scale] : {std::pair<StringRef, Value>{"k_scale", kScale},
                             {"v_scale", vScale}}) {
    if (!scale)
      continue;
    auto type = cast<RankedTensorType>(scale.getType());
    if (type.getRank() != 0 || !type.getElementType().isF32())
      return op->emitOpError() << name << " must be tensor<f32>, got " << type;
  }
  return success();
}

/// K and V caches: [num_blocks, block_size, Hkv, D], same blocks and block
/// size, element type equal to the activations' or f8E4M3FN (both alike).
LogicalResult checkCachePair(Operation *op, RankedTensorType kCache,
                             RankedTensorType vCache, Type activationType) {
  for (auto [name, type] :
       {std::pair<StringRef, RankedTensorType>{"k_cache", kCache},
        {"v_cache", vCache}})
    if (type.getRank() != 4)
      return op->emitOpError() << name
                               << " must have rank 4 [num_blocks, block_size, "
                                  "num_kv_heads, head_dim], got "
                               << type;
  if (failed(checkSameDim(op, kCache, "k_cache", vCache, "v_cache", 0, 0,
                          "num_blocks (dim 0)")) ||
      failed(checkSameDim(op, kCache, "k_cache", vCache, "v_cache", 1, 1,
                          "block_size (dim 1)")) ||
      failed(checkSameDim(op, kCache, "k_cache", vCache, "v_cache", 2, 2,
                          "num_kv_heads (dim 2)")))
    return failure();
  Type kElement = kCache.getElementType(), vElement = vCache.getElementType();
  if (kElement != vElement)
    return op->emitOpError() << "k_cache and v_cache element types must match, "
                                "got "
                             << kElement << " and " << vElement;
  if (kElement != activationType && !isa<Float8E4M3FNType>(kElement))
    return op->emitOpError() << "cache element type must be the activation "
                                "type ("
                             << activationType << ") or f8E4M3FN, got "
                             << kElement;
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// qkv_split
//===----------------------------------------------------------------------===//

/// The split rules shared by qkv_split and fused_preprocess: attribute
/// ranges, GQA, the fused width from the layout library, and the shapes of q,
/// k, v and (when given) the gate. `gate` may be null when the gate result
/// was dropped; a gate with gate_layout none is an error.
static LogicalResult verifySplit(Operation *op, IntegerAttr numQHeadsAttr,
                                 IntegerAttr numKvHeadsAttr,
                                 IntegerAttr qkHeadDimAttr,
                                 IntegerAttr vHeadDimAttr,
                                 GateLayout gateLayout, Value qkv, Type q,
                                 Type k, Type v, Type gate) {
  int64_t numQHeads = signedValue(numQHeadsAttr);
  int64_t numKvHeads = signedValue(numKvHeadsAttr);
  int64_t qkHeadDim = signedValue(qkHeadDimAttr);
  int64_t vHeadDim = signedValue(vHeadDimAttr);
  if (failed(checkAtLeast(op, "num_q_heads", numQHeads, 1)) ||
      failed(checkAtLeast(op, "num_kv_heads", numKvHeads, 1)) ||
      failed(checkAtLeast(op, "qk_head_dim", qkHeadDim, 1)) ||
      failed(checkAtLeast(op, "v_head_dim", vHeadDim, 1)))
    return failure();
  if (numQHeads % numKvHeads != 0)
    return op->emitOpError() << "num_q_heads (" << numQHeads
                             << ") must be divisible by num_kv_heads ("
                             << numKvHeads << ")";

  // The layout library bounds heads and dims (so no width can overflow) and
  // computes the fused width: the one place that sums the segments.
  attnc::HeadShape shape{numQHeads, numKvHeads, qkHeadDim, vHeadDim,
                         static_cast<attnc::GateLayout>(gateLayout)};
  attnc::Result<attnc::FusedLayout> layout = attnc::computeFusedLayout(shape);
  if (!layout)
    return op->emitOpError() << layout.error().message();

  auto qkvType = cast<RankedTensorType>(qkv.getType());
  if (qkvType.getRank() != 2)
    return op->emitOpError() << "qkv must have rank 2 [tokens, fused_width], got "
                         << qkvType;
  int64_t width = qkvType.getDimSize(1);
  if (width != layout->width)
    return op->emitOpError()
           << "fused width (qkv dim 1) must equal num_q_heads*qk_head_dim + "
              "num_kv_heads*qk_head_dim + num_kv_heads*v_head_dim"
           << (gateLayout == GateLayout::none          ? ""
               : gateLayout == GateLayout::head_scalar ? " + num_q_heads"
                                                       : " + num_q_heads*v_head_dim")
           << " = " << layout->width << " for gate_layout "
           << stringifyGateLayout(gateLayout) << ", got "
           << describeDim(width);
  Type element = qkvType.getElementType();
  if (failed(checkActivationType(op, "qkv", element)))
    return failure();

  if (gateLayout == GateLayout::none && gate)
    return op->emitOpError() << "gate_layout none must not have a gate result";

  int64_t tokens = qkvType.getDimSize(0);
  struct Expect {
    Type type;
    StringRef name;
    int64_t heads, dim;
    StringRef meaning;
  } expects[] = {
      {q, "q result", numQHeads, qkHeadDim,
       "tokens x num_q_heads x qk_head_dim"},
      {k, "k result", numKvHeads, qkHeadDim,
       "tokens x num_kv_heads x qk_head_dim"},
      {v, "v result", numKvHeads, vHeadDim,
       "tokens x num_kv_heads x v_head_dim"},
      {gate, "gate result", numQHeads,
       gateLayout == GateLayout::head_scalar ? 1 : vHeadDim,
       gateLayout == GateLayout::head_scalar ? "tokens x num_q_heads x 1"
                                             : "tokens x num_q_heads x v_head_dim"},
  };
  for (const Expect &e : expects) {
    if (!e.type)
      continue;
    auto type = cast<RankedTensorType>(e.type);
    if (failed(checkShape(op, e.name, type, {tokens, e.heads, e.dim},
                          e.meaning)) ||
        failed(checkSameElementType(op, e.name, type.getElementType(), "qkv",
                                    element)))
      return failure();
  }
  return success();
}

LogicalResult QkvSplitOp::verify() {
  Value gate = getGate();
  return verifySplit(getOperation(), getNumQHeadsAttr(), getNumKvHeadsAttr(),
                     getQkHeadDimAttr(), getVHeadDimAttr(), getGateLayout(),
                     getQkv(), getQ().getType(), getK().getType(),
                     getV().getType(), gate ? gate.getType() : Type());
}

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

/// Norm weight and eps rules shared by rms_norm and fused_preprocess; `what`
/// names the weight (or bias) operand. The scope gives the shape: [D]
/// (head), [H, D] (head_weights), [H * D] (projection).
static LogicalResult verifyNormWeight(Operation *op, StringRef what,
                                      NormScope scope, int64_t numHeads,
                                      int64_t headDim,
                                      RankedTensorType weightType,
                                      double eps) {
  switch (scope) {
  case NormScope::head:
    if (weightType.getRank() != 1)
      return op->emitOpError() << what
                               << " must have rank 1 [head_dim], got "
                               << weightType;
    if (!dimsAgree(weightType.getDimSize(0), headDim))
      return op->emitOpError() << what
                               << " length must equal the head dim it "
                                  "normalises ("
                               << describeDim(headDim) << "), got "
                               << weightType;
    break;
  case NormScope::head_weights:
    if (failed(checkShape(op, what, weightType, {numHeads, headDim},
                          "a row per head, scope head_weights")))
      return failure();
    break;
  case NormScope::projection:
    if (failed(checkShape(
            op, what, weightType,
            {numHeads == kAny || headDim == kAny ? kAny : numHeads * headDim},
            "heads * head_dim, scope projection")))
      return failure();
    break;
  }
  if (!isActivationType(weightType.getElementType()))
    return op->emitOpError() << what
                             << " element type must be bf16, f16 or f32, got "
                             << weightType.getElementType();
  if (!(eps > 0) || !std::isfinite(eps))
    return op->emitOpError() << "eps must be a positive finite number, got "
                             << formatDouble(eps);
  return success();
}

/// The q/k norm's operands for its style and scope, shared by rms_norm and
/// fused_preprocess (`prefix` is "" or "q_norm_" / "k_norm_"): a weight
/// unless unweighted, a bias only for layernorm and of the weight's type,
/// and no projection scope in a module split for tensor parallelism (each
/// rank holds some heads, and the statistics need all of them).
static LogicalResult verifyNormOperands(Operation *op, StringRef prefix,
                                        NormStyle style, NormScope scope,
                                        int64_t numHeads, int64_t headDim,
                                        Value weight, Value bias,
                                        double eps) {
  std::string weightName = (prefix + "weight").str();
  std::string biasName = (prefix + "bias").str();
  bool weighted = style != NormStyle::unweighted;
  if (weighted != static_cast<bool>(weight))
    return op->emitOpError()
           << weightName
           << (weighted ? " is required by norm style "
                        : " is not allowed with norm style ")
           << stringifyNormStyle(style);
  if (bias && style != NormStyle::layernorm)
    return op->emitOpError() << biasName
                             << " is only allowed with norm style layernorm, "
                                "got "
                             << stringifyNormStyle(style);
  if (!weighted && scope != NormScope::head)
    return op->emitOpError() << "norm scope " << stringifyNormScope(scope)
                             << " describes a weight's shape: an unweighted "
                                "norm has scope head";
  if (scope == NormScope::projection)
    if (auto module = op->getParentOfType<ModuleOp>())
      if (auto tp = module->getAttrOfType<DenseI64ArrayAttr>(
              "attn.tensor_parallel");
          tp && !tp.empty() && tp[0] > 1)
        return op->emitOpError()
               << "norm scope projection needs every head of the projection "
                  "on one rank: not in a module with attn.tensor_parallel tp "
               << tp[0];
  if (!weighted) {
    if (!(eps > 0) || !std::isfinite(eps))
      return op->emitOpError() << "eps must be a positive finite number, got "
                               << formatDouble(eps);
    return success();
  }
  auto weightType = cast<RankedTensorType>(weight.getType());
  if (failed(verifyNormWeight(op, weightName, scope, numHeads, headDim,
                              weightType, eps)))
    return failure();
  if (bias && bias.getType() != weightType)
    return op->emitOpError() << biasName << " type (" << bias.getType()
                             << ") must equal the " << weightName << " type ("
                             << weightType << ")";
  return success();
}

/// The `[tokens, heads, <dim>]` activation input of a per-head op (norm,
/// rope, query temperature).
static LogicalResult checkHeadsInput(Operation *op, RankedTensorType type,
                                     StringRef dimName) {
  if (type.getRank() != 3)
    return op->emitOpError() << "input must have rank 3 [tokens, heads, "
                             << dimName << "], got " << type;
  return checkActivationType(op, "input", type.getElementType());
}

LogicalResult RmsNormOp::verify() {
  Operation *op = getOperation();
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (failed(checkHeadsInput(op, inputType, "head_dim")))
    return failure();
  return verifyNormOperands(op, "", getStyle(), getScope(),
                            inputType.getDimSize(1), inputType.getDimSize(2),
                            getWeight(), getBias(),
                            getEps().convertToDouble());
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

/// Rotation rules shared by rope and fused_preprocess: rotary range within
/// the head dim of `inputType` ([tokens, heads, Dqk]), theta, positions.
static LogicalResult verifyRotation(Operation *op, RankedTensorType inputType,
                                    int64_t rotaryDim, int64_t rotaryOffset,
                                    double theta, RopeScalingAttr scaling,
                                    RankedTensorType positionsType) {
  int64_t headDim = inputType.getDimSize(2);
  if (failed(checkAtLeast(op, "rotary_dim", rotaryDim, 0)) ||
      failed(checkAtLeast(op, "rotary_offset", rotaryOffset, 0)))
    return failure();
  if (rotaryDim % 2 != 0)
    return op->emitOpError() << "rotary_dim must be even, got " << rotaryDim;
  // Both are >= 0 here, so `headDim - rotaryOffset` cannot overflow where
  // `rotaryOffset + rotaryDim` could. A dynamic head dim admits any range.
  if (headDim != kAny && rotaryDim > headDim - rotaryOffset)
    return op->emitOpError() << "rotary_offset + rotary_dim (" << rotaryOffset
                             << " + " << rotaryDim
                             << ") must be <= the head dim (" << headDim
                             << ")";
  if (!(theta > 0) || !std::isfinite(theta))
    return op->emitOpError() << "theta must be a positive finite number, got "
                             << formatDouble(theta);
  // longrope divides each of the rotary_dim / 2 inverse frequencies.
  if (scaling && scaling.getShortFactor() &&
      static_cast<int64_t>(scaling.getShortFactor().size()) != rotaryDim / 2)
    return op->emitOpError()
           << "longrope short_factor and long_factor must have rotary_dim / 2 ("
           << rotaryDim / 2 << ") values, got "
           << scaling.getShortFactor().size();
  if (failed(checkIndexTensor(op, "positions", positionsType, 1)) ||
      failed(checkSameDim(op, positionsType, "positions", inputType, "input", 0,
                          0, "token count (dim 0)")))
    return failure();
  return success();
}

LogicalResult RopeOp::verify() {
  Operation *op = getOperation();
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (failed(checkHeadsInput(op, inputType, "qk_head_dim")))
    return failure();
  return verifyRotation(op, inputType, signedValue(getRotaryDimAttr()),
                        signedValue(getRotaryOffsetAttr()),
                        getTheta().convertToDouble(), getScalingAttr(),
                        cast<RankedTensorType>(getPositions().getType()));
}

//===----------------------------------------------------------------------===//
// cache_write
//===----------------------------------------------------------------------===//

/// Cache-write rules shared by cache_write and fused_preprocess: k/v against
/// the caches (K cache head dim Dqk, V cache head dim Dv), slot mapping,
/// fp8 scales.
static LogicalResult verifyCacheWrite(Operation *op, RankedTensorType kType,
                                      RankedTensorType vType, Value slotMapping,
                                      Value kCacheValue, Value vCacheValue,
                                      Value kScale, Value vScale) {
  auto kCache = cast<RankedTensorType>(kCacheValue.getType());
  auto vCache = cast<RankedTensorType>(vCacheValue.getType());
  for (auto [name, type] : {std::pair<StringRef, RankedTensorType>{"k", kType},
                            {"v", vType}})
    if (type.getRank() != 3)
      return op->emitOpError() << name
                           << " must have rank 3 [tokens, num_kv_heads, "
                              "head_dim], got "
                           << type;
  Type element = kType.getElementType();
  if (failed(checkActivationType(op, "k", element)) ||
      failed(checkSameElementType(op, "v", vType.getElementType(), "k",
                                  element)) ||
      failed(checkSameDim(op, vType, "v", kType, "k", 0, 0,
                          "token count (dim 0)")) ||
      failed(checkSameDim(op, vType, "v", kType, "k", 1, 1,
                          "num_kv_heads (dim 1)")) ||
      failed(checkCachePair(op, kCache, vCache, element)))
    return failure();
  if (failed(checkSameDim(op, kCache, "k_cache", kType, "k", 2, 1,
                          "num_kv_heads")))
    return failure();
  if (!dimsAgree(kCache.getDimSize(3), kType.getDimSize(2)))
    return op->emitOpError() << "k_cache head dim (" << kCache.getDimSize(3)
                         << ") must equal the k head dim, qk_head_dim ("
                         << kType.getDimSize(2) << ")";
  if (!dimsAgree(vCache.getDimSize(3), vType.getDimSize(2)))
    return op->emitOpError() << "v_cache head dim (" << vCache.getDimSize(3)
                         << ") must equal the v head dim, v_head_dim ("
                         << vType.getDimSize(2) << ")";
  auto slotType = cast<RankedTensorType>(slotMapping.getType());
  if (failed(checkIndexTensor(op, "slot_mapping", slotType, 1)) ||
      failed(checkSameDim(op, slotType, "slot_mapping", kType, "k", 0, 0,
                          "token count (dim 0)")))
    return failure();
  return checkCacheScales(op, kCache.getElementType(), kScale, vScale);
}

LogicalResult CacheWriteOp::verify() {
  return verifyCacheWrite(getOperation(),
                          cast<RankedTensorType>(getK().getType()),
                          cast<RankedTensorType>(getV().getType()),
                          getSlotMapping(), getKCache(), getVCache(),
                          getKScale(), getVScale());
}

//===----------------------------------------------------------------------===//
// paged_attention
//===----------------------------------------------------------------------===//

/// The ragged batch indices of the paged attention ops: block tables
/// [seqs, blocks], seq_lens [seqs], query_start_loc [seqs + 1].
static LogicalResult verifyPagedBatch(Operation *op, Value blockTables,
                                      Value seqLens, Value queryStartLoc) {
  auto tablesType = cast<RankedTensorType>(blockTables.getType());
  auto seqLensType = cast<RankedTensorType>(seqLens.getType());
  auto startType = cast<RankedTensorType>(queryStartLoc.getType());
  if (failed(checkIndexTensor(op, "block_tables", tablesType, 2)) ||
      failed(checkIndexTensor(op, "seq_lens", seqLensType, 1)) ||
      failed(checkIndexTensor(op, "query_start_loc", startType, 1)) ||
      failed(checkSameDim(op, seqLensType, "seq_lens", tablesType,
                          "block_tables", 0, 0, "sequence count (dim 0)")))
    return failure();
  int64_t sequences = seqLensType.getDimSize(0);
  int64_t starts = startType.getDimSize(0);
  if (sequences != kAny && starts != kAny && starts != sequences + 1)
    return op->emitOpError() << "query_start_loc must have one more entry "
                                "than seq_lens ("
                             << sequences + 1 << "), got " << starts;
  return success();
}

/// A softmax scale is positive and finite.
static LogicalResult checkSoftmaxScale(Operation *op, double scale) {
  if (scale > 0 && std::isfinite(scale))
    return success();
  return op->emitOpError() << "softmax_scale must be a positive finite "
                              "number, got "
                           << formatDouble(scale);
}

LogicalResult PagedAttentionOp::verify() {
  Operation *op = getOperation();
  auto queryType = cast<RankedTensorType>(getQuery().getType());
  auto kCache = cast<RankedTensorType>(getKCache().getType());
  auto vCache = cast<RankedTensorType>(getVCache().getType());
  auto outputType = cast<RankedTensorType>(getOutput().getType());
  if (queryType.getRank() != 3)
    return emitOpError() << "query must have rank 3 [tokens, num_q_heads, "
                            "qk_head_dim], got "
                         << queryType;
  Type element = queryType.getElementType();
  if (failed(checkActivationType(op, "query", element)) ||
      failed(checkCachePair(op, kCache, vCache, element)))
    return failure();

  int64_t numQHeads = queryType.getDimSize(1);
  int64_t numKvHeads = kCache.getDimSize(2);
  if (numKvHeads != kAny &&
      (numKvHeads < 1 || (numQHeads != kAny && numQHeads % numKvHeads != 0)))
    return emitOpError() << "num_q_heads (query dim 1, "
                         << describeDim(numQHeads)
                         << ") must be divisible by num_kv_heads (k_cache dim "
                            "2, "
                         << numKvHeads << ")";
  if (!dimsAgree(kCache.getDimSize(3), queryType.getDimSize(2)))
    return emitOpError() << "k_cache head dim (" << kCache.getDimSize(3)
                         << ") must equal the query head dim, qk_head_dim ("
                         << queryType.getDimSize(2) << ")";
  int64_t vHeadDim = vCache.getDimSize(3);
  if (failed(checkShape(op, "output", outputType,
                        {queryType.getDimSize(0), numQHeads, vHeadDim},
                        "tokens x num_q_heads x v_head_dim of the v_cache")) ||
      failed(checkSameElementType(op, "output", outputType.getElementType(),
                                  "query", element)))
    return failure();

  if (failed(verifyPagedBatch(op, getBlockTables(), getSeqLens(),
                              getQueryStartLoc())))
    return failure();

  if (Value sinks = getSinks()) {
    auto sinksType = cast<RankedTensorType>(sinks.getType());
    if (failed(checkShape(op, "sinks", sinksType, {numQHeads},
                          "one logit per query head")))
      return failure();
    if (!sinksType.getElementType().isF32())
      return emitOpError() << "sinks element type must be f32, got "
                           << sinksType.getElementType();
  }
  if (failed(checkCacheScales(op, kCache.getElementType(), getKScale(),
                              getVScale())))
    return failure();

  if (failed(checkSoftmaxScale(op, getSoftmaxScale().convertToDouble())))
    return failure();
  if (failed(checkAtLeast(op, "attention_chunk",
                          signedValue(getAttentionChunkAttr()), 0)))
    return failure();
  if (getAttentionChunk() > 0 && !getCausal())
    return emitOpError() << "attention_chunk needs causal attention (chunks "
                            "are counted from the query's position)";
  if (failed(checkAtLeast(op, "sliding_window",
                          signedValue(getSlidingWindowAttr()), 0)))
    return failure();
  double softcap = getLogitSoftcap().convertToDouble();
  if (!(softcap >= 0) || !std::isfinite(softcap))
    return emitOpError() << "logit_softcap must be >= 0 (0: none), got "
                         << formatDouble(softcap);
  double valueScale = getValueScale().convertToDouble();
  if (!(valueScale > 0) || !std::isfinite(valueScale))
    return emitOpError() << "value_scale must be a positive finite number, got "
                         << formatDouble(valueScale);
  return success();
}

//===----------------------------------------------------------------------===//
// output_gate
//===----------------------------------------------------------------------===//

LogicalResult OutputGateOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (type.getRank() != 3)
    return emitOpError() << "input must have rank 3 [tokens, num_q_heads, "
                            "v_head_dim], got "
                         << type;
  if (failed(checkActivationType(getOperation(), "input", type.getElementType())))
    return failure();
  // The gate is the output's shape (element-wise) or one value per head.
  auto gate = cast<RankedTensorType>(getGate().getType());
  if (gate == type)
    return success();
  if (failed(checkShape(getOperation(), "gate", gate,
                        {type.getDimSize(0), type.getDimSize(1), 1},
                        "the input's shape, or tokens x num_q_heads x 1 (one "
                        "value per head)")) ||
      failed(checkSameElementType(getOperation(), "gate",
                                  gate.getElementType(), "input",
                                  type.getElementType())))
    return failure();
  return success();
}

/// `: T` when the gate's type is the output's, else `: T, G`.
static ParseResult parseGateTypes(OpAsmParser &parser, Type &input, Type &gate,
                                  Type &result) {
  if (parser.parseType(input))
    return failure();
  result = input;
  gate = input;
  if (succeeded(parser.parseOptionalComma()))
    return parser.parseType(gate);
  return success();
}

static void printGateTypes(OpAsmPrinter &printer, Operation *, Type input,
                           Type gate, Type) {
  printer << input;
  if (gate != input)
    printer << ", " << gate;
}

//===----------------------------------------------------------------------===//
// query_temperature
//===----------------------------------------------------------------------===//

/// floor_scale positive and scale finite (both become float constants).
static LogicalResult verifyTemperature(Operation *op, double floorScale,
                                       double scale) {
  if (!(floorScale > 0) || !std::isfinite(floorScale))
    return op->emitOpError()
           << "temperature floor_scale must be a positive finite number, got "
           << formatDouble(floorScale);
  if (!std::isfinite(scale))
    return op->emitOpError()
           << "temperature scale must be a finite number, got "
           << formatDouble(scale);
  return success();
}

LogicalResult QueryTemperatureOp::verify() {
  Operation *op = getOperation();
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (failed(checkHeadsInput(op, inputType, "qk_head_dim")))
    return failure();
  auto positionsType = cast<RankedTensorType>(getPositions().getType());
  if (failed(checkIndexTensor(op, "positions", positionsType, 1)) ||
      failed(checkSameDim(op, positionsType, "positions", inputType, "input", 0,
                          0, "token count (dim 0)")))
    return failure();
  return verifyTemperature(op, getFloorScale().convertToDouble(),
                           getScale().convertToDouble());
}

//===----------------------------------------------------------------------===//
// fused_preprocess
//===----------------------------------------------------------------------===//

bool FusedPreprocessOp::hasStage(PreprocessStage stage) {
  return llvm::any_of(getStages().getAsRange<PreprocessStageAttr>(),
                      [&](PreprocessStageAttr s) { return s.getValue() == stage; });
}

NormScope FusedPreprocessOp::normScope() {
  return getNormScope().value_or(NormScope::head);
}

bool FusedPreprocessOp::normAfterRope() {
  bool seenRope = false;
  for (auto stage : getStages().getAsRange<PreprocessStageAttr>()) {
    if (stage.getValue() == PreprocessStage::rope)
      seenRope = true;
    else if (seenRope && (stage.getValue() == PreprocessStage::q_norm ||
                          stage.getValue() == PreprocessStage::k_norm))
      return true;
  }
  return false;
}

LogicalResult FusedPreprocessOp::verify() {
  Operation *op = getOperation();
  Value gate = getGate();
  if (failed(verifySplit(op, getNumQHeadsAttr(), getNumKvHeadsAttr(),
                         getQkHeadDimAttr(), getVHeadDimAttr(), getGateLayout(),
                         getQkv(), getQ().getType(), Type(), Type(),
                         gate ? gate.getType() : Type())))
    return failure();
  auto qkvType = cast<RankedTensorType>(getQkv().getType());
  Type element = qkvType.getElementType();
  int64_t tokens = qkvType.getDimSize(0);
  int64_t numKvHeads = signedValue(getNumKvHeadsAttr());
  int64_t qkHeadDim = signedValue(getQkHeadDimAttr());
  auto kType = RankedTensorType::get({tokens, numKvHeads, qkHeadDim}, element);
  auto vType = RankedTensorType::get(
      {tokens, numKvHeads, signedValue(getVHeadDimAttr())}, element);

  // Each stage at most once; its operands and attributes present exactly
  // when the stage is.
  SmallVector<PreprocessStage> stages;
  for (PreprocessStageAttr stage : getStages().getAsRange<PreprocessStageAttr>()) {
    if (llvm::is_contained(stages, stage.getValue()))
      return emitOpError() << "stages lists "
                           << stringifyPreprocessStage(stage.getValue())
                           << " twice";
    stages.push_back(stage.getValue());
  }
  bool qNorm = llvm::is_contained(stages, PreprocessStage::q_norm);
  bool kNorm = llvm::is_contained(stages, PreprocessStage::k_norm);
  bool rope = llvm::is_contained(stages, PreprocessStage::rope);
  bool temperature = llvm::is_contained(stages, PreprocessStage::q_temperature);
  auto presence = [&](bool stage, bool present, StringRef stageName,
                      StringRef what) -> LogicalResult {
    if (stage == present)
      return success();
    return emitOpError() << what << (stage ? " is required by" : " is only allowed with")
                         << " the " << stageName << " stage";
  };
  // The weights' presence depends on the style too (verifyNormOperands).
  auto absentWithout = [&](bool stage, Value operand, StringRef stageName,
                           StringRef what) -> LogicalResult {
    if (stage || !operand)
      return success();
    return emitOpError() << what << " is only allowed with the " << stageName
                         << " stage";
  };
  if (failed(absentWithout(qNorm, getQNormWeight(), "q_norm",
                           "q_norm_weight")) ||
      failed(absentWithout(kNorm, getKNormWeight(), "k_norm",
                           "k_norm_weight")) ||
      failed(absentWithout(qNorm, getQNormBias(), "q_norm", "q_norm_bias")) ||
      failed(absentWithout(kNorm, getKNormBias(), "k_norm", "k_norm_bias")) ||
      failed(presence(qNorm || kNorm, static_cast<bool>(getNormStyleAttr()),
                      "q_norm or k_norm", "norm_style")) ||
      failed(presence(qNorm || kNorm, static_cast<bool>(getNormEpsAttr()),
                      "q_norm or k_norm", "norm_eps")) ||
      failed(presence(rope || temperature, static_cast<bool>(getPositions()),
                      "rope or q_temperature", "positions")) ||
      failed(presence(temperature,
                      static_cast<bool>(getTemperatureFloorScaleAttr()),
                      "q_temperature", "temperature_floor_scale")) ||
      failed(presence(temperature, static_cast<bool>(getTemperatureScaleAttr()),
                      "q_temperature", "temperature_scale")) ||
      failed(presence(rope, static_cast<bool>(getRopeStyleAttr()), "rope",
                      "rope_style")) ||
      failed(presence(rope, static_cast<bool>(getRotaryDimAttr()), "rope",
                      "rotary_dim")) ||
      failed(presence(rope, static_cast<bool>(getRotaryOffsetAttr()), "rope",
                      "rotary_offset")) ||
      failed(presence(rope, static_cast<bool>(getThetaAttr()), "rope",
                      "theta")))
    return failure();
  if (!rope && getScalingAttr())
    return emitOpError() << "scaling is only allowed with the rope stage";
  if (!qNorm && !kNorm && getNormScopeAttr())
    return emitOpError()
           << "norm_scope is only allowed with the q_norm or k_norm stage";
  if (temperature) {
    if (stages.back() != PreprocessStage::q_temperature)
      return emitOpError() << "q_temperature must be the last stage (it "
                              "scales the final q)";
    if (failed(verifyTemperature(op, getTemperatureFloorScaleAttr().getValueAsDouble(),
                                 getTemperatureScaleAttr().getValueAsDouble())) ||
        failed(checkIndexTensor(op, "positions",
                                cast<RankedTensorType>(getPositions().getType()), 1)))
      return failure();
  }
  // q and k are normalised on the same side of the rotation: the kernel
  // applies the stages in one order to both.
  if (qNorm && kNorm && rope) {
    auto position = [&](PreprocessStage s) {
      return llvm::find(stages, s) - stages.begin();
    };
    bool qBefore = position(PreprocessStage::q_norm) < position(PreprocessStage::rope);
    bool kBefore = position(PreprocessStage::k_norm) < position(PreprocessStage::rope);
    if (qBefore != kBefore)
      return emitOpError() << "q_norm and k_norm must be on the same side of "
                              "rope in stages";
  }

  if (qNorm && failed(verifyNormOperands(
                   op, "q_norm_", *getNormStyle(), normScope(),
                   signedValue(getNumQHeadsAttr()), qkHeadDim,
                   getQNormWeight(), getQNormBias(),
                   getNormEpsAttr().getValueAsDouble())))
    return failure();
  if (kNorm && failed(verifyNormOperands(
                   op, "k_norm_", *getNormStyle(), normScope(),
                   numKvHeads, qkHeadDim, getKNormWeight(), getKNormBias(),
                   getNormEpsAttr().getValueAsDouble())))
    return failure();
  if (rope && failed(verifyRotation(
                  op, kType, signedValue(getRotaryDimAttr()),
                  signedValue(getRotaryOffsetAttr()),
                  getThetaAttr().getValueAsDouble(), getScalingAttr(),
                  cast<RankedTensorType>(getPositions().getType()))))
    return failure();
  return verifyCacheWrite(op, kType, vType, getSlotMapping(), getKCache(),
                          getVCache(), getKScale(), getVScale());
}

//===----------------------------------------------------------------------===//
// MLA: mla_preprocess, latent_attention, varlen_attention, latent_gather
//===----------------------------------------------------------------------===//

/// The latent cache: [num_blocks, block_size, width] of the activation type
/// or f8E4M3FN, with its scale present exactly when it is fp8.
static LogicalResult verifyLatentCache(Operation *op, RankedTensorType cache,
                                       int64_t width, Type activationType,
                                       Value scale) {
  if (failed(checkShape(op, "latent_cache", cache, {kAny, kAny, width},
                        "num_blocks x block_size x kv_lora_rank + "
                        "rope_head_dim")))
    return failure();
  Type element = cache.getElementType();
  if (element != activationType && !isa<Float8E4M3FNType>(element))
    return op->emitOpError() << "latent_cache element type must be the "
                                "activation type ("
                             << activationType << ") or f8E4M3FN, got "
                             << element;
  bool fp8 = isa<Float8E4M3FNType>(element);
  if (fp8 && !scale)
    return op->emitOpError() << "an f8E4M3FN latent_cache needs the "
                                "cache_scale operand";
  if (!fp8 && scale)
    return op->emitOpError() << "cache_scale is only allowed with an "
                                "f8E4M3FN latent_cache, the cache is "
                             << element;
  if (scale) {
    auto type = cast<RankedTensorType>(scale.getType());
    if (type.getRank() != 0 || !type.getElementType().isF32())
      return op->emitOpError() << "cache_scale must be tensor<f32>, got "
                               << type;
  }
  return success();
}

LogicalResult MlaPreprocessOp::verify() {
  Operation *op = getOperation();
  int64_t heads = signedValue(getNumHeadsAttr());
  int64_t rank = signedValue(getKvLoraRankAttr());
  int64_t rope = signedValue(getRopeHeadDimAttr());
  if (failed(checkAtLeast(op, "num_heads", heads, 1)) ||
      failed(checkAtLeast(op, "kv_lora_rank", rank, 1)) ||
      failed(checkAtLeast(op, "rope_head_dim", rope, 2)))
    return failure();
  if (rope % 2 != 0)
    return emitOpError() << "rope_head_dim must be even (rotated in pairs), "
                            "got "
                         << rope;
  auto kvType = cast<RankedTensorType>(getKvA().getType());
  auto qType = cast<RankedTensorType>(getQRope().getType());
  auto weightType = cast<RankedTensorType>(getKvNormWeight().getType());
  Type element = kvType.getElementType();
  if (failed(checkActivationType(op, "kv_a", element)) ||
      failed(checkShape(op, "kv_a", kvType, {kAny, rank + rope},
                        "tokens x kv_lora_rank + rope_head_dim")) ||
      failed(checkShape(op, "q_rope", qType, {kAny, heads, rope},
                        "tokens x num_heads x rope_head_dim")) ||
      failed(checkSameElementType(op, "q_rope", qType.getElementType(),
                                  "kv_a", element)) ||
      failed(checkSameDim(op, qType, "q_rope", kvType, "kv_a", 0, 0,
                          "token count (dim 0)")) ||
      failed(checkShape(op, "kv_norm_weight", weightType, {rank},
                        "one weight per latent value")) ||
      failed(checkSameElementType(op, "kv_norm_weight",
                                  weightType.getElementType(), "kv_a",
                                  element)))
    return failure();
  auto slotsType = cast<RankedTensorType>(getSlotMapping().getType());
  auto positionsType = cast<RankedTensorType>(getPositions().getType());
  if (failed(checkIndexTensor(op, "slot_mapping", slotsType, 1)) ||
      failed(checkSameDim(op, slotsType, "slot_mapping", kvType, "kv_a", 0, 0,
                          "token count (dim 0)")) ||
      failed(checkIndexTensor(op, "positions", positionsType, 1)) ||
      failed(checkSameDim(op, positionsType, "positions", kvType, "kv_a", 0,
                          0, "token count (dim 0)")))
    return failure();
  if (failed(verifyLatentCache(
          op, cast<RankedTensorType>(getLatentCache().getType()), rank + rope,
          element, getCacheScale())))
    return failure();
  double eps = getNormEps().convertToDouble();
  if (!(eps > 0) || !std::isfinite(eps))
    return emitOpError() << "norm_eps must be a positive finite number, got "
                         << formatDouble(eps);
  double latentScale = getLatentScale().convertToDouble();
  if (!(latentScale > 0) || !std::isfinite(latentScale))
    return emitOpError() << "latent_scale must be a positive finite number, "
                            "got "
                         << formatDouble(latentScale);
  RopeStyle style = getRopeStyle();
  if (getRopeDeinterleave() && style != RopeStyle::gptj)
    return emitOpError() << "rope_deinterleave needs rope_style gptj (it "
                            "reads interleaved pairs), got "
                         << stringifyRopeStyle(style);
  double theta = getTheta().convertToDouble();
  if (!(theta > 0) || !std::isfinite(theta))
    return emitOpError() << "theta must be a positive finite number, got "
                         << formatDouble(theta);
  if (RopeScalingAttr scaling = getScalingAttr();
      scaling && scaling.getShortFactor() &&
      static_cast<int64_t>(scaling.getShortFactor().size()) != rope / 2)
    return emitOpError() << "longrope short_factor and long_factor must have "
                            "rope_head_dim / 2 ("
                         << rope / 2 << ") values, got "
                         << scaling.getShortFactor().size();
  return success();
}

LogicalResult LatentAttentionOp::verify() {
  Operation *op = getOperation();
  auto queryType = cast<RankedTensorType>(getQuery().getType());
  auto cacheType = cast<RankedTensorType>(getLatentCache().getType());
  auto outputType = cast<RankedTensorType>(getOutput().getType());
  int64_t rank = signedValue(getKvLoraRankAttr());
  if (failed(checkAtLeast(op, "kv_lora_rank", rank, 1)))
    return failure();
  if (queryType.getRank() != 3)
    return emitOpError() << "query must have rank 3 [tokens, num_heads, "
                            "kv_lora_rank + rope_head_dim], got "
                         << queryType;
  Type element = queryType.getElementType();
  int64_t width = queryType.getDimSize(2);
  if (failed(checkActivationType(op, "query", element)))
    return failure();
  if (width != kAny && width <= rank)
    return emitOpError() << "query head dim (" << width
                         << ") must exceed kv_lora_rank (" << rank
                         << "): it is kv_lora_rank + rope_head_dim";
  if (failed(verifyLatentCache(op, cacheType, width, element,
                               getCacheScale())) ||
      failed(checkShape(op, "output", outputType,
                        {queryType.getDimSize(0), queryType.getDimSize(1),
                         rank},
                        "tokens x num_heads x kv_lora_rank")) ||
      failed(checkSameElementType(op, "output", outputType.getElementType(),
                                  "query", element)) ||
      failed(verifyPagedBatch(op, getBlockTables(), getSeqLens(),
                              getQueryStartLoc())))
    return failure();
  return checkSoftmaxScale(op, getSoftmaxScale().convertToDouble());
}

LogicalResult VarlenAttentionOp::verify() {
  Operation *op = getOperation();
  auto queryType = cast<RankedTensorType>(getQuery().getType());
  auto keyType = cast<RankedTensorType>(getKey().getType());
  auto valueType = cast<RankedTensorType>(getValue().getType());
  auto outputType = cast<RankedTensorType>(getOutput().getType());
  for (auto [name, type] :
       {std::pair<StringRef, RankedTensorType>{"query", queryType},
        {"key", keyType},
        {"value", valueType}})
    if (type.getRank() != 3)
      return emitOpError() << name
                           << " must have rank 3 [tokens, heads, head_dim], "
                              "got "
                           << type;
  Type element = queryType.getElementType();
  if (failed(checkActivationType(op, "query", element)) ||
      failed(checkSameElementType(op, "key", keyType.getElementType(), "query",
                                  element)) ||
      failed(checkSameElementType(op, "value", valueType.getElementType(),
                                  "query", element)) ||
      failed(checkSameDim(op, keyType, "key", valueType, "value", 0, 0,
                          "token count (dim 0)")) ||
      failed(checkSameDim(op, keyType, "key", valueType, "value", 1, 1,
                          "num_kv_heads (dim 1)")) ||
      failed(checkSameDim(op, keyType, "key", queryType, "query", 2, 2,
                          "qk_head_dim (dim 2)")))
    return failure();
  int64_t numQHeads = queryType.getDimSize(1);
  int64_t numKvHeads = keyType.getDimSize(1);
  if (numKvHeads != kAny &&
      (numKvHeads < 1 || (numQHeads != kAny && numQHeads % numKvHeads != 0)))
    return emitOpError() << "num_q_heads (query dim 1, "
                         << describeDim(numQHeads)
                         << ") must be divisible by num_kv_heads (key dim 1, "
                         << numKvHeads << ")";
  if (failed(checkShape(op, "output", outputType,
                        {queryType.getDimSize(0), numQHeads,
                         valueType.getDimSize(2)},
                        "tokens_q x num_q_heads x v_head_dim")) ||
      failed(checkSameElementType(op, "output", outputType.getElementType(),
                                  "query", element)))
    return failure();
  auto cuQ = cast<RankedTensorType>(getCuSeqlensQ().getType());
  auto cuK = cast<RankedTensorType>(getCuSeqlensK().getType());
  if (failed(checkIndexTensor(op, "cu_seqlens_q", cuQ, 1)) ||
      failed(checkIndexTensor(op, "cu_seqlens_k", cuK, 1)) ||
      failed(checkSameDim(op, cuQ, "cu_seqlens_q", cuK, "cu_seqlens_k", 0, 0,
                          "sequence count + 1 (dim 0)")))
    return failure();
  return checkSoftmaxScale(op, getSoftmaxScale().convertToDouble());
}

LogicalResult LatentGatherOp::verify() {
  Operation *op = getOperation();
  auto cacheType = cast<RankedTensorType>(getLatentCache().getType());
  auto outputType = cast<RankedTensorType>(getOutput().getType());
  if (outputType.getRank() != 2)
    return emitOpError() << "output must have rank 2 [tokens, kv_lora_rank + "
                            "rope_head_dim], got "
                         << outputType;
  Type element = outputType.getElementType();
  if (failed(checkActivationType(op, "output", element)) ||
      failed(verifyLatentCache(op, cacheType, outputType.getDimSize(1),
                               element, getCacheScale())))
    return failure();
  auto tablesType = cast<RankedTensorType>(getBlockTables().getType());
  auto cuType = cast<RankedTensorType>(getCuSeqlens().getType());
  if (failed(checkIndexTensor(op, "block_tables", tablesType, 2)) ||
      failed(checkIndexTensor(op, "cu_seqlens", cuType, 1)))
    return failure();
  int64_t sequences = tablesType.getDimSize(0);
  int64_t entries = cuType.getDimSize(0);
  if (sequences != kAny && entries != kAny && entries != sequences + 1)
    return emitOpError() << "cu_seqlens must have one more entry than "
                            "block_tables has rows ("
                         << sequences + 1 << "), got " << entries;
  return success();
}

//===----------------------------------------------------------------------===//
// Folders and canonicalization patterns (run by attn-canonicalize)
//===----------------------------------------------------------------------===//

/// rotary_dim 0 rotates nothing: the rope is the identity.
OpFoldResult RopeOp::fold(FoldAdaptor) {
  if (signedValue(getRotaryDimAttr()) == 0)
    return getInput();
  return {};
}

/// A gate whose sigmoid is 1 everywhere (a splat constant at least 64, where
/// sigmoid rounds to 1 in f32 and every narrower type) leaves the output as
/// it is.
OpFoldResult OutputGateOp::fold(FoldAdaptor adaptor) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getGate());
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return {};
  double value = splat.getSplatValue<APFloat>().convertToDouble();
  if (value >= 64.0)
    return getInput();
  return {};
}

namespace {

/// qkv_split whose gate result has no users: split without it. The gate
/// columns stay in the layout (gate_layout is kept) and are skipped.
struct DropUnusedSplitGate : OpRewritePattern<QkvSplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QkvSplitOp op,
                                PatternRewriter &rewriter) const override {
    Value gate = op.getGate();
    if (!gate || !gate.use_empty())
      return failure();
    auto replacement = QkvSplitOp::create(
        rewriter, op.getLoc(), op.getQ().getType(), op.getK().getType(),
        op.getV().getType(), Type(), op.getQkv(), op.getNumQHeadsAttr(),
        op.getNumKvHeadsAttr(), op.getQkHeadDimAttr(), op.getVHeadDimAttr(),
        op.getGateLayoutAttr());
    rewriter.replaceOp(op, {replacement.getQ(), replacement.getK(),
                            replacement.getV(), Value()});
    return success();
  }
};

/// The same for the fused op's gate output.
struct DropUnusedFusedGate : OpRewritePattern<FusedPreprocessOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedPreprocessOp op,
                                PatternRewriter &rewriter) const override {
    Value gate = op.getGate();
    if (!gate || !gate.use_empty())
      return failure();
    SmallVector<Type> types = {op.getQ().getType(), op.getKCacheOut().getType(),
                               op.getVCacheOut().getType()};
    OperationState state(op.getLoc(), op->getName());
    state.addOperands(op->getOperands());
    state.addTypes(types);
    state.propertiesAttr = op->getPropertiesAsAttribute();
    state.addAttributes(llvm::to_vector(op->getDiscardableAttrs()));
    Operation *replacement = rewriter.create(state);
    rewriter.replaceOp(op, {replacement->getResult(0), replacement->getResult(1),
                            replacement->getResult(2), Value()});
    return success();
  }
};

} // namespace

void QkvSplitOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<DropUnusedSplitGate>(context);
}

void FusedPreprocessOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                    MLIRContext *context) {
  results.add<DropUnusedFusedGate>(context);
}

//===----------------------------------------------------------------------===//
// Schedule attributes
//===----------------------------------------------------------------------===//

/// Every schedule parameter is a positive count.
static LogicalResult
checkPositiveParameters(function_ref<InFlightDiagnostic()> emitError,
                        StringRef attrName,
                        ArrayRef<std::pair<StringRef, int64_t>> parameters) {
  for (auto [name, value] : parameters)
    if (value < 1)
      return emitError() << attrName << " " << name << " must be >= 1, got "
                         << value;
  return success();
}

LogicalResult PreprocessScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t vectorWidth,
    int64_t threadsPerHead, int64_t threadsPerBlock, int64_t headsPerBlock,
    int64_t tokensPerBlock, int64_t minBlocksPerSm, bool pairLayout,
    int64_t prefetch) {
  if (failed(checkPositiveParameters(
          emitError, "preprocess_schedule",
          {{"vector_width", vectorWidth},
           {"threads_per_head", threadsPerHead},
           {"threads_per_block", threadsPerBlock},
           {"heads_per_block", headsPerBlock},
           {"tokens_per_block", tokensPerBlock},
           {"min_blocks_per_sm", minBlocksPerSm},
           {"prefetch", prefetch}})))
    return failure();
  if (threadsPerBlock > 1024)
    return emitError() << "preprocess_schedule threads_per_block must be <= "
                          "1024, got "
                       << threadsPerBlock;
  if (threadsPerBlock % threadsPerHead != 0)
    return emitError() << "preprocess_schedule threads_per_head ("
                       << threadsPerHead << ") must divide threads_per_block ("
                       << threadsPerBlock << ")";
  return success();
}

/// The MLA preprocess kernel unrolls its token steps.
static constexpr int64_t kMaxMlaPreprocessTokenSteps = 8;

LogicalResult MlaPreprocessScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t vectorWidth,
    int64_t warpsPerToken, int64_t tokensPerBlock, int64_t threadsPerBlock,
    int64_t minBlocksPerSm, int64_t tokenSteps, bool /*l2Prefetch*/,
    bool /*streamingStores*/, bool /*stageInShared*/) {
  if (failed(checkPositiveParameters(
          emitError, "mla_preprocess_schedule",
          {{"vector_width", vectorWidth},
           {"warps_per_token", warpsPerToken},
           {"tokens_per_block", tokensPerBlock},
           {"threads_per_block", threadsPerBlock},
           {"min_blocks_per_sm", minBlocksPerSm},
           {"token_steps", tokenSteps}})))
    return failure();
  if (!llvm::isPowerOf2_64(static_cast<uint64_t>(vectorWidth)) ||
      vectorWidth > 16)
    return emitError() << "mla_preprocess_schedule vector_width must be a "
                          "power of two <= 16 (one access of at most 16 "
                          "bytes), got "
                       << vectorWidth;
  if (threadsPerBlock != 32 * (warpsPerToken + 1) * tokensPerBlock)
    return emitError() << "mla_preprocess_schedule threads_per_block must be "
                          "32 x (warps_per_token + 1) x tokens_per_block ("
                       << 32 * (warpsPerToken + 1) * tokensPerBlock << "), got "
                       << threadsPerBlock;
  if (threadsPerBlock > 1024)
    return emitError() << "mla_preprocess_schedule threads_per_block must be "
                          "<= 1024, got "
                       << threadsPerBlock;
  // The steps are unrolled (each one's registers named at compile time).
  if (tokenSteps > kMaxMlaPreprocessTokenSteps)
    return emitError() << "mla_preprocess_schedule token_steps must be <= "
                       << kMaxMlaPreprocessTokenSteps << ", got " << tokenSteps;
  return success();
}

LogicalResult AttentionScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t blockM,
    int64_t blockN, int64_t numWarps, int64_t pipelineStages,
    int64_t qkDimPadded, int64_t vDimPadded, int64_t gqaPack,
    int64_t splitKvMinKeys, int64_t maxKvSplits, int64_t targetCtas,
    StringRef mma, AttentionForm form, bool persistent) {
  if (persistent && mma != "wgmma_ws")
    return emitError() << "attention_schedule persistent = true needs mma "
                          "\"wgmma_ws\" (the warp-specialised kernel), got \""
                       << mma << "\"";
  if (failed(checkPositiveParameters(
          emitError, "attention_schedule",
          {{"block_m", blockM},
           {"block_n", blockN},
           {"num_warps", numWarps},
           {"pipeline_stages", pipelineStages},
           {"qk_dim_padded", qkDimPadded},
           {"v_dim_padded", vDimPadded},
           {"gqa_pack", gqaPack},
           {"split_kv_min_keys", splitKvMinKeys},
           {"max_kv_splits", maxKvSplits},
           {"target_ctas", targetCtas}})))
    return failure();
  for (auto [name, value] : {std::pair<StringRef, int64_t>{"qk_dim_padded",
                                                           qkDimPadded},
                             {"v_dim_padded", vDimPadded},
                             {"block_n", blockN}})
    if (value % 16 != 0)
      return emitError() << "attention_schedule " << name
                         << " must be a multiple of 16 (the MMA step), got "
                         << value;
  if (blockM % 16 != 0)
    return emitError() << "attention_schedule block_m must be a multiple of "
                          "16, got "
                       << blockM;
  if (mma != "mma.sync" && mma != "wgmma" && mma != "wgmma_ws")
    return emitError() << "attention_schedule mma must be \"mma.sync\", "
                          "\"wgmma\" or \"wgmma_ws\", got \""
                       << mma << "\"";
  if (form == AttentionForm::cuda_core && mma != "mma.sync")
    return emitError() << "attention_schedule form cuda_core has no matrix "
                          "instruction: mma must be \"mma.sync\" (the "
                          "default), got \""
                       << mma << "\"";
  if (mma == "wgmma_ws") {
    // A producer warpgroup and two consumers of one m64 row block each;
    // 64-element swizzled column blocks; the wgmma N limit for S and P V.
    if (blockM != 128 || numWarps != 12)
      return emitError() << "attention_schedule mma \"wgmma_ws\" needs "
                            "block_m 128 and num_warps 12 (a producer and two "
                            "consumer warpgroups), got block_m "
                         << blockM << " and num_warps " << numWarps;
    if (qkDimPadded % 64 != 0 || vDimPadded % 64 != 0 || vDimPadded > 256 ||
        (blockN != 64 && blockN != 80 && blockN != 128 && blockN != 176 &&
         blockN != 192) ||
        pipelineStages < 2)
      return emitError() << "attention_schedule mma \"wgmma_ws\" needs "
                            "qk_dim_padded and v_dim_padded multiples of 64, "
                            "v_dim_padded <= 256, block_n 64, 80, 128, 176 or 192 (the S "
                            "wrappers) and at "
                            "least 2 pipeline_stages, got "
                         << qkDimPadded << ", " << vDimPadded << ", "
                         << blockN << " and " << pipelineStages;
  }
  if (mma == "wgmma") {
    // Two m64 row blocks per warpgroup, 64-element swizzled column blocks,
    // and the wgmma N limit for the P V product.
    if (blockM != 128 || numWarps != 4)
      return emitError() << "attention_schedule mma \"wgmma\" needs block_m "
                            "128 and num_warps 4 (one warpgroup, two m64 row "
                            "blocks), got block_m "
                         << blockM << " and num_warps " << numWarps;
    if (qkDimPadded % 64 != 0 || vDimPadded % 64 != 0 || vDimPadded > 256)
      return emitError() << "attention_schedule mma \"wgmma\" needs "
                            "qk_dim_padded and v_dim_padded multiples of 64 "
                            "(128-byte swizzled column blocks) and "
                            "v_dim_padded <= 256, got "
                         << qkDimPadded << " and " << vDimPadded;
  }
  return success();
}

LogicalResult LatentAttentionScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t blockM,
    int64_t blockN, int64_t numWarps, int64_t maxKvSplits,
    int64_t targetCtas) {
  if (failed(checkPositiveParameters(emitError, "latent_attention_schedule",
                                     {{"block_m", blockM},
                                      {"block_n", blockN},
                                      {"num_warps", numWarps},
                                      {"max_kv_splits", maxKvSplits},
                                      {"target_ctas", targetCtas}})))
    return failure();
  // The kernel's one tile: 64 rows (one m64 wgmma row block), 64-key K
  // tiles split between two warpgroups.
  if (blockM != 64 || blockN != 64 || numWarps != 8)
    return emitError() << "latent_attention_schedule needs block_m 64, "
                          "block_n 64 and num_warps 8 (the kernel's tile: "
                          "two warpgroups over 64 rows), got block_m "
                       << blockM << ", block_n " << blockN << ", num_warps "
                       << numWarps;
  if (maxKvSplits > targetCtas)
    return emitError() << "latent_attention_schedule max_kv_splits ("
                       << maxKvSplits << ") must be <= target_ctas ("
                       << targetCtas << ")";
  return success();
}

#define GET_OP_CLASSES
#include "attnc/Dialect/Attn/AttnOps.cpp.inc"
