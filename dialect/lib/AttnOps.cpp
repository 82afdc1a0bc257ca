//===- AttnOps.cpp - Verifiers of the attn operations ---------------------===//
//
// Every consistency rule of the dialect lives here, each with a message that
// names the attribute or operand and the rule. Shapes and offsets of the
// fused projection come from the layout library, the single source of truth.
//
//===----------------------------------------------------------------------===//
#include "attnc/Dialect/Attn/AttnOps.h"

#include "attnc/Model/Layout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
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

LogicalResult QkvSplitOp::verify() {
  Operation *op = getOperation();
  int64_t numQHeads = signedValue(getNumQHeadsAttr());
  int64_t numKvHeads = signedValue(getNumKvHeadsAttr());
  int64_t qkHeadDim = signedValue(getQkHeadDimAttr());
  int64_t vHeadDim = signedValue(getVHeadDimAttr());
  if (failed(checkAtLeast(op, "num_q_heads", numQHeads, 1)) ||
      failed(checkAtLeast(op, "num_kv_heads", numKvHeads, 1)) ||
      failed(checkAtLeast(op, "qk_head_dim", qkHeadDim, 1)) ||
      failed(checkAtLeast(op, "v_head_dim", vHeadDim, 1)))
    return failure();
  if (numQHeads % numKvHeads != 0)
    return emitOpError() << "num_q_heads (" << numQHeads
                         << ") must be divisible by num_kv_heads ("
                         << numKvHeads << ")";

  GateLayout gateLayout = getGateLayout();
  // The layout library computes the width in plain int64 arithmetic; huge
  // head counts or dims would wrap around (and could match a small qkv
  // width), so the sum is checked for overflow first.
  {
    int64_t total = 0, term = 0;
    bool overflow = false;
    auto add = [&](int64_t a, int64_t b) {
      overflow = overflow || llvm::MulOverflow(a, b, term) ||
                 llvm::AddOverflow(total, term, total);
    };
    add(numQHeads, qkHeadDim);
    add(numKvHeads, qkHeadDim);
    add(numKvHeads, vHeadDim);
    if (gateLayout != GateLayout::none)
      add(numQHeads, vHeadDim);
    if (overflow)
      return emitOpError() << "the fused width implied by num_q_heads, "
                              "num_kv_heads, qk_head_dim and v_head_dim "
                              "overflows a 64-bit integer";
  }

  attnc::HeadShape shape{numQHeads, numKvHeads, qkHeadDim, vHeadDim,
                         static_cast<attnc::GateLayout>(gateLayout)};
  attnc::Expected<attnc::FusedLayout> layout = attnc::computeFusedLayout(shape);
  if (!layout)
    return emitOpError() << layout.error().message();

  auto qkvType = cast<RankedTensorType>(getQkv().getType());
  if (qkvType.getRank() != 2)
    return emitOpError() << "qkv must have rank 2 [tokens, fused_width], got "
                         << qkvType;
  int64_t width = qkvType.getDimSize(1);
  if (width != layout->width)
    return emitOpError()
           << "fused width (qkv dim 1) must equal num_q_heads*qk_head_dim + "
              "num_kv_heads*qk_head_dim + num_kv_heads*v_head_dim"
           << (gateLayout == GateLayout::none ? "" : " + num_q_heads*v_head_dim")
           << " = " << layout->width << " for gate_layout "
           << stringifyGateLayout(gateLayout) << ", got "
           << describeDim(width);
  Type element = qkvType.getElementType();
  if (failed(checkActivationType(op, "qkv", element)))
    return failure();

  bool hasGate = gateLayout != GateLayout::none;
  if (hasGate != static_cast<bool>(getGate()))
    return emitOpError() << (hasGate ? "gate_layout " : "gate_layout none ")
                         << (hasGate ? stringifyGateLayout(gateLayout).str() +
                                           " needs a gate result"
                                     : std::string("must not have a gate "
                                                   "result"));

  int64_t tokens = qkvType.getDimSize(0);
  struct Expect {
    Value value;
    StringRef name;
    int64_t heads, dim;
    StringRef meaning;
  } expects[] = {
      {getQ(), "q result", numQHeads, qkHeadDim,
       "tokens x num_q_heads x qk_head_dim"},
      {getK(), "k result", numKvHeads, qkHeadDim,
       "tokens x num_kv_heads x qk_head_dim"},
      {getV(), "v result", numKvHeads, vHeadDim,
       "tokens x num_kv_heads x v_head_dim"},
      {getGate(), "gate result", numQHeads, vHeadDim,
       "tokens x num_q_heads x v_head_dim"},
  };
  for (const Expect &e : expects) {
    if (!e.value)
      continue;
    auto type = cast<RankedTensorType>(e.value.getType());
    if (failed(checkShape(op, e.name, type, {tokens, e.heads, e.dim},
                          e.meaning)) ||
        failed(checkSameElementType(op, e.name, type.getElementType(), "qkv",
                                    element)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::verify() {
  Operation *op = getOperation();
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto weightType = cast<RankedTensorType>(getWeight().getType());
  if (inputType.getRank() != 3)
    return emitOpError() << "input must have rank 3 [tokens, heads, "
                            "head_dim], got "
                         << inputType;
  if (failed(checkActivationType(op, "input", inputType.getElementType())))
    return failure();
  int64_t headDim = inputType.getDimSize(2);
  if (weightType.getRank() != 1)
    return emitOpError() << "weight must have rank 1 [head_dim], got "
                         << weightType;
  if (!dimsAgree(weightType.getDimSize(0), headDim))
    return emitOpError() << "weight length must equal the head dim it "
                            "normalises ("
                         << describeDim(headDim) << "), got " << weightType;
  if (!isActivationType(weightType.getElementType()))
    return emitOpError() << "weight element type must be bf16, f16 or f32, got "
                         << weightType.getElementType();
  double eps = getEps().convertToDouble();
  if (!(eps > 0) || !std::isfinite(eps))
    return emitOpError() << "eps must be a positive finite number, got "
                         << formatDouble(eps);
  return success();
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::verify() {
  Operation *op = getOperation();
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (inputType.getRank() != 3)
    return emitOpError() << "input must have rank 3 [tokens, heads, "
                            "qk_head_dim], got "
                         << inputType;
  if (failed(checkActivationType(op, "input", inputType.getElementType())))
    return failure();
  int64_t headDim = inputType.getDimSize(2);
  int64_t rotaryDim = signedValue(getRotaryDimAttr());
  int64_t rotaryOffset = signedValue(getRotaryOffsetAttr());
  if (failed(checkAtLeast(op, "rotary_dim", rotaryDim, 0)) ||
      failed(checkAtLeast(op, "rotary_offset", rotaryOffset, 0)))
    return failure();
  if (rotaryDim % 2 != 0)
    return emitOpError() << "rotary_dim must be even, got " << rotaryDim;
  // Both are >= 0 here, so `headDim - rotaryOffset` cannot overflow where
  // `rotaryOffset + rotaryDim` could. A dynamic head dim admits any range.
  if (headDim != kAny && rotaryDim > headDim - rotaryOffset)
    return emitOpError() << "rotary_offset + rotary_dim (" << rotaryOffset
                         << " + " << rotaryDim
                         << ") must be <= the head dim (" << headDim << ")";
  double theta = getTheta().convertToDouble();
  if (!(theta > 0) || !std::isfinite(theta))
    return emitOpError() << "theta must be a positive finite number, got "
                         << formatDouble(theta);
  auto positionsType = cast<RankedTensorType>(getPositions().getType());
  if (failed(checkIndexTensor(op, "positions", positionsType, 1)) ||
      failed(checkSameDim(op, positionsType, "positions", inputType, "input", 0,
                          0, "token count (dim 0)")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// cache_write
//===----------------------------------------------------------------------===//

LogicalResult CacheWriteOp::verify() {
  Operation *op = getOperation();
  auto kType = cast<RankedTensorType>(getK().getType());
  auto vType = cast<RankedTensorType>(getV().getType());
  auto kCache = cast<RankedTensorType>(getKCache().getType());
  auto vCache = cast<RankedTensorType>(getVCache().getType());
  for (auto [name, type] : {std::pair<StringRef, RankedTensorType>{"k", kType},
                            {"v", vType}})
    if (type.getRank() != 3)
      return emitOpError() << name
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
    return emitOpError() << "k_cache head dim (" << kCache.getDimSize(3)
                         << ") must equal the k head dim, qk_head_dim ("
                         << kType.getDimSize(2) << ")";
  if (!dimsAgree(vCache.getDimSize(3), vType.getDimSize(2)))
    return emitOpError() << "v_cache head dim (" << vCache.getDimSize(3)
                         << ") must equal the v head dim, v_head_dim ("
                         << vType.getDimSize(2) << ")";
  auto slotType = cast<RankedTensorType>(getSlotMapping().getType());
  if (failed(checkIndexTensor(op, "slot_mapping", slotType, 1)) ||
      failed(checkSameDim(op, slotType, "slot_mapping", kType, "k", 0, 0,
                          "token count (dim 0)")))
    return failure();
  return checkCacheScales(op, kCache.getElementType(), getKScale(),
                          getVScale());
}

//===----------------------------------------------------------------------===//
// paged_attention
//===----------------------------------------------------------------------===//

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

  auto tablesType = cast<RankedTensorType>(getBlockTables().getType());
  auto seqLensType = cast<RankedTensorType>(getSeqLens().getType());
  auto startType = cast<RankedTensorType>(getQueryStartLoc().getType());
  if (failed(checkIndexTensor(op, "block_tables", tablesType, 2)) ||
      failed(checkIndexTensor(op, "seq_lens", seqLensType, 1)) ||
      failed(checkIndexTensor(op, "query_start_loc", startType, 1)) ||
      failed(checkSameDim(op, seqLensType, "seq_lens", tablesType,
                          "block_tables", 0, 0, "sequence count (dim 0)")))
    return failure();
  int64_t sequences = seqLensType.getDimSize(0);
  int64_t starts = startType.getDimSize(0);
  if (sequences != kAny && starts != kAny && starts != sequences + 1)
    return emitOpError() << "query_start_loc must have one more entry than "
                            "seq_lens ("
                         << sequences + 1 << "), got " << starts;

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

  double scale = getSoftmaxScale().convertToDouble();
  if (!(scale > 0) || !std::isfinite(scale))
    return emitOpError() << "softmax_scale must be a positive finite number, "
                            "got "
                         << formatDouble(scale);
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
  return checkActivationType(getOperation(), "input", type.getElementType());
}

#define GET_OP_CLASSES
#include "attnc/Dialect/Attn/AttnOps.cpp.inc"
