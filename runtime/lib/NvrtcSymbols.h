//===- NvrtcSymbols.h - The dlsym'd NVRTC table (internal) ------*- C++ -*-===//
#ifndef ATTNC_RUNTIME_LIB_NVRTCSYMBOLS_H
#define ATTNC_RUNTIME_LIB_NVRTCSYMBOLS_H

#include "attnc/Runtime/NvrtcCompiler.h"

#include <nvrtc.h>

namespace attnc::runtime {

struct NvrtcSymbols {
  void *handle = nullptr; ///< from dlopen; never closed
#define ATTNC_NVRTC_SYMBOL(name) decltype(&::name) name = nullptr;
#include "NvrtcSymbols.def"
#undef ATTNC_NVRTC_SYMBOL
};

} // namespace attnc::runtime

#endif // ATTNC_RUNTIME_LIB_NVRTCSYMBOLS_H
