//===- LatentGatherEmitter.cpp - the latent gather kernel's printer -------===//
//
// Prints one attn.latent_gather kernel function as CUDA C++ and its ABI: the
// copy template runtime/device/attnc_latent_gather.cuh instantiated for the
// row width, the cache's block size and element type; its launch shape is
// attnc/Plan/LatentGather.h's.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "attnc/Plan/LatentGather.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace attnc::attn;
using attnc::runtime::ElementType;
using attnc::runtime::GridDimRule;
using attnc::runtime::KernelAbi;
using attnc::runtime::ParamKind;
using attnc::runtime::ShapeDim;

namespace attnc::emit {

FailureOr<EmittedKernel> emitLatentGather(func::FuncOp function,
                                          LatentGatherOp op) {
  auto cacheType = cast<RankedTensorType>(op.getLatentCache().getType());
  auto outputType = cast<RankedTensorType>(op.getOutput().getType());
  Type activationType = outputType.getElementType();
  if (!activationType.isBF16() && !activationType.isF16())
    return op.emitOpError() << "cannot be emitted: activation type "
                            << activationType
                            << " is not supported (bf16 or f16)";
  StringRef activation = activationType.isBF16() ? "bf16" : "fp16";
  bool fp8 = isa<Float8E4M3FNType>(cacheType.getElementType());
  StringRef cache = fp8 ? StringRef("fp8_e4m3") : activation;
  int64_t width = outputType.getDimSize(1);
  int64_t blockSize = cacheType.getDimSize(1);
  // Rows of whole 8-value chunks move as 16-byte stores.
  bool vector = width % 8 == 0;
  std::string name = function.getSymName().str();
  std::string act = cudaType(activation), cacheCuda = cudaType(cache);

  std::string source;
  llvm::raw_string_ostream os(source);
  os << "// attnc generated kernel " << name << " (latent_gather) for layer "
     << layerOf(function) << "\n"
     << "// configuration: latent row width=" << width
     << " (kv_lora_rank + rope_head_dim), cache block_size=" << blockSize
     << "\n//   activation " << activation << ", cache " << cache
     << (fp8 ? " (times cache_scale)" : "") << "\n"
     << "// schedule: one warp a row, " << attnc::plan::kLatentGatherWarps
     << " rows a block, "
     << (vector ? "16-byte stores" : "element copies") << "\n"
     << "#include \"attnc_latent_gather.cuh\"\n\n"
     << "namespace {\nstruct Config {\n"
     << "  using act_t = " << act << ";\n"
     << "  using cache_t = " << cacheCuda << ";\n"
     << "  static constexpr int kWidth = " << width << ";\n"
     << "  static constexpr int kBlockSize = " << blockSize << ";\n"
     << "  static constexpr bool kFp8 = " << boolLiteral(fp8)
     << ";  // times *cache_scale\n"
     << "  static constexpr bool kVector = " << boolLiteral(vector) << ";\n"
     << "  static constexpr int kWarps = " << attnc::plan::kLatentGatherWarps
     << ";  // one output row each\n"
     << "};\n} // namespace\n\n";

  EmittedParam latentCache =
      inputParam("latent_cache", abiType(cache),
                 abiShape(op.getLatentCache(), {"num_blocks"}), cacheCuda);
  latentCache.abi.strides = {ShapeDim::named("latent_cache_block_stride"),
                             ShapeDim::named("latent_cache_token_stride"),
                             ShapeDim::constant(1)};
  std::vector<EmittedParam> params = {
      latentCache,
      scalarArg("latent_cache_block_stride", ParamKind::I64),
      scalarArg("latent_cache_token_stride", ParamKind::I64),
      inputParam("block_tables", ElementType::I32,
                 abiShape(op.getBlockTables(), {"num_seqs", "max_blocks_per_seq"}),
                 "int"),
      inputParam("cu_seqlens", ElementType::I32,
                 abiShape(op.getCuSeqlens(), {"num_seqs_plus_one"}), "int"),
      presentIf(fp8, inputParam("cache_scale", ElementType::F32, {}, "float")),
      outputParam("output", abiType(activation),
                  abiShape(op.getOutput(), {"num_tokens"}), act),
      scalarArg("num_tokens", ParamKind::I32),
      scalarArg("num_seqs", ParamKind::I32),
      scalarArg("max_blocks_per_seq", ParamKind::I32)};
  printForwardingEntryPoint(os, "Config::kWarps * 32", name,
                            "attnc::latent_gather<Config>", params);

  KernelAbi abi;
  abi.name = name;
  abi.params = abiParams(params);
  abi.block = {static_cast<uint32_t>(attnc::plan::kLatentGatherWarps * 32), 1,
               1};
  abi.grid = {GridDimRule::ceilDiv("num_tokens", 1,
                                   attnc::plan::kLatentGatherRowsPerBlock),
              GridDimRule::fixed(1), GridDimRule::fixed(1)};
  abi.dynamic_shared_memory_bytes = 0;
  return EmittedKernel{name, "latent_gather", layerOf(function),
                       std::move(source), std::move(abi)};
}

} // namespace attnc::emit
