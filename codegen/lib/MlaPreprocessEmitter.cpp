//===- MlaPreprocessEmitter.cpp - MLA's preprocess kernel printer ---------===//
//
// Prints one attn.mla_preprocess kernel function as CUDA C++ and its ABI.
// The kernel body is the template in runtime/device/attnc_mla_preprocess.cuh;
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
struct MlaPreprocessKernel {
  MlaPreprocessKernel(func::FuncOp function, MlaPreprocessOp op,
                      MlaPreprocessEmissionAttr emission)
      : function(function), op(op), schedule(op.getScheduleAttr()),
        emission(emission), name(function.getSymName().str()),
        latentScale(op.getLatentScaleAttr().getValueAsDouble()),
        fp8(emission.getCache() == "fp8_e4m3") {}

  func::FuncOp function;
  MlaPreprocessOp op;
  MlaPreprocessScheduleAttr schedule;
  MlaPreprocessEmissionAttr emission;
  std::string name;
  double latentScale;
  bool fp8;
};

/// `  static constexpr <type> <name> = <value>;`
template <typename T>
void printMember(raw_ostream &os, StringRef type, StringRef name,
                 const T &value) {
  os << "  static constexpr " << type << " " << name << " = " << value << ";\n";
}

/// The configuration, features and schedule, for the reader.
void printHeaderComment(raw_ostream &os, const MlaPreprocessKernel &k) {
  MlaPreprocessOp op = k.op;
  MlaPreprocessEmissionAttr emission = k.emission;
  MlaPreprocessScheduleAttr schedule = k.schedule;
  os << "// attnc generated kernel " << k.name << " (mla_preprocess) for layer "
     << layerOf(k.function) << "\n"
     << "// configuration: num_heads=" << op.getNumHeads()
     << " kv_lora_rank=" << op.getKvLoraRank()
     << " rope_head_dim=" << op.getRopeHeadDim() << "\n"
     << "//   norm: rms eps=" << literal(op.getNormEpsAttr().getValueAsDouble());
  if (k.latentScale != 1.0)
    os << " latent_scale=" << literal(k.latentScale);
  os << "\n//   rope: " << stringifyRopeStyle(op.getRopeStyle())
     << (op.getRopeDeinterleave() ? " (de-interleaved: halves out)" : "")
     << " theta=" << literal(op.getThetaAttr().getValueAsDouble())
     << " scaling=" << describeScaling(op.getScalingAttr()) << "\n"
     << "//   activation " << emission.getActivation() << ", latent cache "
     << emission.getCache() << " (block_size " << emission.getBlockSize()
     << ")\n"
     << "// schedule: vector_width=" << schedule.getVectorWidth()
     << " warps_per_token=" << schedule.getWarpsPerToken()
     << " tokens_per_block=" << schedule.getTokensPerBlock()
     << " threads_per_block=" << schedule.getThreadsPerBlock()
     << " min_blocks_per_sm=" << schedule.getMinBlocksPerSm();
  if (schedule.getTokenSteps() != 1)
    os << " token_steps=" << schedule.getTokenSteps();
  if (schedule.getL2Prefetch())
    os << " l2_prefetch";
  if (schedule.getStreamingStores())
    os << " streaming_stores";
  if (schedule.getStageInShared())
    os << " stage_in_shared";
  os << "\n";
}

/// The rope table, in constant memory (a Config member function reads it).
void printInvFreqTable(raw_ostream &os, DenseF64ArrayAttr invFreq) {
  os << "// Inverse frequencies (scaling applied), computed in double.\n"
     << "__constant__ double rope_inv_freq[" << invFreq.size() << "] = {";
  for (auto [i, value] : llvm::enumerate(invFreq.asArrayRef()))
    os << (i % 4 ? " " : "\n    ") << literal(value) << ",";
  os << "\n};\n\n";
}

/// The Config the kernel template is instantiated with; the features the
/// kernel lacks are the Defaults' (attnc::mla_preprocess::Defaults).
void printConfig(raw_ostream &os, const MlaPreprocessKernel &k) {
  MlaPreprocessOp op = k.op;
  MlaPreprocessEmissionAttr emission = k.emission;
  MlaPreprocessScheduleAttr schedule = k.schedule;
  os << "struct Config : attnc::mla_preprocess::Defaults {\n"
     << "  using act_t = " << cudaType(emission.getActivation()) << ";\n"
     << "  using cache_t = " << cudaType(emission.getCache()) << ";\n"
     << "  using slot_t = " << indexCudaType(op.getSlotMapping()) << ";\n"
     << "  using position_t = " << indexCudaType(op.getPositions()) << ";\n"
     << "  // Heads, dims, norm and rope.\n";
  printMember(os, "int", "num_heads", op.getNumHeads());
  printMember(os, "int", "kv_lora_rank", op.getKvLoraRank());
  printMember(os, "int", "rope_head_dim", op.getRopeHeadDim());
  printMember(os, "int", "block_size", emission.getBlockSize());
  printMember(os, "float", "norm_eps",
              floatLiteral(op.getNormEpsAttr().getValueAsDouble()));
  printMember(os, "auto", "rope_style",
              std::string("attnc::mla_preprocess::RopeStyle::") +
                  stringifyRopeStyle(op.getRopeStyle()).str());
  printMember(os, "float", "rope_attention_factor",
              floatLiteral(emission.getRopeAttentionFactor().value));
  os << "  static __device__ __forceinline__ double inv_freq(int i) { return "
        "rope_inv_freq[i]; }\n"
     << "  // Features (absent ones leave no code).\n";
  if (op.getRopeDeinterleave())
    printMember(os, "bool", "rope_deinterleave", "true");
  if (k.latentScale != 1.0) {
    printMember(os, "bool", "has_latent_scale", "true");
    printMember(os, "float", "latent_scale", floatLiteral(k.latentScale));
  }
  printMember(os, "bool", "fp8_cache", boolLiteral(k.fp8));
  os << "  // Schedule (attn-specialize).\n";
  printMember(os, "int", "vector_width", schedule.getVectorWidth());
  printMember(os, "int", "warps_per_token", schedule.getWarpsPerToken());
  printMember(os, "int", "tokens_per_block", schedule.getTokensPerBlock());
  printMember(os, "int", "threads_per_block", schedule.getThreadsPerBlock());
  printMember(os, "int", "min_blocks_per_sm", schedule.getMinBlocksPerSm());
  printMember(os, "int", "token_steps", schedule.getTokenSteps());
  printMember(os, "bool", "l2_prefetch", boolLiteral(schedule.getL2Prefetch()));
  printMember(os, "bool", "streaming_stores",
              boolLiteral(schedule.getStreamingStores()));
  printMember(os, "bool", "stage_in_shared",
              boolLiteral(schedule.getStageInShared()));
  os << "};\n";
}

/// The entry point's parameters, in ABI order: the inputs, the cache, the
/// outputs, the views' strides, num_tokens. kv_a / latent_out and q_rope /
/// q_rope_out may be one tensor each (in place), so none of the four is
/// __restrict__.
SmallVector<EmittedParam> kernelParams(const MlaPreprocessKernel &k) {
  MlaPreprocessOp op = k.op;
  ElementType activation = abiType(k.emission.getActivation());
  ElementType cache = abiType(k.emission.getCache());
  EmittedParam kvA = mayAlias(inputParam(
      "kv_a", activation, abiShape(op.getKvA(), {"num_tokens"}), "Config::act_t"));
  EmittedParam qRope = mayAlias(
      inputParam("q_rope", activation, abiShape(op.getQRope(), {"num_tokens"}),
                 "Config::act_t"));
  EmittedParam latentCache = outputParam(
      "latent_cache", cache, abiShape(op.getLatentCache(), {"num_blocks"}),
      "Config::cache_t");
  EmittedParam latentOut = mayAlias(
      outputParam("latent_out", activation,
                  abiShape(op.getLatent(), {"num_tokens"}), "Config::act_t"));
  EmittedParam qRopeOut = mayAlias(
      outputParam("q_rope_out", activation,
                  abiShape(op.getQRopeOut(), {"num_tokens"}), "Config::act_t"));
  std::vector<EmittedParam> strides;
  for (auto [param, dims] :
       {std::pair<EmittedParam *, SmallVector<StringRef>>{&kvA, {"row_stride"}},
        {&qRope, {"token_stride", "head_stride"}},
        {&latentOut, {"row_stride"}},
        {&qRopeOut, {"token_stride", "head_stride"}},
        {&latentCache, {"block_stride", "token_stride"}}})
    llvm::append_range(strides, stridedView(*param, dims));
  SmallVector<EmittedParam> params = {
      kvA,
      qRope,
      inputParam("slot_mapping", indexAbiType(op.getSlotMapping()),
                 abiShape(op.getSlotMapping(), {"num_tokens"}), "Config::slot_t"),
      inputParam("positions", indexAbiType(op.getPositions()),
                 abiShape(op.getPositions(), {"num_tokens"}),
                 "Config::position_t"),
      inputParam("kv_norm_weight", activation,
                 abiShape(op.getKvNormWeight(), {}), "Config::act_t"),
      latentCache,
      presentIf(k.fp8, inputParam("cache_scale", ElementType::F32, {}, "float")),
      latentOut,
      qRopeOut};
  llvm::append_range(params, strides);
  params.push_back(scalarArg("num_tokens", ParamKind::I32));
  return params;
}

/// The extern "C" kernel: its arguments into Params, then the template.
void printEntryPoint(raw_ostream &os, const MlaPreprocessKernel &k,
                     ArrayRef<EmittedParam> params) {
  printParamsEntryPoint(os, "Config::threads_per_block, Config::min_blocks_per_sm",
                        k.name, "attnc::mla_preprocess", params);
}

} // namespace

FailureOr<EmittedKernel> emitMlaPreprocess(func::FuncOp function,
                                           MlaPreprocessOp op) {
  MlaPreprocessScheduleAttr schedule = op.getScheduleAttr();
  FailureOr<MlaPreprocessEmissionAttr> prepared =
      preparedEmission<MlaPreprocessEmissionAttr>(op, schedule);
  if (failed(prepared))
    return failure();
  MlaPreprocessKernel kernel(function, op, *prepared);
  // A hand-written emission attribute must still fit the op.
  if (!prepared->getInvFreq() ||
      static_cast<int64_t>(prepared->getInvFreq().size()) * 2 !=
          static_cast<int64_t>(op.getRopeHeadDim()))
    return op.emitOpError() << "attn.emission has inv_freq with "
                               "rope_head_dim / 2 values";
  SmallVector<EmittedParam> params = kernelParams(kernel);

  std::string source;
  llvm::raw_string_ostream os(source);
  printHeaderComment(os, kernel);
  os << "#include \"attnc_mla_preprocess.cuh\"\n\nnamespace {\n";
  printInvFreqTable(os, prepared->getInvFreq());
  printConfig(os, kernel);
  os << "} // namespace\n\n";
  printEntryPoint(os, kernel, params);

  KernelAbi abi;
  abi.name = kernel.name;
  abi.params = abiParams(params);
  abi.block = {static_cast<uint32_t>(schedule.getThreadsPerBlock()), 1, 1};
  abi.grid = {GridDimRule::ceilDiv("num_tokens", 1,
                                   schedule.getTokensPerBlock() *
                                       schedule.getTokenSteps()),
              GridDimRule::fixed(1), GridDimRule::fixed(1)};
  // The template waits (griddepcontrol.wait) before its first global access.
  abi.programmatic_dependent_launch = true;
  return EmittedKernel{kernel.name, "mla_preprocess", layerOf(function),
                       std::move(source), std::move(abi)};
}

} // namespace attnc::emit
