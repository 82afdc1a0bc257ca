//===- CudaEmitter.h - attn kernel form to CUDA C++ -------------*- C++ -*-===//
//
// Prints each kernel function of the kernel form (see attn-outline-kernels)
// as a self-contained CUDA C++ source plus its ABI (attnc::runtime::KernelAbi),
// after attn-prepare-emission has checked it and recorded every derived
// constant. The printer makes no decisions.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_CODEGEN_CUDAEMITTER_H
#define ATTNC_CODEGEN_CUDAEMITTER_H

#include "attnc/Runtime/KernelAbi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>
#include <vector>

namespace attnc {

#define GEN_PASS_DECL
#include "attnc/Codegen/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "attnc/Codegen/Passes.h.inc"

/// The attribute attn-prepare-emission sets on each kernel op and the
/// printer reads: #attn.preprocess_emission or #attn.attention_emission.
inline constexpr llvm::StringLiteral kEmissionAttr = "attn.emission";

/// One generated kernel.
struct EmittedKernel {
  std::string name;   ///< the kernel function's symbol, also the entry point
  std::string kind;   ///< "preprocess" | "attention"
  std::string layer;  ///< the layer function it came from
  std::string source; ///< complete CUDA C++ translation unit
  runtime::KernelAbi abi;
};

/// Emits every kernel function of a prepared module (diagnostics on failure).
mlir::FailureOr<std::vector<EmittedKernel>> emitCudaKernels(mlir::ModuleOp module);

/// The `attn-to-cuda` translation: runs attn-prepare-emission unless every
/// kernel op already carries its emission attribute, then prints each
/// kernel's source and ABI JSON between marker lines.
mlir::LogicalResult translateAttnToCuda(mlir::ModuleOp module,
                                        llvm::raw_ostream &os);

/// Registers the `attn-to-cuda` translation (kernel form in, sources and
/// ABIs out) for attn-translate.
void registerAttnToCudaTranslation();

} // namespace attnc

#endif // ATTNC_CODEGEN_CUDAEMITTER_H
