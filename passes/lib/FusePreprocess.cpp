//===- FusePreprocess.cpp ---------------------------------------------------------===//
// PLACEHOLDER: being written (see Passes.td for the contract).
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

namespace attnc {
#define GEN_PASS_DEF_ATTNFUSEPREPROCESS
#include "attnc/Transforms/Passes.h.inc"
} // namespace attnc

namespace {
struct FusePreprocess : attnc::impl::AttnFusePreprocessBase<FusePreprocess> {
  using AttnFusePreprocessBase::AttnFusePreprocessBase;
  void runOnOperation() override {}
};
} // namespace
