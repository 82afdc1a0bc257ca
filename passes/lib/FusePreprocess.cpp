//===- FusePreprocess.cpp - attn-fuse-preprocess --------------------------===//
//
// Fuses attn.qkv_split -> [rms_norm] / [rope] on q and k -> attn.cache_write
// into one attn.fused_preprocess. Each cache_write anchors a candidate: its
// k is traced back to the split, the split's q is followed forward, and the
// two chains must describe one kernel (the same stages with the same
// parameters on both sides, except that a norm may be on one side only).
// Anything the fused kernel could not reproduce exactly (an intermediate
// with another user, mismatched parameters, an op that is neither a norm nor
// a rope) leaves the IR as it is; in a build with assertions,
// `-debug-only=attn-fuse-preprocess` says why.
//
//===----------------------------------------------------------------------===//
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-fuse-preprocess"

namespace attnc {
#define GEN_PASS_DEF_ATTNFUSEPREPROCESS
#include "attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc::attn;

namespace {

/// Records why the candidate anchored at `write` is not fused, and fails.
LogicalResult reject(CacheWriteOp write, const Twine &why) {
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": not fusing the cache_write at "
                          << write.getLoc() << ": " << why << "\n");
  return failure();
}

/// The value a chain op (norm or rope) transforms; null for any other op.
Value chainInput(Operation *op) {
  if (auto norm = dyn_cast<RmsNormOp>(op))
    return norm.getInput();
  if (auto rope = dyn_cast<RopeOp>(op))
    return rope.getInput();
  if (auto temperature = dyn_cast<QueryTemperatureOp>(op))
    return temperature.getInput();
  return {};
}

/// The norm and rope applied to one of q or k between the split and the
/// kernel boundary.
struct Chain {
  /// In program order, split side first.
  SmallVector<Operation *, 2> ops;
  RmsNormOp norm;
  RopeOp rope;
  /// q only, and last: it scales the final q.
  QueryTemperatureOp temperature;
  /// Whether `norm` precedes `rope`; meaningful only when both are present.
  bool normFirst = false;

  /// Appends `op`, a norm, a rope or a query temperature, in program order.
  /// The kernel has one stage per kind, so a second op of a kind fails, and
  /// nothing may follow the temperature.
  LogicalResult append(Operation *op) {
    if (temperature)
      return failure();
    if (auto t = dyn_cast<QueryTemperatureOp>(op)) {
      temperature = t;
    } else if (auto n = dyn_cast<RmsNormOp>(op)) {
      if (norm)
        return failure();
      norm = n;
      normFirst = !rope;
    } else {
      if (rope)
        return failure();
      rope = cast<RopeOp>(op);
    }
    ops.push_back(op);
    return success();
  }
};

/// Walks back from `write`'s k through norm and rope ops to the qkv_split
/// whose k result it is, filling `k`. Every value on the way (the split's k,
/// each normed or rotated k, the k written) must have exactly one use, the
/// next step: the fused kernel never materialises them.
FailureOr<QkvSplitOp> traceK(CacheWriteOp write, Chain &k) {
  SmallVector<Operation *> backwards;
  Value value = write.getK();
  while (true) {
    if (!value.hasOneUse())
      return reject(write, "a k value on the way from the split has another "
                           "user");
    Operation *def = value.getDefiningOp();
    if (!def || !chainInput(def))
      break;
    backwards.push_back(def);
    value = chainInput(def);
  }
  auto split = value.getDefiningOp<QkvSplitOp>();
  if (!split || value != split.getK())
    return reject(write, "k is not a qkv_split's k result through norm and "
                         "rope ops only");
  for (Operation *op : llvm::reverse(backwards))
    if (failed(k.append(op)))
      return reject(write, "k goes through more than one norm or rope");
  return split;
}

/// Follows `split`'s q forward through norm and rope ops, filling `q`, and
/// returns the last value (the split's q when there is no op), which becomes
/// the fused op's q result and may have any users. A value handed to the
/// next op must have no other user.
FailureOr<Value> traceQ(CacheWriteOp write, QkvSplitOp split, Chain &q) {
  Value value = split.getQ();
  while (true) {
    auto users = value.getUsers();
    auto next = llvm::find_if(
        users, [&](Operation *user) { return chainInput(user) == value; });
    if (next == users.end())
      break;
    if (!value.hasOneUse())
      return reject(write, "a q value feeding a norm or rope has another "
                           "user");
    if (failed(q.append(*next)))
      return reject(write, "q goes through more than one norm or rope");
    value = next->getResult(0);
  }
  return value;
}

/// Ropes rotate alike: same positions, style, range, theta and scaling.
bool sameRotation(RopeOp a, RopeOp b) {
  return a.getPositions() == b.getPositions() &&
         a.getStyleAttr() == b.getStyleAttr() &&
         a.getRotaryDimAttr() == b.getRotaryDimAttr() &&
         a.getRotaryOffsetAttr() == b.getRotaryOffsetAttr() &&
         a.getThetaAttr() == b.getThetaAttr() &&
         a.getScalingAttr() == b.getScalingAttr();
}

/// The fused op has one set of rope and norm attributes and one stage order
/// for q and k: a rope must be on both sides and identical; norms on both
/// sides must agree in style and eps and sit on the same side of the rope.
/// A norm on one side only is fine (the stages say which).
LogicalResult checkCompatible(CacheWriteOp write, Chain &q, Chain &k) {
  if (static_cast<bool>(q.rope) != static_cast<bool>(k.rope))
    return reject(write, "only one of q and k is rotated");
  if (q.rope && !sameRotation(q.rope, k.rope))
    return reject(write, "q and k are rotated with different positions or "
                         "parameters");
  if (k.temperature)
    return reject(write, "k goes through a query temperature");
  if (q.temperature && q.rope &&
      q.temperature.getPositions() != q.rope.getPositions())
    return reject(write, "the query temperature and the rope read different "
                         "positions");
  if (q.norm && k.norm) {
    if (q.norm.getStyleAttr() != k.norm.getStyleAttr() ||
        q.norm.getEpsAttr() != k.norm.getEpsAttr() ||
        q.norm.getScopeAttr() != k.norm.getScopeAttr())
      return reject(write, "q and k norms differ in style, scope or eps");
    if (q.rope && q.normFirst != k.normFirst)
      return reject(write, "q and k are normalised on different sides of the "
                           "rope");
  }
  return success();
}

/// `stages` in the model's order: the norms (q first) before or after the
/// rope, as the chains apply them.
ArrayAttr buildStages(MLIRContext *context, Chain &q, Chain &k) {
  SmallVector<Attribute> stages;
  auto add = [&](PreprocessStage stage) {
    stages.push_back(PreprocessStageAttr::get(context, stage));
  };
  auto addNorms = [&] {
    if (q.norm)
      add(PreprocessStage::q_norm);
    if (k.norm)
      add(PreprocessStage::k_norm);
  };
  // checkCompatible made the sides agree; without a rope the order is moot.
  bool normFirst = !k.rope || (q.norm ? q.normFirst : k.normFirst);
  if (normFirst)
    addNorms();
  if (k.rope)
    add(PreprocessStage::rope);
  if (!normFirst)
    addNorms();
  if (q.temperature)
    add(PreprocessStage::q_temperature);
  return ArrayAttr::get(context, stages);
}

/// A candidate that passed every check.
struct Fusion {
  QkvSplitOp split;
  CacheWriteOp write;
  Chain q, k;
  /// Every op the fused op replaces, producers first.
  SmallVector<Operation *> ops;
  /// The values it replaces, in the order of its results: the final q, the
  /// caches written, the gate (when the split has one).
  SmallVector<Value> replaced;
};

/// Traces and checks the chain anchored at `write`.
FailureOr<Fusion> match(CacheWriteOp write) {
  Fusion f;
  f.write = write;
  FailureOr<QkvSplitOp> split = traceK(write, f.k);
  if (failed(split))
    return failure();
  f.split = *split;
  Value v = f.split.getV();
  if (write.getV() != v || !v.hasOneUse())
    return reject(write, "v is not the split's v result or has another user");
  FailureOr<Value> qEnd = traceQ(write, f.split, f.q);
  if (failed(qEnd) || failed(checkCompatible(write, f.q, f.k)))
    return failure();

  f.ops.push_back(f.split);
  llvm::append_range(f.ops, f.q.ops);
  llvm::append_range(f.ops, f.k.ops);
  f.ops.push_back(write);
  Block *block = f.split->getBlock();
  if (llvm::any_of(f.ops,
                   [&](Operation *op) { return op->getBlock() != block; }))
    return reject(write, "the chain spans more than one block");

  f.replaced = {*qEnd, write.getKCacheOut(), write.getVCacheOut()};
  if (Value gate = f.split.getGate())
    f.replaced.push_back(gate);
  return f;
}

/// Creates the fused op (before the split) from the matched ops'
/// operands and attributes.
FusedPreprocessOp createFusedOp(Fusion &f) {
  QkvSplitOp split = f.split;
  CacheWriteOp write = f.write;
  RmsNormOp norm = f.q.norm ? f.q.norm : f.k.norm;
  RopeOp rope = f.k.rope; // checkCompatible: the same as q's
  QueryTemperatureOp temperature = f.q.temperature;
  Value positions = rope          ? rope.getPositions()
                    : temperature ? temperature.getPositions()
                                  : Value();
  Value q = f.replaced.front(); // the final q
  Value gate = split.getGate();
  MLIRContext *context = write.getContext();
  OpBuilder builder(split);
  SmallVector<Location> locs =
      llvm::map_to_vector(f.ops, [](Operation *op) { return op->getLoc(); });
  return FusedPreprocessOp::create(
      builder, builder.getFusedLoc(locs), q.getType(),
      write.getKCacheOut().getType(), write.getVCacheOut().getType(),
      gate ? gate.getType() : Type(), split.getQkv(), write.getSlotMapping(),
      write.getKCache(), write.getVCache(),
      positions,
      f.q.norm ? f.q.norm.getWeight() : Value(),
      f.k.norm ? f.k.norm.getWeight() : Value(),
      f.q.norm ? f.q.norm.getBias() : Value(),
      f.k.norm ? f.k.norm.getBias() : Value(), write.getKScale(),
      write.getVScale(), split.getNumQHeadsAttr(), split.getNumKvHeadsAttr(),
      split.getQkHeadDimAttr(), split.getVHeadDimAttr(),
      split.getGateLayoutAttr(), buildStages(context, f.q, f.k),
      norm ? norm.getStyleAttr() : nullptr, norm ? norm.getEpsAttr() : nullptr,
      // head, the common scope, is the attribute's absence.
      norm && norm.getScope() != NormScope::head ? norm.getScopeAttr()
                                                 : nullptr,
      rope ? rope.getStyleAttr() : nullptr,
      rope ? rope.getRotaryDimAttr() : nullptr,
      rope ? rope.getRotaryOffsetAttr() : nullptr,
      rope ? rope.getThetaAttr() : nullptr,
      rope ? rope.getScalingAttr() : nullptr,
      temperature ? temperature.getFloorScaleAttr() : nullptr,
      temperature ? temperature.getScaleAttr() : nullptr, /*schedule=*/nullptr);
}

/// Moves `op` right after the last of `f.split` and its operands'
/// definitions in the block, the earliest point where they are all
/// available, and checks that every user of the values it replaces comes
/// after that point. (No matched op defines one of its operands: their
/// types rule it out.)
LogicalResult place(FusedPreprocessOp op, Fusion &f,
                    DominanceInfo &dominance) {
  Operation *anchor = f.split;
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (def && def->getBlock() == anchor->getBlock() &&
        anchor->isBeforeInBlock(def))
      anchor = def;
  }
  op->moveAfter(anchor);
  for (Value value : f.replaced)
    for (Operation *user : value.getUsers())
      if (!dominance.properlyDominates(op, user, /*enclosingOpOk=*/false))
        return reject(f.write, "a user of q, the gate or the caches comes "
                               "before all the fused op's operands are "
                               "defined");
  return success();
}

/// Verifies `op` without reporting. Each unfused op checks the shapes it
/// sees; the fused op checks them together (positions and slot mapping
/// against the qkv token count), so static dims that disagree only across
/// ops (`?` on one side) surface here, and such IR is left as it is rather
/// than made invalid.
LogicalResult verifyQuietly(FusedPreprocessOp op, Fusion &f) {
  ScopedDiagnosticHandler silence(op.getContext(),
                                  [](Diagnostic &) { return success(); });
  if (failed(verify(op)))
    return reject(f.write, "the fused op would not verify (shapes that "
                           "disagree across the chain)");
  return success();
}

/// Fuses the chain anchored at `write` into one attn.fused_preprocess, or
/// fails leaving the IR as it was.
LogicalResult fuse(CacheWriteOp write, DominanceInfo &dominance) {
  FailureOr<Fusion> f = match(write);
  if (failed(f))
    return failure();
  FusedPreprocessOp op = createFusedOp(*f);
  if (failed(place(op, *f, dominance)) || failed(verifyQuietly(op, *f))) {
    op->erase();
    return failure();
  }
  for (auto [from, to] : llvm::zip_equal(f->replaced, op->getResults()))
    from.replaceAllUsesWith(to);
  // Users before producers; all Pure, all now without users.
  for (Operation *dead : llvm::reverse(f->ops))
    dead->erase();
  return success();
}

struct FusePreprocess
    : attnc::impl::AttnFusePreprocessBase<FusePreprocess> {
  using AttnFusePreprocessBase::AttnFusePreprocessBase;

  void runOnOperation() override {
    // Collected first: fusing erases ops, never another candidate's write.
    SmallVector<CacheWriteOp> writes;
    getOperation()->walk([&](CacheWriteOp write) { writes.push_back(write); });
    auto &dominance = getAnalysis<DominanceInfo>();
    bool changed = false;
    for (CacheWriteOp write : writes)
      changed |= succeeded(fuse(write, dominance));
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
