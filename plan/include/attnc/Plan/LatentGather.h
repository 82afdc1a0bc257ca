//===- LatentGather.h - The latent gather kernel's launch shape -*- C++ -*-===//
//
// The one definition of how attn.latent_gather's copy kernel
// (runtime/device/attnc_latent_gather.cuh) divides its work: one warp copies
// one output row (a token's [c_kv | k_pe] latent values) with 16-byte
// stores, kLatentGatherWarps warps (rows) per block. The emitter prints these
// into the kernel's Config and its ABI (block size, grid rule).
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_PLAN_LATENTGATHER_H
#define ATTNC_PLAN_LATENTGATHER_H

#include <cstdint>

namespace attnc::plan {

/// Warps per block of the latent gather kernel, each copying one output row:
/// 256 threads, 8 blocks an SM (2048 threads) keep enough 16-byte loads in
/// flight for a copy bound by memory bandwidth.
constexpr int64_t kLatentGatherWarps = 8;
/// Output rows per block (the grid is ceil(num_tokens / this)).
constexpr int64_t kLatentGatherRowsPerBlock = kLatentGatherWarps;

} // namespace attnc::plan

#endif // ATTNC_PLAN_LATENTGATHER_H
