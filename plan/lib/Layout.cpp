//===- Layout.cpp - Fused QKV(G) layout and tensor-parallel shards --------===//
//
// Implements the layout contract of Layout.h: where each head of q, k, v and
// the output gate sits in the fused projection output, and which checkpoint
// rows each tensor-parallel rank copies into its local fused parameter.
//
// Row copies are derived one head at a time (the only granularity at which
// source and destination are guaranteed to agree) and then merged, so that
// the merge step, not the per-head mapping, is where contiguity is found.
// This keeps the mapping obviously correct for every gate layout and
// checkpoint form.
//
//===----------------------------------------------------------------------===//

#include "attnc/Plan/Layout.h"

#include <algorithm>
#include <utility>

namespace attnc {

namespace {

/// "must be >= 1 (got N)": the common rule for counts and dims.
Status notPositive(const char *field, int64_t value) {
  return Status{field, "must be >= 1 (got " + std::to_string(value) + ")"};
}

/// "must divide <what> (a % b != 0)", with the operands in the order the
/// divisibility test is written so the reader can check it at a glance.
Status mustDivide(const char *field, const char *dividend_name,
                 int64_t dividend, int64_t divisor) {
  return Status{field, std::string("must divide ") + dividend_name + " (" +
                          std::to_string(dividend) + " % " +
                          std::to_string(divisor) + " != 0)"};
}

/// Columns one query head occupies in q_proj / the q part of the fused output
/// when the gate is interleaved with it; Dqk otherwise.
int64_t qHeadPitch(const HeadShape &shape) {
  return shape.gate == GateLayout::InterleavedWithQ
             ? shape.qk_head_dim + shape.v_head_dim
             : shape.qk_head_dim;
}

/// The layout of an already validated shape (no checks, cannot fail).
FusedLayout layoutOf(const HeadShape &shape) {
  const int64_t num_q_heads = shape.num_q_heads;
  const int64_t num_kv_heads = shape.num_kv_heads;
  const int64_t qk_head_dim = shape.qk_head_dim;
  const int64_t v_head_dim = shape.v_head_dim;
  // With the interleaved gate, q head h and gate head h form one block of
  // Dqk + Dv columns, so both segments step over the other's head.
  const int64_t q_pitch = qHeadPitch(shape);

  FusedLayout layout;
  layout.shape = shape;

  Segment q{SegmentKind::Q, /*offset=*/0, num_q_heads, qk_head_dim, q_pitch};
  const int64_t q_block = num_q_heads * q_pitch; // q (and interleaved gate)
  Segment k{SegmentKind::K, q_block, num_kv_heads, qk_head_dim, qk_head_dim};
  Segment v{SegmentKind::V, k.offset + k.size(), num_kv_heads, v_head_dim,
            v_head_dim};
  int64_t width = v.offset + v.size();

  layout.segments = {q, k, v};
  switch (shape.gate) {
  case GateLayout::None:
    break;
  case GateLayout::Concatenated: {
    Segment g{SegmentKind::Gate, width, num_q_heads, v_head_dim, v_head_dim};
    width += g.size();
    layout.segments.push_back(g);
    break;
  }
  case GateLayout::InterleavedWithQ: {
    // Gate head h starts right after q head h inside the q block; the block
    // itself already counted the gate columns in `width`.
    Segment g{SegmentKind::Gate, qk_head_dim, num_q_heads, v_head_dim,
              q_pitch};
    layout.segments.push_back(g);
    break;
  }
  case GateLayout::HeadScalar: {
    Segment g{SegmentKind::Gate, width, num_q_heads, 1, 1};
    width += g.size();
    layout.segments.push_back(g);
    break;
  }
  }
  layout.width = width;
  return layout;
}

/// Where one head of one segment comes from in the checkpoint: the tensor and
/// the first row. `global` is the unsharded layout, `global_head` the head's
/// index in the unsharded model.
struct HeadSource {
  CheckpointTensor tensor;
  int64_t row;
};

HeadSource sourceOfHead(const FusedLayout &global, SegmentKind kind,
                        int64_t global_head, CheckpointForm form) {
  if (form == CheckpointForm::Fused) {
    // The checkpoint tensor *is* the unsharded fused output.
    const Segment *segment = global.find(kind);
    return {CheckpointTensor::Fused, segment->headOffset(global_head)};
  }

  const HeadShape &shape = global.shape;
  switch (kind) {
  case SegmentKind::Q:
    // With the interleaved gate q_proj is [q_0 g_0 q_1 g_1 ...], so its head
    // pitch is Dqk + Dv; otherwise it is plain q heads.
    return {CheckpointTensor::QProj, global_head * qHeadPitch(shape)};
  case SegmentKind::K:
    return {CheckpointTensor::KProj, global_head * shape.qk_head_dim};
  case SegmentKind::V:
    return {CheckpointTensor::VProj, global_head * shape.v_head_dim};
  case SegmentKind::Gate:
    if (shape.gate == GateLayout::InterleavedWithQ)
      return {CheckpointTensor::QProj,
              global_head * qHeadPitch(shape) + shape.qk_head_dim};
    if (shape.gate == GateLayout::HeadScalar)
      return {CheckpointTensor::GateProj, global_head};
    return {CheckpointTensor::GateProj, global_head * shape.v_head_dim};
  }
  return {CheckpointTensor::Fused, 0}; // unreachable: all kinds handled
}

/// True when `next` continues `prev` in both the source tensor and the
/// destination, so the two can be one copy.
bool continues(const RowCopy &prev, const RowCopy &next) {
  return prev.segment == next.segment && prev.source == next.source &&
         prev.dest_row + prev.rows == next.dest_row &&
         prev.source_row + prev.rows == next.source_row;
}

} // namespace

const char *gateLayoutName(GateLayout layout) {
  switch (layout) {
  case GateLayout::None:
    return "none";
  case GateLayout::Concatenated:
    return "qkvg";
  case GateLayout::InterleavedWithQ:
    return "interleaved";
  case GateLayout::HeadScalar:
    return "head_scalar";
  }
  return "unknown";
}

std::optional<GateLayout> parseGateLayout(const std::string &name) {
  for (GateLayout layout : {GateLayout::None, GateLayout::Concatenated,
                            GateLayout::InterleavedWithQ,
                            GateLayout::HeadScalar})
    if (name == gateLayoutName(layout))
      return layout;
  return std::nullopt;
}

const char *segmentKindName(SegmentKind kind) {
  switch (kind) {
  case SegmentKind::Q:
    return "q";
  case SegmentKind::K:
    return "k";
  case SegmentKind::V:
    return "v";
  case SegmentKind::Gate:
    return "gate";
  }
  return "unknown";
}

const char *checkpointTensorName(CheckpointTensor tensor) {
  switch (tensor) {
  case CheckpointTensor::QProj:
    return "q_proj";
  case CheckpointTensor::KProj:
    return "k_proj";
  case CheckpointTensor::VProj:
    return "v_proj";
  case CheckpointTensor::GateProj:
    return "g_proj";
  case CheckpointTensor::Fused:
    return "fused";
  }
  return "unknown";
}

Result<HeadShape> validateHeadShape(const HeadShape &shape) {
  if (shape.num_q_heads < 1)
    return notPositive("num_q_heads", shape.num_q_heads);
  if (shape.num_kv_heads < 1)
    return notPositive("num_kv_heads", shape.num_kv_heads);
  // GQA: every KV head serves the same number of query heads.
  if (shape.num_q_heads % shape.num_kv_heads != 0)
    return mustDivide("num_kv_heads", "num_q_heads", shape.num_q_heads,
                      shape.num_kv_heads);
  if (shape.qk_head_dim < 1)
    return notPositive("qk_head_dim", shape.qk_head_dim);
  if (shape.v_head_dim < 1)
    return notPositive("v_head_dim", shape.v_head_dim);
  // Caps keep every width and offset (at most 2*Hq*(Dqk+Dv)) far inside
  // int64_t, so no caller has to think about overflow.
  for (auto [field, value] :
       {std::pair<const char *, int64_t>{"num_q_heads", shape.num_q_heads},
        {"num_kv_heads", shape.num_kv_heads},
        {"qk_head_dim", shape.qk_head_dim},
        {"v_head_dim", shape.v_head_dim}})
    if (value > kMaxHeadsOrDim)
      return Status{field, "must be <= " + std::to_string(kMaxHeadsOrDim) +
                              " (got " + std::to_string(value) + ")"};
  // An out-of-range enum value (e.g. cast from an int) would silently lay
  // out as no gate; refuse it instead.
  switch (shape.gate) {
  case GateLayout::None:
  case GateLayout::Concatenated:
  case GateLayout::InterleavedWithQ:
  case GateLayout::HeadScalar:
    break;
  default:
    return Status{"gate", "unknown gate layout (" +
                             std::to_string(static_cast<int>(shape.gate)) +
                             ")"};
  }
  return shape;
}

const Segment *FusedLayout::find(SegmentKind kind) const {
  for (const Segment &segment : segments)
    if (segment.kind == kind)
      return &segment;
  return nullptr;
}

Result<FusedLayout> computeFusedLayout(const HeadShape &shape) {
  Result<HeadShape> valid = validateHeadShape(shape);
  if (!valid)
    return valid.error();
  return layoutOf(*valid);
}

Result<RankShard> computeRankShard(const HeadShape &shape, int64_t tp,
                                     int64_t rank, CheckpointForm form) {
  Result<HeadShape> valid = validateHeadShape(shape);
  if (!valid)
    return valid.error();
  const int64_t num_q_heads = shape.num_q_heads;
  const int64_t num_kv_heads = shape.num_kv_heads;

  if (tp < 1)
    return notPositive("tp", tp);
  if (num_q_heads % tp != 0)
    return mustDivide("tp", "num_q_heads", num_q_heads, tp);
  // More ranks than KV heads: each KV head is replicated on tp / Hkv
  // consecutive ranks, which only works if that ratio is whole.
  const bool kv_replicated = tp > num_kv_heads;
  if (kv_replicated && tp % num_kv_heads != 0)
    return Status{"tp", "must be a multiple of num_kv_heads when larger than "
                       "it (" +
                           std::to_string(tp) + " % " +
                           std::to_string(num_kv_heads) + " != 0)"};
  if (!kv_replicated && num_kv_heads % tp != 0)
    return mustDivide("tp", "num_kv_heads", num_kv_heads, tp);
  if (rank < 0 || rank >= tp)
    return Status{"rank", "must be in [0, tp) (got " + std::to_string(rank) +
                             ", tp = " + std::to_string(tp) + ")"};

  RankShard shard;
  shard.tp = tp;
  shard.rank = rank;
  shard.kv_replicated = kv_replicated;

  HeadShape local_shape = shape;
  local_shape.num_q_heads = num_q_heads / tp;
  local_shape.num_kv_heads = kv_replicated ? 1 : num_kv_heads / tp;
  shard.local = layoutOf(local_shape);
  shard.first_q_head = rank * local_shape.num_q_heads;
  // Replicated: rank r holds KV head r*Hkv/tp (exact since Hkv divides tp),
  // i.e. the KV head of the query heads it holds.
  shard.first_kv_head = kv_replicated ? rank * num_kv_heads / tp
                                      : rank * local_shape.num_kv_heads;

  const FusedLayout global = layoutOf(shape);

  // One copy per local head of every local segment, then merge.
  std::vector<RowCopy> per_head;
  for (const Segment &segment : shard.local.segments) {
    const bool is_kv =
        segment.kind == SegmentKind::K || segment.kind == SegmentKind::V;
    const int64_t first_head = is_kv ? shard.first_kv_head : shard.first_q_head;
    for (int64_t h = 0; h < segment.num_heads; ++h) {
      HeadSource source = sourceOfHead(global, segment.kind, first_head + h,
                                       form);
      per_head.push_back(RowCopy{segment.kind, source.tensor, source.row,
                                 segment.headOffset(h), segment.head_size});
    }
  }
  std::sort(per_head.begin(), per_head.end(),
            [](const RowCopy &a, const RowCopy &b) {
              return a.dest_row < b.dest_row;
            });

  for (const RowCopy &copy : per_head) {
    if (!shard.copies.empty() && continues(shard.copies.back(), copy))
      shard.copies.back().rows += copy.rows;
    else
      shard.copies.push_back(copy);
  }
  return shard;
}

Result<LatentCacheLayout> computeLatentCacheLayout(int64_t kv_lora_rank,
                                                   int64_t rope_head_dim,
                                                   int64_t block_size) {
  if (kv_lora_rank < 1 || kv_lora_rank > kMaxHeadsOrDim)
    return Status("kv_lora_rank", "must be in [1, " +
                                      std::to_string(kMaxHeadsOrDim) +
                                      "], got " + std::to_string(kv_lora_rank));
  if (rope_head_dim < 2 || rope_head_dim > kMaxHeadsOrDim ||
      rope_head_dim % 2 != 0)
    return Status("rope_head_dim",
                  "must be even and in [2, " + std::to_string(kMaxHeadsOrDim) +
                      "] (rotated in pairs), got " +
                      std::to_string(rope_head_dim));
  bool known = false;
  for (int64_t size : kLatentBlockSizes)
    known |= size == block_size;
  if (!known)
    return Status("block_size", "must be 16 or 64 (the latent cache pages "
                                "the MLA kernels take), got " +
                                    std::to_string(block_size));
  LatentCacheLayout layout;
  layout.kv_lora_rank = kv_lora_rank;
  layout.rope_head_dim = rope_head_dim;
  layout.block_size = block_size;
  layout.row_width = kv_lora_rank + rope_head_dim;
  layout.value_width = kv_lora_rank;
  layout.k_pe_offset = kv_lora_rank;
  return layout;
}

} // namespace attnc
