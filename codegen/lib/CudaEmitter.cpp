//===- CudaEmitter.cpp - attn kernel form to CUDA C++ ---------------------===//
//
// Prints prepared kernel functions (attn-prepare-emission has run) as CUDA
// C++: a header comment, a Config and the entry point over the kernel
// templates (runtime/device). Every number comes from the op, its schedule or
// its `attn.emission` attribute; absent features are `if constexpr` false in
// the templates, so a model without q/k norm gets a kernel with no norm code.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"

#include "attnc/Support/Json.h"

using namespace mlir;
using namespace attnc::attn;

namespace attnc {
using emit::emitAttention;
using emit::emitLatentAttention;
using emit::emitMlaPreprocess;
using emit::emitPreprocess;

FailureOr<std::vector<EmittedKernel>> emitCudaKernels(ModuleOp module) {
  std::vector<EmittedKernel> kernels;
  for (auto function : module.getOps<func::FuncOp>()) {
    auto kind = function->getAttrOfType<StringAttr>("attn.kernel");
    if (!kind)
      continue;
    // The header comment and the ABI name the layer (attn-outline-kernels
    // records it); a hand-written kernel function may lack it.
    if (!function->getAttrOfType<StringAttr>("attn.layer"))
      return function.emitOpError()
             << "is a kernel function without a string attn.layer (the layer "
                "function it was outlined from)";
    // The symbol is the extern "C" entry point. Names from a config are
    // identifiers; a layer function written by hand need not be.
    if (!json_util::isIdentifier(function.getSymName().str()))
      return function.emitOpError()
             << "is a kernel function whose name is not a C identifier (it "
                "is the CUDA entry point)";
    FailureOr<EmittedKernel> kernel = failure();
    if (kind.getValue() == "preprocess") {
      auto ops = function.getOps<FusedPreprocessOp>();
      if (ops.empty())
        return function.emitOpError() << "has no attn.fused_preprocess";
      kernel = emitPreprocess(function, *ops.begin());
    } else if (kind.getValue() == "mla_preprocess") {
      auto ops = function.getOps<MlaPreprocessOp>();
      if (ops.empty())
        return function.emitOpError() << "has no attn.mla_preprocess";
      kernel = emitMlaPreprocess(function, *ops.begin());
    } else if (kind.getValue() == "attention" ||
               kind.getValue() == "prefill_attention") {
      // prefill_attention: the paged op on its warp-specialised schedule.
      auto ops = function.getOps<PagedAttentionOp>();
      auto gates = function.getOps<OutputGateOp>();
      if (ops.empty())
        return function.emitOpError() << "has no attn.paged_attention";
      kernel = emitAttention(function, *ops.begin(),
                             gates.empty() ? OutputGateOp() : *gates.begin());
    } else if (kind.getValue() == "latent_attention") {
      auto ops = function.getOps<LatentAttentionOp>();
      if (ops.empty())
        return function.emitOpError() << "has no attn.latent_attention";
      kernel = emitLatentAttention(function, *ops.begin());
    } else if (kind.getValue() == "varlen_attention") {
      auto ops = function.getOps<VarlenAttentionOp>();
      if (ops.empty())
        return function.emitOpError() << "has no attn.varlen_attention";
      kernel = emit::emitVarlenAttention(function, *ops.begin());
    } else if (kind.getValue() == "latent_gather") {
      auto ops = function.getOps<LatentGatherOp>();
      if (ops.empty())
        return function.emitOpError() << "has no attn.latent_gather";
      kernel = emit::emitLatentGather(function, *ops.begin());
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