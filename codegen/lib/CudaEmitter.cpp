//===- CudaEmitter.cpp - attn kernel form to CUDA C++ ---------------------===//
//
// Prints prepared kernel functions (attn-prepare-emission has run) as CUDA
// C++. Every number comes from the op, its schedule or its `attn.emission`
// dictionary; sections of code exist only for stages the op has, so a model
// without q/k norm gets a kernel with no norm code at all.
//
//===----------------------------------------------------------------------===//
#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace attnc::attn;
using attnc::runtime::ElementType;
using attnc::runtime::GridDimRule;
using attnc::runtime::KernelAbi;
using attnc::runtime::KernelParam;
using attnc::runtime::ParamKind;
using attnc::runtime::ShapeDim;

namespace attnc {
namespace {

/// A double as a C++ literal that reads back exactly.
std::string literal(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  std::string out = text;
  if (out.find_first_of(".eEn") == std::string::npos)
    out += ".0";
  return out;
}

/// A float literal (the value rounded to float when compiled).
std::string floatLiteral(double value) { return literal(value) + "f"; }

std::string cudaType(StringRef name) {
  if (name == "bf16")
    return "__nv_bfloat16";
  if (name == "fp16")
    return "__half";
  if (name == "fp8_e4m3")
    return "__nv_fp8_e4m3";
  return "float";
}

ElementType abiType(StringRef name) {
  if (name == "bf16")
    return ElementType::BF16;
  if (name == "fp16")
    return ElementType::F16;
  if (name == "fp8_e4m3")
    return ElementType::Fp8E4M3;
  return ElementType::F32;
}

/// i32 / i64 index tensors, as printed and as the ABI names them.
std::string indexCudaType(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType().isInteger(64)
             ? "long long"
             : "int";
}
ElementType indexAbiType(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType().isInteger(64)
             ? ElementType::I64
             : ElementType::I32;
}

int64_t emissionInt(DictionaryAttr emission, StringRef name) {
  return cast<IntegerAttr>(emission.get(name)).getInt();
}
double emissionFloat(DictionaryAttr emission, StringRef name) {
  return cast<FloatAttr>(emission.get(name)).getValueAsDouble();
}
StringRef emissionString(DictionaryAttr emission, StringRef name) {
  return cast<StringAttr>(emission.get(name)).getValue();
}

/// The shape of a tensor value for the ABI: static dims as constants, the
/// dynamic ones as the given symbols, in order.
std::vector<ShapeDim> abiShape(Value value, ArrayRef<StringRef> symbols) {
  auto type = cast<RankedTensorType>(value.getType());
  std::vector<ShapeDim> shape;
  size_t next = 0;
  for (int64_t dim : type.getShape()) {
    if (ShapedType::isDynamic(dim))
      shape.push_back(ShapeDim::named(std::string(
          next < symbols.size() ? symbols[next++] : StringRef("dynamic"))));
    else
      shape.push_back(ShapeDim::constant(dim));
  }
  return shape;
}

KernelParam pointerParam(StringRef name, ElementType dtype,
                         std::vector<ShapeDim> shape) {
  KernelParam param;
  param.name = name.str();
  param.kind = ParamKind::Pointer;
  param.dtype = dtype;
  param.shape = std::move(shape);
  return param;
}

KernelParam scalarParam(StringRef name, ParamKind kind) {
  KernelParam param;
  param.name = name.str();
  param.kind = kind;
  return param;
}

std::string describeScaling(RopeScalingAttr scaling) {
  if (!scaling)
    return "none";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << stringifyRopeScalingKind(scaling.getKind())
     << " factor=" << literal(scaling.getFactor());
  if (scaling.getOriginalMaxPosition())
    os << " original_max_position=" << scaling.getOriginalMaxPosition();
  return text;
}

/// The kernel op's `attn.emission` dictionary; an error at the op when
/// attn-prepare-emission (or attn-specialize, which sets the schedule) has
/// not run on it.
FailureOr<DictionaryAttr> preparedEmission(Operation *op, Attribute schedule) {
  auto emission = op->getAttrOfType<DictionaryAttr>("attn.emission");
  if (!emission || !schedule)
    return op->emitOpError() << "is not prepared for emission (run "
                                "attn-prepare-emission first)";
  return emission;
}

/// The layer function a kernel function was outlined from.
std::string layerOf(func::FuncOp kernel) {
  return kernel->getAttrOfType<StringAttr>("attn.layer").str();
}

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
  // A kind with fewer items than one prefetch batch does not pay for it.
  constexpr int kBatch = kIterations < kPrefetch ? kIterations : kPrefetch;
  // Each batch issues all its loads before using any, so that several
  // 16-byte loads per thread are in flight.
  for (int batch = 0; batch < kIterations; batch += kBatch) {
    float xs[kBatch][kChunks][kVectorWidth];
    WorkItem items[kBatch];
#pragma unroll
    for (int p = 0; p < kBatch; ++p) {
      const int item = (batch + p) * kHeadsPerBlock + group;
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

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

FailureOr<EmittedKernel> emitAttention(func::FuncOp function,
                                       PagedAttentionOp op, OutputGateOp gateOp) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  FailureOr<DictionaryAttr> prepared = preparedEmission(op, schedule);
  if (failed(prepared))
    return failure();
  DictionaryAttr emission = *prepared;
  std::string name = function.getSymName().str();
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  auto kCacheType = cast<RankedTensorType>(op.getKCache().getType());
  auto vCacheType = cast<RankedTensorType>(op.getVCache().getType());
  int64_t numQHeads = queryType.getDimSize(1);
  int64_t numKvHeads = kCacheType.getDimSize(2);
  int64_t qkHeadDim = queryType.getDimSize(2);
  int64_t vHeadDim = vCacheType.getDimSize(3);
  int64_t groupSize = emissionInt(emission, "group_size");
  int64_t warps = schedule.getNumWarps();
  bool sinks = static_cast<bool>(op.getSinks());
  bool fp8 = emissionString(emission, "cache") == "fp8_e4m3";
  bool gate = static_cast<bool>(gateOp);
  int64_t window = op.getSlidingWindow();
  double softcap = op.getLogitSoftcap().convertToDouble();
  double valueScale = op.getValueScale().convertToDouble();
  bool causal = op.getCausal();

  std::string source;
  llvm::raw_string_ostream os(source);
  os << "// attnc generated kernel " << name << " (attention) for layer "
     << layerOf(function) << "\n"
     << "// configuration: num_q_heads=" << numQHeads
     << " num_kv_heads=" << numKvHeads << " qk_head_dim=" << qkHeadDim
     << " v_head_dim=" << vHeadDim << " group_size=" << groupSize << "\n"
     << "//   softmax_scale=" << literal(op.getSoftmaxScale().convertToDouble())
     << (causal ? " causal" : " non-causal");
  if (window)
    os << " sliding_window=" << window;
  if (sinks)
    os << " sinks";
  if (softcap > 0)
    os << " logit_softcap=" << literal(softcap);
  if (valueScale != 1.0)
    os << " value_scale=" << literal(valueScale);
  if (gate)
    os << " output_gate";
  os << "\n//   activation " << emissionString(emission, "activation")
     << ", cache " << emissionString(emission, "cache") << " (block_size "
     << emissionInt(emission, "block_size") << ")\n"
     << "// schedule: block_m=" << schedule.getBlockM()
     << " block_n=" << schedule.getBlockN() << " num_warps=" << warps
     << " pipeline_stages=" << schedule.getPipelineStages()
     << " qk_dim_padded=" << schedule.getQkDimPadded()
     << " v_dim_padded=" << schedule.getVDimPadded()
     << " gqa_pack=" << schedule.getGqaPack()
     << " split_kv_min_keys=" << schedule.getSplitKvMinKeys()
     << " max_kv_splits=" << schedule.getMaxKvSplits()
     << " target_ctas=" << schedule.getTargetCtas() << "\n"
     << "// This kernel is the reference-quality form: one block per (query "
        "row, KV head),\n// warps stride over the keys, the group's query "
        "heads share each K/V read.\n"
     << "#include \"attnc_device.cuh\"\n\n"
     << "namespace {\n"
     << "using act_t = " << cudaType(emissionString(emission, "activation"))
     << ";\n"
     << "using cache_t = " << cudaType(emissionString(emission, "cache"))
     << ";\n"
     << "constexpr int kNumQHeads = " << numQHeads << ";\n"
     << "constexpr int kNumKvHeads = " << numKvHeads << ";\n"
     << "constexpr int kGroupSize = " << groupSize << ";\n"
     << "constexpr int kQkHeadDim = " << qkHeadDim << ";\n"
     << "constexpr int kVHeadDim = " << vHeadDim << ";\n"
     << "constexpr int kBlockSize = " << emissionInt(emission, "block_size")
     << ";\n"
     << "constexpr int kWarps = " << warps << ";\n"
     << "constexpr int kQkPerLane = (kQkHeadDim + 31) / 32;\n"
     << "constexpr int kVPerLane = (kVHeadDim + 31) / 32;\n"
     << "// softmax_scale * log2(e): scores live in log2 units (exp2).\n"
     << "constexpr float kScaleLog2 = "
     << floatLiteral(emissionFloat(emission, "scale_log2")) << ";\n";
  if (window)
    os << "constexpr int kSlidingWindow = " << window << ";\n";
  if (softcap > 0)
    os << "constexpr float kSoftcap = " << floatLiteral(softcap) << ";\n"
       << "constexpr float kSoftmaxScale = "
       << floatLiteral(op.getSoftmaxScale().convertToDouble()) << ";\n";
  if (valueScale != 1.0)
    os << "constexpr float kValueScale = " << floatLiteral(valueScale) << ";\n";
  os << "} // namespace\n\n";

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
  abi.params.push_back(pointerParam("query", activation,
                                    abiShape(op.getQuery(), {"num_tokens"})));
  abi.params.push_back(
      pointerParam("k_cache", cache, abiShape(op.getKCache(), {"num_blocks"})));
  abi.params.push_back(
      pointerParam("v_cache", cache, abiShape(op.getVCache(), {"num_blocks"})));
  abi.params.push_back(pointerParam(
      "block_tables", ElementType::I32,
      abiShape(op.getBlockTables(), {"num_seqs", "max_blocks_per_seq"})));
  abi.params.push_back(pointerParam("seq_lens", ElementType::I32,
                                    abiShape(op.getSeqLens(), {"num_seqs"})));
  abi.params.push_back(pointerParam("query_start_loc", ElementType::I32,
                                    abiShape(op.getQueryStartLoc(),
                                             {"num_seqs_plus_one"})));
  if (sinks)
    abi.params.push_back(
        pointerParam("sinks", ElementType::F32, abiShape(op.getSinks(), {})));
  if (fp8) {
    abi.params.push_back(pointerParam("k_scale", ElementType::F32, {}));
    abi.params.push_back(pointerParam("v_scale", ElementType::F32, {}));
  }
  if (gate)
    abi.params.push_back(pointerParam("gate", activation,
                                      abiShape(gateOp.getGate(), {"num_tokens"})));
  abi.params.push_back(pointerParam("output", activation,
                                    abiShape(op.getOutput(), {"num_tokens"})));
  abi.params.push_back(scalarParam("num_tokens", ParamKind::I32));
  abi.params.push_back(scalarParam("num_seqs", ParamKind::I32));
  abi.params.push_back(scalarParam("max_blocks_per_seq", ParamKind::I32));
  abi.block = {static_cast<uint32_t>(warps * 32), 1, 1};
  abi.grid = {GridDimRule::ceilDiv("num_tokens", 1, 1),
              GridDimRule::fixed(numKvHeads), GridDimRule::fixed(1)};
  abi.dynamic_shared_memory_bytes = static_cast<uint32_t>(
      warps * groupSize * (2 + vHeadDim) * sizeof(float));
  return EmittedKernel{name, "attention",
                       layerOf(function),
                       std::move(source), std::move(abi)};
}

} // namespace

FailureOr<std::vector<EmittedKernel>> emitCudaKernels(ModuleOp module) {
  std::vector<EmittedKernel> kernels;
  for (auto function : module.getOps<func::FuncOp>()) {
    auto kind = function->getAttrOfType<StringAttr>("attn.kernel");
    if (!kind)
      continue;
    FailureOr<EmittedKernel> kernel = failure();
    if (kind.getValue() == "preprocess") {
      auto ops = function.getOps<FusedPreprocessOp>();
      if (ops.empty())
        return function.emitOpError() << "has no attn.fused_preprocess";
      kernel = emitPreprocess(function, *ops.begin());
    } else if (kind.getValue() == "attention") {
      auto ops = function.getOps<PagedAttentionOp>();
      auto gates = function.getOps<OutputGateOp>();
      if (ops.empty())
        return function.emitOpError() << "has no attn.paged_attention";
      kernel = emitAttention(function, *ops.begin(),
                             gates.empty() ? OutputGateOp() : *gates.begin());
    } else {
      return function.emitOpError()
             << "has unknown attn.kernel kind '" << kind.getValue() << "'";
    }
    if (failed(kernel))
      return failure();
    kernels.push_back(std::move(*kernel));
  }
  return kernels;
}

} // namespace attnc
