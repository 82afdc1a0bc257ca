//===- PreprocessEmitter.cpp - the fused preprocess kernel's printer ------===//
//
// Prints one attn.fused_preprocess kernel function as CUDA C++ and its ABI.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "attnc/Plan/AttentionTiling.h"

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

//===----------------------------------------------------------------------===//
// Preprocess
//===----------------------------------------------------------------------===//

FailureOr<EmittedKernel> emitPreprocess(func::FuncOp function,
                                        FusedPreprocessOp op) {
  PreprocessScheduleAttr schedule = op.getScheduleAttr();
  FailureOr<DictionaryAttr> prepared = preparedEmission(op, schedule);
  if (failed(prepared))
    return failure();
  DictionaryAttr emission = *prepared;
  std::string name = function.getSymName().str();
  bool qNorm = op.hasStage(PreprocessStage::q_norm);
  bool kNorm = op.hasStage(PreprocessStage::k_norm);
  bool rope = op.hasStage(PreprocessStage::rope);
  bool anyNorm = qNorm || kNorm;
  bool gate = static_cast<bool>(op.getGate());
  bool fp8 = emissionString(emission, "cache") == "fp8_e4m3";
  // Pair layout: a neox rotation over the whole q/k head with
  // threads_per_head dividing half the head (in vectors) lets each lane hold
  // both elements of its rotation pairs: chunk c < kPairChunks holds vector
  // c * threads + lane of the first half, chunk c + kPairChunks its partner.
  int64_t vectorWidth = schedule.getVectorWidth();
  int64_t threadsPerHead = schedule.getThreadsPerHead();
  bool pairLayout = rope && *op.getRopeStyle() == RopeStyle::neox &&
                    *op.getRotaryOffset() == 0 &&
                    *op.getRotaryDim() == op.getQkHeadDim() &&
                    (op.getQkHeadDim() / 2) % vectorWidth == 0 &&
                    (op.getQkHeadDim() / 2 / vectorWidth) % threadsPerHead == 0;
  int64_t pairChunks =
      pairLayout ? op.getQkHeadDim() / 2 / vectorWidth / threadsPerHead : 0;
  // Stage order: a norm listed after rope runs after it.
  bool normAfterRope = false;
  {
    bool seenRope = false;
    for (auto stage : op.getStages().getAsRange<PreprocessStageAttr>()) {
      if (stage.getValue() == PreprocessStage::rope)
        seenRope = true;
      else if (seenRope)
        normAfterRope = true;
    }
  }

  std::string source;
  llvm::raw_string_ostream os(source);
  // Header: the configuration and schedule this source is specialised for.
  os << "// attnc generated kernel " << name << " (preprocess) for layer "
     << layerOf(function) << "\n"
     << "// configuration: num_q_heads=" << op.getNumQHeads()
     << " num_kv_heads=" << op.getNumKvHeads()
     << " qk_head_dim=" << op.getQkHeadDim()
     << " v_head_dim=" << op.getVHeadDim()
     << " gate_layout=" << stringifyGateLayout(op.getGateLayout())
     << (gate ? " (gate output)" : "") << "\n"
     << "//   stages:";
  if (op.getStages().empty())
    os << " none";
  for (auto stage : op.getStages().getAsRange<PreprocessStageAttr>())
    os << " " << stringifyPreprocessStage(stage.getValue());
  os << "\n";
  if (anyNorm)
    os << "//   norm: " << stringifyNormStyle(*op.getNormStyle())
       << " eps=" << literal(op.getNormEpsAttr().getValueAsDouble()) << "\n";
  if (rope)
    os << "//   rope: " << stringifyRopeStyle(*op.getRopeStyle())
       << " rotary_dim=" << *op.getRotaryDim()
       << " rotary_offset=" << *op.getRotaryOffset()
       << " theta=" << literal(op.getThetaAttr().getValueAsDouble())
       << " scaling=" << describeScaling(op.getScalingAttr()) << "\n";
  os << "//   activation " << emissionString(emission, "activation")
     << ", cache " << emissionString(emission, "cache") << " (block_size "
     << emissionInt(emission, "block_size") << ")\n"
     << "// layout: fused_width=" << emissionInt(emission, "fused_width")
     << " q@" << emissionInt(emission, "q_offset") << " (head stride "
     << emissionInt(emission, "q_head_stride") << ") k@"
     << emissionInt(emission, "k_offset") << " v@"
     << emissionInt(emission, "v_offset");
  if (gate)
    os << " gate@" << emissionInt(emission, "gate_offset") << " (head stride "
       << emissionInt(emission, "gate_head_stride") << ")";
  os << "\n// schedule: vector_width=" << schedule.getVectorWidth()
     << " threads_per_head=" << schedule.getThreadsPerHead()
     << " threads_per_block=" << schedule.getThreadsPerBlock()
     << " heads_per_block=" << schedule.getHeadsPerBlock()
     << " tokens_per_block=" << schedule.getTokensPerBlock() << "\n"
     << "#include \"attnc_device.cuh\"\n\n"
     << "namespace {\n"
     << "using act_t = " << cudaType(emissionString(emission, "activation"))
     << ";\n"
     << "using cache_t = " << cudaType(emissionString(emission, "cache"))
     << ";\n"
     << "constexpr int kNumQHeads = " << op.getNumQHeads() << ";\n"
     << "constexpr int kNumKvHeads = " << op.getNumKvHeads() << ";\n"
     << "constexpr int kQkHeadDim = " << op.getQkHeadDim() << ";\n"
     << "constexpr int kVHeadDim = " << op.getVHeadDim() << ";\n"
     << "constexpr int kMaxHeadDim = "
     << std::max(op.getQkHeadDim(), op.getVHeadDim()) << ";\n"
     << "constexpr long long kFusedWidth = "
     << emissionInt(emission, "fused_width") << ";\n"
     << "constexpr long long kQOffset = " << emissionInt(emission, "q_offset")
     << ";\n"
     << "constexpr long long kQHeadStride = "
     << emissionInt(emission, "q_head_stride") << ";\n"
     << "constexpr long long kKOffset = " << emissionInt(emission, "k_offset")
     << ";\n"
     << "constexpr long long kVOffset = " << emissionInt(emission, "v_offset")
     << ";\n";
  if (gate)
    os << "constexpr long long kGateOffset = "
       << emissionInt(emission, "gate_offset") << ";\n"
       << "constexpr long long kGateHeadStride = "
       << emissionInt(emission, "gate_head_stride") << ";\n";
  os << "constexpr int kVectorWidth = " << schedule.getVectorWidth() << ";\n"
     << "constexpr int kThreadsPerHead = " << schedule.getThreadsPerHead()
     << ";\n"
     << "constexpr int kThreadsPerBlock = " << schedule.getThreadsPerBlock()
     << ";\n"
     << "constexpr int kHeadsPerBlock = " << schedule.getHeadsPerBlock()
     << ";\n"
     << "constexpr int kTokensPerBlock = " << schedule.getTokensPerBlock()
     << ";\n"
     << "// Work items whose loads are issued together. Two keep 32 bytes per\n"
        "// thread in flight while the registers stay under the bound below.\n"
     << "constexpr int kPrefetch = " << (pairLayout ? 1 : 2) << ";\n"
     << "// Blocks per SM the register budget must allow: enough loads in\n"
        "// flight for the memory system (the pair layout holds several\n"
        "// vectors per lane and needs fewer threads for that: 640, which\n"
        "// leaves it 102 registers).\n"
     << "constexpr int kMinBlocksPerSm = kThreadsPerBlock >= "
     << (pairLayout ? 640 : 1024) << " ? 1 : " << (pairLayout ? 640 : 1024)
     << " / kThreadsPerBlock;\n"
     << "// Vectors each thread holds of one head.\n"
     << "constexpr int kChunks = (kMaxHeadDim + kThreadsPerHead * "
        "kVectorWidth - 1) / (kThreadsPerHead * kVectorWidth);\n";
  if (pairLayout)
    os << "// q/k chunks per rotation half (pair layout).\n"
       << "constexpr int kPairChunks = " << pairChunks << ";\n";
  if (anyNorm)
    os << "constexpr float kNormEps = "
       << floatLiteral(op.getNormEpsAttr().getValueAsDouble()) << ";\n";
  if (rope) {
    auto invFreq = cast<DenseF64ArrayAttr>(emission.get("inv_freq"));
    os << "constexpr int kRotaryDim = " << *op.getRotaryDim() << ";\n"
       << "constexpr int kRotaryHalf = " << *op.getRotaryDim() / 2 << ";\n"
       << "constexpr int kRotaryOffset = " << *op.getRotaryOffset() << ";\n"
       << "constexpr float kRopeAttentionFactor = "
       << floatLiteral(emissionFloat(emission, "rope_attention_factor"))
       << ";\n"
       << "// Inverse frequencies (scaling applied), computed in double.\n"
       << "__constant__ double kInvFreq[kRotaryHalf] = {";
    for (auto [i, value] : llvm::enumerate(invFreq.asArrayRef()))
      os << (i % 4 ? " " : "\n    ") << literal(value) << ",";
    os << "\n};\n";
  }
  os << R"(
/// One (token, head) of the block's work.
struct WorkItem {
  int t, token, head;
  bool active;
};
} // namespace

)";
  os << "/// The vector of a head that chunk c of a lane holds.\n"
        "template <int kKind>\n"
        "__device__ __forceinline__ int head_vector(int c, int lane) {\n";
  if (pairLayout)
    os << "  if constexpr (kKind <= 1) // pair layout: halves of one rotation pair\n"
          "    return c < kPairChunks ? c * kThreadsPerHead + lane\n"
          "                           : kRotaryHalf / kVectorWidth + (c - kPairChunks) * "
          "kThreadsPerHead + lane;\n";
  os << R"(  return c * kThreadsPerHead + lane;
}

/// One head row into registers (zeros past its dim or when inactive).
template <int kKind, typename T, int kDim>
__device__ __forceinline__ void load_row(const T *src, int lane, bool active,
                                         float (&x)[kChunks][kVectorWidth]) {
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int e = head_vector<kKind>(c, lane) * kVectorWidth;
    if (active && e < kDim)
      attnc::load_vec<T, kVectorWidth>(src + e, x[c]);
    else
#pragma unroll
      for (int i = 0; i < kVectorWidth; ++i) x[c][i] = 0.0f;
  }
}

/// The same row packed in its own type (norm weights).
template <int kKind, typename T, int kDim>
__device__ __forceinline__ void load_row_raw(const T *src, int lane,
                                             attnc::Vec<T, kVectorWidth> (&x)[kChunks]) {
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int e = head_vector<kKind>(c, lane) * kVectorWidth;
    if (e < kDim)
      x[c] = *reinterpret_cast<const attnc::Vec<T, kVectorWidth> *>(src + e);
    else
#pragma unroll
      for (int i = 0; i < kVectorWidth; ++i) x[c].v[i] = attnc::from_float<T>(0.0f);
  }
}

/// One head row from registers to memory.
template <int kKind, typename T, int kDim>
__device__ __forceinline__ void store_row(T *dst, int lane,
                                          const float (&x)[kChunks][kVectorWidth]) {
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int e = head_vector<kKind>(c, lane) * kVectorWidth;
    if (e < kDim)
      attnc::store_vec<T, kVectorWidth>(dst + e, x[c]);
  }
}

)";


  // One work item's stages, specialised per kind at compile time: q and k
  // heads get the norm and the rotation their stages call for, v and gate
  // heads are only stored. Shuffles use the group's lanes only: the groups
  // of a warp may hold different kinds.
  os << R"(
/// What every work item's stages read besides its own data.
struct BlockState {
  int lane;            // lane within the head's group
  unsigned group_mask; // the group's lanes
  const long long *token_slot;
  act_t *q_out;
  cache_t *k_cache, *v_cache;
)";
  if (gate)
    os << "  act_t *gate_out;\n";
  if (rope)
    os << "  const float (*rope_cos)[kRotaryDim], (*rope_sin)[kRotaryDim];\n";
  if (fp8)
    os << "  float k_inv_scale, v_inv_scale;\n";
  os << "};\n\n/// Kind 0: q head, 1: k head, 2: v head, 3: gate head.\n"
     << "template <int kKind>\n__device__ __forceinline__ void process("
        "float (&x)[kChunks][kVectorWidth], const WorkItem &w,\n"
        "                                        const BlockState &s";
  if (anyNorm)
    os << ", const attnc::Vec<act_t, kVectorWidth> (&weight)[kChunks]";
  os << ") {\n"
     << "  const int lane = s.lane, t = w.t;\n"
     << "  const unsigned group_mask = s.group_mask;\n";
  if (rope)
    os << "  const auto rope_cos = s.rope_cos;\n  const auto rope_sin = s.rope_sin;\n";
  if (fp8)
    os << "  const float k_inv_scale = s.k_inv_scale, v_inv_scale = s.v_inv_scale;\n";
  os << "  const long long *token_slot = s.token_slot;\n"
     << "  act_t *q_out = s.q_out;\n  cache_t *k_cache = s.k_cache, *v_cache = s.v_cache;\n";
  if (gate)
    os << "  act_t *gate_out = s.gate_out;\n";
  {
  auto printNorm = [&](bool forQ, bool forK) {
    bool gemma = anyNorm && *op.getNormStyle() == NormStyle::gemma;
    auto one = [&](int kind, const char *weight) {
      os << "    if constexpr (kKind == " << kind << ") // RMSNorm over the head dim"
         << (gemma ? ", Gemma style (1 + w)" : "") << "\n"
         << "      attnc::rms_norm_head<" << (gemma ? "true" : "false")
         << ", kChunks, kThreadsPerHead, kVectorWidth>(x, " << weight
         << ", kQkHeadDim, kNormEps, group_mask);\n";
    };
    if (forQ)
      one(0, "weight");
    if (forK)
      one(1, "weight");
  };
  if (!normAfterRope)
    printNorm(qNorm, kNorm);
  if (rope && pairLayout) {
    // Both elements of each pair are this lane's: chunk c (first half) and
    // chunk c + kPairChunks (second half). The tables hold cos and -sin at
    // the first-half element index.
    os << R"(    if constexpr (kKind <= 1) { // rotary embedding, neox, pair layout
      if (w.active) {
#pragma unroll
        for (int c = 0; c < kPairChunks; ++c) {
          const int j0 = (c * kThreadsPerHead + lane) * kVectorWidth;
          float cs[kVectorWidth], sn[kVectorWidth];
          attnc::load_floats<kVectorWidth>(&rope_cos[t][j0], cs);
          attnc::load_floats<kVectorWidth>(&rope_sin[t][j0], sn);
#pragma unroll
          for (int i = 0; i < kVectorWidth; ++i) {
            const float a = x[c][i], b = x[c + kPairChunks][i];
            x[c][i] = a * cs[i] + b * sn[i];
            x[c + kPairChunks][i] = b * cs[i] - a * sn[i];
          }
        }
      }
    }
)";
  } else if (rope) {
    bool neox = *op.getRopeStyle() == RopeStyle::neox;
    // Partners inside the thread's own vector need no exchange (gptj with
    // vectors of 2 or more); otherwise shuffles fetch them.
    bool pairInVector = !neox && schedule.getVectorWidth() >= 2;
    os << "    if constexpr (kKind <= 1) { // rotary embedding, "
       << (neox ? "neox (halves)" : "gptj (interleaved pairs)") << "\n"
       << "      // Partners are gathered before any element is rotated.\n"
       << "      float partner[kChunks][kVectorWidth];\n";
    if (pairInVector) {
      os << R"(#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i) partner[c][i] = x[c][i ^ 1];
)";
    } else {
      os << R"(#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const int v = c * kThreadsPerHead + lane; // this thread's vector
)";
      if (neox)
        os << "        const int j = v * kVectorWidth - kRotaryOffset;\n"
              "        int pv = j < kRotaryHalf ? v + kRotaryHalf / kVectorWidth"
              " : v - kRotaryHalf / kVectorWidth;\n";
      else
        os << "        int pv = v ^ 1; // vector width 1: the pair spans two lanes\n";
      os << R"(        pv = pv < 0 ? 0 : pv; // partners of unrotated elements go unused
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i)
          partner[c][i] = attnc::group_fetch<kChunks, kThreadsPerHead, kVectorWidth>(
              x, pv / kThreadsPerHead, pv % kThreadsPerHead, i, group_mask);
      }
)";
    }
    // The vector width divides the rotary offset and dim (the schedule's
    // rule), so a vector is wholly inside or outside the rotated range, and
    // its angles are consecutive table entries: one wide shared-memory read.
    os << R"(      if (w.active) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          const int d0 = (c * kThreadsPerHead + lane) * kVectorWidth;
          const int j0 = d0 - kRotaryOffset;
          if (d0 < kQkHeadDim && j0 >= 0 && j0 < kRotaryDim) {
            float cs[kVectorWidth], sn[kVectorWidth];
            attnc::load_floats<kVectorWidth>(&rope_cos[t][j0], cs);
            attnc::load_floats<kVectorWidth>(&rope_sin[t][j0], sn);
#pragma unroll
            for (int i = 0; i < kVectorWidth; ++i)
              x[c][i] = x[c][i] * cs[i] + partner[c][i] * sn[i];
          }
        }
      }
    }
)";
  }
  if (normAfterRope)
    printNorm(qNorm, kNorm);
  os << R"(    if (!w.active) return;
    if constexpr (kKind == 0) {
      store_row<0, act_t, kQkHeadDim>(
          q_out + ((long long)w.token * kNumQHeads + w.head) * kQkHeadDim, lane, x);
)";
  if (gate)
    os << R"(    } else if constexpr (kKind == 3) {
      store_row<3, act_t, kVHeadDim>(
          gate_out + ((long long)w.token * kNumQHeads + w.head) * kVHeadDim, lane, x);
)";
  os << R"(    } else {
      // k or v into the paged cache; a negative slot is padding.
      constexpr int kDim = kKind == 1 ? kQkHeadDim : kVHeadDim;
      const long long slot = token_slot[t];
      if (slot < 0) return;
      cache_t *dst = (kKind == 1 ? k_cache : v_cache) + (slot * kNumKvHeads + w.head) * kDim;
)";
  if (fp8)
    os << R"(      // The cache stores x / scale, as x * (1 / scale): within one float
      // rounding of the quotient, far below e4m3's resolution, at a tenth
      // of a division's cost.
      const float inv_scale = kKind == 1 ? k_inv_scale : v_inv_scale;
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i) x[c][i] *= inv_scale;
)";
  os << R"(      store_row<kKind, cache_t, kDim>(dst, lane, x);
    }
}

)";
  }
  // The block's work, kind by kind: item i of a kind is head i % heads of
  // token i / heads, so the kind, the head dim and the column are compile-
  // time constants in each loop.
  {
    std::string weights = anyNorm ? ", weight" : "";
    std::string weightParams =
        std::string(qNorm ? ", const act_t *__restrict__ q_norm_weight" : "") +
        std::string(kNorm ? ", const act_t *__restrict__ k_norm_weight" : "");
    os << "template <int kKind>\n"
          "__device__ __forceinline__ void run_kind(const act_t *__restrict__ qkv, int group, "
          "int first_token,\n                                         int num_tokens, "
          "const BlockState &s" << weightParams << ") {\n"
       << "  constexpr int kHeads = kKind == 0 || kKind == 3 ? kNumQHeads : kNumKvHeads;\n"
       << "  constexpr int kDim = kKind >= 2 ? kVHeadDim : kQkHeadDim;\n"
       << "  constexpr long long kOffset = kKind == 0 ? kQOffset : kKind == 1 ? kKOffset"
       << (gate ? " : kKind == 2 ? kVOffset : kGateOffset;\n" : " : kVOffset;\n")
       << "  constexpr long long kStride = kKind == 0 ? kQHeadStride : kKind == 1 ? kQkHeadDim"
       << (gate ? " : kKind == 2 ? kVHeadDim : kGateHeadStride;\n" : " : kVHeadDim;\n")
       << (anyNorm ? std::string("  // This kind's norm weights (only q and k have any), loaded once.\n"
                                 "  attnc::Vec<act_t, kVectorWidth> weight[kChunks];\n") : std::string())
       << (qNorm ? std::string("  if constexpr (kKind == 0)\n"
                               "    load_row_raw<0, act_t, kQkHeadDim>(q_norm_weight, s.lane, weight);\n")
                 : std::string())
       << (kNorm ? std::string("  if constexpr (kKind == 1)\n"
                               "    load_row_raw<1, act_t, kQkHeadDim>(k_norm_weight, s.lane, weight);\n")
                 : std::string())
       << R"(  constexpr int kItems = kHeads * kTokensPerBlock;
  constexpr int kIterations = (kItems + kHeadsPerBlock - 1) / kHeadsPerBlock;
  // The kinds run one after another; each starts at the thread group after
  // the previous kind's last item, so that the groups share the block's
  // items evenly (q heads on groups 0.., then k, v, gate on the next ones)
  // instead of the first groups loading one item of every kind in turn.
  constexpr int kItemsBefore = ((kKind >= 1 ? kNumQHeads : 0) + (kKind >= 2 ? kNumKvHeads : 0) +
                                (kKind >= 3 ? kNumKvHeads : 0)) * kTokensPerBlock;
  const int slot = (group + kHeadsPerBlock - kItemsBefore % kHeadsPerBlock) % kHeadsPerBlock;
  // A kind with fewer items than one prefetch batch does not pay for it.
  constexpr int kBatch = kIterations < kPrefetch ? kIterations : kPrefetch;
  // Each batch issues all its loads before using any, so that several
  // 16-byte loads per thread are in flight.
  for (int batch = 0; batch < kIterations; batch += kBatch) {
    float xs[kBatch][kChunks][kVectorWidth];
    WorkItem items[kBatch];
#pragma unroll
    for (int p = 0; p < kBatch; ++p) {
      const int item = (batch + p) * kHeadsPerBlock + slot;
      WorkItem &w = items[p];
      w.t = item / kHeads;
      w.head = item % kHeads;
      w.token = first_token + w.t;
      w.active = item < kItems && w.token < num_tokens;
      load_row<kKind, act_t, kDim>(
          qkv + (long long)w.token * kFusedWidth + kOffset + w.head * kStride, s.lane,
          w.active, xs[p]);
    }
    // An item is inactive for all the lanes of its group at once, so
    // skipping it keeps the group's shuffles together.
#pragma unroll
    for (int p = 0; p < kBatch; ++p)
      if (items[p].active)
)"
       << "        process<kKind>(xs[p], items[p], s" << weights << ");\n"
       << "  }\n}\n\n";
  }
  // Signature: inputs in ABI order, then outputs, then scalars.
  SmallVector<std::string> params = {
      "const act_t *__restrict__ qkv",
      "const " + indexCudaType(op.getSlotMapping()) +
          " *__restrict__ slot_mapping",
      "cache_t *__restrict__ k_cache", "cache_t *__restrict__ v_cache"};
  if (rope)
    params.push_back("const " + indexCudaType(op.getPositions()) +
                     " *__restrict__ positions");
  if (qNorm)
    params.push_back("const act_t *__restrict__ q_norm_weight");
  if (kNorm)
    params.push_back("const act_t *__restrict__ k_norm_weight");
  if (fp8) {
    params.push_back("const float *__restrict__ k_scale");
    params.push_back("const float *__restrict__ v_scale");
  }
  params.push_back("act_t *__restrict__ q_out");
  if (gate)
    params.push_back("act_t *__restrict__ gate_out");
  params.push_back("int num_tokens");
  os << "extern \"C\" __global__ void __launch_bounds__(kThreadsPerBlock, "
        "kMinBlocksPerSm)\n"
     << name << "(" << llvm::join(params, ",\n    ") << ") {\n"
     << "  const int group = threadIdx.x / kThreadsPerHead;\n"
     << "  const int lane = threadIdx.x % kThreadsPerHead;\n"
     << "  const int first_token = blockIdx.x * kTokensPerBlock;\n"
     << R"(  // Loaded once per block, ahead of the head data, so that their latency
  // overlaps it: each token's cache slot.
  __shared__ long long token_slot[kTokensPerBlock];
  if (threadIdx.x < kTokensPerBlock)
    token_slot[threadIdx.x] = first_token + (int)threadIdx.x < num_tokens
                                  ? (long long)slot_mapping[first_token + threadIdx.x] : -1;
)";

  if (rope) {
    os << R"(  // Each token's rotation, shared by all its q and k heads, indexed by the
  // rotary element j: out[j] = x[j] * rope_cos[j] + partner(j) * rope_sin[j],
  // the sign of the sine folded into the table.
  __shared__ __align__(16) float rope_cos[kTokensPerBlock][kRotaryDim];
  __shared__ __align__(16) float rope_sin[kTokensPerBlock][kRotaryDim];
  for (int i = threadIdx.x; i < kTokensPerBlock * kRotaryHalf; i += kThreadsPerBlock) {
    const int t = i / kRotaryHalf, f = i % kRotaryHalf;
    float c = 1.0f, s = 0.0f;
    if (first_token + t < num_tokens)
      attnc::rope_cos_sin(positions[first_token + t], kInvFreq[f], &c, &s);
    c *= kRopeAttentionFactor;
    s *= kRopeAttentionFactor;
)";
    if (*op.getRopeStyle() == RopeStyle::neox)
      os << R"(    // neox: element f pairs with f + half.
    rope_cos[t][f] = c;
    rope_sin[t][f] = -s;
    rope_cos[t][f + kRotaryHalf] = c;
    rope_sin[t][f + kRotaryHalf] = s;
  }
)";
    else
      os << R"(    // gptj: element 2f pairs with 2f + 1.
    rope_cos[t][2 * f] = c;
    rope_sin[t][2 * f] = -s;
    rope_cos[t][2 * f + 1] = c;
    rope_sin[t][2 * f + 1] = s;
  }
)";
  }
  os << "  __syncthreads();\n";
  if (fp8)
    os << "  const float k_inv_scale = 1.0f / *k_scale, v_inv_scale = 1.0f / *v_scale;\n";
  os << "  BlockState state;\n"
     << "  state.lane = lane;\n"
     << "  state.group_mask = attnc::group_lane_mask<kThreadsPerHead>();\n"
     << "  state.token_slot = token_slot;\n"
     << "  state.q_out = q_out;\n"
     << "  state.k_cache = k_cache;\n  state.v_cache = v_cache;\n";
  if (gate)
    os << "  state.gate_out = gate_out;\n";
  if (rope)
    os << "  state.rope_cos = rope_cos;\n  state.rope_sin = rope_sin;\n";
  if (fp8)
    os << "  state.k_inv_scale = k_inv_scale;\n  state.v_inv_scale = v_inv_scale;\n";
  {
    std::string weights = std::string(qNorm ? ", q_norm_weight" : "") +
                          std::string(kNorm ? ", k_norm_weight" : "");
    for (int kind = 0; kind < (gate ? 4 : 3); ++kind)
      os << "  run_kind<" << kind << ">(qkv, group, first_token, num_tokens, state" << weights
         << ");\n";
  }
  os << "}\n";

  // ABI.
  ElementType activation = abiType(emissionString(emission, "activation"));
  ElementType cache = abiType(emissionString(emission, "cache"));
  KernelAbi abi;
  abi.name = name;
  abi.params.push_back(
      pointerParam("qkv", activation, abiShape(op.getQkv(), {"num_tokens"})));
  abi.params.push_back(pointerParam("slot_mapping",
                                    indexAbiType(op.getSlotMapping()),
                                    abiShape(op.getSlotMapping(), {"num_tokens"})));
  abi.params.push_back(
      pointerParam("k_cache", cache, abiShape(op.getKCache(), {"num_blocks"})));
  abi.params.push_back(
      pointerParam("v_cache", cache, abiShape(op.getVCache(), {"num_blocks"})));
  if (rope)
    abi.params.push_back(pointerParam("positions",
                                      indexAbiType(op.getPositions()),
                                      abiShape(op.getPositions(), {"num_tokens"})));
  if (qNorm)
    abi.params.push_back(pointerParam("q_norm_weight", activation,
                                      abiShape(op.getQNormWeight(), {})));
  if (kNorm)
    abi.params.push_back(pointerParam("k_norm_weight", activation,
                                      abiShape(op.getKNormWeight(), {})));
  if (fp8) {
    abi.params.push_back(pointerParam("k_scale", ElementType::F32, {}));
    abi.params.push_back(pointerParam("v_scale", ElementType::F32, {}));
  }
  abi.params.push_back(
      pointerParam("q_out", activation, abiShape(op.getQ(), {"num_tokens"})));
  if (gate)
    abi.params.push_back(pointerParam("gate_out", activation,
                                      abiShape(op.getGate(), {"num_tokens"})));
  abi.params.push_back(scalarParam("num_tokens", ParamKind::I32));
  abi.block = {static_cast<uint32_t>(schedule.getThreadsPerBlock()), 1, 1};
  abi.grid = {GridDimRule::ceilDiv("num_tokens", 1, schedule.getTokensPerBlock()),
              GridDimRule::fixed(1), GridDimRule::fixed(1)};
  return EmittedKernel{name, "preprocess",
                       layerOf(function),
                       std::move(source), std::move(abi)};
}
} // namespace attnc::emit
