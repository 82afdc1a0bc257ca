//===- AttnAttrs.h - Attributes and enums of attn ---------------*- C++ -*-===//
#ifndef ATTNC_DIALECT_ATTN_ATTNATTRS_H
#define ATTNC_DIALECT_ATTN_ATTNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/Hashing.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnEnums.h.inc"

namespace attnc::attn {
/// A double attribute parameter. llvm::hash_value has no overload for
/// double, so attribute storage hashes this wrapper (found by ADL) instead.
struct F64 {
  double value = 0.0;
  F64() = default;
  F64(double value) : value(value) {}
  /// Comparisons go through this conversion (builtin double ==).
  operator double() const { return value; }
};
inline llvm::hash_code hash_value(F64 x) {
  // Bitwise hash with -0.0 folded onto 0.0, so values that compare equal
  // hash equal (the uniquer needs that).
  double value = x.value == 0.0 ? 0.0 : x.value;
  uint64_t bits;
  static_assert(sizeof(bits) == sizeof(value));
  std::memcpy(&bits, &value, sizeof(bits));
  return llvm::hash_value(bits);
}

/// Parses a floating-point attribute parameter (a float literal, as MLIR
/// spells them: `40.0`).
mlir::FailureOr<F64> parseF64Parameter(mlir::AsmParser &parser);
/// Prints a floating-point parameter in a form that parses back exactly.
void printF64Parameter(mlir::AsmPrinter &printer, double value);
/// A double as the shortest text that reads back to the same value
/// ("0.0721", "-10000", "inf"), for diagnostics: raw_ostream's "%e"
/// ("7.210000e-02") can print two different values identically.
std::string formatDouble(double value);
/// Parses `true` or `false`.
mlir::FailureOr<bool> parseBoolParameter(mlir::AsmParser &parser);
/// Parses an `array<f64: ...>` parameter (printed whole, by printAttribute,
/// whose values read back exactly; the stripped `[...]` form rounds them).
mlir::FailureOr<mlir::DenseF64ArrayAttr>
parseF64ArrayParameter(mlir::AsmParser &parser);
} // namespace attnc::attn

#define GET_ATTRDEF_CLASSES
#include "attnc/Dialect/Attn/AttnAttrs.h.inc"

#endif // ATTNC_DIALECT_ATTN_ATTNATTRS_H
