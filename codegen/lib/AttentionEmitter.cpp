//===- AttentionEmitter.cpp - the paged attention kernels' printer --------===//
//
// Prints one attn.paged_attention kernel function (with the output gate as
// its epilogue) as CUDA C++ and its ABI: the tensor-core form, or the
// CUDA-core form for shapes the tensor-core tiling does not take. Also
// attn.varlen_attention: the tensor-core template in its contiguous K/V mode.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "attnc/Plan/AttentionTiling.h"
#include "attnc/Plan/SplitKv.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

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

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// What both attention kernel forms read from the op, its gate and its
/// prepared emission attribute.
struct AttentionLayer {
  std::string name;
  StringRef activation, cache;
  int64_t numQHeads, numKvHeads, qkHeadDim, vHeadDim, groupSize;
  int64_t window, chunk;
  double softcap, valueScale;
  bool sinks, fp8, gate, causal;
  /// The gate has one value per query head ([tokens, Hq, 1]).
  bool gateHeadScalar;
  /// K/V are ragged contiguous rows (attn.varlen_attention), not pages.
  bool contiguous = false;

  AttentionLayer(func::FuncOp function, PagedAttentionOp op,
                 OutputGateOp gateOp, AttentionEmissionAttr emission)
      : name(function.getSymName().str()),
        activation(emission.getActivation()),
        cache(emission.getCache()),
        numQHeads(cast<RankedTensorType>(op.getQuery().getType()).getDimSize(1)),
        numKvHeads(cast<RankedTensorType>(op.getKCache().getType()).getDimSize(2)),
        qkHeadDim(cast<RankedTensorType>(op.getQuery().getType()).getDimSize(2)),
        vHeadDim(cast<RankedTensorType>(op.getVCache().getType()).getDimSize(3)),
        groupSize(emission.getGroupSize()),
        window(op.getSlidingWindow()), chunk(op.getAttentionChunk()),
        softcap(op.getLogitSoftcap().convertToDouble()),
        valueScale(op.getValueScale().convertToDouble()),
        sinks(static_cast<bool>(op.getSinks())), fp8(cache == "fp8_e4m3"),
        gate(static_cast<bool>(gateOp)), causal(op.getCausal()),
        gateHeadScalar(gateOp && gateOp.getGate().getType() !=
                                     gateOp.getInput().getType()) {}

  AttentionLayer(func::FuncOp function, VarlenAttentionOp op,
                 AttentionEmissionAttr emission)
      : name(function.getSymName().str()),
        activation(emission.getActivation()),
        cache(emission.getCache()),
        numQHeads(cast<RankedTensorType>(op.getQuery().getType()).getDimSize(1)),
        numKvHeads(cast<RankedTensorType>(op.getKey().getType()).getDimSize(1)),
        qkHeadDim(cast<RankedTensorType>(op.getQuery().getType()).getDimSize(2)),
        vHeadDim(cast<RankedTensorType>(op.getValue().getType()).getDimSize(2)),
        groupSize(emission.getGroupSize()), window(0), chunk(0), softcap(0.0),
        valueScale(1.0), sinks(false), fp8(false), gate(false),
        causal(op.getCausal()), gateHeadScalar(false), contiguous(true) {}
};

/// The comment block that opens every attention kernel's source: the layer,
/// its configuration and features, dtypes and the schedule (`op`: the
/// paged or the varlen attention).
template <typename AttentionOp>
void printAttentionHeader(llvm::raw_ostream &os, const AttentionLayer &layer,
                          func::FuncOp function, AttentionOp op,
                          AttentionEmissionAttr emission) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  StringRef kind = layer.contiguous ? "varlen_attention" : "attention";
  if (auto named = function->getAttrOfType<StringAttr>("attn.kernel"))
    kind = named.getValue(); // the paged op's prefill_attention too
  os << "// attnc generated kernel " << layer.name << " (" << kind << ")"
     << " for layer "
     << layerOf(function) << "\n"
     << "// configuration: num_q_heads=" << layer.numQHeads
     << " num_kv_heads=" << layer.numKvHeads
     << " qk_head_dim=" << layer.qkHeadDim << " v_head_dim=" << layer.vHeadDim
     << " group_size=" << layer.groupSize << "\n"
     << "//   softmax_scale=" << literal(op.getSoftmaxScale().convertToDouble())
     << (layer.causal ? " causal" : " non-causal");
  if (layer.window)
    os << " sliding_window=" << layer.window;
  if (layer.chunk)
    os << " attention_chunk=" << layer.chunk;
  if (layer.sinks)
    os << " sinks";
  if (layer.softcap > 0)
    os << " logit_softcap=" << literal(layer.softcap);
  if (layer.valueScale != 1.0)
    os << " value_scale=" << literal(layer.valueScale);
  if (layer.gate)
    os << " output_gate";
  if (layer.contiguous)
    os << "\n//   activation " << layer.activation
       << ", ragged contiguous K/V (cu_seqlens_q, cu_seqlens_k)\n";
  else
    os << "\n//   activation " << layer.activation << ", cache " << layer.cache
       << " (block_size " << emission.getBlockSize() << ")\n";
  os
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
     << schedule.getMma() << " form=" << stringifyAttentionForm(schedule.getForm())
     << (schedule.getPersistent() ? " persistent=1" : "") << "\n";
}

/// Whether the tensor-core kernel loads its K/V tiles by the tensor memory
/// accelerator (paged_attention_tma<Config>, Config::kTmaKv): the wgmma form
/// (16-bit caches of the activation type) over pages of kTmaMinPageRows or
/// more tokens whose rows
/// are whole 16-byte chunks (the tensor map's strides are multiples of 16
/// bytes). Other kernels keep the cp.async gather and their code.
bool takesTmaKv(const AttentionLayer &layer, bool wgmma, int64_t blockSize) {
  // Boxes work from pages of 8 (whole 8-row swizzle atoms), and the GPU
  // suite passes there; but one thread issuing a box per page and 64-column
  // block made 192/128 prefill at pages of 16 (12 K boxes a tile) slower
  // than the cp.async gather of pages of 4 (H200, 2026-12-03: 317 against
  // 362 TFLOP/s), while pages of 64 gained (399; 384 before). So smaller
  // pages keep cp.async until the warp-specialised form issues the boxes.
  constexpr int64_t kTmaMinPageRows = 64;
  return wgmma && !layer.fp8 && !layer.contiguous && blockSize >= kTmaMinPageRows &&
         rowIsWholeChunks(layer.qkHeadDim, 2) && rowIsWholeChunks(layer.vHeadDim, 2);
}

/// The parameters of paged_attention<Config> (tensorCore),
/// paged_attention_tma<Config> (tensorCore with `tmaBoxRows`: the caches'
/// tensor maps, boxes of that many rows) or reference_attention<Config>, in
/// the template's order: the forms' entry points, their ABI and the call
/// into the template are printed from this one list; the parameters this
/// layer does not have are absent.
std::vector<EmittedParam> attentionParams(PagedAttentionOp op, OutputGateOp gateOp,
                                          const AttentionLayer &layer,
                                          bool tensorCore,
                                          int64_t workspaceFloats,
                                          int64_t tmaBoxRows = 0) {
  ElementType activation = abiType(layer.activation);
  ElementType cache = abiType(layer.cache);
  std::string act = cudaType(layer.activation), cacheType = cudaType(layer.cache);
  std::vector<EmittedParam> params = {
      inputParam("query", activation, abiShape(op.getQuery(), {"num_tokens"}), act)};
  // The caches are the engine's views, followed by their strides.
  llvm::append_range(
      params, cacheViewParams(
                  inputParam("k_cache", cache,
                             abiShape(op.getKCache(), {"num_blocks"}), cacheType),
                  inputParam("v_cache", cache,
                             abiShape(op.getVCache(), {"num_blocks"}), cacheType)));
  // TMA K/V: boxes of one page's rows x 64 head-dim values of one KV head,
  // 128-byte swizzled (the layout the wgmma tiles read).
  if (tmaBoxRows > 0)
    for (StringRef cacheName : {"k_cache", "v_cache"})
      params.push_back(tensorMapParam((cacheName + "_map").str(), cacheName,
                                      {1, tmaBoxRows, 1, 64}, 128));
  params.insert(params.end(), {
      inputParam("block_tables", ElementType::I32,
                 abiShape(op.getBlockTables(), {"num_seqs", "max_blocks_per_seq"}),
                 "int"),
      inputParam("seq_lens", ElementType::I32,
                 abiShape(op.getSeqLens(), {"num_seqs"}), "int"),
      inputParam("query_start_loc", ElementType::I32,
                 abiShape(op.getQueryStartLoc(), {"num_seqs_plus_one"}), "int"),
      presentIf(layer.sinks,
                inputParam("sinks", ElementType::F32,
                           layer.sinks ? abiShape(op.getSinks(), {})
                                       : std::vector<ShapeDim>{},
                           "float")),
      presentIf(layer.fp8, inputParam("k_scale", ElementType::F32, {}, "float")),
      presentIf(layer.fp8, inputParam("v_scale", ElementType::F32, {}, "float")),
      presentIf(layer.gate,
                inputParam("gate", activation,
                           layer.gate ? abiShape(gateOp.getGate(), {"num_tokens"})
                                      : std::vector<ShapeDim>{},
                           act)),
      outputParam("output", activation, abiShape(op.getOutput(), {"num_tokens"}),
                  act)});
  if (tensorCore)
    params.push_back(outputParam("workspace", ElementType::F32,
                                 {ShapeDim::constant(workspaceFloats)}, "float"));
  for (StringRef name : {"num_tokens", "num_seqs", "max_blocks_per_seq"})
    params.push_back(scalarArg(name, ParamKind::I32));
  if (tensorCore)
    params.push_back(scalarArg("num_kv_splits", ParamKind::I32));
  return params;
}

/// The extern "C" entry point: the present parameters, forwarded to
/// `callee` (the template instantiated for the Config) with nullptr for the
/// absent ones.
void printEntryPoint(llvm::raw_ostream &os, StringRef name, StringRef callee,
                     ArrayRef<EmittedParam> params) {
  printForwardingEntryPoint(os, "Config::kWarps * 32", name, callee, params);
}

/// One `static constexpr` member of the Config.
template <typename T>
void printMember(llvm::raw_ostream &os, StringRef type, StringRef name, const T &value,
                 StringRef comment = {}) {
  os << "  static constexpr " << type << " " << name << " = " << value << ";";
  if (!comment.empty())
    os << "  // " << comment;
  os << "\n";
}

/// The Config members both forms read: element types, heads, dims, the
/// score constants and the feature flags.
template <typename AttentionOp>
void printLayerConfig(llvm::raw_ostream &os, const AttentionLayer &layer,
                      AttentionOp op, AttentionEmissionAttr emission) {
  os << "  using act_t = " << cudaType(layer.activation) << ";\n"
     << "  using cache_t = " << cudaType(layer.cache) << ";\n";
  printMember(os, "int", "kNumQHeads", layer.numQHeads);
  printMember(os, "int", "kNumKvHeads", layer.numKvHeads);
  printMember(os, "int", "kGroupSize", layer.groupSize);
  printMember(os, "int", "kQkHeadDim", layer.qkHeadDim);
  printMember(os, "int", "kVHeadDim", layer.vHeadDim);
  printMember(os, "int", "kBlockSize", emission.getBlockSize());
  printMember(os, "float", "kScaleLog2",
              floatLiteral(emission.getScaleLog2().value),
              "softmax_scale * log2(e): scores live in log2 units (exp2)");
  printMember(os, "float", "kSoftmaxScale",
              floatLiteral(op.getSoftmaxScale().convertToDouble()));
  printMember(os, "bool", "kCausal", boolLiteral(layer.causal));
  printMember(os, "int", "kSlidingWindow", layer.window, "0: none");
  printMember(os, "int", "kAttentionChunk", layer.chunk,
              "0: none; else a query sees its chunk's keys only");
  printMember(os, "bool", "kSinks", boolLiteral(layer.sinks));
  printMember(os, "bool", "kFp8", boolLiteral(layer.fp8),
              "k_scale / v_scale dequantise the cache");
  printMember(os, "bool", "kGate", boolLiteral(layer.gate),
              "output * sigmoid(gate)");
  printMember(os, "bool", "kGateHeadScalar", boolLiteral(layer.gateHeadScalar),
              "one gate value per query head");
  printMember(os, "bool", "kHasSoftcap", boolLiteral(layer.softcap > 0));
  printMember(os, "float", "kSoftcap",
              floatLiteral(layer.softcap > 0 ? layer.softcap : 0.0));
  printMember(os, "bool", "kHasValueScale", boolLiteral(layer.valueScale != 1.0));
  printMember(os, "float", "kValueScale", floatLiteral(layer.valueScale));
}

/// The CUDA-core form (one block per query row and KV head): shapes the
/// tensor-core kernel does not take (v_dim_padded above 256, whose output
/// accumulator does not fit a warp's registers).
FailureOr<EmittedKernel> emitReferenceAttention(func::FuncOp function,
                                                PagedAttentionOp op,
                                                OutputGateOp gateOp,
                                                AttentionEmissionAttr emission) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  AttentionLayer layer(function, op, gateOp, emission);
  int64_t warps = schedule.getNumWarps();

  std::string source;
  llvm::raw_string_ostream os(source);
  printAttentionHeader(os, layer, function, op, emission);
  os << "// This kernel is the reference-quality form: one block per (query "
        "row, KV head),\n// warps stride over the keys, the group's query "
        "heads share each K/V read.\n"
     << "#include \"attnc_attention_reference.cuh\"\n\n"
     << "namespace {\nstruct Config {\n";
  printLayerConfig(os, layer, op, emission);
  printMember(os, "int", "kWarps", warps);
  os << "};\n} // namespace\n\n";
  std::vector<EmittedParam> params =
      attentionParams(op, gateOp, layer, /*tensorCore=*/false, 0);
  printEntryPoint(os, layer.name, "attnc::reference_attention<Config>", params);

  KernelAbi abi;
  abi.name = layer.name;
  abi.params = abiParams(params);
  abi.block = {static_cast<uint32_t>(warps * 32), 1, 1};
  abi.grid = {GridDimRule::ceilDiv("num_tokens", 1, 1),
              GridDimRule::fixed(layer.numKvHeads), GridDimRule::fixed(1)};
  abi.dynamic_shared_memory_bytes = static_cast<uint32_t>(
      referenceAttentionSharedBytes(warps, layer.groupSize, layer.vHeadDim));
  return EmittedKernel{layer.name, "attention", layerOf(function),
                       std::move(source), std::move(abi)};
}

/// The tensor-core form's Config members beyond the layer's: the schedule,
/// the copy widths and the shared-memory map.
void printTileConfig(llvm::raw_ostream &os, const AttentionLayer &layer,
                     AttentionScheduleAttr schedule, int64_t workspaceTiles,
                     const AttentionSharedMap &map, bool wgmma) {
  int64_t cacheBytes = layer.fp8 ? 1 : 2;
  printMember(os, "int", "kPack", schedule.getGqaPack(),
              "query heads of one KV group per tile row group");
  printMember(os, "int", "kQkPad", schedule.getQkDimPadded());
  printMember(os, "int", "kVPad", schedule.getVDimPadded());
  printMember(os, "int", "kWarps", schedule.getNumWarps());
  printMember(os, "int", "kBlockM", schedule.getBlockM());
  printMember(os, "int", "kBlockN", schedule.getBlockN());
  printMember(os, "int", "kStages", schedule.getPipelineStages());
  printMember(os, "int", "kMaxSplits", schedule.getMaxKvSplits());
  printMember(os, "int", "kSplitKvMinKeys", schedule.getSplitKvMinKeys());
  printMember(os, "int", "kTargetCtas", schedule.getTargetCtas());
  printMember(os, "int", "kWorkspaceTiles", workspaceTiles);
  printMember(os, "bool", "kWgmma", boolLiteral(wgmma),
              "tiles of more than 16 rows by wgmma");
  os << "  // Rows copied as 16-byte chunks (else element by element).\n";
  printMember(os, "bool", "kQVector",
              boolLiteral(rowIsWholeChunks(layer.qkHeadDim, 2)));
  printMember(os, "bool", "kKVector",
              boolLiteral(rowIsWholeChunks(layer.qkHeadDim, cacheBytes)));
  printMember(os, "bool", "kVVector",
              boolLiteral(rowIsWholeChunks(layer.vHeadDim, cacheBytes)));
  os << "  // Shared memory (AttentionTiling.h): row strides, byte offsets.\n";
  const std::pair<const char *, int64_t> members[] = {
      {"kQStride", map.qStride},
      {"kKStride", map.kStride},
      {"kVStride", map.vStride},
      {"kOStride", map.oStride},
      {"kKLandStride", map.kLandStride},
      {"kVLandStride", map.vLandStride},
      {"kStaggeredKOffset", map.staggeredKOffset},
      {"kStaggeredVOffset", map.staggeredVOffset},
      {"kStaggeredKLandOffset", map.staggeredKLandOffset},
      {"kStaggeredVLandOffset", map.staggeredVLandOffset},
      {"kRingOffset", map.ringOffset},
      {"kRingStageBytes", map.ringStageBytes},
      {"kRingVOffset", map.ringVOffset},
      {"kRingWidenKOffset", map.ringWidenKOffset},
      {"kRingWidenVOffset", map.ringWidenVOffset},
      {"kWgmmaKOffset", map.wgmmaKOffset},
      {"kWgmmaKBytes", map.wgmmaKBytes},
      {"kWgmmaVOffset", map.wgmmaVOffset},
      {"kMergeMOffset", map.mergeMOffset},
      {"kMergeLOffset", map.mergeLOffset},
      {"kMergeWeightOffset", map.mergeWeightOffset},
      {"kMergeRowMOffset", map.mergeRowMOffset},
      {"kMergeRowLOffset", map.mergeRowLOffset},
      {"kSplitLOffset", map.splitLOffset},
      {"kSplitMergedMOffset", map.splitMergedMOffset},
      {"kSplitMergedLOffset", map.splitMergedLOffset},
      {"kSlotOffset", map.slotOffset},
      {"kSplitFlagOffset", map.splitFlagOffset},
      {"kOwnerOffset", map.ownerOffset},
      {"kSharedBytes", map.totalBytes}};
  for (const auto &[member, value] : members)
    printMember(os, "int", member, value);
}

/// The ABI of a tensor-core attention kernel (paged or contiguous K/V): row
/// tiles of each sequence's (token, head) rows plus a spare per sequence,
/// the KV heads' packs, the splits; the split hints; the shared-memory map.
KernelAbi tensorCoreAbi(const AttentionLayer &layer,
                        ArrayRef<EmittedParam> params,
                        AttentionScheduleAttr schedule,
                        const attnc::plan::SplitKvLimits &limits,
                        const AttentionSharedMap &map) {
  int64_t pack = schedule.getGqaPack(), blockM = schedule.getBlockM();
  KernelAbi abi;
  abi.name = layer.name;
  abi.params = abiParams(params);
  abi.block = {static_cast<uint32_t>(schedule.getNumWarps() * 32), 1, 1};
  abi.grid = {GridDimRule::ceilDivPlus("num_tokens", pack, blockM, "num_seqs"),
              GridDimRule::fixed(layer.numKvHeads * (layer.groupSize / pack)),
              GridDimRule::ceilDiv("num_kv_splits", 1, 1)};
  // Persistent warp-specialised blocks: one an SM (target_ctas counts two),
  // each striding over the row tiles x KV head packs the grid above has.
  if (schedule.getPersistent())
    abi.grid = {GridDimRule::fixed(limits.targetCtas / 2), GridDimRule::fixed(1),
                GridDimRule::ceilDiv("num_kv_splits", 1, 1)};
  abi.hints = {{"target_ctas", limits.targetCtas},
               {"max_kv_splits", limits.maxKvSplits}};
  abi.dynamic_shared_memory_bytes = static_cast<uint32_t>(map.totalBytes);
  return abi;
}

/// The Config members of the warp-specialised form (attnc_attention_ws.cuh)
/// after the layer's: the schedule's tiling and wsAttentionSharedMap.
void printWsConfig(raw_ostream &os, AttentionScheduleAttr schedule,
                   const WsAttentionSharedMap &wsMap) {
  printMember(os, "int", "kPack", schedule.getGqaPack(),
              "query heads of one KV group per tile row group");
  printMember(os, "int", "kQkPad", schedule.getQkDimPadded());
  printMember(os, "int", "kVPad", schedule.getVDimPadded());
  printMember(os, "int", "kWarps", schedule.getNumWarps(),
              "a producer and two consumer warpgroups");
  printMember(os, "int", "kBlockM", schedule.getBlockM());
  printMember(os, "int", "kBlockN", schedule.getBlockN());
  printMember(os, "int", "kStages", schedule.getPipelineStages());
  printMember(os, "int", "kProducerRegisters",
              wsProducerRegisters(schedule.getPersistent()), "setmaxnreg");
  printMember(os, "int", "kConsumerRegisters", kWsConsumerRegisters);
  os << "  // Shared memory (AttentionTiling.h's wsAttentionSharedMap).\n";
  const std::pair<const char *, int64_t> members[] = {
      {"kWsQBytes", wsMap.qBytes},         {"kWsKOffset", wsMap.kOffset},
      {"kWsKStageBytes", wsMap.kStageBytes}, {"kWsVOffset", wsMap.vOffset},
      {"kWsVStageBytes", wsMap.vStageBytes}, {"kWsBarOffset", wsMap.barOffset},
      {"kWsOwnerOffset", wsMap.ownerOffset}, {"kSharedBytes", wsMap.totalBytes}};
  for (const auto &[member, value] : members)
    printMember(os, "int", member, value);
  if (schedule.getPersistent()) {
    printMember(os, "int", "kWsInfoSlotBytes", wsMap.infoSlotBytes,
                "two tile-info slots at kWsOwnerOffset");
    printMember(os, "bool", "kPersistent", boolLiteral(true),
                "one block an SM striding over the row tiles");
  }
}

/// The paged attention's warp-specialised prefill kernel (kind
/// "prefill_attention", schedule mma "wgmma_ws"; attnc_attention_ws.cuh
/// with kPagedKv, entry paged_attention_ws<Config>): the parameters of the
/// TMA attention kernel (the caches' tensor maps, boxes of min(block_size,
/// block_n) rows x 64 values), the same grid over 384 threads, its own
/// shared-memory map, no split-KV (max_kv_splits 1), and the ABI hints
/// `gqa_pack` and `min_rows_per_seq` of the launcher's choice between the
/// layer's two attention kernels.
FailureOr<EmittedKernel> emitPrefillAttention(func::FuncOp function,
                                              PagedAttentionOp op,
                                              OutputGateOp gateOp,
                                              const AttentionLayer &layer,
                                              AttentionEmissionAttr emission) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  int64_t vPadded = schedule.getVDimPadded();
  attnc::plan::SplitKvLimits limits{schedule.getTargetCtas(),
                                    schedule.getMaxKvSplits()};
  WsAttentionSharedMap wsMap = wsAttentionSharedMap(
      schedule.getQkDimPadded(), vPadded, schedule.getBlockN(),
      schedule.getPipelineStages(), schedule.getPersistent());
  int64_t blockSize = emission.getBlockSize();

  std::string source;
  llvm::raw_string_ostream os(source);
  printAttentionHeader(os, layer, function, op, emission);
  os << "// Warp-specialised prefill form (sm_90a): a producer warp looks up "
        "each K/V tile's pages\n// in the block table and loads them by the "
        "tensor memory accelerator (a box per page)\n// into a ring of "
        "stages (mbarriers); two consumer warpgroups of 64 rows take turns "
        "at\n// wgmma (S = Q K^T, O += P V), one's softmax under the other's "
        "MMAs. No split-KV.\n"
     << "#include \"attnc_attention_ws.cuh\"\n\n"
     << "namespace {\nstruct Config {\n";
  printLayerConfig(os, layer, op, emission);
  printWsConfig(os, schedule, wsMap);
  printMember(os, "bool", "kPagedKv", boolLiteral(true),
              "K/V pages through the block table");
  os << "};\n} // namespace\n\n";
  // The attention op's parameters, so one binding serves both kernels; the
  // workspace is never read (no split-KV): one float, so that any
  // workspace sized for the layer's attention kernel passes the check.
  std::vector<EmittedParam> params = attentionParams(
      op, gateOp, layer, /*tensorCore=*/true, /*workspaceFloats=*/1,
      std::min<int64_t>(blockSize, schedule.getBlockN()));
  printEntryPoint(os, layer.name, "attnc::paged_attention_ws<Config>", params);

  KernelAbi abi = tensorCoreAbi(layer, params, schedule, limits,
                                AttentionSharedMap{});
  abi.dynamic_shared_memory_bytes = static_cast<uint32_t>(wsMap.totalBytes);
  abi.hints["gqa_pack"] = schedule.getGqaPack();
  abi.hints["min_rows_per_seq"] = kWsPrefillMinRowsPerSeq;
  // The tensor maps' outer dim (the caches' blocks) is no kernel parameter.
  abi.launch_scalars = {"num_blocks"};
  // WsAttention::run waits (griddepcontrol.wait) first.
  abi.programmatic_dependent_launch = true;
  return EmittedKernel{layer.name, "prefill_attention", layerOf(function),
                       std::move(source), std::move(abi)};
}

} // namespace

/// The tensor-core paged attention kernel (runtime/device/attnc_attention.cuh:
/// mma.sync m16n8k16, and wgmma for tiles of more than 16 rows where the
/// schedule's mma is "wgmma"): the header comment, the Config and the entry
/// point; the CUDA-core form where the schedule chose it.
FailureOr<EmittedKernel> emitAttention(func::FuncOp function,
                                       PagedAttentionOp op, OutputGateOp gateOp) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  FailureOr<AttentionEmissionAttr> prepared =
      preparedEmission<AttentionEmissionAttr>(op, schedule);
  if (failed(prepared))
    return failure();
  AttentionEmissionAttr emission = *prepared;
  // attn-specialize chose the form; attn-prepare-emission checked that the
  // templates take the schedule.
  if (schedule.getForm() == AttentionForm::cuda_core)
    return emitReferenceAttention(function, op, gateOp, emission);

  AttentionLayer layer(function, op, gateOp, emission);
  if (schedule.getMma() == "wgmma_ws")
    return emitPrefillAttention(function, op, gateOp, layer, emission);
  int64_t blockM = schedule.getBlockM(), vPadded = schedule.getVDimPadded();
  int64_t pack = schedule.getGqaPack();
  attnc::plan::SplitKvLimits limits{schedule.getTargetCtas(),
                                    schedule.getMaxKvSplits()};
  bool wgmma = schedule.getMma() == "wgmma";
  AttentionSharedMap map = attentionSharedMap(
      schedule.getQkDimPadded(), vPadded, blockM, schedule.getBlockN(),
      schedule.getPipelineStages(), limits.maxKvSplits, layer.fp8, wgmma);
  int64_t blockSize = emission.getBlockSize();
  bool tma = takesTmaKv(layer, wgmma, blockSize);
  // The tiered JIT's baseline of a TMA kernel (attn-specialize marks it)
  // takes the same parameters, tensor maps included, and leaves the maps
  // unread: its tiers swap at a launch only when their parameters agree.
  bool tmaParams =
      tma || takesTmaKv(layer, op->hasAttr("attn.wgmma_baseline"), blockSize);

  std::string source;
  llvm::raw_string_ostream os(source);
  printAttentionHeader(os, layer, function, op, emission);
  if (tma)
    os << "// Tensor-core form: wgmma m64nNk16 (sm_90a) for tiles of more than "
          "16 rows, K/V tiles loaded\n// by the tensor memory accelerator "
          "(tensor maps over the caches, boxes of one page's\n// rows x 64 "
          "values, mbarriers); mma.sync m16n8k16 with a cp.async gather for "
          "tiles of\n// at most 16 rows; fp32 accumulators, split-KV merged "
          "by the last split.\n";
  else
    os << (wgmma ? "// Tensor-core form: wgmma m64nNk16 (sm_90a) for tiles of more "
                   "than 16 rows, mma.sync m16n8k16\n// for tiles of at most 16 "
                   "rows, "
                 : "// Tensor-core form: mma.sync m16n8k16 with ")
       << "fp32 accumulators, K/V tiles gathered\n// through the block table "
          "by a cp.async pipeline, split-KV merged by the last split.\n";
  os << "#include \"attnc_attention.cuh\"\n\n"
     << "namespace {\nstruct Config {\n";
  printLayerConfig(os, layer, op, emission);
  printTileConfig(os, layer, schedule, limits.capacityCtas(), map, wgmma);
  if (tma)
    printMember(os, "bool", "kTmaKv", boolLiteral(true),
                "K/V tiles of the wgmma form by tensor maps");
  os << "};\n} // namespace\n\n";
  std::vector<EmittedParam> params = attentionParams(
      op, gateOp, layer, /*tensorCore=*/true,
      attnc::plan::attentionWorkspaceFloats(limits, blockM, vPadded),
      tmaParams ? std::min<int64_t>(blockSize, schedule.getBlockN()) : 0);
  printEntryPoint(os, layer.name,
                  tmaParams ? "attnc::paged_attention_tma<Config>"
                            : "attnc::paged_attention<Config>",
                  params);

  KernelAbi abi = tensorCoreAbi(layer, params, schedule, limits, map);
  // The tensor maps' outer dim (the caches' blocks) is no kernel parameter.
  if (tmaParams)
    abi.launch_scalars = {"num_blocks"};
  // PagedAttention::run waits (griddepcontrol.wait) before its first global
  // access (the CUDA-core reference form does not: no flag there).
  abi.programmatic_dependent_launch = true;
  return EmittedKernel{layer.name, "attention", layerOf(function), std::move(source),
                       std::move(abi)};
}

namespace {
/// A [tokens, heads, head_dim] view of the engine's tensor: its ABI strides
/// [<name>_token_stride, <name>_head_stride, 1] and those two i64
/// parameters, which the launcher sets to the tensor's strides (elements).
EmittedParam tokenHeadView(EmittedParam param,
                           std::vector<EmittedParam> &strideParams) {
  std::vector<ShapeDim> strides;
  for (const char *dim : {"token_stride", "head_stride"}) {
    std::string symbol = param.abi.name + "_" + dim;
    strides.push_back(ShapeDim::named(symbol));
    strideParams.push_back(scalarArg(symbol, ParamKind::I64));
  }
  strides.push_back(ShapeDim::constant(1)); // the head dim is contiguous
  param.abi.strides = std::move(strides);
  return param;
}
} // namespace

/// attn.varlen_attention: the tensor-core template (attnc_attention.cuh) with
/// kContiguousKv, entry varlen_attention<Config>; the schedule, tiles, grid
/// and split-KV are the paged attention's, over ragged contiguous K/V views.
/// With schedule mma "wgmma_ws", the warp-specialised template instead
/// (attnc_attention_ws.cuh, entry varlen_attention_ws<Config>): the same
/// parameters plus tensor maps over key and value, the same grid over 384
/// threads, its own shared-memory map, no split-KV.
FailureOr<EmittedKernel> emitVarlenAttention(func::FuncOp function,
                                             VarlenAttentionOp op) {
  AttentionScheduleAttr schedule = op.getScheduleAttr();
  FailureOr<AttentionEmissionAttr> prepared =
      preparedEmission<AttentionEmissionAttr>(op, schedule);
  if (failed(prepared))
    return failure();
  AttentionEmissionAttr emission = *prepared;
  AttentionLayer layer(function, op, emission);
  int64_t blockM = schedule.getBlockM(), vPadded = schedule.getVDimPadded();
  attnc::plan::SplitKvLimits limits{schedule.getTargetCtas(),
                                    schedule.getMaxKvSplits()};
  bool wgmma = schedule.getMma() == "wgmma";
  bool warpSpecialized = schedule.getMma() == "wgmma_ws";
  // The tiered JIT's baseline of a warp-specialised kernel (attn-specialize
  // marks it) takes its parameters, tensor maps included, unread.
  bool mapParams = warpSpecialized || op->hasAttr("attn.ws_baseline");

  std::string source;
  llvm::raw_string_ostream os(source);
  printAttentionHeader(os, layer, function, op, emission);
  WsAttentionSharedMap wsMap{};
  AttentionSharedMap map{};
  if (warpSpecialized) {
    wsMap = wsAttentionSharedMap(schedule.getQkDimPadded(), vPadded,
                                 schedule.getBlockN(),
                                 schedule.getPipelineStages(),
                                 schedule.getPersistent());
    os << "// Warp-specialised form (sm_90a): a producer warpgroup loads "
          "K/V tiles by the tensor\n// memory accelerator into a ring of "
          "stages (mbarriers); two consumer warpgroups of\n// 64 rows take "
          "turns at wgmma (S = Q K^T, O += P V), one's softmax under the "
          "other's MMAs.\n"
       << "#include \"attnc_attention_ws.cuh\"\n\n"
       << "namespace {\nstruct Config {\n";
    printLayerConfig(os, layer, op, emission);
    printWsConfig(os, schedule, wsMap);
    os << "};\n} // namespace\n\n";
  } else {
  map = attentionSharedMap(
      schedule.getQkDimPadded(), vPadded, blockM, schedule.getBlockN(),
      schedule.getPipelineStages(), limits.maxKvSplits, /*fp8=*/false, wgmma);
  os << (wgmma ? "// Tensor-core form: wgmma m64nNk16 (sm_90a) for tiles of more "
                 "than 16 rows, mma.sync m16n8k16\n// for tiles of at most 16 "
                 "rows, "
               : "// Tensor-core form: mma.sync m16n8k16 with ")
     << "fp32 accumulators, K/V tiles copied from the\n// contiguous rows "
        "by a cp.async pipeline, split-KV merged by the last split.\n"
     << "#include \"attnc_attention.cuh\"\n\n"
     << "namespace {\nstruct Config {\n";
  printLayerConfig(os, layer, op, emission);
  printMember(os, "bool", "kContiguousKv", boolLiteral(true),
              "key j of sequence s is row cu_seqlens_k[s] + j");
  printTileConfig(os, layer, schedule, limits.capacityCtas(), map, wgmma);
  os << "};\n} // namespace\n\n";
  }

  ElementType activation = abiType(layer.activation);
  std::string act = cudaType(layer.activation);
  std::vector<EmittedParam> strideParams;
  std::vector<EmittedParam> params = {
      tokenHeadView(inputParam("query", activation,
                               abiShape(op.getQuery(), {"num_tokens"}), act),
                    strideParams),
      tokenHeadView(inputParam("key", activation,
                               abiShape(op.getKey(), {"num_kv_tokens"}), act),
                    strideParams),
      tokenHeadView(inputParam("value", activation,
                               abiShape(op.getValue(), {"num_kv_tokens"}), act),
                    strideParams)};
  llvm::append_range(params, strideParams);
  // Warp-specialised: tensor maps over the key and value views, boxes of
  // block_n rows x 64 values of one KV head, 128-byte swizzled.
  if (mapParams)
    for (StringRef tensor : {"key", "value"})
      params.push_back(tensorMapParam((tensor + "_map").str(), tensor,
                                      {schedule.getBlockN(), 1, 64}, 128));
  params.insert(
      params.end(),
      {inputParam("cu_seqlens_q", ElementType::I32,
                  abiShape(op.getCuSeqlensQ(), {"num_seqs_plus_one"}), "int"),
       inputParam("cu_seqlens_k", ElementType::I32,
                  abiShape(op.getCuSeqlensK(), {"num_seqs_plus_one"}), "int"),
       outputParam("output", activation,
                   abiShape(op.getOutput(), {"num_tokens"}), act),
       outputParam("workspace", ElementType::F32,
                   {ShapeDim::constant(attnc::plan::attentionWorkspaceFloats(
                       limits, blockM, vPadded))},
                   "float"),
       scalarArg("num_tokens", ParamKind::I32),
       scalarArg("num_seqs", ParamKind::I32),
       scalarArg("num_kv_splits", ParamKind::I32)});
  printEntryPoint(os, layer.name,
                  warpSpecialized ? "attnc::varlen_attention_ws<Config>"
                  : mapParams     ? "attnc::varlen_attention_maps<Config>"
                                  : "attnc::varlen_attention<Config>",
                  params);

  KernelAbi abi = tensorCoreAbi(layer, params, schedule, limits, map);
  if (warpSpecialized)
    abi.dynamic_shared_memory_bytes =
        static_cast<uint32_t>(wsMap.totalBytes);
  // The maps' outer dim (the K/V views' rows) is no kernel parameter.
  if (mapParams)
    abi.launch_scalars = {"num_kv_tokens"};
  // varlen_attention runs PagedAttention::run and varlen_attention_ws
  // WsAttention::run; both wait (griddepcontrol.wait) first.
  abi.programmatic_dependent_launch = true;
  return EmittedKernel{layer.name, "varlen_attention", layerOf(function),
                       std::move(source), std::move(abi)};
}
} // namespace attnc::emit
