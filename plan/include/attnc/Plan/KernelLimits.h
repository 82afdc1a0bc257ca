//===- KernelLimits.h - What the generated kernels can take -----*- C++ -*-===//
//
// The bounds of the kernel templates that a model config must meet, in one
// place: the config importer checks them before any work (the error names
// the config field), attn-specialize and the layer builder check them again
// for IR and options that did not come through the importer.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_PLAN_KERNELLIMITS_H
#define ATTNC_PLAN_KERNELLIMITS_H

#include "attnc/Support/Status.h"

#include <cstdint>

namespace attnc::plan {

/// Head dims are padded to this multiple (the mma k and n step).
constexpr int64_t kHeadDimStep = 16;
/// The largest padded q/k or v head dim: the CUDA-core form keeps a row's
/// accumulator in registers and its tiles in shared memory up to here.
constexpr int64_t kMaxHeadDim = 512;
/// The largest KV-cache page, in tokens.
constexpr int64_t kMaxBlockSize = 1024;

/// `dim` padded to kHeadDimStep.
inline int64_t paddedHeadDim(int64_t dim) {
  return (dim + kHeadDimStep - 1) / kHeadDimStep * kHeadDimStep;
}

/// OK when `dim` (the head dim named `field`) pads to at most kMaxHeadDim;
/// else an InvalidArgument naming `field`.
Status checkHeadDim(const char *field, int64_t dim);

/// OK when `block_size` is a power of two in [1, kMaxBlockSize] (the pages
/// engines use are 1 to 256 tokens); else an InvalidArgument on
/// "block_size".
Status checkBlockSize(int64_t block_size);

} // namespace attnc::plan

#endif // ATTNC_PLAN_KERNELLIMITS_H
