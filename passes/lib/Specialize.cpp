//===- Specialize.cpp ---------------------------------------------------------===//
// PLACEHOLDER: being written (see Passes.td for the contract).
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

namespace attnc {
#define GEN_PASS_DEF_ATTNSPECIALIZE
#include "attnc/Transforms/Passes.h.inc"
} // namespace attnc

namespace {
struct Specialize : attnc::impl::AttnSpecializeBase<Specialize> {
  using AttnSpecializeBase::AttnSpecializeBase;
  void runOnOperation() override {}
};
} // namespace
