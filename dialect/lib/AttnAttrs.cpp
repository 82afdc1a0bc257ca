//===- AttnAttrs.cpp - Attributes and enums of attn -----------------------===//
#include "attnc/Dialect/Attn/AttnAttrs.h"
#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/TypeSwitch.h"

#include <charconv>
#include <cmath>

using namespace mlir;
using namespace attnc::attn;

#include "attnc/Dialect/Attn/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attnc/Dialect/Attn/AttnAttrs.cpp.inc"

namespace attnc::attn {

std::string formatDouble(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

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

FailureOr<DenseF64ArrayAttr> parseF64ArrayParameter(AsmParser &parser) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  Attribute attr;
  if (parser.parseAttribute(attr))
    return failure();
  if (auto array = dyn_cast<DenseF64ArrayAttr>(attr))
    return array;
  return parser.emitError(loc, "expected array<f64: ...>, got ") << attr;
}

} // namespace attnc::attn

LogicalResult
RopeScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        RopeScalingKind kind, F64 factor,
                        int64_t originalMaxPosition, F64 lowFreqFactor,
                        F64 highFreqFactor, F64 betaFast, F64 betaSlow,
                        F64 mscale, F64 mscaleAllDim, bool truncate,
                        DenseF64ArrayAttr shortFactor,
                        DenseF64ArrayAttr longFactor, F64 attentionFactor) {
  // Every float field must be finite (a NaN would also break attribute
  // uniquing, which compares fields with ==), whether or not `kind` uses it.
  for (auto [name, value] :
       {std::pair<const char *, double>{"low_freq_factor", lowFreqFactor},
        {"high_freq_factor", highFreqFactor},
        {"beta_fast", betaFast},
        {"beta_slow", betaSlow},
        {"mscale", mscale},
        {"mscale_all_dim", mscaleAllDim},
        {"attention_factor", attentionFactor}})
    if (!std::isfinite(value))
      return emitError() << "rope_scaling " << name
                         << " must be a finite number, got "
                         << formatDouble(value);
  if (!(factor > 0) || !std::isfinite(factor.value))
    return emitError() << "rope_scaling factor must be a positive finite "
                          "number, got "
                       << formatDouble(factor);
  if (originalMaxPosition < 0)
    return emitError() << "rope_scaling original_max_position must be >= 0, "
                          "got "
                       << originalMaxPosition;
  bool needsOriginal = kind == RopeScalingKind::llama3 ||
                       kind == RopeScalingKind::yarn ||
                       kind == RopeScalingKind::longrope;
  if (needsOriginal && originalMaxPosition == 0)
    return emitError() << "rope_scaling original_max_position must be set (> "
                          "0) for "
                       << stringifyRopeScalingKind(kind) << " scaling";
  // Equal factors (Llama 4) leave no interpolation band: a step.
  if (kind == RopeScalingKind::llama3 && !(highFreqFactor >= lowFreqFactor))
    return emitError() << "rope_scaling high_freq_factor must be >= "
                          "low_freq_factor for llama3 scaling ("
                       << formatDouble(highFreqFactor) << " < "
                       << formatDouble(lowFreqFactor) << ")";
  // Kimi-K2 ships beta_fast == beta_slow; the ramp then degenerates to a
  // step, which the rotation code handles, so only an inverted pair is wrong.
  if (kind == RopeScalingKind::yarn && !(betaFast >= betaSlow))
    return emitError() << "rope_scaling beta_fast must be >= beta_slow for "
                          "yarn scaling ("
                       << formatDouble(betaFast) << " < "
                       << formatDouble(betaSlow) << ")";
  if (mscale < 0 || mscaleAllDim < 0)
    return emitError() << "rope_scaling mscale and mscale_all_dim must be >= 0";
  if (attentionFactor < 0)
    return emitError() << "rope_scaling attention_factor must be >= 0 (0: the "
                          "kind's default), got "
                       << formatDouble(attentionFactor);
  bool longrope = kind == RopeScalingKind::longrope;
  if (longrope != static_cast<bool>(shortFactor) ||
      longrope != static_cast<bool>(longFactor))
    return emitError() << "rope_scaling short_factor and long_factor are set "
                          "exactly for longrope scaling";
  if (longrope) {
    if (shortFactor.empty() || shortFactor.size() != longFactor.size())
      return emitError() << "rope_scaling short_factor and long_factor must "
                            "be non-empty and of one length (got "
                         << shortFactor.size() << " and " << longFactor.size()
                         << ")";
    for (DenseF64ArrayAttr list : {shortFactor, longFactor})
      for (double value : list.asArrayRef())
        if (!(value > 0) || !std::isfinite(value))
          return emitError() << "rope_scaling short_factor and long_factor "
                                "values must be positive finite numbers, got "
                             << formatDouble(value);
  }
  if (attentionFactor != 0 && kind != RopeScalingKind::yarn && !longrope)
    return emitError() << "rope_scaling attention_factor applies to yarn and "
                          "longrope scaling only";
  (void)truncate;
  return success();
}

void AttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attnc/Dialect/Attn/AttnAttrs.cpp.inc"
      >();
}
