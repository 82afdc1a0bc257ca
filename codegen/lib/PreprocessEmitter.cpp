//===- PreprocessEmitter.cpp - the fused preprocess kernel's printer ------===//
//
// Prints one attn.fused_preprocess kernel function as CUDA C++ and its ABI.
// The kernel body is the template in runtime/device/attnc_preprocess.cuh;
// this file prints what instantiates it: a header comment, the `Config`
// (every number and flag the op, its schedule and attn-prepare-emission
// recorded) and the extern "C" entry point, whose parameters and the ABI's
// come from one list.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace attnc::attn;
using attnc::runtime::ElementType;
using attnc::runtime::GridDimRule;
using attnc::runtime::KernelAbi;
using attnc::runtime::ParamKind;

namespace attnc::emit {
namespace {

/// What the printer reads of one kernel, gathered once.
struct PreprocessKernel {
  PreprocessKernel(func::FuncOp function, FusedPreprocessOp op,
                   PreprocessEmissionAttr emission)
      : function(function), op(op), schedule(op.getScheduleAttr()),
        emission(emission), name(function.getSymName().str()),
        qNorm(op.hasStage(PreprocessStage::q_norm)),
        kNorm(op.hasStage(PreprocessStage::k_norm)),
        rope(op.hasStage(PreprocessStage::rope)),
        temperature(op.hasStage(PreprocessStage::q_temperature)),
        gate(static_cast<bool>(op.getGate())),
        fp8(emission.getCache() == "fp8_e4m3") {}

  func::FuncOp function;
  FusedPreprocessOp op;
  PreprocessScheduleAttr schedule;
  PreprocessEmissionAttr emission;
  std::string name;
  bool qNorm, kNorm, rope, temperature, gate, fp8;
};

/// The configuration, features, layout and schedule, for the reader.
void printHeaderComment(raw_ostream &os, const PreprocessKernel &k) {
  FusedPreprocessOp op = k.op;
  PreprocessEmissionAttr emission = k.emission;
  os << "// attnc generated kernel " << k.name << " (preprocess) for layer "
     << layerOf(k.function) << "\n"
     << "// configuration: num_q_heads=" << op.getNumQHeads()
     << " num_kv_heads=" << op.getNumKvHeads()
     << " qk_head_dim=" << op.getQkHeadDim()
     << " v_head_dim=" << op.getVHeadDim()
     << " gate_layout=" << stringifyGateLayout(op.getGateLayout())
     << (k.gate ? " (gate output)" : "") << "\n"
     << "//   stages:";
  if (op.getStages().empty())
    os << " none";
  for (auto stage : op.getStages().getAsRange<PreprocessStageAttr>())
    os << " " << stringifyPreprocessStage(stage.getValue());
  os << "\n";
  if (k.qNorm || k.kNorm) {
    os << "//   norm: " << stringifyNormStyle(*op.getNormStyle())
       << " eps=" << literal(op.getNormEpsAttr().getValueAsDouble());
    if (op.normScope() != NormScope::head)
      os << " scope=" << stringifyNormScope(op.normScope());
    if (op.getQNormBias() || op.getKNormBias())
      os << " with bias";
    os << "\n";
  }
  if (k.rope)
    os << "//   rope: " << stringifyRopeStyle(*op.getRopeStyle())
       << " rotary_dim=" << *op.getRotaryDim()
       << " rotary_offset=" << *op.getRotaryOffset()
       << " theta=" << literal(op.getThetaAttr().getValueAsDouble())
       << " scaling=" << describeScaling(op.getScalingAttr()) << "\n";
  if (k.temperature)
    os << "//   q temperature: log(floor((pos + 1) / "
       << literal(op.getTemperatureFloorScaleAttr().getValueAsDouble())
       << ") + 1) * "
       << literal(op.getTemperatureScaleAttr().getValueAsDouble()) << " + 1\n";
  os << "//   activation " << emission.getActivation() << ", cache "
     << emission.getCache() << " (block_size " << emission.getBlockSize()
     << ")\n"
     << "// layout: fused_width=" << emission.getFusedWidth() << " q@"
     << emission.getQOffset() << " (head stride " << emission.getQHeadStride()
     << ") k@" << emission.getKOffset() << " v@" << emission.getVOffset();
  if (k.gate)
    os << " gate@" << *emission.getGateOffset() << " (head stride "
       << *emission.getGateHeadStride() << ")";
  PreprocessScheduleAttr schedule = k.schedule;
  os << "\n// schedule: vector_width=" << schedule.getVectorWidth()
     << " threads_per_head=" << schedule.getThreadsPerHead()
     << " threads_per_block=" << schedule.getThreadsPerBlock()
     << " heads_per_block=" << schedule.getHeadsPerBlock()
     << " tokens_per_block=" << schedule.getTokensPerBlock()
     << " min_blocks_per_sm=" << schedule.getMinBlocksPerSm()
     << " pair_layout=" << boolLiteral(schedule.getPairLayout())
     << " prefetch=" << schedule.getPrefetch() << "\n";
}

/// `  static constexpr <type> <name> = <value>;`
template <typename T>
void printMember(raw_ostream &os, StringRef type, StringRef name,
                 const T &value) {
  os << "  static constexpr " << type << " " << name << " = " << value << ";\n";
}

/// The rope table, in constant memory (a Config member function reads it).
void printInvFreqTable(raw_ostream &os, StringRef name,
                       DenseF64ArrayAttr invFreq) {
  os << "__constant__ double " << name << "[" << invFreq.size() << "] = {";
  for (auto [i, value] : llvm::enumerate(invFreq.asArrayRef()))
    os << (i % 4 ? " " : "\n    ") << literal(value) << ",";
  os << "\n};\n\n";
}

/// The rope tables: the inverse frequencies, and longrope's second table.
void printInvFreqTables(raw_ostream &os, const PreprocessKernel &k) {
  os << "// Inverse frequencies (scaling applied), computed in double.\n";
  printInvFreqTable(os, "rope_inv_freq", k.emission.getInvFreq());
  if (DenseF64ArrayAttr invFreqLong = k.emission.getInvFreqLong()) {
    os << "// From position " << k.emission.getRopeLongFrom()
       << " on (longrope's long factors).\n";
    printInvFreqTable(os, "rope_inv_freq_long", invFreqLong);
  }
}

/// The members of the features the kernel has (attnc::preprocess::Defaults
/// says the others are absent).
void printFeatureMembers(raw_ostream &os, const PreprocessKernel &k) {
  FusedPreprocessOp op = k.op;
  os << "  // Features (absent ones leave no code).\n";
  printMember(os, "bool", "has_q_norm", boolLiteral(k.qNorm));
  printMember(os, "bool", "has_k_norm", boolLiteral(k.kNorm));
  printMember(os, "bool", "has_rope", boolLiteral(k.rope));
  printMember(os, "bool", "has_gate", boolLiteral(k.gate));
  printMember(os, "bool", "fp8_cache", boolLiteral(k.fp8));
  if (k.gate) {
    printMember(os, "long long", "gate_offset",
                *k.emission.getGateOffset());
    printMember(os, "long long", "gate_head_stride",
                *k.emission.getGateHeadStride());
    if (op.getGateLayout() == GateLayout::head_scalar)
      printMember(os, "bool", "gate_head_scalar", "true");
  }
  if (k.qNorm || k.kNorm) {
    printMember(os, "auto", "norm_style",
                std::string("attnc::preprocess::NormStyle::") +
                    stringifyNormStyle(*op.getNormStyle()).str());
    printMember(os, "bool", "norm_after_rope", boolLiteral(op.normAfterRope()));
    printMember(os, "float", "norm_eps",
                floatLiteral(op.getNormEpsAttr().getValueAsDouble()));
    // The common case (head scope, no bias) is the Defaults' and not printed.
    if (op.normScope() != NormScope::head)
      printMember(os, "auto", "norm_scope",
                  std::string("attnc::preprocess::NormScope::") +
                      stringifyNormScope(op.normScope()).str());
    if (op.getQNormBias())
      printMember(os, "bool", "has_q_norm_bias", "true");
    if (op.getKNormBias())
      printMember(os, "bool", "has_k_norm_bias", "true");
  }
  if (k.rope || k.temperature)
    os << "  using position_t = " << indexCudaType(op.getPositions()) << ";\n";
  if (k.temperature) {
    printMember(os, "bool", "has_q_temperature", "true");
    printMember(os, "double", "temperature_floor_scale",
                literal(op.getTemperatureFloorScaleAttr().getValueAsDouble()));
    printMember(os, "float", "temperature_scale",
                floatLiteral(op.getTemperatureScaleAttr().getValueAsDouble()));
  }
  if (k.rope) {
    printMember(os, "auto", "rope_style",
                std::string("attnc::preprocess::RopeStyle::") +
                    stringifyRopeStyle(*op.getRopeStyle()).str());
    printMember(os, "int", "rotary_dim", *op.getRotaryDim());
    printMember(os, "int", "rotary_offset", *op.getRotaryOffset());
    printMember(os, "float", "rope_attention_factor",
                floatLiteral(k.emission.getRopeAttentionFactor().value));
    os << "  static __device__ __forceinline__ double inv_freq(int i) { return "
          "rope_inv_freq[i]; }\n";
    if (k.emission.getInvFreqLong()) {
      printMember(os, "long long", "rope_long_from",
                  k.emission.getRopeLongFrom());
      os << "  static __device__ __forceinline__ double inv_freq_long(int i) "
            "{ return rope_inv_freq_long[i]; }\n";
    }
  }
}

/// The Config the kernel template is instantiated with.
void printConfig(raw_ostream &os, const PreprocessKernel &k) {
  FusedPreprocessOp op = k.op;
  PreprocessEmissionAttr emission = k.emission;
  PreprocessScheduleAttr schedule = k.schedule;
  os << "struct Config : attnc::preprocess::Defaults {\n"
     << "  using act_t = " << cudaType(emission.getActivation()) << ";\n"
     << "  using cache_t = " << cudaType(emission.getCache()) << ";\n"
     << "  using slot_t = " << indexCudaType(op.getSlotMapping()) << ";\n"
     << "  // Heads, dims and the fused row's layout.\n";
  printMember(os, "int", "num_q_heads", op.getNumQHeads());
  printMember(os, "int", "num_kv_heads", op.getNumKvHeads());
  printMember(os, "int", "qk_head_dim", op.getQkHeadDim());
  printMember(os, "int", "v_head_dim", op.getVHeadDim());
  printMember(os, "int", "block_size", emission.getBlockSize());
  printMember(os, "long long", "fused_width", emission.getFusedWidth());
  printMember(os, "long long", "q_offset", emission.getQOffset());
  printMember(os, "long long", "q_head_stride", emission.getQHeadStride());
  printMember(os, "long long", "k_offset", emission.getKOffset());
  printMember(os, "long long", "v_offset", emission.getVOffset());
  printFeatureMembers(os, k);
  os << "  // Schedule (attn-specialize).\n";
  printMember(os, "int", "vector_width", schedule.getVectorWidth());
  printMember(os, "int", "threads_per_head", schedule.getThreadsPerHead());
  printMember(os, "int", "threads_per_block", schedule.getThreadsPerBlock());
  printMember(os, "int", "heads_per_block", schedule.getHeadsPerBlock());
  printMember(os, "int", "tokens_per_block", schedule.getTokensPerBlock());
  printMember(os, "int", "min_blocks_per_sm", schedule.getMinBlocksPerSm());
  printMember(os, "bool", "pair_layout", boolLiteral(schedule.getPairLayout()));
  printMember(os, "int", "prefetch", schedule.getPrefetch());
  os << "};\n";
}

/// The entry point's parameters, in ABI order: inputs and the caches with
/// their strides, outputs, scalars.
SmallVector<EmittedParam> kernelParams(const PreprocessKernel &k) {
  FusedPreprocessOp op = k.op;
  ElementType activation = abiType(k.emission.getActivation());
  ElementType cache = abiType(k.emission.getCache());
  SmallVector<EmittedParam> params = {
      inputParam("qkv", activation, abiShape(op.getQkv(), {"num_tokens"}),
                 "Config::act_t"),
      inputParam("slot_mapping", indexAbiType(op.getSlotMapping()),
                 abiShape(op.getSlotMapping(), {"num_tokens"}), "Config::slot_t")};
  // The caches are the engine's views, followed by their strides.
  llvm::append_range(
      params, cacheViewParams(
                  outputParam("k_cache", cache,
                              abiShape(op.getKCache(), {"num_blocks"}),
                              "Config::cache_t"),
                  outputParam("v_cache", cache,
                              abiShape(op.getVCache(), {"num_blocks"}),
                              "Config::cache_t")));
  if (k.rope || k.temperature)
    params.push_back(inputParam("positions", indexAbiType(op.getPositions()),
                                abiShape(op.getPositions(), {"num_tokens"}),
                                "Config::position_t"));
  // Norm weights ([Dqk], [H, Dqk] or [H * Dqk] by scope) and layernorm
  // biases (the weight's shape), each only when the op has it.
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"q_norm_weight", op.getQNormWeight()},
        {"k_norm_weight", op.getKNormWeight()},
        {"q_norm_bias", op.getQNormBias()},
        {"k_norm_bias", op.getKNormBias()}})
    if (value)
      params.push_back(
          inputParam(name, activation, abiShape(value, {}), "Config::act_t"));
  if (k.fp8) {
    params.push_back(inputParam("k_scale", ElementType::F32, {}, "float"));
    params.push_back(inputParam("v_scale", ElementType::F32, {}, "float"));
  }
  params.push_back(outputParam("q_out", activation,
                               abiShape(op.getQ(), {"num_tokens"}),
                               "Config::act_t"));
  if (k.gate)
    params.push_back(outputParam("gate_out", activation,
                                 abiShape(op.getGate(), {"num_tokens"}),
                                 "Config::act_t"));
  params.push_back(scalarArg("num_tokens", ParamKind::I32));
  return params;
}

/// The extern "C" kernel: its arguments into Params, then the template.
void printEntryPoint(raw_ostream &os, const PreprocessKernel &k,
                     ArrayRef<EmittedParam> params) {
  printParamsEntryPoint(os, "Config::threads_per_block, Config::min_blocks_per_sm",
                        k.name, "attnc::preprocess", params);
}

} // namespace

FailureOr<EmittedKernel> emitPreprocess(func::FuncOp function,
                                        FusedPreprocessOp op) {
  PreprocessScheduleAttr schedule = op.getScheduleAttr();
  FailureOr<PreprocessEmissionAttr> prepared =
      preparedEmission<PreprocessEmissionAttr>(op, schedule);
  if (failed(prepared))
    return failure();
  PreprocessKernel kernel(function, op, *prepared);
  // A hand-written emission attribute must still fit the op.
  PreprocessEmissionAttr emission = *prepared;
  if (kernel.gate != emission.getGateOffset().has_value() ||
      kernel.gate != emission.getGateHeadStride().has_value())
    return op.emitOpError()
           << "attn.emission has gate_offset and gate_head_stride exactly "
              "when the kernel outputs the gate";
  if (kernel.rope != static_cast<bool>(emission.getInvFreq()) ||
      (kernel.rope && emission.getInvFreq().size() != *op.getRotaryDim() / 2))
    return op.emitOpError() << "attn.emission has inv_freq (rotary_dim / 2 "
                               "values) exactly when the kernel has rope";
  if (DenseF64ArrayAttr invFreqLong = emission.getInvFreqLong())
    if (!kernel.rope || invFreqLong.size() != emission.getInvFreq().size() ||
        emission.getRopeLongFrom() < 1)
      return op.emitOpError()
             << "attn.emission's inv_freq_long needs rope, inv_freq's length "
                "and rope_long_from >= 1";
  SmallVector<EmittedParam> params = kernelParams(kernel);

  std::string source;
  llvm::raw_string_ostream os(source);
  printHeaderComment(os, kernel);
  os << "#include \"attnc_preprocess.cuh\"\n\nnamespace {\n";
  if (kernel.rope)
    printInvFreqTables(os, kernel);
  printConfig(os, kernel);
  os << "} // namespace\n\n";
  printEntryPoint(os, kernel, params);

  KernelAbi abi;
  abi.name = kernel.name;
  abi.params = abiParams(params);
  abi.block = {static_cast<uint32_t>(schedule.getThreadsPerBlock()), 1, 1};
  abi.grid = {GridDimRule::ceilDiv("num_tokens", 1, schedule.getTokensPerBlock()),
              GridDimRule::fixed(1), GridDimRule::fixed(1)};
  // The template waits (griddepcontrol.wait) before its first global access.
  abi.programmatic_dependent_launch = true;
  return EmittedKernel{kernel.name, "preprocess", layerOf(function),
                       std::move(source), std::move(abi)};
}

} // namespace attnc::emit
