//===- FloatConstant.h - The range of a number that becomes a float -------===//
//
// Config numbers (eps, scales, softcap, rope parameters) and the values
// derived from them are printed into the generated CUDA as float literals.
// A literal outside float32's normal range is either rejected by NVRTC
// ("floating constant is out of range"), rounds to 0 or infinity, or loses
// its precision as a subnormal: none is a model anyone trains. One rule,
// checked where a config is read and again where IR is emitted.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_SUPPORT_FLOATCONSTANT_H
#define ATTNC_SUPPORT_FLOATCONSTANT_H

#include <cmath>
#include <limits>

namespace attnc {

/// True when `value` is 0 or finite with a magnitude in float32's normal
/// range [FLT_MIN, FLT_MAX].
inline bool isKernelFloat(double value) {
  double magnitude = std::fabs(value);
  return magnitude == 0 ||
         (magnitude >= double(std::numeric_limits<float>::min()) &&
          magnitude <= double(std::numeric_limits<float>::max()));
}

/// The rule, as error messages state it.
inline constexpr const char *kKernelFloatRule =
    "must be 0 or finite of magnitude within float32's normal range "
    "[1.17549435e-38, 3.40282347e+38] (it becomes a float constant in the "
    "kernels)";

} // namespace attnc

#endif // ATTNC_SUPPORT_FLOATCONSTANT_H
