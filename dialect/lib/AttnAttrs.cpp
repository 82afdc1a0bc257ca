//===- AttnAttrs.cpp - Attributes and enums of attn -----------------------===//
#include "attnc/Dialect/Attn/AttnAttrs.h"
#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace attnc::attn;

#include "attnc/Dialect/Attn/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attnc/Dialect/Attn/AttnAttrs.cpp.inc"

namespace attnc::attn {

FailureOr<F64> parseF64Parameter(AsmParser &parser) {
  double value = 0;
  if (parser.parseFloat(value))
    return failure();
  return F64(value);
}

void printF64Parameter(AsmPrinter &printer, double value) {
  printer.printFloat(llvm::APFloat(value));
}

FailureOr<bool> parseBoolParameter(AsmParser &parser) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  if (keyword == "true")
    return true;
  if (keyword == "false")
    return false;
  return parser.emitError(loc, "expected 'true' or 'false', got '")
         << keyword << "'";
}

} // namespace attnc::attn

LogicalResult
RopeScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        RopeScalingKind kind, F64 factor,
                        int64_t originalMaxPosition, F64 lowFreqFactor,
                        F64 highFreqFactor, F64 betaFast, F64 betaSlow,
                        F64 mscale, F64 mscaleAllDim, bool truncate) {
  if (!(factor > 0) || !std::isfinite(factor.value))
    return emitError() << "rope_scaling factor must be a positive finite "
                          "number, got "
                       << factor.value;
  if (originalMaxPosition < 0)
    return emitError() << "rope_scaling original_max_position must be >= 0, "
                          "got "
                       << originalMaxPosition;
  bool needsOriginal = kind == RopeScalingKind::llama3 ||
                       kind == RopeScalingKind::yarn;
  if (needsOriginal && originalMaxPosition == 0)
    return emitError() << "rope_scaling original_max_position must be set (> "
                          "0) for "
                       << stringifyRopeScalingKind(kind) << " scaling";
  if (kind == RopeScalingKind::llama3 && !(highFreqFactor > lowFreqFactor))
    return emitError() << "rope_scaling high_freq_factor must be greater than "
                          "low_freq_factor for llama3 scaling ("
                       << highFreqFactor.value << " <= " << lowFreqFactor.value << ")";
  // Kimi-K2 ships beta_fast == beta_slow; the ramp then degenerates to a
  // step, which the rotation code handles, so only an inverted pair is wrong.
  if (kind == RopeScalingKind::yarn && !(betaFast >= betaSlow))
    return emitError() << "rope_scaling beta_fast must be >= beta_slow for "
                          "yarn scaling ("
                       << betaFast.value << " < " << betaSlow.value << ")";
  if (mscale < 0 || mscaleAllDim < 0)
    return emitError() << "rope_scaling mscale and mscale_all_dim must be >= 0";
  (void)truncate;
  return success();
}

void AttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attnc/Dialect/Attn/AttnAttrs.cpp.inc"
      >();
}
