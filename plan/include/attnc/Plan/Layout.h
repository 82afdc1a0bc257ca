//===- Layout.h - Fused QKV(G) layout and tensor-parallel shards -*- C++ -*-===//
//
// The one source of truth for where q, k, v and the output gate live in the
// fused QKV(G) projection output, and for which checkpoint rows each
// tensor-parallel rank loads. Nobody else recomputes Hq*Dqk + Hkv*Dqk + Hkv*Dv.
//
// Every segment is described per head: head h of a segment occupies columns
// [offset + h * head_stride, offset + h * head_stride + head_size) of the fused
// width. For the concatenated layouts head_stride == head_size; for the
// q/gate-interleaved layout q and gate heads alternate, so both have
// head_stride == Dqk + Dv.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_PLAN_LAYOUT_H
#define ATTNC_PLAN_LAYOUT_H

#include "attnc/Support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnc {

/// Where the output gate sits in the fused output. A gate multiplies each
/// query head's attention output by sigmoid(g): g has Dv values per head
/// (element-wise), or one (HeadScalar).
enum class GateLayout {
  /// No output gate: fused width is Hq*Dqk + Hkv*Dqk + Hkv*Dv.
  None,
  /// `[q | k | v | g]`: the gate is a fourth contiguous segment.
  Concatenated,
  /// `[q0 g0 q1 g1 ... | k | v]`: each query head is followed by its gate head
  /// (Qwen3-Next / Qwen3.5 style, where q_proj outputs both).
  InterleavedWithQ,
  /// `[q | k | v | g]` with one gate value per query head (Bailing's g_proj:
  /// hidden -> num_heads), multiplying all Dv values of its head.
  HeadScalar,
};

/// Spelling used in IR, JSON and on the command line: "none", "qkvg",
/// "interleaved", "head_scalar".
const char *gateLayoutName(GateLayout layout);
/// Inverse of gateLayoutName; std::nullopt for an unknown spelling.
std::optional<GateLayout> parseGateLayout(const std::string &name);

/// The head counts and head dims of one attention layer.
struct HeadShape {
  int64_t num_q_heads = 0;  ///< Hq
  int64_t num_kv_heads = 0; ///< Hkv
  int64_t qk_head_dim = 0;  ///< Dqk
  int64_t v_head_dim = 0;   ///< Dv
  GateLayout gate = GateLayout::None;
};

/// Largest head count or head dim accepted (2^20): far beyond any model, and
/// small enough that no width or offset can overflow int64_t.
constexpr int64_t kMaxHeadsOrDim = int64_t(1) << 20;

/// Checks 1 <= Hq, Hkv, Dqk, Dv <= kMaxHeadsOrDim and Hq % Hkv == 0. The
/// error names the field ("num_q_heads", "num_kv_heads", "qk_head_dim",
/// "v_head_dim").
Result<HeadShape> validateHeadShape(const HeadShape &shape);

enum class SegmentKind { Q, K, V, Gate };
const char *segmentKindName(SegmentKind kind); ///< "q", "k", "v", "gate"

/// One segment of the fused projection output, described per head.
struct Segment {
  SegmentKind kind;
  int64_t offset = 0;      ///< column of head 0's first element
  int64_t num_heads = 0;   ///< heads in this segment
  int64_t head_size = 0;   ///< columns per head (Dqk for q/k, Dv for v/gate)
  int64_t head_stride = 0; ///< columns from one head's start to the next
  /// Columns covered: num_heads * head_size.
  int64_t size() const { return num_heads * head_size; }
  /// First column of head `h`.
  int64_t headOffset(int64_t h) const { return offset + h * head_stride; }
};

/// The fused QKV(G) layout of one projection output.
struct FusedLayout {
  HeadShape shape;
  int64_t width = 0;             ///< total fused width W
  std::vector<Segment> segments; ///< q, k, v[, gate], in that order

  /// The segment of a kind, or nullptr (only Gate can be absent).
  const Segment *find(SegmentKind kind) const;
};

/// Layout for a validated shape; errors as validateHeadShape.
Result<FusedLayout> computeFusedLayout(const HeadShape &shape);

/// How the checkpoint stores the projection weight (rows = output features).
enum class CheckpointForm {
  /// Separate q_proj / k_proj / v_proj (/ g_proj for the concatenated gate)
  /// tensors. With the interleaved gate layout, q_proj holds q and gate
  /// interleaved per head and there is no separate gate tensor.
  Separate,
  /// One already-fused qkv(g) tensor laid out as computeFusedLayout says for
  /// the unsharded shape.
  Fused,
};

/// Which checkpoint tensor a row range comes from.
enum class CheckpointTensor { QProj, KProj, VProj, GateProj, Fused };
const char *checkpointTensorName(CheckpointTensor tensor); ///< "q_proj", ...

/// A contiguous range of checkpoint rows copied into the rank's fused
/// parameter.
struct RowCopy {
  SegmentKind segment;      ///< the segment the rows belong to
  CheckpointTensor source;  ///< where they come from
  int64_t source_row = 0;   ///< first row in the source tensor
  int64_t dest_row = 0;     ///< first row in the rank's fused parameter
  int64_t rows = 0;         ///< number of rows
};

/// What one tensor-parallel rank holds.
struct RankShard {
  int64_t tp = 1;
  int64_t rank = 0;
  /// The rank's local head shape and fused layout (width = per-rank width).
  FusedLayout local;
  /// True when tp > Hkv and the rank holds a replica of one KV head.
  bool kv_replicated = false;
  /// Global index of the rank's first query head / KV head.
  int64_t first_q_head = 0;
  int64_t first_kv_head = 0;
  /// Row copies that assemble the rank's fused parameter, sorted by dest_row;
  /// adjacent runs merged; together they cover [0, local.width) exactly once.
  std::vector<RowCopy> copies;
};

/// Checks the tensor-parallel rule and computes rank `rank`'s shard.
/// Rules (error field in quotes): "tp" >= 1; tp divides Hq; if tp > Hkv then
/// tp % Hkv == 0 (rank r holds KV head r*Hkv/tp), else tp divides Hkv; "rank"
/// in [0, tp).
Result<RankShard> computeRankShard(const HeadShape &shape, int64_t tp,
                                     int64_t rank, CheckpointForm form);

/// MLA's latent cache: one row per token of kv_lora_rank (R) normalised
/// latent values c_kv followed by rope_head_dim (P) rotated k_pe values,
/// [num_blocks, block_size, R + P], one head shared by every query head (so
/// tensor parallelism never splits it). V is the first R values of the same
/// rows: one allocation, no second cache.
struct LatentCacheLayout {
  int64_t kv_lora_rank = 0;  ///< R
  int64_t rope_head_dim = 0; ///< P
  int64_t block_size = 0;    ///< tokens per page
  int64_t row_width = 0;     ///< R + P, values per token (the key)
  int64_t value_width = 0;   ///< R: V aliases columns [0, R) of each row
  int64_t k_pe_offset = 0;   ///< R: column of k_pe's first value
  /// Bytes of one token's row for an element of `element_bytes`.
  int64_t bytesPerToken(int64_t element_bytes) const {
    return row_width * element_bytes;
  }
};

/// The latent pages the MLA kernels take, in tokens.
constexpr int64_t kLatentBlockSizes[] = {16, 64};

/// The layout for R >= 1, P >= 2 and even, and a block size of
/// kLatentBlockSizes; errors name "kv_lora_rank", "rope_head_dim" or
/// "block_size".
Result<LatentCacheLayout> computeLatentCacheLayout(int64_t kv_lora_rank,
                                                   int64_t rope_head_dim,
                                                   int64_t block_size);

} // namespace attnc

#endif // ATTNC_PLAN_LAYOUT_H
