//===- WorkModel.cpp - Bytes, FLOPs and floor time of a layer's kernels ---===//
#include "attnc/Plan/WorkModel.h"

#include <algorithm>
#include <string>
#include <utility>

namespace attnc::plan {
namespace {

/// Bounds that keep every count in int64_t: a sequence's (query, key) pairs
/// (at most context^2 / 2 + context < 2^62) and the launch's query tokens.
/// Byte and FLOP totals are products of these with per-unit sizes, taken in
/// double.
constexpr int64_t kMaxContext = int64_t(1) << 31;
constexpr int64_t kMaxWorkloadTokens = int64_t(1) << 40;

Status checkShape(const LayerWorkShape &shape) {
  if (Result<HeadShape> heads = validateHeadShape(shape.heads); !heads)
    return heads.status();
  if (shape.activation_bytes < 1)
    return Status("activation_bytes",
                  "must be >= 1, got " + std::to_string(shape.activation_bytes));
  if (shape.cache_bytes < 1)
    return Status("cache_bytes",
                  "must be >= 1, got " + std::to_string(shape.cache_bytes));
  if (shape.block_size < 1)
    return Status("block_size",
                  "must be >= 1, got " + std::to_string(shape.block_size));
  if (shape.attention_chunk < 0)
    return Status("attention_chunk", "must be >= 0 (0: no chunks), got " +
                                         std::to_string(shape.attention_chunk));
  if (shape.sliding_window < 0)
    return Status("sliding_window", "must be >= 0 (0: no window), got " +
                                        std::to_string(shape.sliding_window));
  return Status();
}

/// The fused layout of a shape whose fields checkShape accepts.
Result<FusedLayout> checkedLayout(const LayerWorkShape &shape) {
  if (Status s = checkShape(shape); !s.ok())
    return s;
  return computeFusedLayout(shape.heads);
}

/// Columns of the gate per token (0 without a gate).
int64_t gateColumns(const FusedLayout &layout) {
  const Segment *gate = layout.find(SegmentKind::Gate);
  return gate ? gate->size() : 0;
}

double seconds(double amount, double rate) {
  return rate > 0 ? amount / rate : 0;
}

KernelWork finish(double read, double written, double flops,
                  const Machine &machine) {
  KernelWork work;
  work.read_bytes = read;
  work.written_bytes = written;
  work.flops = flops;
  work.memory_seconds = seconds(read + written, machine.bytes_per_second);
  work.compute_seconds = seconds(flops, machine.flops_per_second);
  return work;
}

} // namespace

Result<PreprocessTraffic> preprocessTraffic(const LayerWorkShape &shape) {
  Result<FusedLayout> layout = checkedLayout(shape);
  if (!layout)
    return layout.status();
  const HeadShape &h = shape.heads;
  PreprocessTraffic traffic;
  traffic.read_bytes = layout->width * shape.activation_bytes + 8 /* slot */ +
                       (shape.rope ? 8 /* position */ : 0);
  traffic.written_bytes =
      (h.num_q_heads * h.qk_head_dim + gateColumns(*layout)) *
          shape.activation_bytes +
      h.num_kv_heads * (h.qk_head_dim + h.v_head_dim) * shape.cache_bytes;
  return traffic;
}

Result<AttentionTraffic> attentionTraffic(const LayerWorkShape &shape) {
  Result<FusedLayout> layout = checkedLayout(shape);
  if (!layout)
    return layout.status();
  const HeadShape &h = shape.heads;
  AttentionTraffic traffic;
  traffic.kv_bytes_per_key =
      h.num_kv_heads * (h.qk_head_dim + h.v_head_dim) * shape.cache_bytes;
  traffic.query_read_bytes =
      (h.num_q_heads * h.qk_head_dim + gateColumns(*layout)) *
      shape.activation_bytes;
  traffic.output_written_bytes =
      h.num_q_heads * h.v_head_dim * shape.activation_bytes;
  traffic.flops_per_query_key = 2 * h.num_q_heads * (h.qk_head_dim + h.v_head_dim);
  return traffic;
}

int64_t visibleKeys(int64_t position, int64_t window, int64_t chunk) {
  int64_t keys = position + 1;
  if (chunk > 0)
    keys = std::min(keys, position % chunk + 1);
  return window > 0 ? std::min(keys, window) : keys;
}

int64_t causalQueryKeyPairs(int64_t tokens, int64_t window, int64_t chunk) {
  if (tokens <= 0)
    return 0;
  if (chunk > 0 && tokens > chunk)
    return (tokens / chunk) * causalQueryKeyPairs(chunk, window) +
           causalQueryKeyPairs(tokens % chunk, window);
  if (window <= 0 || tokens <= window)
    return tokens * (tokens + 1) / 2;
  return window * (window + 1) / 2 + (tokens - window) * window;
}

const char *phaseName(Phase phase) {
  return phase == Phase::Decode ? "decode" : "prefill";
}

int64_t Workload::queryTokens() const {
  return phase == Phase::Decode ? batch : batch * context;
}

Status checkWorkload(const Workload &workload) {
  if (workload.batch < 1)
    return Status("batch",
                  "must be >= 1 (sequences), got " + std::to_string(workload.batch));
  if (workload.context < 1)
    return Status("context", std::string("must be >= 1 (") +
                                 (workload.phase == Phase::Decode
                                      ? "keys per sequence"
                                      : "new tokens per sequence") +
                                 "), got " + std::to_string(workload.context));
  if (workload.context > kMaxContext)
    return Status("context", "must be <= 2^31, got " +
                                 std::to_string(workload.context));
  if (workload.batch > kMaxWorkloadTokens / workload.context)
    return Status("context", "batch * context must be <= 2^40, got " +
                                 std::to_string(workload.batch) + " * " +
                                 std::to_string(workload.context));
  return Status();
}

double KernelWork::floorSeconds() const {
  return std::max(memory_seconds, compute_seconds);
}

Result<KernelWork> preprocessWork(const LayerWorkShape &shape,
                                  const Workload &workload,
                                  const Machine &machine) {
  if (Status s = checkWorkload(workload); !s.ok())
    return s;
  Result<PreprocessTraffic> traffic = preprocessTraffic(shape);
  if (!traffic)
    return traffic.status();
  double tokens = double(workload.queryTokens());
  return finish(tokens * double(traffic->read_bytes),
                tokens * double(traffic->written_bytes), 0, machine);
}

Result<KernelWork> attentionWork(const LayerWorkShape &shape,
                                 const Workload &workload,
                                 const Machine &machine) {
  if (Status s = checkWorkload(workload); !s.ok())
    return s;
  Result<AttentionTraffic> traffic = attentionTraffic(shape);
  if (!traffic)
    return traffic.status();
  // Per sequence: the keys read, the (query, key) pairs, the query tokens.
  int64_t keysRead, pairs, queries;
  if (workload.phase == Phase::Decode) {
    keysRead = visibleKeys(workload.context - 1, shape.sliding_window,
                           shape.attention_chunk);
    pairs = keysRead;
    queries = 1;
  } else {
    keysRead = workload.context;
    pairs = causalQueryKeyPairs(workload.context, shape.sliding_window,
                                shape.attention_chunk);
    queries = workload.context;
  }
  int64_t pages = (keysRead + shape.block_size - 1) / shape.block_size;
  double perSequenceRead = double(keysRead) * double(traffic->kv_bytes_per_key) +
                           double(queries) * double(traffic->query_read_bytes) +
                           double(pages) * 4 + 8 /* length, query start */;
  double perSequenceWritten =
      double(queries) * double(traffic->output_written_bytes);
  double batch = double(workload.batch);
  return finish(batch * perSequenceRead, batch * perSequenceWritten,
                batch * double(pairs) * double(traffic->flops_per_query_key),
                machine);
}

namespace {

Status checkMlaShape(const MlaWorkShape &shape) {
  const std::pair<const char *, int64_t> positive[] = {
      {"num_heads", shape.num_heads},
      {"kv_lora_rank", shape.kv_lora_rank},
      {"rope_head_dim", shape.rope_head_dim},
      {"v_head_dim", shape.v_head_dim},
      {"activation_bytes", shape.activation_bytes},
      {"cache_bytes", shape.cache_bytes},
      {"block_size", shape.block_size}};
  for (auto [field, value] : positive)
    if (value < 1 || value > kMaxHeadsOrDim)
      return Status(field, "must be in [1, " + std::to_string(kMaxHeadsOrDim) +
                               "], got " + std::to_string(value));
  if (shape.nope_head_dim < 0 || shape.nope_head_dim > kMaxHeadsOrDim)
    return Status("nope_head_dim", "must be in [0, " +
                                       std::to_string(kMaxHeadsOrDim) +
                                       "], got " +
                                       std::to_string(shape.nope_head_dim));
  return Status();
}

Status checkMla(const MlaWorkShape &shape, const Workload &workload) {
  if (Status s = checkMlaShape(shape); !s.ok())
    return s;
  return checkWorkload(workload);
}

double pagesOf(int64_t keys, int64_t block_size) {
  return double((keys + block_size - 1) / block_size);
}

} // namespace

Result<KernelWork> mlaPreprocessWork(const MlaWorkShape &shape,
                                     const Workload &workload,
                                     const Machine &machine) {
  if (Status s = checkMla(shape, workload); !s.ok())
    return s;
  const double row = double(shape.kv_lora_rank + shape.rope_head_dim);
  const double qRope = double(shape.num_heads * shape.rope_head_dim);
  const double a = double(shape.activation_bytes);
  const double read = (row + qRope) * a + 16 /* slot, position */;
  const double written = row * double(shape.cache_bytes) + (row + qRope) * a;
  const double tokens = double(workload.queryTokens());
  return finish(tokens * read, tokens * written, 0, machine);
}

Result<KernelWork> latentAttentionWork(const MlaWorkShape &shape,
                                       const Workload &workload,
                                       const Machine &machine) {
  if (Status s = checkMla(shape, workload); !s.ok())
    return s;
  const double h = double(shape.num_heads), r = double(shape.kv_lora_rank);
  const double row = r + double(shape.rope_head_dim);
  const double a = double(shape.activation_bytes);
  // Decode: one query per sequence over its `context` rows. Prefill: the
  // absorbed form over each sequence's `context` new tokens, causal
  // (engines prefill in the decompressed form: varlenAttentionWork).
  const int64_t queries =
      workload.phase == Phase::Decode ? 1 : workload.context;
  const int64_t pairs =
      workload.phase == Phase::Decode
          ? workload.context
          : causalQueryKeyPairs(workload.context, 0);
  const double perSequenceRead =
      double(workload.context) * row * double(shape.cache_bytes) +
      double(queries) * h * row * a +
      pagesOf(workload.context, shape.block_size) * 4 + 8;
  const double perSequenceWritten = double(queries) * h * r * a;
  const double flopsPerPair = 2 * h * row + 2 * h * r;
  const double batch = double(workload.batch);
  return finish(batch * perSequenceRead, batch * perSequenceWritten,
                batch * double(pairs) * flopsPerPair, machine);
}

Result<KernelWork> varlenAttentionWork(const MlaWorkShape &shape,
                                       const Workload &workload,
                                       const Machine &machine) {
  if (Status s = checkMla(shape, workload); !s.ok())
    return s;
  const double h = double(shape.num_heads);
  const double dqk = double(shape.nope_head_dim + shape.rope_head_dim);
  const double dv = double(shape.v_head_dim);
  const double a = double(shape.activation_bytes);
  const int64_t queries =
      workload.phase == Phase::Decode ? 1 : workload.context;
  const int64_t pairs = workload.phase == Phase::Decode
                            ? workload.context
                            : causalQueryKeyPairs(workload.context, 0);
  const double perSequenceRead = double(queries) * h * dqk * a +
                                 double(workload.context) * h * (dqk + dv) * a +
                                 8 /* cu_seqlens_q, cu_seqlens_k */;
  const double perSequenceWritten = double(queries) * h * dv * a;
  const double batch = double(workload.batch);
  return finish(batch * perSequenceRead, batch * perSequenceWritten,
                batch * double(pairs) * 2 * h * (dqk + dv), machine);
}

Result<KernelWork> latentGatherWork(const MlaWorkShape &shape,
                                    const Workload &workload,
                                    const Machine &machine) {
  if (Status s = checkMla(shape, workload); !s.ok())
    return s;
  const double row = double(shape.kv_lora_rank + shape.rope_head_dim);
  const double rows = double(workload.context);
  const double perSequenceRead = rows * row * double(shape.cache_bytes) +
                                 pagesOf(workload.context, shape.block_size) *
                                     4 +
                                 4 /* cu_seqlens */;
  const double perSequenceWritten =
      rows * row * double(shape.activation_bytes);
  const double batch = double(workload.batch);
  return finish(batch * perSequenceRead, batch * perSequenceWritten, 0,
                machine);
}

} // namespace attnc::plan
