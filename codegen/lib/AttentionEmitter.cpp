//===- AttentionEmitter.cpp - the paged attention kernels' printer --------===//
//
// Prints one attn.paged_attention kernel function (with the output gate as
// its epilogue) as CUDA C++ and its ABI: the tensor-core form, or the
// CUDA-core form for shapes the tensor-core tiling does not take.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "attnc/Plan/AttentionTiling.h"
#include "attnc/Plan/SplitKv.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace attnc::attn;
using attnc::runtime::ElementType;
using attnc::runtime::GridDimRule;
using attnc::runtime::KernelAbi;
using attnc::runtime::KernelParam;
using attnc::runtime::ParamKind;
using attnc::runtime::ShapeDim;

namespace attnc::emit {
namespace {

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// What both attention kernel forms read from the op, its gate and its
/// prepared emission dictionary.
struct AttentionLayer {
  std::string name;
  StringRef activation, cache;
  int64_t numQHeads, numKvHeads, qkHeadDim, vHeadDim, groupSize;
  int64_t window;
  double softcap, valueScale;
  bool sinks, fp8, gate, causal;

  AttentionLayer(func::FuncOp function, PagedAttentionOp op,
                 OutputGateOp gateOp, DictionaryAttr emission)
      : name(function.getSymName().str()),
        activation(emissionString(emission, "activation")),
        cache(emissionString(emission, "cache")),
        numQHeads(cast<RankedTensorType>(op.getQuery().getType()).getDimSize(1)),
        numKvHeads(cast<RankedTensorType>(op.getKCache().getType()).getDimSize(2)),
        qkHeadDim(cast<RankedTensorType>(op.getQuery().getType()).getDimSize(2)),
        vHeadDim(cast<RankedTensorType>(op.getVCache().getType()).getDimSize(3)),
        groupSize(emissionInt(emission, "group_size")),
        window(op.getSlidingWindow()),
        softcap(op.getLogitSoftcap().convertToDouble()),
        valueScale(op.getValueScale().convertToDouble()),
        sinks(static_cast<bool>(op.getSinks())), fp8(cache == "fp8_e4m3"),
        gate(static_cast<bool>(gateOp)), causal(op.getCausal()) {}
};

/// The comment block that opens every attention kernel's source: the layer,
/// its configuration and features, dtypes and the schedule.
void printAttentionHeader(llvm::raw_ostream &os, const AttentionLayer &layer,
                          func::FuncOp function, PagedAttentionOp op,
                          DictionaryAttr emission) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  os << "// attnc generated kernel " << layer.name << " (attention) for layer "
     << layerOf(function) << "\n"
     << "// configuration: num_q_heads=" << layer.numQHeads
     << " num_kv_heads=" << layer.numKvHeads
     << " qk_head_dim=" << layer.qkHeadDim << " v_head_dim=" << layer.vHeadDim
     << " group_size=" << layer.groupSize << "\n"
     << "//   softmax_scale=" << literal(op.getSoftmaxScale().convertToDouble())
     << (layer.causal ? " causal" : " non-causal");
  if (layer.window)
    os << " sliding_window=" << layer.window;
  if (layer.sinks)
    os << " sinks";
  if (layer.softcap > 0)
    os << " logit_softcap=" << literal(layer.softcap);
  if (layer.valueScale != 1.0)
    os << " value_scale=" << literal(layer.valueScale);
  if (layer.gate)
    os << " output_gate";
  os << "\n//   activation " << layer.activation << ", cache " << layer.cache
     << " (block_size " << emissionInt(emission, "block_size") << ")\n"
     << "// schedule: block_m=" << schedule.getBlockM()
     << " block_n=" << schedule.getBlockN()
     << " num_warps=" << schedule.getNumWarps()
     << " pipeline_stages=" << schedule.getPipelineStages()
     << " qk_dim_padded=" << schedule.getQkDimPadded()
     << " v_dim_padded=" << schedule.getVDimPadded()
     << " gqa_pack=" << schedule.getGqaPack()
     << " split_kv_min_keys=" << schedule.getSplitKvMinKeys()
     << " max_kv_splits=" << schedule.getMaxKvSplits()
     << " target_ctas=" << schedule.getTargetCtas() << " mma="
     << schedule.getMma() << "\n";
}

/// The first constants of both forms: element types and head counts.
void printTypeConstants(llvm::raw_ostream &os, const AttentionLayer &layer) {
  os << "using act_t = " << cudaType(layer.activation) << ";\n"
     << "using cache_t = " << cudaType(layer.cache) << ";\n"
     << "constexpr int kNumQHeads = " << layer.numQHeads << ";\n"
     << "constexpr int kNumKvHeads = " << layer.numKvHeads << ";\n"
     << "constexpr int kGroupSize = " << layer.groupSize << ";\n";
}

/// The score constants of both forms: the scale, and the window, soft-cap
/// and value scale where the layer has them.
void printScoreConstants(llvm::raw_ostream &os, const AttentionLayer &layer,
                         PagedAttentionOp op, DictionaryAttr emission) {
  os << "// softmax_scale * log2(e): scores live in log2 units (exp2).\n"
     << "constexpr float kScaleLog2 = "
     << floatLiteral(emissionFloat(emission, "scale_log2")) << ";\n";
  if (layer.window)
    os << "constexpr int kSlidingWindow = " << layer.window << ";\n";
  if (layer.softcap > 0)
    os << "constexpr float kSoftcap = " << floatLiteral(layer.softcap) << ";\n"
       << "constexpr float kSoftmaxScale = "
       << floatLiteral(op.getSoftmaxScale().convertToDouble()) << ";\n";
  if (layer.valueScale != 1.0)
    os << "constexpr float kValueScale = " << floatLiteral(layer.valueScale)
       << ";\n";
}

/// The tensor parameters every attention kernel form takes, query .. output
/// (the ABI entries and, below, the CUDA declarations, in the same order).
std::vector<KernelParam> attentionTensorParams(PagedAttentionOp op, OutputGateOp gateOp,
                                               ElementType activation,
                                               ElementType cache) {
  std::vector<KernelParam> params;
  params.push_back(pointerParam("query", activation,
                                abiShape(op.getQuery(), {"num_tokens"})));
  params.push_back(
      pointerParam("k_cache", cache, abiShape(op.getKCache(), {"num_blocks"})));
  params.push_back(
      pointerParam("v_cache", cache, abiShape(op.getVCache(), {"num_blocks"})));
  params.push_back(pointerParam(
      "block_tables", ElementType::I32,
      abiShape(op.getBlockTables(), {"num_seqs", "max_blocks_per_seq"})));
  params.push_back(pointerParam("seq_lens", ElementType::I32,
                                abiShape(op.getSeqLens(), {"num_seqs"})));
  params.push_back(pointerParam(
      "query_start_loc", ElementType::I32,
      abiShape(op.getQueryStartLoc(), {"num_seqs_plus_one"})));
  if (op.getSinks())
    params.push_back(
        pointerParam("sinks", ElementType::F32, abiShape(op.getSinks(), {})));
  if (cache == ElementType::Fp8E4M3) {
    params.push_back(pointerParam("k_scale", ElementType::F32, {}));
    params.push_back(pointerParam("v_scale", ElementType::F32, {}));
  }
  if (gateOp)
    params.push_back(pointerParam("gate", activation,
                                  abiShape(gateOp.getGate(), {"num_tokens"})));
  params.push_back(pointerParam("output", activation,
                                abiShape(op.getOutput(), {"num_tokens"})));
  return params;
}

SmallVector<std::string> attentionTensorSignature(bool sinks, bool fp8, bool gate) {
  SmallVector<std::string> params = {
      "const act_t *__restrict__ query", "const cache_t *__restrict__ k_cache",
      "const cache_t *__restrict__ v_cache",
      "const int *__restrict__ block_tables", "const int *__restrict__ seq_lens",
      "const int *__restrict__ query_start_loc"};
  if (sinks)
    params.push_back("const float *__restrict__ sinks");
  if (fp8) {
    params.push_back("const float *__restrict__ k_scale");
    params.push_back("const float *__restrict__ v_scale");
  }
  if (gate)
    params.push_back("const act_t *__restrict__ gate");
  params.push_back("act_t *__restrict__ output");
  return params;
}

/// The CUDA-core form (one block per query row and KV head): shapes the
/// tensor-core kernel does not take (v_dim_padded above 256, whose output
/// accumulator does not fit a warp's registers).
FailureOr<EmittedKernel> emitReferenceAttention(func::FuncOp function,
                                                PagedAttentionOp op,
                                                OutputGateOp gateOp,
                                                DictionaryAttr emission) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  AttentionLayer layer(function, op, gateOp, emission);
  const std::string &name = layer.name;
  int64_t warps = schedule.getNumWarps();
  bool sinks = layer.sinks, fp8 = layer.fp8, gate = layer.gate;
  int64_t window = layer.window;
  double softcap = layer.softcap, valueScale = layer.valueScale;
  bool causal = layer.causal;

  std::string source;
  llvm::raw_string_ostream os(source);
  printAttentionHeader(os, layer, function, op, emission);
  os << "// This kernel is the reference-quality form: one block per (query "
        "row, KV head),\n// warps stride over the keys, the group's query "
        "heads share each K/V read.\n"
     << "#include \"attnc_device.cuh\"\n\n"
     << "namespace {\n";
  printTypeConstants(os, layer);
  os << "constexpr int kQkHeadDim = " << layer.qkHeadDim << ";\n"
     << "constexpr int kVHeadDim = " << layer.vHeadDim << ";\n"
     << "constexpr int kBlockSize = " << emissionInt(emission, "block_size")
     << ";\n"
     << "constexpr int kWarps = " << warps << ";\n"
     << "constexpr int kQkPerLane = (kQkHeadDim + 31) / 32;\n"
     << "constexpr int kVPerLane = (kVHeadDim + 31) / 32;\n";
  printScoreConstants(os, layer, op, emission);
  os << "} // namespace\n\n";

  SmallVector<std::string> params = attentionTensorSignature(sinks, fp8, gate);
  params.push_back("int num_tokens");
  params.push_back("int num_seqs");
  params.push_back("int max_blocks_per_seq");
  os << "extern \"C\" __global__ void __launch_bounds__(kWarps * 32)\n"
     << name << "(" << llvm::join(params, ",\n    ") << ") {\n"
     << R"(  const int token = blockIdx.x;
  const int kv_head = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (num_seqs <= 0) return; // malformed batch: nothing owns this row

  // The sequence owning this query row: last seq with query_start_loc <= token.
  int lo = 0, hi = num_seqs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (query_start_loc[mid] <= token) lo = mid; else hi = mid - 1;
  }
  const int seq = lo;
  const int q_start = query_start_loc[seq];
  const int q_len = query_start_loc[seq + 1] - q_start;
  const int kv_len = seq_lens[seq];
  // Queries are the last q_len of the kv_len positions.
  const int q_pos = kv_len - q_len + (token - q_start);
)";
  if (causal)
    os << "  const int key_end = min(q_pos + 1, kv_len);\n";
  else
    os << "  const int key_end = kv_len;\n";
  if (window)
    os << "  const int key_begin = max(0, " << (causal ? "q_pos" : "kv_len - 1")
       << " - kSlidingWindow + 1);\n";
  else
    os << "  const int key_begin = 0;\n";
  if (fp8)
    os << "  const float k_dequant = *k_scale, v_dequant = *v_scale;\n";
  os << R"(  float q[kGroupSize][kQkPerLane];
#pragma unroll
  for (int h = 0; h < kGroupSize; ++h)
#pragma unroll
    for (int c = 0; c < kQkPerLane; ++c) {
      const int d = lane + 32 * c;
      q[h][c] = d < kQkHeadDim ? attnc::to_float(query[((long long)token * kNumQHeads +
                                  kv_head * kGroupSize + h) * kQkHeadDim + d]) : 0.0f;
    }
  float m[kGroupSize], l[kGroupSize], acc[kGroupSize][kVPerLane];
#pragma unroll
  for (int h = 0; h < kGroupSize; ++h) {
    m[h] = -attnc::infinity();
    l[h] = 0.0f;
#pragma unroll
    for (int c = 0; c < kVPerLane; ++c) acc[h][c] = 0.0f;
  }
  const int *table = block_tables + (long long)seq * max_blocks_per_seq;
  for (int key = key_begin + warp; key < key_end; key += kWarps) {
    const long long slot = (long long)table[key / kBlockSize] * kBlockSize + key % kBlockSize;
    const cache_t *k_row = k_cache + (slot * kNumKvHeads + kv_head) * kQkHeadDim;
    const cache_t *v_row = v_cache + (slot * kNumKvHeads + kv_head) * kVHeadDim;
    float k[kQkPerLane], v[kVPerLane];
#pragma unroll
    for (int c = 0; c < kQkPerLane; ++c) {
      const int d = lane + 32 * c;
      k[c] = d < kQkHeadDim ? attnc::to_float(k_row[d]))"
     << (fp8 ? " * k_dequant" : "") << R"( : 0.0f;
    }
#pragma unroll
    for (int c = 0; c < kVPerLane; ++c) {
      const int d = lane + 32 * c;
      v[c] = d < kVHeadDim ? attnc::to_float(v_row[d]))"
     << (fp8 ? " * v_dequant" : "") << R"( : 0.0f;
    }
#pragma unroll
    for (int h = 0; h < kGroupSize; ++h) {
      float dot = 0.0f;
#pragma unroll
      for (int c = 0; c < kQkPerLane; ++c) dot += q[h][c] * k[c];
      dot = attnc::warp_sum(dot);
)";
  if (softcap > 0)
    os << "      const float score = kSoftcap * tanhf(dot * kSoftmaxScale / "
          "kSoftcap) * 1.4426950408889634f;\n";
  else
    os << "      const float score = dot * kScaleLog2;\n";
  os << R"(      const float m_new = fmaxf(m[h], score);
      const float correction = exp2f(m[h] - m_new);
      const float p = exp2f(score - m_new);
      l[h] = l[h] * correction + p;
#pragma unroll
      for (int c = 0; c < kVPerLane; ++c) acc[h][c] = acc[h][c] * correction + p * v[c];
      m[h] = m_new;
    }
  }
  // Merge the warps' partial softmax states.
  extern __shared__ float shared[];
  float *shared_m = shared;                              // [kWarps][kGroupSize]
  float *shared_l = shared_m + kWarps * kGroupSize;      // [kWarps][kGroupSize]
  float *shared_acc = shared_l + kWarps * kGroupSize;    // [kWarps][kGroupSize][kVHeadDim]
#pragma unroll
  for (int h = 0; h < kGroupSize; ++h) {
    if (lane == 0) {
      shared_m[warp * kGroupSize + h] = m[h];
      shared_l[warp * kGroupSize + h] = l[h];
    }
#pragma unroll
    for (int c = 0; c < kVPerLane; ++c) {
      const int d = lane + 32 * c;
      if (d < kVHeadDim) shared_acc[(warp * kGroupSize + h) * kVHeadDim + d] = acc[h][c];
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kGroupSize * kVHeadDim; i += kWarps * 32) {
    const int h = i / kVHeadDim, d = i % kVHeadDim;
    const int q_head = kv_head * kGroupSize + h;
    float m_all = -attnc::infinity();
    for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, shared_m[w * kGroupSize + h]);
)";
  if (sinks)
    os << "    // The sink adds one learned logit to the denominator only.\n"
       << "    const float sink = sinks[q_head] * 1.4426950408889634f;\n"
       << "    m_all = fmaxf(m_all, sink);\n";
  os << R"(    float result = 0.0f;
    if (m_all != -attnc::infinity()) {
      float l_all = 0.0f, acc_all = 0.0f;
      for (int w = 0; w < kWarps; ++w) {
        const float weight = exp2f(shared_m[w * kGroupSize + h] - m_all);
        l_all += shared_l[w * kGroupSize + h] * weight;
        acc_all += shared_acc[(w * kGroupSize + h) * kVHeadDim + d] * weight;
      }
)";
  if (sinks)
    os << "      l_all += exp2f(sink - m_all);\n";
  // The largest logit contributes exp2(0) = 1, so l_all >= 1 here; a NaN
  // anywhere in the row stays NaN instead of turning into zeros.
  os << "      result = acc_all / l_all;\n    }\n";
  if (valueScale != 1.0)
    os << "    result *= kValueScale;\n";
  os << "    const long long out = ((long long)token * kNumQHeads + q_head) * "
        "kVHeadDim + d;\n";
  if (gate)
    os << "    result *= attnc::sigmoid(attnc::to_float(gate[out]));\n";
  os << "    output[out] = attnc::from_float<act_t>(result);\n  }\n}\n";

  ElementType activation = abiType(emissionString(emission, "activation"));
  ElementType cache = abiType(emissionString(emission, "cache"));
  KernelAbi abi;
  abi.name = name;
  abi.params = attentionTensorParams(op, gateOp, activation, cache);
  abi.params.push_back(scalarParam("num_tokens", ParamKind::I32));
  abi.params.push_back(scalarParam("num_seqs", ParamKind::I32));
  abi.params.push_back(scalarParam("max_blocks_per_seq", ParamKind::I32));
  abi.block = {static_cast<uint32_t>(warps * 32), 1, 1};
  abi.grid = {GridDimRule::ceilDiv("num_tokens", 1, 1),
              GridDimRule::fixed(layer.numKvHeads), GridDimRule::fixed(1)};
  abi.dynamic_shared_memory_bytes = static_cast<uint32_t>(
      warps * layer.groupSize * (2 + layer.vHeadDim) * sizeof(float));
  return EmittedKernel{name, "attention",
                       layerOf(function),
                       std::move(source), std::move(abi)};
}


/// The wgmma instructions of the wgmma tile for activation type `ptx` ("bf16"
/// or "f16"): WgmmaSS<N> (S = Q K^T, m64 x N x k16, both operands K-major in
/// swizzled shared memory, zeroing the accumulators unless `accumulate`) and
/// WgmmaRS<N> (O += P V, m64 x N x k16, P from registers in the mma.sync A
/// layout per warp, V MN-major in swizzled shared memory: transposed B).
void printWgmmaWrappers(llvm::raw_ostream &os, StringRef ptx, int64_t scoresN,
                        int64_t valuesN) {
  auto registers = [](int64_t count, int64_t first) {
    std::string list;
    for (int64_t i = 0; i < count; ++i)
      list += (i ? "," : "") + ("%" + std::to_string(first + i));
    return list;
  };
  auto outputs = [](int64_t count) {
    std::string list;
    for (int64_t i = 0; i < count; ++i)
      list += std::string(i ? ", " : "") + "\"+f\"(d[" + std::to_string(i / 4) +
              "][" + std::to_string(i % 4) + "])";
    return list;
  };
  int64_t sAcc = scoresN / 2, vAcc = valuesN / 2;
  os << "template <int N> struct WgmmaSS;\n"
     << "template <> struct WgmmaSS<" << scoresN << "> {\n"
     << "  static __device__ __forceinline__ void run(float (&d)[" << scoresN / 8
     << "][4], unsigned long long a, unsigned long long b, int accumulate) {\n"
     << "    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" << sAcc + 2
     << ", 0;\\n\"\n"
     << "                 \"wgmma.mma_async.sync.aligned.m64n" << scoresN << "k16.f32."
     << ptx << "." << ptx << " \"\n"
     << "                 \"{" << registers(sAcc, 0) << "}, %" << sAcc << ", %"
     << sAcc + 1 << ", p, 1, 1, 0, 0;\\n}\\n\"\n"
     << "                 : " << outputs(sAcc) << "\n"
     << "                 : \"l\"(a), \"l\"(b), \"r\"(accumulate));\n  }\n};\n"
     << "template <int N> struct WgmmaRS;\n"
     << "template <> struct WgmmaRS<" << valuesN << "> {\n"
     << "  static __device__ __forceinline__ void run(float (&d)[" << valuesN / 8
     << "][4], const unsigned (&a)[4], unsigned long long b) {\n"
     << "    asm volatile(\"wgmma.mma_async.sync.aligned.m64n" << valuesN
     << "k16.f32." << ptx << "." << ptx << " \"\n"
     << "                 \"{" << registers(vAcc, 0) << "}, {" << registers(4, vAcc)
     << "}, %" << vAcc + 4 << ", 1, 1, 1, 1;\\n\"\n"
     << "                 : " << outputs(vAcc) << "\n"
     << "                 : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), "
        "\"l\"(b));\n  }\n};\n";
}

} // namespace

/// The tensor-core paged attention kernel (mma.sync m16n8k16, and wgmma for
/// tiles of more than 16 rows where the schedule's mma is "wgmma"; fp32
/// accumulators). A block owns one tile of query rows: `block_m` flattened
/// (query token, head) rows of one sequence, `gqa_pack` heads of one KV group
/// per token, so the heads of a group share every K/V tile read. K/V tiles of
/// `block_n` keys stream through a cp.async pipeline of `pipeline_stages`
/// shared-memory buffers, gathered page by page through the block table.
/// Tiles of more than 16 rows give each warp 32 rows (mma.sync) or 16 rows of
/// each of two m64 row blocks (wgmma) against the whole K/V tile; tiles of
/// at most 16 rows (decode) give each warp a quarter of the
/// keys of every K/V tile instead, and the warps' softmax states are merged
/// at the end. Split-KV: grid z splits a tile's keys; each split writes its
/// unnormalised output and softmax state to the workspace, and the last split
/// to finish (an atomic count per tile) merges them.
FailureOr<EmittedKernel> emitAttention(func::FuncOp function,
                                       PagedAttentionOp op, OutputGateOp gateOp) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  FailureOr<DictionaryAttr> prepared = preparedEmission(op, schedule);
  if (failed(prepared))
    return failure();
  DictionaryAttr emission = *prepared;
  StringRef activationName = emissionString(emission, "activation");
  StringRef cacheName = emissionString(emission, "cache");
  bool fp8 = cacheName == "fp8_e4m3";
  int64_t blockM = schedule.getBlockM(), blockN = schedule.getBlockN();
  int64_t warps = schedule.getNumWarps();
  int64_t qkPadded = schedule.getQkDimPadded(), vPadded = schedule.getVDimPadded();
  int64_t stages = schedule.getPipelineStages();
  // The tensor-core form covers what its tiling was chosen for; anything
  // else (wide V heads, a cache in another 16-bit type) takes the reference
  // kernel.
  if (!takesTensorCoreForm(vPadded,
                           activationName == "bf16" || activationName == "fp16",
                           fp8 || cacheName == activationName) ||
      blockM != 32 * warps || blockN != 64 || warps != 4 || stages != 2)
    return emitReferenceAttention(function, op, gateOp, emission);

  AttentionLayer layer(function, op, gateOp, emission);
  const std::string &name = layer.name;
  int64_t numKvHeads = layer.numKvHeads, groupSize = layer.groupSize;
  int64_t qkHeadDim = layer.qkHeadDim, vHeadDim = layer.vHeadDim;
  int64_t pack = schedule.getGqaPack();
  int64_t targetCtas = schedule.getTargetCtas();
  int64_t maxSplits = schedule.getMaxKvSplits();
  // Split partials: base tiles * splits < 2 * target_ctas whenever splits > 1
  // (the launcher's rule), so twice the target bounds the workspace.
  int64_t workspaceTiles =
      attnc::plan::SplitKvLimits{targetCtas, maxSplits}.capacityCtas();
  bool wgmma = schedule.getMma() == "wgmma";
  if (wgmma && (fp8 || cacheName != activationName))
    return op.emitOpError()
           << "schedule mma \"wgmma\" needs a cache of the activation type "
              "(fp8 and other caches take mma.sync), got "
           << cacheName << " for " << activationName;
  int64_t sharedBytes = attentionSharedBytes(qkPadded, vPadded, blockM, blockN,
                                             stages, maxSplits, fp8, wgmma);
  int64_t cacheBytes = fp8 ? 1 : 2;
  int64_t workspaceFloats = attnc::plan::attentionWorkspaceFloats(
      attnc::plan::SplitKvLimits{targetCtas, maxSplits}, blockM, vPadded);
  bool sinks = layer.sinks, gate = layer.gate, causal = layer.causal;
  int64_t window = layer.window;
  double softcap = layer.softcap, valueScale = layer.valueScale;
  // The factor that puts a row's running max m in log2 units (soft-capped
  // scores are in those units already).
  std::string mScale = softcap > 0 ? "1.0f" : "a.score_scale";

  std::string source;
  llvm::raw_string_ostream os(source);
  printAttentionHeader(os, layer, function, op, emission);
  os << (wgmma ? "// Tensor-core form: wgmma m64nNk16 (sm_90a) for tiles of more "
                 "than 16 rows, mma.sync m16n8k16\n// for tiles of at most 16 "
                 "rows, "
               : "// Tensor-core form: mma.sync m16n8k16 with ")
     << "fp32 accumulators, K/V tiles gathered\n// through the block table "
        "by a cp.async pipeline, split-KV merged by the last split.\n"
     << "#include \"attnc_device.cuh\"\n\n"
     << "namespace {\n";
  printTypeConstants(os, layer);
  os << "constexpr int kPack = " << pack
     << "; // query heads of one KV group per tile row group\n"
     << "constexpr int kPacksPerGroup = kGroupSize / kPack;\n"
     << "constexpr int kQkHeadDim = " << qkHeadDim << ";\n"
     << "constexpr int kVHeadDim = " << vHeadDim << ";\n"
     << "constexpr int kQkPad = " << qkPadded << ";\n"
     << "constexpr int kVPad = " << vPadded << ";\n"
     << "constexpr int kBlockSize = " << emissionInt(emission, "block_size")
     << ";\n"
     << "constexpr int kWarps = " << warps << ";\n"
     << "constexpr int kThreads = kWarps * 32;\n"
     << "constexpr int kBlockM = " << blockM << ";\n"
     << "constexpr int kBlockN = " << blockN << ";\n"
     << "constexpr int kStages = " << stages << ";\n"
     << "constexpr int kMaxSplits = " << maxSplits << ";\n"
     << "constexpr int kTargetCtas = " << targetCtas << ";\n"
     << "constexpr int kWorkspaceTiles = " << workspaceTiles << ";\n"
     << "// Batches of up to kSeqLookupThreads * kThreads sequences find a tile's\n"
     << "// owner with one parallel pass (else a binary search).\n"
     << "constexpr int kSeqLookupThreads = 4;\n";
  printScoreConstants(os, layer, op, emission);
  os << R"(
// Shared memory. Row strides are padded by 16 bytes so that the 8 rows an
// ldmatrix reads fall in distinct banks.
constexpr int kQStride = kQkPad + 8;  // elements of act_t
constexpr int kKStride = kQkPad + 8;
constexpr int kVStride = kVPad + 8;
constexpr int kOStride = kVPad + 8;   // floats (merge area)
constexpr int kKBytes = kBlockN * kKStride * 2;  // one 16-bit K / V tile
constexpr int kVBytes = kBlockN * kVStride * 2;
)";
  if (fp8)
    os << R"(// fp8 tiles land raw (bytes), then widen into 16-bit tiles for the MMA.
constexpr bool kWiden = true;
constexpr int kKRawStride = kQkPad + 16;  // bytes
constexpr int kVRawStride = kVPad + 16;
constexpr int kKLandBytes = kBlockN * kKRawStride;
constexpr int kVLandBytes = kBlockN * kVRawStride;
)";
  else
    os << R"(constexpr bool kWiden = false;
constexpr int kKLandBytes = kKBytes;
constexpr int kVLandBytes = kVBytes;
)";
  os << R"(// The Q tile of more than 16 rows (mma.sync: rows padded like K).
constexpr int kQBytes = kBlockM * kQStride * 2;
// Tiles of at most 16 rows: a 16-row Q tile, then kStages K/V tiles as landed,
// then the widened pair.
constexpr int kDecodeQBytes = 16 * kQStride * 2;
constexpr int kRingBytes = kDecodeQBytes + kStages * (kKLandBytes + kVLandBytes) + (kWiden ? kKBytes + kVBytes : 0);
// After the key loop everything above is reused: the warps' merge area, or
// the split merge's statistics.
constexpr int kMergeBytes = 4 * kBlockM * (kOStride + 5);
constexpr int kSplitBytes = 4 * (2 * kMaxSplits * kBlockM + 2 * kBlockM);
)";
  if (wgmma)
    os << R"(// Tiles of more than 16 rows by wgmma: the Q tile, two K tiles and one V
// tile in 128-byte swizzled rows (1024-byte-aligned atoms, see wgmma_tile).
constexpr int kWQBytes = kBlockM * kQkPad * 2;
constexpr int kWKBytes = kBlockN * kQkPad * 2;
constexpr int kWVBytes = kBlockN * kVPad * 2;
constexpr int kWgmmaBytes = kWQBytes + 2 * kWKBytes + kWVBytes;
static_assert(kWQBytes % 1024 == 0 && kWKBytes % 1024 == 0, "swizzle atoms stay aligned");
static_assert(kThreads == 128 && kBlockM == 128, "one warpgroup, two m64 row blocks");
static_assert(kQkPad % 64 == 0 && kVPad % 64 == 0 && kVPad <= 256 && kBlockN % 16 == 0 && kBlockN <= 256,
              "wgmma shapes");
constexpr int kLoopBytes = kWgmmaBytes > kRingBytes ? kWgmmaBytes : kRingBytes;
)";
  else
    os << R"(// Tiles of more than 16 rows by mma.sync: the Q tile, then one K and one V
// buffer (staggered, see attention_tile), then the fp8 landing buffers.
constexpr int kStaggeredBytes = kQBytes + kKBytes + kVBytes + (kWiden ? kKLandBytes + kVLandBytes : 0);
constexpr int kLoopBytes = kStaggeredBytes > kRingBytes ? kStaggeredBytes : kRingBytes;
)";
  os << R"(constexpr int kAfterBytes = kMergeBytes > kSplitBytes ? kMergeBytes : kSplitBytes;
constexpr int kFrontBytes = kLoopBytes > kAfterBytes ? kLoopBytes : kAfterBytes;
// Then the slots of three tiles' keys, the split merge's flag and the
// tile's sequence (the kernel has no static shared memory).
constexpr int kSlotOffset = (kFrontBytes + 15) / 16 * 16;
constexpr int kSplitFlagOffset = kSlotOffset + 3 * kBlockN * 4;
constexpr int kOwnerOffset = kSplitFlagOffset + 16;
constexpr int kSharedBytes = kOwnerOffset + 16;
static_assert(kSharedBytes == )" << sharedBytes << R"(, "the launch's dynamic shared memory");
// Rows copied as 16-byte chunks where a row is a whole number of them
// (else element by element).
constexpr bool kQVector = )" << boolLiteral(qkHeadDim * 2 % 16 == 0) << R"(;
constexpr bool kKVector = )" << boolLiteral(qkHeadDim * cacheBytes % 16 == 0) << R"(;
constexpr bool kVVector = )" << boolLiteral(vHeadDim * cacheBytes % 16 == 0) << R"(;
static_assert(kQVector == ((kQkHeadDim * 2) % 16 == 0) &&
              kKVector == ((kQkHeadDim * int(sizeof(cache_t))) % 16 == 0) &&
              kVVector == ((kVHeadDim * int(sizeof(cache_t))) % 16 == 0), "copy widths");
constexpr int kCacheChunk = 16 / int(sizeof(cache_t));  // elements per chunk

struct Args {
  const act_t *__restrict__ query;
  const cache_t *__restrict__ k_cache;
  const cache_t *__restrict__ v_cache;
  const int *__restrict__ block_tables;
)";
  if (sinks)
    os << "  const float *__restrict__ sinks;\n";
  if (gate)
    os << "  const act_t *__restrict__ gate;\n";
  os << R"(  act_t *__restrict__ output;
  float *__restrict__ workspace;
  int max_blocks_per_seq;
  float score_scale;  // log2 units per raw q.k)";
  if (fp8)
    os << " (times k_scale)";
  os << "\n  float out_scale;    // value_scale";
  if (fp8)
    os << " times v_scale";
  os << R"(
};

/// Which keys row `pos` (a query position) attends: [begin, end).
__device__ __forceinline__ int row_key_begin(int pos, int kv_len) {
)";
  if (window)
    os << "  return max(0, " << (causal ? "pos" : "kv_len - 1")
       << " - kSlidingWindow + 1);\n";
  else
    os << "  return 0;\n";
  os << R"(}
__device__ __forceinline__ int row_key_end(int pos, int kv_len) {
)";
  if (causal)
    os << "  return min(pos + 1, kv_len);\n";
  else
    os << "  return kv_len;\n";
  os << R"(}

/// Copies the rows of one K or V tile whose 16-byte chunks tile the row
/// (kDim * sizeof(cache_t) a multiple of 16). Each thread keeps one chunk
/// column and walks the keys kThreads / kChunks apart, so the per-copy work
/// is a slot read, one multiply-add and the copy (keys whose slot is -1 are
/// zero-filled and read nothing).
template <int kDim, int kRowBytes>
__device__ __forceinline__ void copy_rows(const cache_t *cache, int kv_head, const int *slots,
                                          unsigned char *dst) {
  constexpr int kChunks = kDim >= kCacheChunk ? kDim / kCacheChunk : 1;  // (checked even when unused)
  constexpr int kKeysPerPass = kThreads / kChunks;
  constexpr int kPasses = (kBlockN + kKeysPerPass - 1) / kKeysPerPass;
  const int chunk = threadIdx.x % kChunks, key0 = threadIdx.x / kChunks;
  if (key0 >= kKeysPerPass) return;  // the kThreads % kChunks spare threads
  const cache_t *src = cache + (long long)kv_head * kDim + chunk * kCacheChunk;
  unsigned char *out = dst + key0 * kRowBytes + chunk * 16;
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int key = key0 + p * kKeysPerPass;
    if (kBlockN % kKeysPerPass != 0 && key >= kBlockN) break;
    const int slot = slots[key];
    attnc::cp_async_16(out + p * kKeysPerPass * kRowBytes,
                       src + (long long)max(slot, 0) * (kNumKvHeads * kDim), slot >= 0);
  }
}

/// Issue the copies of one K (V) tile into rows of its landing layout (keys
/// whose slot is -1 are zero-filled).
__device__ __forceinline__ void load_k_tile(const Args &a, int kv_head, const int *slots,
                                            unsigned char *dst) {
  constexpr int kRowBytes = )"
     << (fp8 ? "kKRawStride" : "kKStride * 2") << R"(;
  if constexpr (kKVector) {
    copy_rows<kQkHeadDim, kRowBytes>(a.k_cache, kv_head, slots, dst);
  } else {
    for (int c = threadIdx.x; c < kBlockN * kQkHeadDim; c += kThreads) {
      const int key = c / kQkHeadDim, col = c % kQkHeadDim;
      const int slot = slots[key];
      reinterpret_cast<cache_t *>(dst + key * kRowBytes)[col] =
          slot >= 0 ? a.k_cache[((long long)slot * kNumKvHeads + kv_head) * kQkHeadDim + col]
                    : attnc::from_float<cache_t>(0.0f);
    }
  }
}
__device__ __forceinline__ void load_v_tile(const Args &a, int kv_head, const int *slots,
                                            unsigned char *dst) {
  constexpr int kRowBytes = )"
     << (fp8 ? "kVRawStride" : "kVStride * 2") << R"(;
  if constexpr (kVVector) {
    copy_rows<kVHeadDim, kRowBytes>(a.v_cache, kv_head, slots, dst);
  } else {
    for (int c = threadIdx.x; c < kBlockN * kVHeadDim; c += kThreads) {
      const int key = c / kVHeadDim, col = c % kVHeadDim;
      const int slot = slots[key];
      reinterpret_cast<cache_t *>(dst + key * kRowBytes)[col] =
          slot >= 0 ? a.v_cache[((long long)slot * kNumKvHeads + kv_head) * kVHeadDim + col]
                    : attnc::from_float<cache_t>(0.0f);
    }
  }
}
)";
  if (fp8)
    os << R"(
/// Widens a raw fp8 tile (rows of `raw_stride` bytes) into act_t rows of
/// `stride` elements, `cols` (a multiple of 8) columns; exact for e4m3.
__device__ __forceinline__ void widen_tile(const unsigned char *raw, int raw_stride,
                                           act_t *dst, int stride, int cols) {
  const int chunks = cols / 8;
  for (int c = threadIdx.x; c < kBlockN * chunks; c += kThreads) {
    const int key = c / chunks, col = c % chunks * 8;
    const uint2 bytes = *reinterpret_cast<const uint2 *>(raw + key * raw_stride + col);
    const __nv_fp8_e4m3 *e = reinterpret_cast<const __nv_fp8_e4m3 *>(&bytes);
    uint4 out;
    out.x = attnc::pack2<act_t>(float(e[0]), float(e[1]));
    out.y = attnc::pack2<act_t>(float(e[2]), float(e[3]));
    out.z = attnc::pack2<act_t>(float(e[4]), float(e[5]));
    out.w = attnc::pack2<act_t>(float(e[6]), float(e[7]));
    *reinterpret_cast<uint4 *>(dst + key * stride + col) = out;
  }
}
)";
  os << R"(
/// The slot of key `key` of a sequence, or -1 past its end.
__device__ __forceinline__ int key_slot(const int *table, int key, int kv_len) {
  return key < kv_len ? table[key / kBlockSize] * kBlockSize + key % kBlockSize : -1;
}

/// The finished value of output element (row, d) from its unnormalised
/// accumulator `acc` and the row's softmax max `m` (log2 units) and sum `l`.
__device__ __forceinline__ void write_output(const Args &a, float acc, float m, float l,
                                             int token, int head, int d) {
)";
  if (sinks)
    os << R"(  // The sink adds one learned logit to the denominator only.
  const float sink = a.sinks[head] * 1.4426950408889634f;
  const float m_all = fmaxf(m, sink);
  const float weight = m == -attnc::infinity() ? 0.0f : exp2f(m - m_all);
  float result = acc * weight / (l * weight + exp2f(sink - m_all));
)";
  else
    os << R"(  // A row that saw no key (m = -inf) is 0; the largest logit contributes
  // exp2(0) = 1, so l >= 1 otherwise, and a NaN anywhere stays NaN.
  float result = m == -attnc::infinity() ? 0.0f : acc / l;
)";
  if (valueScale != 1.0 || fp8)
    os << "  result *= a.out_scale;\n";
  os << "  const long long out = ((long long)token * kNumQHeads + head) * "
        "kVHeadDim + d;\n";
  if (gate)
    os << "  result *= attnc::sigmoid(attnc::to_float(a.gate[out]));\n";
  os << R"(  a.output[out] = attnc::from_float<act_t>(result);
}

/// S += Q K^T for the warp's MT x 16 rows and kNPerWarp keys of the K tile
/// k_t (rows of kKStride), Q from registers (qf) or shared memory (q_s).
template <int MT, int kNPerWarp, bool kQInRegisters, int kQf>
__device__ __forceinline__ void scores(float (&s)[MT][kNPerWarp / 8][4], const unsigned (&qf)[kQf][4],
                                       const act_t *q_s, const act_t *k_t, int q_row0, int key0) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int n = 0; n < kNPerWarp / 8; ++n)
      s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.0f;
#pragma unroll
  for (int ks = 0; ks < kQkPad / 16; ++ks) {
    unsigned qa[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      if constexpr (kQInRegisters) {
#pragma unroll
        for (int j = 0; j < 4; ++j) qa[mt][j] = qf[ks][j];
      } else {
        attnc::ldmatrix_x4(qa[mt], q_s + (q_row0 + mt * 16 + lane % 8 + (lane / 8) % 2 * 8) * kQStride + ks * 16 + lane / 16 * 8);
      }
    }
#pragma unroll
    for (int np = 0; np < kNPerWarp / 16; ++np) {
      unsigned kb[4];
      attnc::ldmatrix_x4(kb, k_t + (key0 + np * 16 + lane % 8 + lane / 16 * 8) * kKStride + ks * 16 + (lane / 8) % 2 * 8);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        attnc::mma_16816<act_t>(s[mt][2 * np], qa[mt], kb[0], kb[1]);
        attnc::mma_16816<act_t>(s[mt][2 * np + 1], qa[mt], kb[2], kb[3]);
      }
    }
  }
}

/// O += P V for the warp's rows; the score accumulators are P's A fragments.
template <int MT, int kNPerWarp>
__device__ __forceinline__ void accumulate(float (&o)[MT][kVPad / 8][4], const float (&s)[MT][kNPerWarp / 8][4],
                                           const act_t *v_t, int key0) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kk = 0; kk < kNPerWarp / 16; ++kk) {
    unsigned pa[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      pa[mt][0] = attnc::pack2<act_t>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
      pa[mt][1] = attnc::pack2<act_t>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
      pa[mt][2] = attnc::pack2<act_t>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
      pa[mt][3] = attnc::pack2<act_t>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    }
#pragma unroll
    for (int dp = 0; dp < kVPad / 16; ++dp) {
      unsigned vb[4];
      attnc::ldmatrix_x4_trans(vb, v_t + (key0 + kk * 16 + lane % 8 + (lane / 8) % 2 * 8) * kVStride + dp * 16 + lane / 16 * 8);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        attnc::mma_16816<act_t>(o[mt][2 * dp], pa[mt], vb[0], vb[1]);
        attnc::mma_16816<act_t>(o[mt][2 * dp + 1], pa[mt], vb[2], vb[3]);
      }
    }
  }
}

/// Masks and exponentiates one tile's scores (online softmax): on return s
/// holds P, m the running max (in the scores' units) and l the thread's
/// partial sums; O is rescaled to the new max.
template <int MT, int kNTiles>
__device__ __forceinline__ void softmax_step(float (&s)[MT][kNTiles][4], float (&m)[MT][2], float (&l)[MT][2],
                                             float (&o)[MT][kVPad / 8][4], const Args &a,
                                             const int (&row_begin)[MT][2], const int (&row_end)[MT][2],
                                             bool masked, int key0) {
  const int t = threadIdx.x % 4;
)";
  if (softcap > 0)
    os << R"(  // Soft-capped scores are put in log2 units first (tanh does not commute
  // with the scale), so the exponent's scale is 1.
  const float scale = 1.0f;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int n = 0; n < kNTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[mt][n][e] = kSoftcap * tanhf(s[mt][n][e] * a.score_scale) * 1.4426950408889634f;
)";
  else
    os << R"(  // The scores stay raw: the softmax scale (log2 units) folds into the
  // exponent's multiply-add.
  const float scale = a.score_scale;
)";
  os << R"(  if (masked) {  // keys outside a row's range are -inf
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int n = 0; n < kNTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = key0 + n * 8 + 2 * t + (e & 1);
          if (key < row_begin[mt][e / 2] || key >= row_end[mt][e / 2]) s[mt][n][e] = -attnc::infinity();
        }
  }
  float correction[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      // Pairwise (tree) reductions: short dependency chains.
      float mxs[kNTiles];
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) mxs[n] = fmaxf(s[mt][n][2 * i], s[mt][n][2 * i + 1]);
#pragma unroll
      for (int w = 1; w < kNTiles; w *= 2)
#pragma unroll
        for (int n = 0; n + w < kNTiles; n += 2 * w) mxs[n] = fmaxf(mxs[n], mxs[n + w]);
      float mx = mxs[0];
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m[mt][i], mx);
      const float m_scaled = m_new == -attnc::infinity() ? 0.0f : m_new * scale;
      correction[mt][i] = attnc::fast_exp2(m[mt][i] * scale - m_scaled);
      m[mt][i] = m_new;
      float sums[kNTiles];
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
        s[mt][n][2 * i] = attnc::fast_exp2(fmaf(s[mt][n][2 * i], scale, -m_scaled));
        s[mt][n][2 * i + 1] = attnc::fast_exp2(fmaf(s[mt][n][2 * i + 1], scale, -m_scaled));
        sums[n] = s[mt][n][2 * i] + s[mt][n][2 * i + 1];
      }
#pragma unroll
      for (int w = 1; w < kNTiles; w *= 2)
#pragma unroll
        for (int n = 0; n + w < kNTiles; n += 2 * w) sums[n] += sums[n + w];
      l[mt][i] = l[mt][i] * correction[mt][i] + sums[0];
    }
  // Unconditional rescale: straight-line code from the exponentials into
  // the P V products lets the compiler interleave them.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int d = 0; d < kVPad / 8; ++d) {
      o[mt][d][0] *= correction[mt][0];
      o[mt][d][1] *= correction[mt][0];
      o[mt][d][2] *= correction[mt][1];
      o[mt][d][3] *= correction[mt][1];
    }
}

/// NaN in every output element of the tile's rows (written by split 0): what
/// a launch the kernel cannot serve produces instead of a wrong result.
__device__ __forceinline__ void poison_rows(const Args &a, int rows, int row0, int q_start, int head0) {
  if (blockIdx.z != 0)
    return;
  for (int e = threadIdx.x; e < rows * kVHeadDim; e += kThreads) {
    const int r = e / kVHeadDim, d = e % kVHeadDim, f = row0 + r;
    a.output[((long long)(q_start + f / kPack) * kNumQHeads + head0 + f % kPack) * kVHeadDim + d] =
        attnc::from_float<act_t>(__int_as_float(0x7fc00000));
  }
}

/// The key tiles of this block's split of a tile of `rows` rows from row0
/// (queries at positions first_pos + row / kPack), and the keys every row of
/// the tile attends, [full_begin, full_end), where no mask is needed.
struct SplitKeys {
  int full_begin, full_end, first_tile, tiles;
};
__device__ __forceinline__ SplitKeys split_keys(int row0, int rows, int first_pos, int kv_len) {
  const int pos_first = first_pos + row0 / kPack;
  const int pos_last = first_pos + (row0 + rows - 1) / kPack;
  const int key_begin = row_key_begin(pos_first, kv_len);
  const int key_end = row_key_end(pos_last, kv_len);
  const int tile_first = key_begin / kBlockN;
  const int tiles = key_end > key_begin ? (key_end + kBlockN - 1) / kBlockN - tile_first : 0;
  // Balanced: the first tiles % splits splits take one tile more.
  const int splits = gridDim.z, split = blockIdx.z;
  SplitKeys keys;
  keys.full_begin = row_key_begin(pos_last, kv_len);
  keys.full_end = row_key_end(pos_first, kv_len);
  keys.tiles = tiles / splits + (split < tiles % splits ? 1 : 0);
  keys.first_tile = tile_first + split * (tiles / splits) + min(split, tiles % splits);
  return keys;
}

/// Stores a warp's softmax state after the key loop into the merge area:
/// o_s [WN][kTileRows][kOStride], then m (times m_scale: log2 units) and l
/// per (WN, row); the thread's rows are row_base + mt * row_step + lane / 4
/// (+ 8).
template <int MT, int kTileRows>
__device__ __forceinline__ void store_state(const float (&o)[MT][kVPad / 8][4], const float (&m)[MT][2],
                                            const float (&l)[MT][2], unsigned char *smem, int wn,
                                            int row_base, int row_step, float m_scale) {
  float *o_s = reinterpret_cast<float *>(smem);
  float *m_s = o_s + kBlockM * kOStride;
  float *l_s = m_s + kBlockM;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const float mi = m[mt][i] * m_scale;
      float li = l[mt][i];
      li += __shfl_xor_sync(0xffffffffu, li, 1);
      li += __shfl_xor_sync(0xffffffffu, li, 2);
      const int r = row_base + mt * row_step + g + 8 * i;
#pragma unroll
      for (int d = 0; d < kVPad / 8; ++d)
        *reinterpret_cast<float2 *>(o_s + (wn * kTileRows + r) * kOStride + d * 8 + 2 * t) =
            make_float2(o[mt][d][2 * i], o[mt][d][2 * i + 1]);
      if (t == 0) {
        m_s[wn * kTileRows + r] = mi;
        l_s[wn * kTileRows + r] = li;
      }
    }
}

template <int WN, int kTileRows>
__device__ __forceinline__ void tile_epilogue(const Args &a, unsigned char *smem, int rows, int row0,
                                              int q_start, int head0);

/// One tile of `rows` query rows (flattened (token, head) rows row0.. of the
/// sequence): WM warps along the rows with MT m16 tiles each, kWarps / WM
/// warps along the keys of every K/V tile.
///  - WM = 1 (at most 16 rows, decode): each warp takes a quarter of every
///    K/V tile; whole K/V tiles are double-buffered (kStages), the next
///    one loading while this one is used.
///  - WM = kWarps, MT = 2 (up to kBlockM rows): one K and one V buffer,
///    staggered as in FlashAttention-2: V_j loads while S_j = Q K_j^T and
///    its softmax run, K_{j+1} while O += P_j V_j runs.
template <int WM, int MT>
__device__ __forceinline__ void attention_tile(const Args &a, int seq, int q_start, int q_len,
                                               int kv_len, int row0, int rows,
                                               unsigned char *smem) {
  constexpr int WN = kWarps / WM;
  constexpr int kTileRows = 16 * MT * WM;
  constexpr int kNPerWarp = kBlockN / WN;
  constexpr int kNTiles = kNPerWarp / 8;
  constexpr bool kStaggered = WM > 1;
  static_assert(kTileRows <= kBlockM, "tile rows");
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp % WM, wn = warp / WM;
  const int g = lane / 4;
  const int kv_head = blockIdx.y / kPacksPerGroup;
  const int head0 = kv_head * kGroupSize + blockIdx.y % kPacksPerGroup * kPack;
  const int first_pos = kv_len - q_len;  // the queries are the last q_len positions

  act_t *q_s = reinterpret_cast<act_t *>(smem);
  unsigned char *kv = smem + (kStaggered ? kQBytes : kDecodeQBytes);
  int *slot_s = reinterpret_cast<int *>(smem + kSlotOffset);  // [2][kBlockN]

  // Padded q/k head-dim columns must be 0 (they enter every dot product);
  // rows past `rows` and V's padding only reach output rows and columns
  // that are never written, and keys past the end are zero-filled per tile.
  if constexpr (kQkHeadDim != kQkPad || !kQVector || !kKVector) {
    for (int i = tid; i < kSlotOffset / 16; i += kThreads)
      reinterpret_cast<uint4 *>(smem)[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
  }

  // Q rows of this tile (committed with the first K/V copies).
  if constexpr (kQVector) {
    constexpr int kChunks = kQkHeadDim >= 8 ? kQkHeadDim / 8 : 1;
    for (int c = tid; c < rows * kChunks; c += kThreads) {
      const int r = c / kChunks, col = c % kChunks * 8;
      const int f = row0 + r;
      const act_t *src = a.query + ((long long)(q_start + f / kPack) * kNumQHeads + head0 + f % kPack) * kQkHeadDim + col;
      attnc::cp_async_16(q_s + r * kQStride + col, src, true);
    }
  } else {
    for (int c = tid; c < rows * kQkHeadDim; c += kThreads) {
      const int r = c / kQkHeadDim, col = c % kQkHeadDim;
      const int f = row0 + r;
      q_s[r * kQStride + col] = a.query[((long long)(q_start + f / kPack) * kNumQHeads + head0 + f % kPack) * kQkHeadDim + col];
    }
  }

  // This split's key tiles, and the keys every row attends (no mask).
  const SplitKeys keys = split_keys(row0, rows, first_pos, kv_len);
  const int full_begin = keys.full_begin, full_end = keys.full_end;
  const int my_first = keys.first_tile, my_tiles = keys.tiles;

  // The rows this thread holds in the MMA layout, and their key ranges.
  const int q_row0 = wm * 16 * MT;
  int row_begin[MT][2], row_end[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = q_row0 + mt * 16 + g + 8 * i;
      const int pos = first_pos + (row0 + r) / kPack;
      row_begin[mt][i] = r < rows ? row_key_begin(pos, kv_len) : 0;
      row_end[mt][i] = r < rows ? row_key_end(pos, kv_len) : 0;
    }

  float o[MT][kVPad / 8][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int d = 0; d < kVPad / 8; ++d)
      o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.0f;
  float m[MT][2], l[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
    m[mt][0] = m[mt][1] = -attnc::infinity(), l[mt][0] = l[mt][1] = 0.0f;
  const int key0 = wn * kNPerWarp;  // this warp's keys within a tile
  const int *table = a.block_tables + (long long)seq * a.max_blocks_per_seq;
  float s[MT][kNTiles][4];

  if constexpr (kStaggered) {
    act_t *k_t = reinterpret_cast<act_t *>(kv);
    act_t *v_t = reinterpret_cast<act_t *>(kv + kKBytes);
    unsigned char *k_land = kWiden ? kv + kKBytes + kVBytes : kv;
    unsigned char *v_land = kWiden ? k_land + kKLandBytes : kv + kKBytes;
    const unsigned qf[1][4] = {{0u, 0u, 0u, 0u}};  // Q stays in shared memory
    if (tid < kBlockN)
      slot_s[tid] = my_tiles > 0 ? key_slot(table, my_first * kBlockN + tid, kv_len) : -1;
    __syncthreads();
    if (my_tiles > 0)
      load_k_tile(a, kv_head, slot_s, k_land);
    attnc::cp_async_commit();
    for (int it = 0; it < my_tiles; ++it) {
      const int *slots = slot_s + it % 2 * kBlockN;
      attnc::cp_async_wait<0>();
      __syncthreads();  // K_it (and Q) landed; every warp is done with V_{it-1}
      load_v_tile(a, kv_head, slots, v_land);
      attnc::cp_async_commit();
      if (tid < kBlockN)
        slot_s[(it + 1) % 2 * kBlockN + tid] =
            it + 1 < my_tiles ? key_slot(table, (my_first + it + 1) * kBlockN + tid, kv_len) : -1;
)" << (fp8 ? R"(      widen_tile(k_land, kKRawStride, k_t, kKStride, kQkPad);
      __syncthreads();
)" : "") << R"(      const int tile_key = (my_first + it) * kBlockN;
      scores<MT, kNPerWarp, false, 1>(s, qf, q_s, k_t, q_row0, key0);
      softmax_step<MT, kNTiles>(s, m, l, o, a, row_begin, row_end,
                                tile_key < full_begin || tile_key + kBlockN > full_end, tile_key + key0);
      attnc::cp_async_wait<0>();
      __syncthreads();  // V_it landed; every warp is done with K_it
      if (it + 1 < my_tiles)
        load_k_tile(a, kv_head, slot_s + (it + 1) % 2 * kBlockN, k_land);
      attnc::cp_async_commit();
)" << (fp8 ? R"(      widen_tile(v_land, kVRawStride, v_t, kVStride, kVPad);
      __syncthreads();
)" : "") << R"(      accumulate<MT, kNPerWarp>(o, s, v_t, key0);
    }
  } else {
    if (tid < kBlockN) {
#pragma unroll
      for (int st = 0; st < kStages; ++st)
        slot_s[st * kBlockN + tid] =
            st < my_tiles ? key_slot(table, (my_first + st) * kBlockN + tid, kv_len) : -1;
    }
    __syncthreads();
    attnc::cp_async_commit();  // the Q group
    // Every stage is filled before the loop, and a stage is refilled as soon
    // as its tile is used: while the block waits for tile it, the tiles up
    // to it + kStages - 1 are in flight (kStages tiles, not kStages - 1).
#pragma unroll
    for (int st = 0; st < kStages; ++st) {
      if (st < my_tiles) {
        unsigned char *stage = kv + st * (kKLandBytes + kVLandBytes);
        load_k_tile(a, kv_head, slot_s + st * kBlockN, stage);
        load_v_tile(a, kv_head, slot_s + st * kBlockN, stage + kKLandBytes);
      }
      attnc::cp_async_commit();
    }
    // The warp's Q rows as A fragments, held for the whole key loop.
    attnc::cp_async_wait<kStages>();
    __syncthreads();
    unsigned qf[kQkPad / 16][4];
#pragma unroll
    for (int ks = 0; ks < kQkPad / 16; ++ks)
      attnc::ldmatrix_x4(qf[ks], q_s + (lane % 8 + (lane / 8) % 2 * 8) * kQStride + ks * 16 + lane / 16 * 8);
    for (int it = 0; it < my_tiles; ++it) {
      attnc::cp_async_wait<kStages - 1>();
      __syncthreads();  // tile it landed
      // The slots of tile it + kStages: loaded now, stored after this tile's
      // math, so the block-table read overlaps it.
      int refill_slot = -1;
      if (tid < kBlockN && it + kStages < my_tiles)
        refill_slot = key_slot(table, (my_first + it + kStages) * kBlockN + tid, kv_len);
      unsigned char *stage = kv + it % kStages * (kKLandBytes + kVLandBytes);
      const act_t *k_t = reinterpret_cast<const act_t *>(stage);
      const act_t *v_t = reinterpret_cast<const act_t *>(stage + kKLandBytes);
)" << (fp8 ? R"(      act_t *k_w = reinterpret_cast<act_t *>(kv + kStages * (kKLandBytes + kVLandBytes));
      act_t *v_w = k_w + kBlockN * kKStride;
      widen_tile(stage, kKRawStride, k_w, kKStride, kQkPad);
      widen_tile(stage + kKLandBytes, kVRawStride, v_w, kVStride, kVPad);
      __syncthreads();
      k_t = k_w;
      v_t = v_w;
)" : "") << R"(      const int tile_key = (my_first + it) * kBlockN;
      scores<MT, kNPerWarp, true, kQkPad / 16>(s, qf, q_s, k_t, 0, key0);
      softmax_step<MT, kNTiles>(s, m, l, o, a, row_begin, row_end,
                                tile_key < full_begin || tile_key + kBlockN > full_end, tile_key + key0);
      accumulate<MT, kNPerWarp>(o, s, v_t, key0);
      if (tid < kBlockN)
        slot_s[it % kStages * kBlockN + tid] = refill_slot;
      __syncthreads();  // every warp is done with tile it's stage
      if (it + kStages < my_tiles) {
        load_k_tile(a, kv_head, slot_s + it % kStages * kBlockN, stage);
        load_v_tile(a, kv_head, slot_s + it % kStages * kBlockN, stage + kKLandBytes);
      }
      attnc::cp_async_commit();
    }
  }
  attnc::cp_async_wait<0>();
  __syncthreads();  // Q and the K/V buffers become the merge area
  store_state<MT, kTileRows>(o, m, l, smem, wn, q_row0, 16, )" << mScale << R"();
  tile_epilogue<WN, kTileRows>(a, smem, rows, row0, q_start, head0);
}

/// After the key loop: merges the warps' states (WN of them along the keys)
/// into rows, then writes the output, or with split-KV this split's partial
/// state, the last split merging them all.
template <int WN, int kTileRows>
__device__ __forceinline__ void tile_epilogue(const Args &a, unsigned char *smem, int rows, int row0,
                                              int q_start, int head0) {
  const int tid = threadIdx.x;
  unsigned char *pipe = smem;
  float *o_s = reinterpret_cast<float *>(pipe);
  float *m_s = o_s + kBlockM * kOStride;
  float *l_s = m_s + kBlockM;
  float *w_s = l_s + kBlockM;       // [WN][kTileRows] merge weights
  float *row_m = w_s + kBlockM;     // [kTileRows]
  float *row_l = row_m + kBlockM;
  __syncthreads();
  for (int r = tid; r < kTileRows; r += kThreads) {
    float mm = -attnc::infinity();
#pragma unroll
    for (int w = 0; w < WN; ++w) mm = fmaxf(mm, m_s[w * kTileRows + r]);
    const float mu = mm == -attnc::infinity() ? 0.0f : mm;
    float ll = 0.0f;
#pragma unroll
    for (int w = 0; w < WN; ++w) {
      const float weight = exp2f(m_s[w * kTileRows + r] - mu);
      w_s[w * kTileRows + r] = weight;
      ll += l_s[w * kTileRows + r] * weight;
    }
    row_m[r] = mm;
    row_l[r] = ll;
  }
  __syncthreads();

  const int splits_total = gridDim.z;
  if (splits_total == 1) {
    for (int e = tid; e < rows * kVHeadDim; e += kThreads) {
      const int r = e / kVHeadDim, d = e % kVHeadDim;
      float acc = 0.0f;
#pragma unroll
      for (int w = 0; w < WN; ++w) acc += o_s[(w * kTileRows + r) * kOStride + d] * w_s[w * kTileRows + r];
      const int f = row0 + r;
      write_output(a, acc, row_m[r], row_l[r], q_start + f / kPack, head0 + f % kPack, d);
    }
    return;
  }

  // Split-KV: this split's partial state goes to the workspace.
  const int tile_id = blockIdx.y * gridDim.x + blockIdx.x;
  if (gridDim.x * gridDim.y * gridDim.z > kWorkspaceTiles || gridDim.x * gridDim.y > kTargetCtas ||
      splits_total > kMaxSplits) {
    // More splits than the workspace holds: a loud result, not a wrong one.
    poison_rows(a, rows, row0, q_start, head0);
    return;
  }
  const int part = tile_id * splits_total + blockIdx.z;
  float *ws_o = a.workspace + (long long)part * kBlockM * kVPad;
  float *ws_m = a.workspace + (long long)kWorkspaceTiles * kBlockM * kVPad + (long long)part * kBlockM;
  float *ws_l = ws_m + (long long)kWorkspaceTiles * kBlockM;
  unsigned *counters = reinterpret_cast<unsigned *>(a.workspace + (long long)kWorkspaceTiles * kBlockM * (kVPad + 2));
  for (int e = tid; e < rows * kVHeadDim; e += kThreads) {
    const int r = e / kVHeadDim, d = e % kVHeadDim;
    float acc = 0.0f;
#pragma unroll
    for (int w = 0; w < WN; ++w) acc += o_s[(w * kTileRows + r) * kOStride + d] * w_s[w * kTileRows + r];
    __stcg(ws_o + r * kVPad + d, acc);
  }
  for (int r = tid; r < rows; r += kThreads) {
    __stcg(ws_m + r, row_m[r]);
    __stcg(ws_l + r, row_l[r]);
  }
  __threadfence();
  __syncthreads();
  unsigned &last_split = *reinterpret_cast<unsigned *>(smem + kSplitFlagOffset);
  if (tid == 0)
    last_split = atomicAdd(counters + tile_id, 1u) == unsigned(splits_total - 1);
  __syncthreads();
  if (!last_split)
    return;
  __threadfence();

  // The last split merges all of them. Every load below is issued in
  // parallel (a serial chain of L2 round trips per split would cost more
  // than the splits saved): (split, row) statistics into shared memory
  // first, then the outputs with several splits' loads in flight per item.
  float *split_w = reinterpret_cast<float *>(pipe);   // [kMaxSplits][kBlockM]: m, then weights
  float *split_l = split_w + kMaxSplits * kBlockM;     // [kMaxSplits][kBlockM]
  float *merged_m = split_l + kMaxSplits * kBlockM;
  float *merged_l = merged_m + kBlockM;
  const float *all_m = a.workspace + (long long)kWorkspaceTiles * kBlockM * kVPad + (long long)tile_id * splits_total * kBlockM;
  const float *all_l = all_m + (long long)kWorkspaceTiles * kBlockM;
  for (int i = tid; i < splits_total * rows; i += kThreads) {
    const int z = i / rows, r = i % rows;
    split_w[z * kBlockM + r] = __ldcg(all_m + z * kBlockM + r);
    split_l[z * kBlockM + r] = __ldcg(all_l + z * kBlockM + r);
  }
  __syncthreads();
  for (int r = tid; r < rows; r += kThreads) {
    float mm = -attnc::infinity();
    for (int z = 0; z < splits_total; ++z) mm = fmaxf(mm, split_w[z * kBlockM + r]);
    const float mu = mm == -attnc::infinity() ? 0.0f : mm;
    float ll = 0.0f;
    for (int z = 0; z < splits_total; ++z) {
      const float weight = attnc::fast_exp2(split_w[z * kBlockM + r] - mu);
      split_w[z * kBlockM + r] = weight;
      ll += split_l[z * kBlockM + r] * weight;
    }
    merged_m[r] = mm;
    merged_l[r] = ll;
  }
  __syncthreads();
  const float *all_o = a.workspace + (long long)tile_id * splits_total * kBlockM * kVPad;
  if constexpr (kVHeadDim % 4 == 0) {
    constexpr int kQuads = kVHeadDim >= 4 ? kVHeadDim / 4 : 1;  // (checked even when discarded)
    // Items (4 outputs each) per pass: at most 8, so that the accumulators
    // and the loads in flight fit in registers; 32 float4 loads in flight
    // (items of rows past `rows` load nothing).
    constexpr int kAllItems = (kTileRows * kQuads + kThreads - 1) / kThreads;
    constexpr int kItems = kAllItems < 8 ? kAllItems : 8;
    constexpr int kUnroll = 32 / kItems;
    for (int pass = 0; pass < kAllItems; pass += kItems) {
      float4 acc[kItems];
#pragma unroll
      for (int i = 0; i < kItems; ++i) acc[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int z0 = 0; z0 < splits_total; z0 += kUnroll) {
        float4 v[kUnroll][kItems];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int i = 0; i < kItems; ++i) {
            // Past the last split or row: nothing loaded (weight 0 below).
            const int z = z0 + u;
            const int e = tid + (pass + i) * kThreads, r = e / kQuads, d = e % kQuads * 4;
            v[u][i] = z < splits_total && r < rows
                          ? __ldcg(reinterpret_cast<const float4 *>(all_o + ((long long)z * kBlockM + r) * kVPad + d))
                          : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int i = 0; i < kItems; ++i) {
            const int e = tid + (pass + i) * kThreads, r = min(e / kQuads, rows - 1);
            const float w = z0 + u < splits_total ? split_w[(z0 + u) * kBlockM + r] : 0.0f;
            acc[i].x += v[u][i].x * w;
            acc[i].y += v[u][i].y * w;
            acc[i].z += v[u][i].z * w;
            acc[i].w += v[u][i].w * w;
          }
      }
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int e = tid + (pass + i) * kThreads, r = e / kQuads, d = e % kQuads * 4;
        if (pass + i < kAllItems && r < rows) {
          const int f = row0 + r, token = q_start + f / kPack, head = head0 + f % kPack;
          write_output(a, acc[i].x, merged_m[r], merged_l[r], token, head, d);
          write_output(a, acc[i].y, merged_m[r], merged_l[r], token, head, d + 1);
          write_output(a, acc[i].z, merged_m[r], merged_l[r], token, head, d + 2);
          write_output(a, acc[i].w, merged_m[r], merged_l[r], token, head, d + 3);
        }
      }
    }
  } else {
    for (int e = tid; e < rows * kVHeadDim; e += kThreads) {
      const int r = e / kVHeadDim, d = e % kVHeadDim;
      float acc = 0.0f;
      for (int z = 0; z < splits_total; ++z)
        acc += __ldcg(all_o + ((long long)z * kBlockM + r) * kVPad + d) * split_w[z * kBlockM + r];
      const int f = row0 + r;
      write_output(a, acc, merged_m[r], merged_l[r], q_start + f / kPack, head0 + f % kPack, d);
    }
  }
  if (tid == 0)
    counters[tile_id] = 0u;  // ready for the next launch on this workspace
}
)";
  if (wgmma) {
    os << "\n// ---- tiles of more than 16 rows: warpgroup MMA (sm_90a) ----\n";
    printWgmmaWrappers(os, activationName == "bf16" ? "bf16" : "f16", blockN,
                       vPadded);
    std::string wgTile = R"WG(
/// S = Q K^T for row block h (rows 64 h ..) of the Q tile and the kBlockN
/// keys of one K tile, both from swizzled shared memory.
__device__ __forceinline__ void wg_scores(float (&s)[kBlockN / 8][4], int h, unsigned long long q_desc,
                                          unsigned long long k_desc) {
#pragma unroll
  for (int kc = 0; kc < kQkPad / 64; ++kc)
#pragma unroll
    for (int ks = 0; ks < 4; ++ks)
      WgmmaSS<kBlockN>::run(s, q_desc + ((kc * kBlockM * 128 + h * 64 * 128 + ks * 32) >> 4),
                            k_desc + ((kc * kBlockN * 128 + ks * 32) >> 4), kc + ks > 0);
}

/// O += P V for one row block and the V tile; p holds P as A fragments.
__device__ __forceinline__ void wg_values(float (&o)[kVPad / 8][4], const unsigned (&p)[kBlockN / 16][4],
                                          unsigned long long v_desc) {
#pragma unroll
  for (int kk = 0; kk < kBlockN / 16; ++kk)
    WgmmaRS<kVPad>::run(o, p[kk], v_desc + ((kk * 16 * 128) >> 4));
}

/// P (the softmax numerators in s) as A fragments of 16 keys each.
__device__ __forceinline__ void wg_pack(unsigned (&p)[kBlockN / 16][4], const float (&s)[kBlockN / 8][4]) {
#pragma unroll
  for (int kk = 0; kk < kBlockN / 16; ++kk) {
    p[kk][0] = attnc::pack2<act_t>(s[2 * kk][0], s[2 * kk][1]);
    p[kk][1] = attnc::pack2<act_t>(s[2 * kk][2], s[2 * kk][3]);
    p[kk][2] = attnc::pack2<act_t>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    p[kk][3] = attnc::pack2<act_t>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
  }
}

/// Issues the copies of one K (kDim = kQkHeadDim) or V tile of kBlockN keys
/// into the swizzled layout: thread t copies chunk t % 8 of each 64-element
/// column block of keys t / 8 + 16 i, so that one slot read serves the row
/// and 8 consecutive threads read 128 contiguous bytes. Keys whose slot is -1
/// and the padding columns are zero-filled (and read nothing).
template <int kDim, int kPadDim>
__device__ __forceinline__ void wg_copy_rows(const cache_t *cache, int kv_head, const int *slots,
                                             unsigned char *dst) {
  constexpr int kKeysPerPass = kThreads / 8;
  static_assert(kBlockN % kKeysPerPass == 0, "whole passes");
  const int c = threadIdx.x % 8, key0 = threadIdx.x / 8;
#pragma unroll
  for (int p = 0; p < kBlockN / kKeysPerPass; ++p) {
    const int key = key0 + p * kKeysPerPass;
    const int slot = slots[key];
    const cache_t *src = cache + ((long long)max(slot, 0) * kNumKvHeads + kv_head) * kDim;
#pragma unroll
    for (int b = 0; b < kPadDim / 64; ++b) {
      const int col = b * 64 + c * 8;
      attnc::cp_async_16(dst + attnc::sw128_offset<kBlockN>(key, b * 8 + c), src + (col < kDim ? col : 0),
                         slot >= 0 && col < kDim);
    }
  }
}

/// One tile of `rows` (17..kBlockM) query rows by wgmma, computing what
/// attention_tile<kWarps, 2> computes (same masks, key ranges, split share,
/// softmax and epilogue): warp w of the warpgroup holds rows
/// 64 h + 16 w + lane / 4 (+ 8) of row block h = 0, 1. Per K/V tile j: S_0
/// and S_1 (the row blocks) are issued together; block 0's softmax runs
/// while S_1 computes; O_0 += P_0 V_j is issued once V_j has landed and
/// block 1's softmax runs while it computes. V_j loads from the start of
/// iteration j (one V buffer), K_{j+1} during all of iteration j (two K
/// buffers); the slots of tile j + 2 are looked up during iteration j.
__device__ __forceinline__ void wgmma_tile(const Args &a, int seq, int q_start, int q_len, int kv_len,
                                           int row0, int rows, unsigned char *smem) {
  const int tid = threadIdx.x, warp = tid / 32;
  const int g = (tid % 32) / 4;
  const int kv_head = blockIdx.y / kPacksPerGroup;
  const int head0 = kv_head * kGroupSize + blockIdx.y % kPacksPerGroup * kPack;
  const int first_pos = kv_len - q_len;  // the queries are the last q_len positions

  if ((attnc::shared_address(smem) & 1023u) != 0) {
    // The swizzled tiles need 1024-byte alignment (the kernel declares it
    // and has no static shared memory): a loud result, not a wrong one.
    poison_rows(a, rows, row0, q_start, head0);
    return;
  }
  unsigned char *q_s = smem;
  unsigned char *k_s = q_s + kWQBytes;  // [2] K tiles
  unsigned char *v_s = k_s + 2 * kWKBytes;
  int *slot_s = reinterpret_cast<int *>(smem + kSlotOffset);  // [3][kBlockN], a ring

  // Q rows of this tile (committed with the first K tile); rows past `rows`
  // and padding columns are zero-filled.
  {
    const int c = tid % 8, r0 = tid / 8;
#pragma unroll
    for (int p = 0; p < kBlockM / 16; ++p) {
      const int r = r0 + 16 * p, f = row0 + r;
      const bool valid = r < rows;
      const act_t *src =
          a.query + (valid ? ((long long)(q_start + f / kPack) * kNumQHeads + head0 + f % kPack) * kQkHeadDim : 0);
#pragma unroll
      for (int b = 0; b < kQkPad / 64; ++b) {
        const int col = b * 64 + c * 8;
        attnc::cp_async_16(q_s + attnc::sw128_offset<kBlockM>(r, b * 8 + c), src + (col < kQkHeadDim ? col : 0),
                           valid && col < kQkHeadDim);
      }
    }
  }

  // This split's key tiles, and the keys every row attends (no mask).
  const SplitKeys keys = split_keys(row0, rows, first_pos, kv_len);
  const int full_begin = keys.full_begin, full_end = keys.full_end;
  const int my_first = keys.first_tile, my_tiles = keys.tiles;

  // The rows this thread holds ([row block][i]), and their key ranges.
  int row_begin[2][1][2], row_end[2][1][2];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = h * 64 + warp * 16 + g + 8 * i;
      const int pos = first_pos + (row0 + r) / kPack;
      row_begin[h][0][i] = r < rows ? row_key_begin(pos, kv_len) : 0;
      row_end[h][0][i] = r < rows ? row_key_end(pos, kv_len) : 0;
    }

  // Per row block h: O, m, l, S and P in attention_tile's shapes with MT = 1.
  float o[2][1][kVPad / 8][4];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int d = 0; d < kVPad / 8; ++d)
      o[h][0][d][0] = o[h][0][d][1] = o[h][0][d][2] = o[h][0][d][3] = 0.0f;
  float m[2][1][2], l[2][1][2];
#pragma unroll
  for (int h = 0; h < 2; ++h)
    m[h][0][0] = m[h][0][1] = -attnc::infinity(), l[h][0][0] = l[h][0][1] = 0.0f;
  float s[2][1][kBlockN / 8][4];
  unsigned p[2][kBlockN / 16][4];
  const int *table = a.block_tables + (long long)seq * a.max_blocks_per_seq;
  const unsigned long long q_desc = attnc::sw128_desc(attnc::shared_address(q_s), 16, 1024);
  const unsigned long long k_desc = attnc::sw128_desc(attnc::shared_address(k_s), 16, 1024);
  const unsigned long long v_desc = attnc::sw128_desc(attnc::shared_address(v_s), kBlockN * 128, 1024);

  for (int k = tid; k < kBlockN; k += kThreads) {
    slot_s[k] = my_tiles > 0 ? key_slot(table, my_first * kBlockN + k, kv_len) : -1;
    slot_s[kBlockN + k] = my_tiles > 1 ? key_slot(table, (my_first + 1) * kBlockN + k, kv_len) : -1;
  }
  __syncthreads();
  if (my_tiles > 0)
    wg_copy_rows<kQkHeadDim, kQkPad>(a.k_cache, kv_head, slot_s, k_s);
  attnc::cp_async_commit();
  for (int it = 0; it < my_tiles; ++it) {
    const int tile_key = (my_first + it) * kBlockN;
    attnc::cp_async_wait<0>();
    attnc::fence_proxy_async();
    __syncthreads();  // K_it (and Q) landed; every warp is done with V_{it-1} and K_{it-1}
    // V_it, then K_{it+1} (two groups), then the slots of tile it + 2.
    wg_copy_rows<kVHeadDim, kVPad>(a.v_cache, kv_head, slot_s + it % 3 * kBlockN, v_s);
    attnc::cp_async_commit();
    if (it + 1 < my_tiles)
      wg_copy_rows<kQkHeadDim, kQkPad>(a.k_cache, kv_head, slot_s + (it + 1) % 3 * kBlockN,
                                       k_s + (it + 1) % 2 * kWKBytes);
    attnc::cp_async_commit();
    for (int k = tid; k < kBlockN; k += kThreads)
      slot_s[(it + 2) % 3 * kBlockN + k] =
          it + 2 < my_tiles ? key_slot(table, (my_first + it + 2) * kBlockN + k, kv_len) : -1;
    const unsigned long long k_cur = k_desc + ((it % 2 * kWKBytes) >> 4);
    const bool masked = tile_key < full_begin || tile_key + kBlockN > full_end;
    attnc::wgmma_fence();
    wg_scores(s[0][0], 0, q_desc, k_cur);
    attnc::wgmma_commit();
    wg_scores(s[1][0], 1, q_desc, k_cur);
    attnc::wgmma_commit();
    attnc::wgmma_wait<1>();  // S_0 done
    attnc::fence_regs(s[0]);
    softmax_step<1, kBlockN / 8>(s[0], m[0], l[0], o[0], a, row_begin[0], row_end[0], masked, tile_key);
    wg_pack(p[0], s[0][0]);
    attnc::cp_async_wait<1>();  // V_it (K_{it+1} may still be in flight)
    attnc::fence_proxy_async();
    __syncthreads();  // V_it landed
    attnc::fence_regs(o[0]);
    attnc::wgmma_fence();
    wg_values(o[0][0], p[0], v_desc);
    attnc::wgmma_commit();
    attnc::wgmma_wait<1>();  // S_1 done (O_0 += P_0 V_it may run on)
    attnc::fence_regs(s[1]);
    softmax_step<1, kBlockN / 8>(s[1], m[1], l[1], o[1], a, row_begin[1], row_end[1], masked, tile_key);
    wg_pack(p[1], s[1][0]);
    attnc::fence_regs(o[1]);
    attnc::wgmma_fence();
    wg_values(o[1][0], p[1], v_desc);
    attnc::wgmma_commit();
    attnc::wgmma_wait<0>();
    attnc::fence_regs(o[0]);
    attnc::fence_regs(o[1]);
  }
  attnc::cp_async_wait<0>();
  __syncthreads();  // Q and the K/V buffers become the merge area
#pragma unroll
  for (int h = 0; h < 2; ++h)
    store_state<1, kBlockM>(o[h], m[h], l[h], smem, 0, h * 64 + warp * 16, 16, @M_SCALE@);
  tile_epilogue<1, kBlockM>(a, smem, rows, row0, q_start, head0);
}
)WG";
    wgTile.replace(wgTile.find("@M_SCALE@"), 9, mScale);
    os << wgTile;
  }
  os << "} // namespace\n\n";

  SmallVector<std::string> params = attentionTensorSignature(sinks, fp8, gate);
  params.push_back("float *__restrict__ workspace");
  params.push_back("int num_tokens");
  params.push_back("int num_seqs");
  params.push_back("int max_blocks_per_seq");
  params.push_back("int num_kv_splits");
  os << "extern \"C\" __global__ void __launch_bounds__(kThreads)\n"
     << name << "(" << llvm::join(params, ",\n    ") << ") {\n"
     << "  extern __shared__ __align__(" << (wgmma ? 1024 : 16)
     << ") unsigned char smem[];\n"
     << R"(  if (num_seqs <= 0) return;  // malformed batch: nothing owns a row
  // The sequence of this tile: sequence s owns the tile range starting at
  // query_start_loc[s] * kPack / kBlockM + s (at least as many tiles as its
  // rows need; a sequence's spare block exits). Tiles run last first: the
  // last rows of a sequence see the most keys, and start early.
  const int tile_index = (int)gridDim.x - 1 - (int)blockIdx.x;
  // The owner is the last sequence whose range starts at or before the tile.
  int seq, q_start, q_end, kv_len;
  if (num_seqs <= kSeqLookupThreads * kThreads) {
    // Every thread tests up to kSeqLookupThreads sequences at once: one
    // round trip to memory for the lookup and the owner's lengths, where a
    // binary search would chain log2(num_seqs) of them before the first
    // K/V copy.
    int4 &owner = *reinterpret_cast<int4 *>(smem + kOwnerOffset);
    if (threadIdx.x == 0) owner = make_int4(0, 0, 0, 0);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kSeqLookupThreads; ++j) {
      const int s = (int)threadIdx.x + j * kThreads;
      if (s < num_seqs) {
        const int start = query_start_loc[s], end = query_start_loc[s + 1], len = seq_lens[s];
        const int first_tile = (int)((long long)start * kPack / kBlockM) + s;
        const int next_tile = (int)((long long)end * kPack / kBlockM) + s + 1;
        if (first_tile <= tile_index && (s == num_seqs - 1 || tile_index < next_tile))
          owner = make_int4(s, start, end, len);
      }
    }
    __syncthreads();
    seq = owner.x, q_start = owner.y, q_end = owner.z, kv_len = owner.w;
  } else {
    int lo = 0, hi = num_seqs - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if ((int)((long long)query_start_loc[mid] * kPack / kBlockM) + mid <= tile_index) lo = mid;
      else hi = mid - 1;
    }
    seq = lo, q_start = query_start_loc[seq], q_end = query_start_loc[seq + 1];
    kv_len = seq_lens[seq];
  }
  const int q_len = q_end - q_start;
  const int row0 = (tile_index - (int)((long long)q_start * kPack / kBlockM) - seq) * kBlockM;
  const int rows = min(kBlockM, q_len * kPack - row0);
  if (row0 < 0 || rows <= 0) return;
  Args a;
  a.query = query;
  a.k_cache = k_cache;
  a.v_cache = v_cache;
  a.block_tables = block_tables;
)";
  if (sinks)
    os << "  a.sinks = sinks;\n";
  if (gate)
    os << "  a.gate = gate;\n";
  os << R"(  a.output = output;
  a.workspace = workspace;
  a.max_blocks_per_seq = max_blocks_per_seq;
)";
  if (fp8)
    os << "  a.score_scale = " << (softcap > 0 ? "kSoftmaxScale / kSoftcap" : "kScaleLog2")
       << " * *k_scale;\n";
  else
    os << "  a.score_scale = " << (softcap > 0 ? "kSoftmaxScale / kSoftcap" : "kScaleLog2")
       << ";\n";
  os << "  a.out_scale = " << (valueScale != 1.0 ? "kValueScale" : "1.0f")
     << (fp8 ? " * *v_scale" : "") << ";\n";
  os << R"(  if (rows <= 16)
    attention_tile<1, 1>(a, seq, q_start, q_len, kv_len, row0, rows, smem);
  else
    )" << (wgmma ? "wgmma_tile(" : "attention_tile<kWarps, 2>(")
     << R"(a, seq, q_start, q_len, kv_len, row0, rows, smem);
}
)";

  ElementType activation = abiType(activationName);
  ElementType cache = abiType(cacheName);
  KernelAbi abi;
  abi.name = name;
  abi.params = attentionTensorParams(op, gateOp, activation, cache);
  abi.params.push_back(pointerParam("workspace", ElementType::F32,
                                    {ShapeDim::constant(workspaceFloats)}));
  abi.params.push_back(scalarParam("num_tokens", ParamKind::I32));
  abi.params.push_back(scalarParam("num_seqs", ParamKind::I32));
  abi.params.push_back(scalarParam("max_blocks_per_seq", ParamKind::I32));
  abi.params.push_back(scalarParam("num_kv_splits", ParamKind::I32));
  abi.block = {static_cast<uint32_t>(warps * 32), 1, 1};
  abi.grid = {GridDimRule::ceilDivPlus("num_tokens", pack, blockM, "num_seqs"),
              GridDimRule::fixed(numKvHeads * (groupSize / pack)),
              GridDimRule::ceilDiv("num_kv_splits", 1, 1)};
  abi.hints = {{"target_ctas", targetCtas}, {"max_kv_splits", maxSplits}};
  abi.dynamic_shared_memory_bytes = static_cast<uint32_t>(sharedBytes);
  return EmittedKernel{name, "attention", layerOf(function), std::move(source),
                       std::move(abi)};
}
} // namespace attnc::emit
