//===- Canonicalize.cpp - attn-canonicalize -------------------------------===//
//
// The attn dialect's folders and canonicalization patterns only (identity
// rope, trivial gate, unused gate results), plus erasure of attn ops whose
// results are unused (they are Pure on value-semantics tensors).
//
//===----------------------------------------------------------------------===//
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace attnc {
#define GEN_PASS_DEF_ATTNCANONICALIZE
#include "attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;

namespace {

struct Canonicalize
    : attnc::impl::AttnCanonicalizeBase<Canonicalize> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    // Only the attn dialect's patterns: this pass must not rewrite other
    // dialects' ops behind the user's back (that is `canonicalize`'s job).
    for (RegisteredOperationName name : context->getRegisteredOperations())
      if (name.getDialectNamespace() ==
          attnc::attn::AttnDialect::getDialectNamespace())
        name.getCanonicalizationPatterns(patterns, context);
    // The driver folds (RopeOp/OutputGateOp::fold) and erases trivially dead
    // ops, but only on attn ops: other dialects' ops are left as they are.
    SmallVector<Operation *> attnOps;
    getOperation()->walk([&](Operation *op) {
      if (isa_and_nonnull<attnc::attn::AttnDialect>(op->getDialect()))
        attnOps.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(attnOps, std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
