//===- WorkModel.h - Bytes, FLOPs and floor time of a layer's kernels -*- C++ -*-===//
//
// The one model of what a layer's two kernels must move and compute, and
// the floor time that follows at a GPU's copy bandwidth and matmul rate.
// `attnc explain` prints it; benchmarks and engines may ask it the same way.
// Plain C++, no MLIR.
//
// What is counted (per layer, real head dims, never the padded ones):
//  - preprocess, per token: read the fused row (width W of the layout
//    library, activation type), the slot (8 bytes) and, with rope, the
//    position (8 bytes); write q (Hq * Dqk), the K and V cache rows
//    (Hkv * Dqk and Hkv * Dv of the cache type) and, with a gate, the gate
//    (its segment's size, activation type). Norm weights are read once per
//    launch and not counted; FLOPs are not modelled (the kernel is
//    memory-bound: a few per element).
//  - attention, per query token: read q (Hq * Dqk) and, with a gate, the
//    gate; write the output (Hq * Dv), activation type. Per key a query
//    sees: 2 * Hq * (Dqk + Dv) FLOPs (Q K^T and P V; softmax not counted).
//    Per key the launch reads: Hkv * (Dqk + Dv) cache elements (each key
//    once per sequence: a tile's keys serve every query row of the tile
//    and every query head of the group). Per sequence: its block-table
//    entries (4 bytes per page of the keys read), its length and query
//    start (4 bytes each).
//  - keys a query at position p (0-based) sees: p + 1, or min(p + 1,
//    window) with a sliding window (the kernel's first visible key is
//    p - window + 1).
//
// Workloads: a decode step of `batch` sequences of `context` keys each (one
// new token per sequence, which is the last of its context), or the prefill
// of `batch` sequences of `context` new tokens each (causal, empty cache).
// The floor is max(bytes / bandwidth, FLOPs / matmul rate) per kernel.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_PLAN_WORKMODEL_H
#define ATTNC_PLAN_WORKMODEL_H

#include "attnc/Plan/Layout.h"
#include "attnc/Support/Status.h"

#include <cstdint>

namespace attnc::plan {

/// What the work model needs of one layer (one rank's share under tensor
/// parallelism: the local head shape).
struct LayerWorkShape {
  HeadShape heads;              ///< Hq, Hkv, Dqk, Dv and the gate layout
  int64_t activation_bytes = 2; ///< bytes per activation element (2 or 4)
  int64_t cache_bytes = 2;      ///< bytes per KV-cache element (2, fp8: 1)
  int64_t block_size = 16;      ///< tokens per KV-cache page
  bool rope = false;            ///< preprocess reads positions (rope, or
                                ///< Llama 4's query temperature)
  int64_t sliding_window = 0;   ///< keys a query sees at most; 0 = unlimited
  /// Chunked attention: position p sees keys [p - p % chunk, p]; 0 = none.
  int64_t attention_chunk = 0;
};

/// Bytes the preprocess kernel moves per token.
struct PreprocessTraffic {
  int64_t read_bytes = 0;    ///< fused row, slot, position
  int64_t written_bytes = 0; ///< q, K and V cache rows, gate
  int64_t bytes() const { return read_bytes + written_bytes; }
};

/// Bytes and FLOPs of the attention kernel, per unit of work.
struct AttentionTraffic {
  /// Cache bytes per key read: Hkv * (Dqk + Dv) * cache_bytes.
  int64_t kv_bytes_per_key = 0;
  /// Per query token: q (and gate) read, output written.
  int64_t query_read_bytes = 0;
  int64_t output_written_bytes = 0;
  /// Per (query token, key it sees) pair: 2 * Hq * (Dqk + Dv).
  int64_t flops_per_query_key = 0;
};

/// Checks the shape (validateHeadShape; activation_bytes, cache_bytes and
/// block_size >= 1; sliding_window >= 0), then the per-token traffic.
Result<PreprocessTraffic> preprocessTraffic(const LayerWorkShape &shape);
Result<AttentionTraffic> attentionTraffic(const LayerWorkShape &shape);

/// Keys the query at 0-based position `position` sees: position + 1, at
/// most `window` when window > 0, and at most position % chunk + 1 (its
/// chunk's keys) when chunk > 0.
int64_t visibleKeys(int64_t position, int64_t window, int64_t chunk = 0);

/// (query, key) pairs of a causal prefill of `tokens` tokens: the sum of
/// visibleKeys(p, window, chunk) over p in [0, tokens). Without a window
/// tokens * (tokens + 1) / 2; with one (tokens > window)
/// window * (window + 1) / 2 + (tokens - window) * window. With chunks every
/// chunk repeats the pattern of a prefill of `chunk` tokens (a query sees
/// min(window, p % chunk + 1) keys): tokens / chunk such prefills and one
/// of tokens % chunk.
int64_t causalQueryKeyPairs(int64_t tokens, int64_t window, int64_t chunk = 0);

/// Decode step or prefill.
enum class Phase { Decode, Prefill };
/// "decode", "prefill".
const char *phaseName(Phase phase);

/// What is asked: `batch` sequences, each of `context` keys (decode: the
/// step's token is the last of them) or `context` new tokens (prefill).
struct Workload {
  Phase phase = Phase::Decode;
  int64_t batch = 1;
  int64_t context = 1;

  /// Query tokens of the launch: batch (decode) or batch * context.
  int64_t queryTokens() const;
};

/// Checks batch >= 1, context in [1, 2^31] and batch * context <= 2^40 (so
/// every count fits int64_t); errors name "batch" or "context".
Status checkWorkload(const Workload &workload);

/// A GPU's rates: copy bandwidth and dense matmul rate (of the activation
/// type: bf16 for the defaults).
struct Machine {
  double bytes_per_second = 4.25e12; ///< H200, measured copy: 4.25 TB/s
  double flops_per_second = 780e12;  ///< H200, measured bf16: 780 TFLOP/s
};

/// One kernel's launch for a workload: what it moves and computes, and the
/// time that takes at best.
struct KernelWork {
  double read_bytes = 0;
  double written_bytes = 0;
  double flops = 0;
  double memory_seconds = 0;  ///< (read + written) / bandwidth
  double compute_seconds = 0; ///< flops / matmul rate
  /// max(memory_seconds, compute_seconds).
  double floorSeconds() const;
  /// Whether bytes, not FLOPs, set the floor (ties count as memory).
  bool memoryBound() const { return memory_seconds >= compute_seconds; }
};

/// The preprocess launch of a workload: its query tokens, each moving
/// preprocessTraffic's bytes. Errors as preprocessTraffic / checkWorkload.
Result<KernelWork> preprocessWork(const LayerWorkShape &shape,
                                  const Workload &workload,
                                  const Machine &machine);

/// The attention launch of a workload. Decode: each of `batch` sequences
/// reads the keys its one query sees (visibleKeys(context - 1, window)) and
/// does that many pairs. Prefill: each sequence reads its `context` keys
/// once and does causalQueryKeyPairs(context, window) pairs.
Result<KernelWork> attentionWork(const LayerWorkShape &shape,
                                 const Workload &workload,
                                 const Machine &machine);

//===----------------------------------------------------------------------===//
// MLA (a latent layer kind): the preprocess, the absorbed decode, the
// decompressed prefill and the gather. Counted as above (real dims; norm
// weights read once per launch and not counted; softmax not counted):
//  - mla_preprocess, per token: read kv_a (R + P), q_rope (H * P), the slot
//    and the position (8 bytes each); write the cache row (R + P, cache
//    type), latent (R + P) and q_rope_out (H * P).
//  - latent_attention (decode), per query token: read the absorbed query
//    (H * (R + P)), write the output (H * R); per key read: one latent row
//    (R + P, cache type) once per sequence (the one KV head serves every
//    query head); per (query, key) pair: 2 * H * (R + P) (Q K^T) +
//    2 * H * R (P V) FLOPs; per sequence: 4 bytes per page read, its length
//    and query start.
//  - varlen_attention (prefill): per query token read q (H * (nope + P)),
//    write the output (H * Dv); per key read k and v (H * (nope + P + Dv))
//    once per sequence; 2 * H * (nope + P + Dv) FLOPs per pair; per
//    sequence its two cu_seqlens entries (8 bytes).
//  - latent_gather, per gathered row: read a cache row (cache type), write
//    it in the activation type; 4 bytes per page and 4 per sequence.
//===----------------------------------------------------------------------===//

/// What the MLA work model needs of one layer kind (one rank's heads).
struct MlaWorkShape {
  int64_t num_heads = 0;        ///< H, this rank's query heads
  int64_t kv_lora_rank = 0;     ///< R
  int64_t rope_head_dim = 0;    ///< P
  int64_t nope_head_dim = 0;    ///< the decompressed q/k head's other part
  int64_t v_head_dim = 0;       ///< Dv of the decompressed prefill
  int64_t activation_bytes = 2;
  int64_t cache_bytes = 2;      ///< latent cache element (fp8: 1)
  int64_t block_size = 64;      ///< tokens per latent-cache page
};

/// The MLA launches of a workload. Decode: `batch` tokens preprocessed,
/// each sequence's one query reading its `context` latent rows. Prefill:
/// batch * context tokens preprocessed; the decompressed attention over
/// each sequence's `context` keys (causal, no cache prefix). Errors: a
/// field < 1 (nope_head_dim < 0) names it; then checkWorkload's.
Result<KernelWork> mlaPreprocessWork(const MlaWorkShape &shape,
                                     const Workload &workload,
                                     const Machine &machine);
Result<KernelWork> latentAttentionWork(const MlaWorkShape &shape,
                                       const Workload &workload,
                                       const Machine &machine);
Result<KernelWork> varlenAttentionWork(const MlaWorkShape &shape,
                                       const Workload &workload,
                                       const Machine &machine);
/// Gathering `context` cached rows of each of `batch` sequences (the
/// workload's phase is ignored).
Result<KernelWork> latentGatherWork(const MlaWorkShape &shape,
                                    const Workload &workload,
                                    const Machine &machine);

} // namespace attnc::plan

#endif // ATTNC_PLAN_WORKMODEL_H
