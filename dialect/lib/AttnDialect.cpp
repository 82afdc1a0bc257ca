//===- AttnDialect.cpp - The attn dialect ---------------------------------===//
#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"

using namespace mlir;
using namespace attnc::attn;

#include "attnc/Dialect/Attn/AttnDialect.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attnc/Dialect/Attn/AttnOps.cpp.inc"
      >();
  registerAttributes();
}
