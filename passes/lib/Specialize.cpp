//===- Specialize.cpp - attn-specialize -----------------------------------===//
//
// Chooses the launch shape of every kernel op for one target and records it
// as a schedule attribute, so codegen prints what this file decided and lit
// tests can read it. All rules live here; the per-arch facts they use are the
// table `kArchs` below.
//
// Target. `arch` must be one of the table's rows; `num-sms` (0: the row's
// flagship part) sets the SM count to fill. The module gets
// `attn.target = "<arch>"`. The kernels use mma.sync and cp.async, which
// every arch of the table has, so the arch decides the limits (shared
// memory, registers); sm_90a alone also has wgmma, which the attention
// kernel's tiles of more than 16 rows take where the shape suits it (sm_90
// and sm_90a otherwise schedule alike).
//
// Preprocess (#attn.preprocess_schedule; the same on every arch, the kernel
// is bound by memory bandwidth and 16-byte accesses are the best on all of
// them):
//  - vector_width: the largest power of two <= 16 bytes / activation size
//    (8 for bf16/f16, 4 for f32) that divides gcd(Dqk, Dv) and keeps each
//    vector on one side of every rope boundary: it divides rotary_offset,
//    and rotary_dim / 2 for neox (element i pairs with i + rotary_dim/2, so
//    both halves start on a vector boundary) or rotary_dim for gptj (pairs
//    (2i, 2i+1) then sit inside one vector whenever the width is >= 2).
//    Dqk = 2, Dv = 3 gives width 1.
//  - threads_per_head: the smallest power of two covering the larger head
//    dim in vectors (one access per thread per head, the whole head in
//    flight at once), at most 32 so that the q/k norm reduces within one
//    warp by xor shuffles; wider heads loop. Except for a neox rotation over
//    the whole q/k head: then the largest power of two that divides half the
//    head (in vectors) and leaves 4 to 8 vectors per lane (at most 8 for v),
//    so that each lane holds both elements of its rotation pairs (the pair
//    layout): 192/128 bf16 gives 4 threads of 6 vectors.
//  - Work items per token: Hq + 2 * Hkv, plus Hq when the op has a gate
//    result (a dropped gate is skipped, not moved). A block holds
//    tokens_per_block = max(1, 256 / (items * threads_per_head)) whole
//    tokens, so per-token values (slot, position, rope angles) are computed
//    once per block; a token too large for one block spreads over
//    ceil(items / heads_per_block) blocks.
//  - threads_per_block: 256, or fewer when one token's items need fewer
//    (tokens_per_block * items * threads_per_head rounded up to a warp):
//    idle thread groups would otherwise make up to half the block, e.g. 40
//    items of 4 threads. heads_per_block = threads_per_block /
//    threads_per_head thread groups, of which tokens_per_block * items are
//    busy when a token fits in a block.
//  - pair_layout: for a neox rotation over the whole q/k head whenever
//    threads_per_head divides half the head in vectors (by the exception
//    above or not): lane l's chunk c < half / threads holds vector
//    c * threads + l, its partner chunk the vector half further.
//  - prefetch (work items whose loads are issued together): 2, 32 bytes per
//    thread in flight; 1 in the pair layout, whose lanes hold several
//    vectors of each item.
//  - min_blocks_per_sm (the launch bound the register allocation must
//    allow): enough threads per SM for the loads in flight, 1024, or 640 in
//    the pair layout (which leaves it 102 registers): 1024 /
//    threads_per_block (640 / ...), at least 1.
//
// MLA preprocess (#attn.mla_preprocess_schedule; memory-bound like the
// fused preprocess, the same on every arch):
//  - vector_width: the largest power of two <= 16 bytes / activation size
//    that divides kv_lora_rank and rope_head_dim / 2, so that a rope unit
//    (vector_width rotation pairs: two vectors) never straddles the halves
//    of a neox or de-interleaved head. DeepSeek's 512 / 64 bf16 gives 8.
//  - warps_per_token (query warps; each token also has its latent warp,
//    apart, so that no thread holds both kinds of loads: 64 registers do
//    without spills): the query's rope units per token (num_heads x
//    rope_head_dim / (2 x vector_width)) over 64 per warp, i.e. 2 units
//    (4 vectors, 64 bytes of loads in flight) per lane, rounded up, 1 to
//    8: 8 warps for 128 heads, 1 for 16 heads.
//  - tokens_per_block: enough tokens side by side for 4 warps a block
//    (4 / (warps_per_token + 1), at least 1), so small H still fills
//    blocks, while one token place a block at large H spreads T = 1..64
//    over as many SMs as there are token pairs (token_steps 2 below).
//  - min_blocks_per_sm (the launch bound): as many blocks as 72 registers a
//    thread allow, 65536 / (72 x threads_per_block), at least 1: 3 of 288
//    threads (864 threads, 48 KB of query loads in flight per SM), 7 of
//    128. ptxas needs 72-85 registers for the kernel; at 72 it spills a
//    few bytes at most (28 with an fp8 cache at 128 heads), at 64 (1024
//    threads) over 100.
//  - the memory-level knobs (#attn.mla_preprocess_schedule says what each
//    does), the kMla* constants below, one place, so that a measurement of
//    bench/sweep_mla_preprocess.py changes one line: all off. Measured on
//    the H200 (2026-12-03, bench/results/README.md; CUDA-graph replays,
//    back-to-back launches against a torch copy of the same bytes): at
//    T 16384 this register path is the fastest of 29 variants at both
//    head counts (128 heads, engine views: 0.85x the copy; 16 heads:
//    0.83x), ahead of token_steps 2 with stage_in_shared (0.96x, 0.89x),
//    whose shared-memory staging costs more than its extra loads in flight
//    win; the knobs stay for schedules written by hand.
//    An op that already has a schedule keeps it (attn-prepare-emission
//    checks it against the op). Other ops replace a schedule they have
//    (e.g. one for another target) unless marked attn.keep_schedule.
//
// Attention (#attn.attention_schedule):
//  - qk_dim_padded / v_dim_padded: the head dims rounded up to the MMA step
//    16; either above 512 is rejected (the largest head dim supported).
//  - Rows: block_m = 128 rows of 4 warps, two m16 mma.sync tiles per warp
//    (each K/V fragment read from shared memory feeds two MMAs; the tile's
//    copies and barriers are shared by twice the rows). Tiles of at most 16
//    rows (decode) run as one m16 tile whose keys the 4 warps share out.
//    num_warps = 4, doubled when the fp32 output accumulator of 16 rows,
//    v_dim_padded / 2 registers per thread, exceeds 128 (half the
//    255-register ceiling; the rest holds the score tile, softmax statistics
//    and addresses): such shapes (v_dim_padded > 256) take the CUDA-core
//    form, whose warps split the V columns.
//  - gqa_pack: the query heads of one KV group share every K/V tile, so the
//    rows of a tile are flattened (query token, head) pairs of gqa_pack
//    heads: the largest divisor of Hq / Hkv that is <= block_m (equal packs,
//    none larger than a tile).
//  - Form and shared memory. The tensor-core form takes 16-bit activations,
//    a cache of the same type or fp8, and v_dim_padded <= 256; its tile is
//    block_n 64 at 2 stages (cp.async: the next K or V tile loads under this
//    one's math), and its shared memory (attentionSharedBytes in
//    attnc/Plan/AttentionTiling.h, shared with the emitter: the Q
//    tile, one K and one V tile staggered or a double-buffered decode ring,
//    then the merge areas, rows padded by 16 bytes) must fit the arch's
//    limit; at 192/128 bf16 it is 93 KB (113 KB in the wgmma form), two
//    blocks per SM. Otherwise the shape takes the CUDA-core form, recorded
//    as form = cuda_core with block_n 16 at 1 stage (it keeps no K/V
//    tiles; the printer reads the form and re-derives nothing), whose num_warps x
//    group x (2 + v_head_dim) floats of shared memory must fit; if they do
//    not, the shape is rejected.
//  - mma: "wgmma" on sm_90a (takesWgmmaForm in AttentionTiling.h: 16-bit
//    activations with a cache of the same type, head dims padded to
//    multiples of 64, v_dim_padded <= 128) when two blocks of its tile
//    (the Q tile, two K tiles and a V tile in 128-byte swizzled rows: 113 KB
//    at 192/128) still fit an SM; the tile shape is the same (block_m 128,
//    block_n 64, one warpgroup: two m64 row blocks). Else "mma.sync".
//    With the `baseline` option (the tiered JIT's first tier) the schedule
//    keeps "mma.sync" where it would take "wgmma": the same tiles, grid,
//    split-KV rule and workspace, only the shared memory differs, and
//    NVRTC compiles it in a fraction of the wgmma form's time.
//  - Split-KV: target_ctas = 2 * SMs (two blocks per SM: one wave where two
//    fit, and a second wave that evens out unequal splits of a varlen batch
//    where they do not); split_kv_min_keys = 256 (4 tiles of 64 keys: enough
//    to fill the pipeline and to amortise the fp32 partial output and its
//    merge; the kernel runs a tile's keys on at most keys / 256 of the
//    launch's splits, so a short sequence in a launch planned for long ones
//    takes fewer, one of them without a merge); max_kv_splits =
//    min(64, target_ctas) (the merge reads every split and the workspace
//    is sized by it; more splits than target CTAs never help).
//
// MLA absorbed decode (#attn.latent_attention_schedule, sizes in
// plan/LatentAttention.h): the kernel has one tile (64 rows, 64-key tiles,
// two warpgroups) and needs wgmma, so sm_90a only; its Q and two K tiles
// take nearly all of an SM's shared memory, so target_ctas = SMs (one CTA
// per SM) and max_kv_splits = min(32, SMs) (the last split reads every
// split's 64 x R fp32 partial: the merge grows with the count).
//
// Varlen attention (attn.varlen_attention: ragged contiguous K/V, the same
// template with contiguous key rows) gets the attention schedule of its
// heads, head dims and types by the rules above; a shape that would take the
// CUDA-core form is refused (that form reads pages only). On sm_90a, 16-bit
// activations with head dims padded to 64-value blocks and v_dim_padded <=
// 256 take the warp-specialised kernel instead (mma "wgmma_ws",
// attnc_attention_ws.cuh; not in the tiered JIT's baseline): num_warps 12
// (a producer warpgroup issuing bulk tensor copies, two consumer warpgroups
// of 64 rows each taking turns at the tensor cores; setmaxnreg gives them
// 32 and 232 registers, kWsProducerRegisters in AttentionTiling.h),
// block_m 128, 2 stages of block_n 128 keys where they fit shared memory
// (192/128: 213 KB) else 64 (256/256), max_kv_splits 1. Padded 128/128
// takes block_n 176 (213 KB; 22 S accumulators a thread, no spills): on the
// H200 (2026-12-03, bench/bench_varlen_shapes.py rounds=7, B1 S8192 32/8
// causal) 1.152x cuDNN against 1.073x at 128, fewer per-tile softmax
// reductions, rescales and barriers per key; at 80/48 (B2 S2048) 176 was
// slower (0.993x against 1.025x: more masked keys on short diagonals), and
// 192/128 does not fit it. Padded 256/256 takes block_n 80 (2 stages in
// 229 KB): 1.171x cuDNN against 1.034x at 64 (S 8192, 16/2 causal, rounds=9
// in one run). Paged K/V also needs block_n a multiple of its boxes' rows
// (min(page, block_n)): 176 and 80 only for pages of 8 or 16.
//
// Paged attention on sm_90a whose shape takes that form with a 16-bit cache
// of the activation type and static pages of 8 or more tokens also gets the
// warp-specialised schedule as `attn.prefill_schedule` (not in the baseline;
// option prefill-kernel=false turns it off): attn-outline-kernels makes a
// second kernel of the layer from it, `prefill_attention`
// (paged_attention_ws<Config>), which the package launches for
// prefill-heavy batches; the op's own schedule stays the decode-capable one.
//
// Requests the target cannot serve are errors at the op (an option error at
// the first kernel op, or at the module when there is none): unknown arch,
// num-sms out of range, head dims above 512, attention head dims or head
// counts that are dynamic in the types, and shapes whose smallest tile does
// not fit in shared memory.
//
//===----------------------------------------------------------------------===//
#include "attnc/Plan/AttentionTiling.h"
#include "attnc/Plan/KernelLimits.h"
#include "attnc/Plan/LatentAttention.h"
#include "attnc/Plan/SplitKv.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace attnc {
#define GEN_PASS_DEF_ATTNSPECIALIZE
#include "attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc::attn;
using namespace attnc::plan;

namespace {

//===----------------------------------------------------------------------===//
// Per-arch facts
//===----------------------------------------------------------------------===//

struct ArchInfo {
  llvm::StringLiteral name;
  /// SMs of the flagship part, filled unless `num-sms` says otherwise.
  int64_t numSms;
  /// Largest dynamic shared memory a block can opt into, in bytes
  /// (cudaDevAttrMaxSharedMemoryPerBlockOptin).
  int64_t maxSharedBytes;
  /// Shared memory of one SM (cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  /// each resident block also takes 1 KB of it for the system.
  int64_t smSharedBytes;
  /// Warpgroup MMA (wgmma.mma_async): the arch-specific sm_90a target only.
  bool wgmma;
};

constexpr ArchInfo kArchs[] = {
    // A100 SXM.
    {"sm_80", 108, 163 * 1024, 164 * 1024, false},
    // RTX A6000 / A40.
    {"sm_86", 84, 99 * 1024, 100 * 1024, false},
    // RTX 4090.
    {"sm_89", 128, 99 * 1024, 100 * 1024, false},
    // H100 / H200 SXM.
    {"sm_90", 132, 227 * 1024, 228 * 1024, false},
    {"sm_90a", 132, 227 * 1024, 228 * 1024, true},
};

//===----------------------------------------------------------------------===//
// Rule constants (the reasons are in the file header)
//===----------------------------------------------------------------------===//

constexpr int64_t kWarpSize = 32;
constexpr int64_t kMaxHeadDim = attnc::plan::kMaxHeadDim;
constexpr int64_t kMmaStep = attnc::plan::kHeadDimStep;
constexpr int64_t kRowsPerWarp = 16;
/// Per-thread registers the output accumulator may take.
constexpr int64_t kAccumulatorRegisters = 128;
constexpr int64_t kPreferredBlockN = 64;
constexpr int64_t kSplitKvMinKeys = 256;
constexpr int64_t kCtasPerSm = 2;
/// Shared memory the system reserves per resident block.
constexpr int64_t kBlockReserved = 1024;
constexpr int64_t kVectorBytes = 16;
constexpr int64_t kPreprocessBlockThreads = 256;
/// Far above any GPU; keeps 2 * num-sms far from overflowing.
constexpr int64_t kMaxNumSms = int64_t(1) << 20;

/// The resolved pass options.
struct Target {
  const ArchInfo *arch;
  int64_t numSms;
};

int64_t byteSize(Type type) { return type.getIntOrFloatBitWidth() / 8; }

/// Head dims above the supported maximum are rejected at `op`.
LogicalResult checkHeadDims(Operation *op, int64_t qkHeadDim,
                            int64_t vHeadDim) {
  for (auto [name, dim] : {std::pair<StringRef, int64_t>{"qk_head_dim",
                                                         qkHeadDim},
                           {"v_head_dim", vHeadDim}}) {
    int64_t padded = llvm::alignTo(dim, kMmaStep);
    if (padded > kMaxHeadDim)
      return op->emitOpError()
             << "cannot be specialized: " << name << " " << dim
             << " (padded to " << padded
             << ") exceeds the largest supported head dim, " << kMaxHeadDim;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Preprocess
//===----------------------------------------------------------------------===//

FailureOr<PreprocessScheduleAttr> choosePreprocess(FusedPreprocessOp op) {
  int64_t numQHeads = op.getNumQHeadsAttr().getValue().getSExtValue();
  int64_t numKvHeads = op.getNumKvHeadsAttr().getValue().getSExtValue();
  int64_t qkHeadDim = op.getQkHeadDimAttr().getValue().getSExtValue();
  int64_t vHeadDim = op.getVHeadDimAttr().getValue().getSExtValue();
  if (failed(checkHeadDims(op, qkHeadDim, vHeadDim)))
    return failure();

  // Every vector boundary that the width must divide.
  SmallVector<int64_t> boundaries = {qkHeadDim, vHeadDim};
  if (op.hasStage(PreprocessStage::rope)) {
    int64_t rotaryDim = op.getRotaryDimAttr().getValue().getSExtValue();
    boundaries.push_back(op.getRotaryOffsetAttr().getValue().getSExtValue());
    boundaries.push_back(*op.getRopeStyle() == RopeStyle::neox ? rotaryDim / 2
                                                               : rotaryDim);
  }
  int64_t alignment = 0;
  for (int64_t boundary : boundaries)
    alignment = std::gcd(alignment, boundary);
  auto qkvType = cast<RankedTensorType>(op.getQkv().getType());
  int64_t vectorWidth = kVectorBytes / byteSize(qkvType.getElementType());
  while (alignment % vectorWidth != 0)
    vectorWidth /= 2;

  int64_t vectorsPerHead =
      llvm::divideCeil(std::max(qkHeadDim, vHeadDim), vectorWidth);
  int64_t threadsPerHead = std::min<int64_t>(
      kWarpSize, llvm::PowerOf2Ceil(static_cast<uint64_t>(vectorsPerHead)));
  // A neox rotation over the whole q/k head pairs vector v with v + half:
  // with threads_per_head dividing half (in vectors) a lane holds both
  // halves of its pairs, so the rotation needs no exchange between lanes,
  // every lane is busy and each work item has several vectors in flight.
  // Chosen when it gives 4 to 8 vectors per lane for q/k and at most 8 for v.
  bool fullNeox = op.hasStage(PreprocessStage::rope) &&
                  *op.getRopeStyle() == RopeStyle::neox &&
                  op.getRotaryOffsetAttr().getValue().getSExtValue() == 0 &&
                  op.getRotaryDimAttr().getValue().getSExtValue() == qkHeadDim;
  if (fullNeox) {
    int64_t halfVectors = qkHeadDim / 2 / vectorWidth;
    int64_t pairThreads = 1;
    while (pairThreads * 2 <= halfVectors / 2 && halfVectors % (pairThreads * 2) == 0 &&
           pairThreads * 2 <= kWarpSize)
      pairThreads *= 2;
    int64_t qkChunks = 2 * halfVectors / pairThreads;
    int64_t vChunks = llvm::divideCeil(llvm::divideCeil(vHeadDim, vectorWidth),
                                       pairThreads);
    if (halfVectors >= 2 && qkChunks >= 4 && qkChunks <= 8 && vChunks <= 8)
      threadsPerHead = pairThreads;
  }

  int64_t itemsPerToken =
      numQHeads + 2 * numKvHeads + (op.getGate() ? numQHeads : 0);
  int64_t threadsPerToken = itemsPerToken * threadsPerHead;
  int64_t tokensPerBlock =
      std::max<int64_t>(1, kPreprocessBlockThreads / threadsPerToken);
  int64_t threadsPerBlock =
      std::min<int64_t>(kPreprocessBlockThreads,
                        llvm::alignTo(tokensPerBlock * threadsPerToken,
                                      kWarpSize));
  int64_t headsPerBlock = threadsPerBlock / threadsPerHead;

  // The pair layout wherever its condition holds, whichever rule chose the
  // threads: a neox rotation over the whole head, the threads dividing half
  // the head in vectors (the width divides half the head: the rule above).
  bool pairLayout = fullNeox &&
                    (qkHeadDim / 2 / vectorWidth) % threadsPerHead == 0;
  // It holds several vectors per lane, one work item in flight is enough;
  // otherwise two, 32 bytes per thread.
  int64_t prefetch = pairLayout ? 1 : 2;
  // Threads per SM for enough loads in flight; the pair layout needs fewer
  // (640 leave it 102 registers).
  int64_t threadsInFlight = pairLayout ? 640 : 1024;
  int64_t minBlocksPerSm = threadsPerBlock >= threadsInFlight
                               ? 1
                               : threadsInFlight / threadsPerBlock;

  auto schedule = PreprocessScheduleAttr::getChecked(
      [&] { return op.emitOpError() << "chose an invalid schedule: "; },
      op.getContext(), vectorWidth, threadsPerHead, threadsPerBlock,
      headsPerBlock, tokensPerBlock, minBlocksPerSm, pairLayout, prefetch);
  if (!schedule)
    return failure();
  return schedule;
}

//===----------------------------------------------------------------------===//
// MLA preprocess
//===----------------------------------------------------------------------===//

/// Rope units (two vectors) each lane of a token's warps takes at most.
constexpr int64_t kMlaUnitsPerLane = 2;
constexpr int64_t kMlaMaxWarpsPerToken = 8;
constexpr int64_t kMlaWarpsPerBlock = 4;
constexpr int64_t kMlaRegistersPerThread = 72;
/// The memory-level knobs (the reasons are in the file header;
/// bench/sweep_mla_preprocess.py measures the alternatives).
constexpr int64_t kMlaTokenSteps = 1;
constexpr bool kMlaL2Prefetch = false;
constexpr bool kMlaStreamingStores = false;
constexpr bool kMlaStageInShared = false;
constexpr int64_t kRegistersPerSm = 65536;

FailureOr<MlaPreprocessScheduleAttr> chooseMlaPreprocess(MlaPreprocessOp op) {
  int64_t numHeads = op.getNumHeadsAttr().getValue().getSExtValue();
  int64_t rank = op.getKvLoraRankAttr().getValue().getSExtValue();
  int64_t ropeHalf = op.getRopeHeadDimAttr().getValue().getSExtValue() / 2;
  auto kvType = cast<RankedTensorType>(op.getKvA().getType());
  int64_t vectorWidth = kVectorBytes / byteSize(kvType.getElementType());
  int64_t alignment = std::gcd(rank, ropeHalf);
  while (alignment % vectorWidth != 0)
    vectorWidth /= 2;
  int64_t unitsPerToken = numHeads * (ropeHalf / vectorWidth);
  int64_t warpsPerToken = std::clamp<int64_t>(
      llvm::divideCeil(unitsPerToken, kWarpSize * kMlaUnitsPerLane), 1,
      kMlaMaxWarpsPerToken);
  int64_t tokensPerBlock =
      std::max<int64_t>(1, kMlaWarpsPerBlock / (warpsPerToken + 1));
  int64_t threadsPerBlock = kWarpSize * (warpsPerToken + 1) * tokensPerBlock;
  int64_t minBlocksPerSm = std::max<int64_t>(
      1, kRegistersPerSm / (kMlaRegistersPerThread * threadsPerBlock));
  auto schedule = MlaPreprocessScheduleAttr::getChecked(
      [&] { return op.emitOpError() << "chose an invalid schedule: "; },
      op.getContext(), vectorWidth, warpsPerToken, tokensPerBlock,
      threadsPerBlock, minBlocksPerSm, kMlaTokenSteps, kMlaL2Prefetch,
      kMlaStreamingStores, kMlaStageInShared);
  if (!schedule)
    return failure();
  return schedule;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// The first static size among `dims` (the verifier has checked that the
/// static ones agree), or nullopt when all are dynamic.
std::optional<int64_t> staticSize(std::initializer_list<int64_t> dims) {
  for (int64_t dim : dims)
    if (!ShapedType::isDynamic(dim))
      return dim;
  return std::nullopt;
}

struct Tile {
  int64_t blockM, blockN, stages;
};

/// What the attention schedule depends on: heads, head dims and the element
/// types of the queries and of the K/V rows.
struct AttentionShape {
  int64_t numQHeads, numKvHeads, qkHeadDim, vHeadDim;
  Type activation, cacheElement;
};

FailureOr<AttentionScheduleAttr> chooseAttentionTile(Operation *op,
                                                     const AttentionShape &shape,
                                                     const Target &target,
                                                     bool baseline);

/// One head count or head dim of an attention op: its name, the dims it is
/// read from (for the error) and its static size, if any.
struct NamedSize {
  StringRef name, where;
  std::optional<int64_t> size;
};

/// The attention shape of num_q_heads, num_kv_heads, qk_head_dim and
/// v_head_dim (in that order), or an error naming the first dynamic one.
FailureOr<AttentionShape> staticAttentionShape(Operation *op,
                                               const NamedSize (&sizes)[4],
                                               Type activation,
                                               Type cacheElement) {
  for (const NamedSize &s : sizes)
    if (!s.size)
      return op->emitOpError() << "cannot be specialized: " << s.name
                               << " is dynamic (" << s.where
                               << "); the schedule depends on it";
  return AttentionShape{*sizes[0].size, *sizes[1].size, *sizes[2].size,
                        *sizes[3].size, activation, cacheElement};
}

/// The head counts and dims of a paged attention (static, else an error
/// naming the first dynamic one) and its element types.
FailureOr<AttentionShape> pagedAttentionShape(PagedAttentionOp op) {
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  auto kCache = cast<RankedTensorType>(op.getKCache().getType());
  auto vCache = cast<RankedTensorType>(op.getVCache().getType());
  auto output = cast<RankedTensorType>(op.getOutput().getType());
  FailureOr<AttentionShape> shape = staticAttentionShape(
      op,
      {{"num_q_heads", "query or output dim 1",
        staticSize({query.getDimSize(1), output.getDimSize(1)})},
       {"num_kv_heads", "k_cache or v_cache dim 2",
        staticSize({kCache.getDimSize(2), vCache.getDimSize(2)})},
       {"qk_head_dim", "query dim 2 or k_cache dim 3",
        staticSize({query.getDimSize(2), kCache.getDimSize(3)})},
       {"v_head_dim", "v_cache dim 3 or output dim 2",
        staticSize({vCache.getDimSize(3), output.getDimSize(2)})}},
      query.getElementType(), kCache.getElementType());
  return shape;
}

FailureOr<AttentionScheduleAttr> chooseAttention(PagedAttentionOp op,
                                                 const Target &target,
                                                 bool baseline) {
  FailureOr<AttentionShape> shape = pagedAttentionShape(op);
  if (failed(shape))
    return failure();
  return chooseAttentionTile(op, *shape, target, baseline);
}

/// attn.varlen_attention: the paged attention's schedule for its heads, head
/// gqa_pack: the query heads of a KV group that share a tile's rows, the
/// largest divisor of the group that is at most block_m (equal packs, none
/// larger than a tile).
int64_t gqaPackFor(int64_t group, int64_t blockM) {
  for (int64_t pack = std::min(group, blockM); pack > 1; --pack)
    if (group % pack == 0)
      return pack;
  return 1;
}

/// The warp-specialised schedule of a varlen attention (mma "wgmma_ws",
/// see the file header), or a null attribute where the shape does not take
/// it: block_n 176 at padded 128/128, else 128 where 2 stages of it fit the
/// arch's shared memory, else 80 at padded 256/256, else 64, each only where
/// it is a multiple of the
/// paged K/V boxes' rows (`pageRows`, 0 for contiguous K/V); max_kv_splits
/// 1 (prefill has blocks enough; the kernel computes a row tile's keys in
/// one block).
FailureOr<AttentionScheduleAttr>
chooseWarpSpecialized(Operation *op, const AttentionShape &shape,
                      const Target &target, int64_t pageRows = 0) {
  const ArchInfo &arch = *target.arch;
  int64_t qkPadded = llvm::alignTo(shape.qkHeadDim, 64);
  int64_t vPadded = llvm::alignTo(shape.vHeadDim, 64);
  bool sixteenBit = shape.activation.isBF16() || shape.activation.isF16();
  // The tensor maps' strides must be multiples of 16 bytes: rows of whole
  // 8-value chunks (a view with other strides is refused at launch).
  if (!takesWarpSpecializedForm(arch.wgmma, qkPadded, vPadded, sixteenBit) ||
      shape.cacheElement != shape.activation || shape.qkHeadDim % 8 != 0 ||
      shape.vHeadDim % 8 != 0)
    return AttentionScheduleAttr();
  constexpr int64_t kStages = 2;
  int64_t blockN = 0;
  for (int64_t n : {176, 128, 80, 64}) {
    if (n == 176 && !(qkPadded == 128 && vPadded == 128))
      continue;
    if (n == 80 && !(qkPadded == 256 && vPadded == 256))
      continue;
    if (pageRows > 0 && n % std::min(pageRows, n) != 0)
      continue;
    if (wsAttentionSharedMap(qkPadded, vPadded, n, kStages,
                             /*persistent=*/false)
            .totalBytes <=
        arch.maxSharedBytes) {
      blockN = n;
      break;
    }
  }
  if (blockN == 0)
    return AttentionScheduleAttr();
  int64_t gqaPack =
      gqaPackFor(shape.numQHeads / shape.numKvHeads, kWsBlockM);
  auto schedule = AttentionScheduleAttr::getChecked(
      [&] { return op->emitOpError() << "chose an invalid schedule: "; },
      op->getContext(), kWsBlockM, blockN, kWsWarps, kStages, qkPadded,
      vPadded, gqaPack, kSplitKvMinKeys, /*maxKvSplits=*/int64_t(1),
      kCtasPerSm * target.numSms, StringRef("wgmma_ws"),
      AttentionForm::tensor_core, /*persistent=*/false);
  if (!schedule)
    return failure();
  return schedule;
}

/// The warp-specialised prefill schedule of a paged attention (the second
/// kernel of its layer, "prefill_attention": see the file header), or a
/// null attribute where the shape does not take it: the varlen rules, a
/// 16-bit cache of the activation type (fp8 caches keep the wgmma form) and
/// static pages of kWsMinPageRows or more tokens (whole swizzle atoms per
/// page box).
FailureOr<AttentionScheduleAttr> choosePrefillAttention(PagedAttentionOp op,
                                                        const Target &target) {
  auto kCache = cast<RankedTensorType>(op.getKCache().getType());
  auto vCache = cast<RankedTensorType>(op.getVCache().getType());
  int64_t blockSize = kCache.getDimSize(1);
  if (ShapedType::isDynamic(blockSize) || blockSize < kWsMinPageRows ||
      vCache.getDimSize(1) != blockSize)
    return AttentionScheduleAttr();
  FailureOr<AttentionShape> shape = pagedAttentionShape(op);
  if (failed(shape))
    return failure();
  return chooseWarpSpecialized(op, *shape, target, blockSize);
}

/// dims and types (K/V rows of the activation type); the template takes
/// contiguous K/V in its tensor-core form only, so a shape that would take
/// the CUDA-core form is refused.
FailureOr<AttentionScheduleAttr> chooseVarlenAttention(VarlenAttentionOp op,
                                                       const Target &target,
                                                       bool baseline) {
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  auto key = cast<RankedTensorType>(op.getKey().getType());
  auto value = cast<RankedTensorType>(op.getValue().getType());
  auto output = cast<RankedTensorType>(op.getOutput().getType());
  FailureOr<AttentionShape> shape = staticAttentionShape(
      op,
      {{"num_q_heads", "query or output dim 1",
        staticSize({query.getDimSize(1), output.getDimSize(1)})},
       {"num_kv_heads", "key or value dim 1",
        staticSize({key.getDimSize(1), value.getDimSize(1)})},
       {"qk_head_dim", "query or key dim 2",
        staticSize({query.getDimSize(2), key.getDimSize(2)})},
       {"v_head_dim", "value or output dim 2",
        staticSize({value.getDimSize(2), output.getDimSize(2)})}},
      query.getElementType(), key.getElementType());
  if (failed(shape))
    return failure();
  if (!baseline) {
    FailureOr<AttentionScheduleAttr> ws =
        chooseWarpSpecialized(op, *shape, target);
    if (succeeded(ws) && *ws)
      return ws;
  }
  FailureOr<AttentionScheduleAttr> schedule =
      chooseAttentionTile(op, *shape, target, baseline);
  if (succeeded(schedule) &&
      schedule->getForm() == AttentionForm::cuda_core)
    return op.emitOpError()
           << "cannot be specialized: varlen_attention has the tensor-core "
              "form only (16-bit activations, v_dim_padded <= 256, a tile "
              "that fits shared memory), got "
           << query.getElementType() << " with v_head_dim " << shape->vHeadDim;
  return schedule;
}

/// The schedule of the paged attention template for one shape (also that of
/// its contiguous K/V form, attn.varlen_attention).
FailureOr<AttentionScheduleAttr> chooseAttentionTile(Operation *op,
                                                     const AttentionShape &shape,
                                                     const Target &target,
                                                     bool baseline) {
  int64_t numQHeads = shape.numQHeads, numKvHeads = shape.numKvHeads;
  int64_t qkHeadDim = shape.qkHeadDim, vHeadDim = shape.vHeadDim;
  if (failed(checkHeadDims(op, qkHeadDim, vHeadDim)))
    return failure();

  const ArchInfo &arch = *target.arch;
  int64_t qkPadded = llvm::alignTo(qkHeadDim, kMmaStep);
  int64_t vPadded = llvm::alignTo(vHeadDim, kMmaStep);
  bool fp8Cache = byteSize(shape.cacheElement) == 1;
  int64_t targetCtas = kCtasPerSm * target.numSms;
  int64_t maxSplits = maxKvSplitsFor(targetCtas);
  auto sharedBytes = [&](const Tile &t, bool wgmma = false) {
    return attentionSharedBytes(qkPadded, vPadded, t.blockM, t.blockN,
                                t.stages, maxSplits, fp8Cache, wgmma);
  };
  // fp32 output accumulator of one warp's 16 rows, per thread.
  int64_t accumulatorRegisters = vPadded * kRowsPerWarp / kWarpSize;
  int64_t columnSplits =
      llvm::divideCeil(accumulatorRegisters, kAccumulatorRegisters);
  // Four warps of two m16 tiles each (see the file header).
  constexpr int64_t kBlockM = 8 * kRowsPerWarp;
  int64_t numWarps = 4 * columnSplits;
  int64_t group = numQHeads / numKvHeads;

  // The tensor-core form where it applies and fits, else the CUDA-core form
  // (recorded as block_n 16 at 1 stage: it keeps no K/V tiles).
  Type activation = shape.activation, cacheElement = shape.cacheElement;
  bool sixteenBit = activation.isBF16() || activation.isF16();
  bool tensorCore = takesTensorCoreForm(
      vPadded, sixteenBit, cacheElement == activation || fp8Cache);
  const Tile tensorTile{kBlockM, kPreferredBlockN, 2};
  const Tile cudaCoreTile{kBlockM, kMmaStep, 1};
  const Tile *chosen = &cudaCoreTile;
  if (tensorCore && sharedBytes(tensorTile) <= arch.maxSharedBytes) {
    chosen = &tensorTile;
  } else {
    int64_t need = referenceAttentionSharedBytes(numWarps, group, vHeadDim);
    if (need > arch.maxSharedBytes)
      return op->emitOpError()
             << "cannot be specialized: "
             << (tensorCore ? "the tensor-core tile needs " +
                                  std::to_string(sharedBytes(tensorTile)) +
                                  " bytes of shared memory and "
                            : std::string())
             << "the CUDA-core form needs " << need
             << " bytes (num_warps x group x (2 + v_head_dim) floats), "
             << arch.name << " allows " << arch.maxSharedBytes;
  }

  // wgmma for the tiles of more than 16 rows where the arch has it, the
  // shape suits it, and kCtasPerSm blocks of its tile still fit an SM.
  bool wgmma = !baseline && chosen == &tensorTile &&
               takesWgmmaForm(arch.wgmma, qkPadded, vPadded, sixteenBit,
                              cacheElement == activation) &&
               kCtasPerSm * (sharedBytes(tensorTile, true) + kBlockReserved) <=
                   arch.smSharedBytes;

  int64_t gqaPack = gqaPackFor(group, chosen->blockM);

  auto schedule = AttentionScheduleAttr::getChecked(
      [&] { return op->emitOpError() << "chose an invalid schedule: "; },
      op->getContext(), chosen->blockM, chosen->blockN, numWarps,
      chosen->stages, qkPadded, vPadded, gqaPack, kSplitKvMinKeys, maxSplits,
      targetCtas, StringRef(wgmma ? "wgmma" : "mma.sync"),
      chosen == &tensorTile ? AttentionForm::tensor_core
                            : AttentionForm::cuda_core,
      /*persistent=*/false);
  if (!schedule)
    return failure();
  return schedule;
}

/// The MLA decode kernel's schedule: its one tile, where the arch has wgmma
/// and its shared memory holds the tile.
FailureOr<LatentAttentionScheduleAttr>
chooseLatentAttention(LatentAttentionOp op, const Target &target) {
  const ArchInfo &arch = *target.arch;
  if (!arch.wgmma)
    return op.emitOpError()
           << "cannot be specialized: the MLA decode kernel needs wgmma "
              "(sm_90a), the arch is "
           << arch.name;
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  int64_t qkDim = query.getDimSize(2);
  if (ShapedType::isDynamic(qkDim))
    return op.emitOpError() << "cannot be specialized: the query head dim "
                               "(kv_lora_rank + rope_head_dim) is dynamic; "
                               "the shared-memory map depends on it";
  SplitKvLimits limits = latentSplitKvLimits(target.numSms);
  int64_t need = latentAttentionSharedMap(qkDim).totalBytes;
  if (need > arch.maxSharedBytes)
    return op.emitOpError()
           << "cannot be specialized: the MLA decode tile (Q and two K tiles "
              "of 64 rows x "
           << qkDim << " values) needs " << need
           << " bytes of shared memory, " << arch.name << " allows "
           << arch.maxSharedBytes;
  auto schedule = LatentAttentionScheduleAttr::getChecked(
      [&] { return op.emitOpError() << "chose an invalid schedule: "; },
      op.getContext(), kLatentBlockM, kLatentBlockN, kLatentWarps,
      limits.maxKvSplits, limits.targetCtas);
  if (!schedule)
    return failure();
  return schedule;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct Specialize : attnc::impl::AttnSpecializeBase<Specialize> {
  using AttnSpecializeBase::AttnSpecializeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> kernels;
    module.walk([&](Operation *op) {
      if (isa<FusedPreprocessOp, PagedAttentionOp, MlaPreprocessOp,
              LatentAttentionOp, VarlenAttentionOp>(op))
        kernels.push_back(op);
    });
    // Option errors are reported once, where they first matter.
    Operation *anchor = kernels.empty() ? module.getOperation() : kernels[0];
    FailureOr<Target> target = resolveTarget(anchor);
    if (failed(target))
      return signalPassFailure();
    module->setAttr("attn.target", StringAttr::get(&getContext(), arch));

    // Every op is tried so that one run reports every unservable request.
    bool failedAny = false;
    for (Operation *op : kernels) {
      // A schedule marked attn.keep_schedule (hand-written, a benchmark's
      // variant) is kept as it is; attn-prepare-emission checks it.
      if (op->hasAttr(attnc::kKeepScheduleAttr)) {
        if (!op->hasAttr("schedule")) {
          op->emitOpError() << "cannot be specialized: "
                            << attnc::kKeepScheduleAttr
                            << " is set but the op has no schedule to keep";
          failedAny = true;
        }
        continue;
      }
      LogicalResult result =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](FusedPreprocessOp fused) {
                FailureOr<PreprocessScheduleAttr> s = choosePreprocess(fused);
                if (succeeded(s))
                  fused.setScheduleAttr(*s);
                return LogicalResult(s);
              })
              .Case([&](MlaPreprocessOp mla) {
                // An explicit schedule (hand-written IR, a benchmark's
                // variant) is kept; attn-prepare-emission checks it.
                if (mla.getScheduleAttr())
                  return success();
                FailureOr<MlaPreprocessScheduleAttr> s =
                    chooseMlaPreprocess(mla);
                if (succeeded(s))
                  mla.setScheduleAttr(*s);
                return LogicalResult(s);
              })
              .Case([&](PagedAttentionOp attention) {
                FailureOr<AttentionScheduleAttr> s =
                    chooseAttention(attention, *target, baseline);
                if (succeeded(s))
                  attention.setScheduleAttr(*s);
                // A baseline standing in for a wgmma schedule is marked, so
                // that the printer gives it the wgmma kernel's parameters
                // (its TMA K/V tensor maps): the tiers swap at a launch only
                // when their parameters agree.
                if (succeeded(s) && baseline) {
                  FailureOr<AttentionScheduleAttr> optimised =
                      chooseAttention(attention, *target, /*baseline=*/false);
                  if (succeeded(optimised) && optimised->getMma() == "wgmma")
                    attention->setAttr("attn.wgmma_baseline",
                                       UnitAttr::get(attention->getContext()));
                }
                // The warp-specialised prefill kernel's schedule, where the
                // shape takes it: attn-outline-kernels makes the layer's
                // second attention kernel from it.
                if (succeeded(s) && !baseline && prefillKernel) {
                  FailureOr<AttentionScheduleAttr> prefill =
                      choosePrefillAttention(attention, *target);
                  if (failed(prefill))
                    return failure();
                  if (*prefill)
                    attention->setAttr(attnc::kPrefillScheduleAttr, *prefill);
                }
                return LogicalResult(s);
              })
              .Case([&](LatentAttentionOp latent) {
                FailureOr<LatentAttentionScheduleAttr> s =
                    chooseLatentAttention(latent, *target);
                if (succeeded(s))
                  latent.setScheduleAttr(*s);
                return LogicalResult(s);
              })
              .Case([&](VarlenAttentionOp varlen) {
                FailureOr<AttentionScheduleAttr> s =
                    chooseVarlenAttention(varlen, *target, baseline);
                if (succeeded(s))
                  varlen.setScheduleAttr(*s);
                // A baseline standing in for a warp-specialised schedule
                // is marked: the printer gives it that kernel's parameters
                // (the K/V tensor maps), so that the tiers swap.
                if (succeeded(s) && baseline) {
                  FailureOr<AttentionScheduleAttr> optimised =
                      chooseVarlenAttention(varlen, *target,
                                            /*baseline=*/false);
                  if (succeeded(optimised) &&
                      optimised->getMma() == "wgmma_ws")
                    varlen->setAttr("attn.ws_baseline",
                                    UnitAttr::get(varlen->getContext()));
                }
                return LogicalResult(s);
              })
              .Default([](Operation *) { return success(); });
      failedAny |= failed(result);
    }
    if (failedAny)
      signalPassFailure();
  }

  FailureOr<Target> resolveTarget(Operation *anchor) {
    const ArchInfo *info = llvm::find_if(
        kArchs, [&](const ArchInfo &a) { return a.name == arch; });
    if (info == std::end(kArchs)) {
      SmallVector<StringRef> known;
      for (const ArchInfo &a : kArchs)
        known.push_back(a.name);
      return anchor->emitOpError()
             << "cannot be specialized: unknown arch '" << arch
             << "' (known: " << llvm::join(known, ", ") << ")";
    }
    int64_t sms = numSms;
    if (sms < 0 || sms > kMaxNumSms)
      return anchor->emitOpError()
             << "cannot be specialized: num-sms must be in [0, " << kMaxNumSms
             << "] (0: the arch's flagship part), got " << sms;
    return Target{info, sms ? sms : info->numSms};
  }
};

} // namespace
