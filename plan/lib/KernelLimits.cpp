//===- KernelLimits.cpp - What the generated kernels can take -------------===//
#include "attnc/Plan/KernelLimits.h"

#include <string>

namespace attnc::plan {

Status checkHeadDim(const char *field, int64_t dim) {
  if (dim >= 1 && paddedHeadDim(dim) <= kMaxHeadDim)
    return Status();
  return Status(field, "must be in [1, " + std::to_string(kMaxHeadDim) +
                           "] (the largest head dim the kernels take, after "
                           "padding to a multiple of " +
                           std::to_string(kHeadDimStep) + "), got " +
                           std::to_string(dim));
}

Status checkBlockSize(int64_t block_size) {
  if (block_size >= 1 && block_size <= kMaxBlockSize &&
      (block_size & (block_size - 1)) == 0)
    return Status();
  return Status("block_size", "must be a power of two in [1, " +
                                  std::to_string(kMaxBlockSize) +
                                  "] (tokens per KV-cache page), got " +
                                  std::to_string(block_size));
}

} // namespace attnc::plan
