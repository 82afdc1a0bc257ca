//===- DriverSymbols.h - The dlsym'd driver table (internal) ----*- C++ -*-===//
#ifndef ATTNC_RUNTIME_LIB_DRIVERSYMBOLS_H
#define ATTNC_RUNTIME_LIB_DRIVERSYMBOLS_H

#include "attnc/Runtime/Driver.h"

#include <cuda.h>

// Two levels so the argument is macro-expanded first: the dlsym'd string is
// then the versioned name cuda.h maps to (e.g. "cuDevicePrimaryCtxRelease_v2").
#define ATTNC_STRINGIFY_EXPANDED(x) ATTNC_STRINGIFY_LITERAL(x)
#define ATTNC_STRINGIFY_LITERAL(x) #x

namespace attnc::runtime {

struct DriverSymbols {
  void *handle = nullptr; ///< from dlopen; never closed
#define ATTNC_CU_SYMBOL(name) decltype(&::name) name = nullptr;
#include "DriverSymbols.def"
#undef ATTNC_CU_SYMBOL
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_LIB_DRIVERSYMBOLS_H
