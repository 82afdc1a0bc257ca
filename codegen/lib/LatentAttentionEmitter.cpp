//===- LatentAttentionEmitter.cpp - MLA's absorbed decode printer ---------===//
//
// Prints one attn.latent_attention kernel function as CUDA C++ over
// runtime/device/attnc_mla_decode.cuh and its ABI. Sizes come from the
// schedule (attn-specialize) and plan/LatentAttention.h; element types,
// block size and the scale from the op's prepared emission.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "attnc/Plan/LatentAttention.h"
#include "attnc/Plan/SplitKv.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace attnc::attn;
using namespace attnc::plan;
using attnc::runtime::ElementType;
using attnc::runtime::GridDimRule;
using attnc::runtime::KernelAbi;
using attnc::runtime::ParamKind;
using attnc::runtime::ShapeDim;

namespace attnc::emit {
namespace {

template <typename T>
void printMember(llvm::raw_ostream &os, StringRef type, StringRef name,
                 const T &value, StringRef comment = {}) {
  os << "  static constexpr " << type << " " << name << " = " << value << ";";
  if (!comment.empty())
    os << "  // " << comment;
  os << "\n";
}

/// The parameters of latent_attention<Config>, in the template's order (the
/// entry point, the ABI and the forwarded call are printed from it).
std::vector<EmittedParam> latentParams(LatentAttentionOp op,
                                       AttentionEmissionAttr emission,
                                       int64_t workspaceFloats) {
  ElementType activation = abiType(emission.getActivation());
  std::string act = cudaType(emission.getActivation());
  bool fp8 = emission.getCache() == "fp8_e4m3";
  // The latent cache is the engine's view [num_blocks, block_size, R + P]
  // with any block and token strides (in elements, the row contiguous).
  EmittedParam cache = inputParam(
      "latent_cache", abiType(emission.getCache()),
      abiShape(op.getLatentCache(), {"num_blocks"}), cudaType(emission.getCache()));
  cache.abi.strides = {ShapeDim::named("latent_cache_block_stride"),
                       ShapeDim::named("latent_cache_token_stride"),
                       ShapeDim::constant(1)};
  // K tiles come in by the tensor memory accelerator: boxes of one page's
  // rows (at most the 64 keys of a tile) x 64 values, 128-byte swizzled.
  int64_t boxRows = latentKBoxRows(emission.getBlockSize());
  std::vector<EmittedParam> params = {
      inputParam("query", activation, abiShape(op.getQuery(), {"num_tokens"}), act),
      std::move(cache),
      presentIf(!fp8, tensorMapParam("latent_cache_map", "latent_cache",
                                     {1, boxRows, 64}, 128)),
      scalarArg("latent_cache_block_stride", ParamKind::I64),
      scalarArg("latent_cache_token_stride", ParamKind::I64),
      inputParam("block_tables", ElementType::I32,
                 abiShape(op.getBlockTables(), {"num_seqs", "max_blocks_per_seq"}),
                 "int"),
      inputParam("seq_lens", ElementType::I32,
                 abiShape(op.getSeqLens(), {"num_seqs"}), "int"),
      inputParam("query_start_loc", ElementType::I32,
                 abiShape(op.getQueryStartLoc(), {"num_seqs_plus_one"}), "int"),
      presentIf(fp8, inputParam("cache_scale", ElementType::F32, {}, "float")),
      outputParam("output", activation, abiShape(op.getOutput(), {"num_tokens"}),
                  act),
      outputParam("workspace", ElementType::F32,
                  {ShapeDim::constant(workspaceFloats)}, "float")};
  for (StringRef name : {"num_tokens", "num_seqs", "max_blocks_per_seq",
                         "num_kv_splits"})
    params.push_back(scalarArg(name, ParamKind::I32));
  return params;
}

} // namespace

FailureOr<EmittedKernel> emitLatentAttention(func::FuncOp function,
                                             LatentAttentionOp op) {
  LatentAttentionScheduleAttr schedule = op.getScheduleAttr();
  FailureOr<AttentionEmissionAttr> prepared =
      preparedEmission<AttentionEmissionAttr>(op, schedule);
  if (failed(prepared))
    return failure();
  AttentionEmissionAttr emission = *prepared;
  auto queryType = cast<RankedTensorType>(op.getQuery().getType());
  int64_t numHeads = queryType.getDimSize(1), qkDim = queryType.getDimSize(2);
  int64_t rank = static_cast<int64_t>(op.getKvLoraRank());
  SplitKvLimits limits{schedule.getTargetCtas(), schedule.getMaxKvSplits()};
  LatentAttentionSharedMap map = latentAttentionSharedMap(qkDim);
  std::string name = function.getSymName().str();
  bool causal = op.getCausal();
  bool fp8 = emission.getCache() == "fp8_e4m3";

  std::string source;
  llvm::raw_string_ostream os(source);
  os << "// attnc generated kernel " << name
     << " (latent_attention: MLA absorbed decode) for layer "
     << layerOf(function) << "\n"
     << "// configuration: num_heads=" << numHeads
     << " kv_lora_rank=" << rank << " rope_head_dim=" << qkDim - rank
     << " softmax_scale=" << literal(op.getSoftmaxScale().convertToDouble())
     << (causal ? " causal" : " non-causal") << "\n"
     << "//   activation " << emission.getActivation() << ", latent cache "
     << emission.getCache() << " (block_size " << emission.getBlockSize()
     << (fp8 ? ", times cache_scale" : "") << ")\n"
     << "// schedule: block_m=" << schedule.getBlockM()
     << " block_n=" << schedule.getBlockN()
     << " num_warps=" << schedule.getNumWarps()
     << " max_kv_splits=" << schedule.getMaxKvSplits()
     << " target_ctas=" << schedule.getTargetCtas() << "\n"
     << "// Q and two K tiles in 128-byte swizzled shared memory, K tiles "
     << (fp8 ? "by cp.async (widened in place)"
             : "by the tensor memory accelerator")
     << ";\n// seesaw schedule: each warpgroup S = Q K^T of its tile by wgmma "
        "m64n64k16, P V of both\n// tiles by wgmma m64n"
     << rank / 2
     << "k16 (V = the K tile's first kv_lora_rank columns); split-KV\n// "
        "merged by the last split.\n"
     << "#include \"attnc_mla_decode.cuh\"\n\n"
     << "namespace {\nstruct Config {\n"
     << "  using act_t = " << cudaType(emission.getActivation()) << ";\n"
     << "  using cache_t = " << cudaType(emission.getCache()) << ";\n";
  printMember(os, "bool", "kFp8", boolLiteral(fp8),
              "rows stored divided by *cache_scale, widened in shared memory");
  printMember(os, "int", "kNumHeads", numHeads);
  printMember(os, "int", "kLatentDim", rank, "kv_lora_rank: V and the output");
  printMember(os, "int", "kQkDim", qkDim, "kv_lora_rank + rope_head_dim");
  printMember(os, "int", "kBlockSize", emission.getBlockSize());
  printMember(os, "int", "kBoxRows", latentKBoxRows(emission.getBlockSize()),
              "rows of a K tile's TMA box (16-bit caches: the tensor map's)");
  printMember(os, "float", "kScaleLog2",
              floatLiteral(emission.getScaleLog2().value),
              "softmax_scale * log2(e): scores live in log2 units (exp2)");
  printMember(os, "bool", "kCausal", boolLiteral(causal));
  printMember(os, "int", "kBlockM", schedule.getBlockM());
  printMember(os, "int", "kBlockN", schedule.getBlockN());
  printMember(os, "int", "kThreads", schedule.getNumWarps() * 32);
  printMember(os, "int", "kMaxSplits", limits.maxKvSplits);
  printMember(os, "int", "kTargetCtas", limits.targetCtas);
  printMember(os, "int", "kWorkspaceTiles", limits.capacityCtas());
  os << "  // Shared memory (plan/LatentAttention.h): byte offsets.\n";
  const std::pair<const char *, int64_t> members[] = {
      {"kQOffset", map.qOffset},
      {"kKOffset", map.kOffset},
      {"kKBytes", map.kBytes},
      {"kPOffset", map.pOffset},
      {"kMaxOffset", map.maxOffset},
      {"kLOffset", map.lOffset},
      {"kSplitFlagOffset", map.splitFlagOffset},
      {"kOwnerOffset", map.ownerOffset},
      {"kBarOffset", map.barOffset},
      {"kSharedBytes", map.totalBytes}};
  for (const auto &[member, value] : members)
    printMember(os, "int", member, value);
  os << "};\n} // namespace\n\n";

  std::vector<EmittedParam> params = latentParams(
      op, emission, latentAttentionWorkspaceFloats(limits, rank));
  printForwardingEntryPoint(os, "Config::kThreads, 1", name,
                            "attnc::latent_attention<Config>", params);

  KernelAbi abi;
  abi.name = name;
  abi.params = abiParams(params);
  abi.block = {static_cast<uint32_t>(schedule.getNumWarps() * 32), 1, 1};
  // Row tiles of one sequence's (token, head) rows, one spare per sequence;
  // the splits along z.
  abi.grid = {GridDimRule::ceilDivPlus("num_tokens", numHeads,
                                       schedule.getBlockM(), "num_seqs"),
              GridDimRule::fixed(1),
              GridDimRule::ceilDiv("num_kv_splits", 1, 1)};
  // The tensor map's outer dim (the cache's blocks) is no kernel parameter.
  if (!fp8)
    abi.launch_scalars = {"num_blocks"};
  abi.hints = {{"target_ctas", limits.targetCtas},
               {"max_kv_splits", limits.maxKvSplits}};
  abi.dynamic_shared_memory_bytes = static_cast<uint32_t>(map.totalBytes);
  // LatentAttention::run waits (griddepcontrol.wait) before its first
  // global access.
  abi.programmatic_dependent_launch = true;
  return EmittedKernel{name, "latent_attention", layerOf(function),
                       std::move(source), std::move(abi)};
}

} // namespace attnc::emit
