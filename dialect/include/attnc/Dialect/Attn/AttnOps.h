//===- AttnOps.h - Operations of attn ---------------------------*- C++ -*-===//
#ifndef ATTNC_DIALECT_ATTN_ATTNOPS_H
#define ATTNC_DIALECT_ATTN_ATTNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attnc/Dialect/Attn/AttnAttrs.h"
#include "attnc/Dialect/Attn/AttnDialect.h"

#define GET_OP_CLASSES
#include "attnc/Dialect/Attn/AttnOps.h.inc"

#endif // ATTNC_DIALECT_ATTN_ATTNOPS_H
