//===- EmitterSupport.h - Shared pieces of the CUDA printers ----*- C++ -*-===//
//
// What the preprocess and attention printers share: literals, type
// spellings, ABI parameter builders, the prepared-emission lookup. Internal
// to codegen/lib.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_CODEGEN_LIB_EMITTERSUPPORT_H
#define ATTNC_CODEGEN_LIB_EMITTERSUPPORT_H

#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <string>
#include <vector>

namespace attnc::emit {

/// A double as a C++ literal that reads back exactly.
std::string literal(double value);
const char *boolLiteral(bool value);
/// A float literal (the value rounded to float when compiled).
std::string floatLiteral(double value);
std::string cudaType(mlir::StringRef name);
runtime::ElementType abiType(mlir::StringRef name);
/// i32 / i64 index tensors, as printed and as the ABI names them.
std::string indexCudaType(mlir::Value value);
runtime::ElementType indexAbiType(mlir::Value value);
/// The shape of a tensor value for the ABI: static dims as constants, the
/// dynamic ones as the given symbols, in order.
std::vector<runtime::ShapeDim> abiShape(mlir::Value value,
                                        mlir::ArrayRef<mlir::StringRef> symbols);
runtime::KernelParam pointerParam(mlir::StringRef name, runtime::ElementType dtype,
                                  std::vector<runtime::ShapeDim> shape);
runtime::KernelParam scalarParam(mlir::StringRef name, runtime::ParamKind kind);
std::string describeScaling(attn::RopeScalingAttr scaling);

/// One parameter of a generated kernel's entry point: what the ABI records
/// and how the CUDA signature spells it. A kernel's list of these is the one
/// source of both (abiParams, printSignature) and of what the entry point
/// passes on to its template (printFieldAssignments, printForwardedArguments).
struct EmittedParam {
  runtime::KernelParam abi;
  /// Pointers: the element type behind the pointer ("Config::act_t");
  /// scalars: the value's type.
  std::string cudaType;
  /// Pointers only: the kernel writes through it (printed without const).
  bool writes = false;
  /// Whether this kernel has it. A template parameter the layer does not use
  /// stays in the list, so the template's order is kept, but is left out of
  /// the signature and the ABI and passed on as nullptr.
  bool present = true;
  /// Pointers only: printed `__restrict__`. False for a pointer the caller
  /// may alias with another parameter (an in-place output and its input).
  bool restrict = true;
};
/// A pointer the kernel only reads, one it writes through, a scalar (its
/// CUDA type follows from the kind).
EmittedParam inputParam(mlir::StringRef name, runtime::ElementType dtype,
                        std::vector<runtime::ShapeDim> shape,
                        mlir::StringRef cudaType);
EmittedParam outputParam(mlir::StringRef name, runtime::ElementType dtype,
                         std::vector<runtime::ShapeDim> shape,
                         mlir::StringRef cudaType);
EmittedParam scalarArg(mlir::StringRef name, runtime::ParamKind kind);
/// A CUtensorMap of the pointer parameter `tensor` that the runtime encodes
/// at launch (KernelAbi.h's tensor_map): boxes of `box` (outermost first),
/// `swizzle` bytes. Declared `const __grid_constant__ attnc::TensorMap`,
/// forwarded by address.
EmittedParam tensorMapParam(mlir::StringRef name, mlir::StringRef tensor,
                            std::vector<int64_t> box, int64_t swizzle);
/// `param`, marked absent unless `present`.
EmittedParam presentIf(bool present, EmittedParam param);
/// `param`, printed without `__restrict__` (it may alias another one).
EmittedParam mayAlias(EmittedParam param);
/// `param` as a strided view: its ABI strides are one i64 parameter per
/// dim but the innermost (contiguous, 1), named <name>_<dim name> after
/// `dimNames`; returns those parameters, in order, for the caller to add.
std::vector<EmittedParam> stridedView(EmittedParam &param,
                                      mlir::ArrayRef<mlir::StringRef> dimNames);
/// The paged caches as views of the engine's allocations: k_cache and
/// v_cache (shapes [num_blocks, block_size, heads, head_dim]), each with the
/// ABI strides [<name>_block_stride, <name>_token_stride,
/// <name>_head_stride, 1], followed by those six i64 parameters (in
/// elements, k's then v's), which the launcher sets to the tensors' strides.
std::vector<EmittedParam> cacheViewParams(EmittedParam kCache,
                                          EmittedParam vCache);
/// `const T *__restrict__ name`, `T *__restrict__ name` or `T name`.
std::string cudaDeclaration(const EmittedParam &param);
/// The entry point's name and parameter list, `name(decl, decl, ...)` with
/// one declaration a line, in the list's order (the ABI's); absent
/// parameters are left out.
void printSignature(llvm::raw_ostream &os, mlir::StringRef name,
                    mlir::ArrayRef<EmittedParam> params);
/// `<object>.<name> = <name>;` per parameter, one a line after `indent`
/// (`= nullptr` for an absent one).
void printFieldAssignments(llvm::raw_ostream &os, mlir::StringRef object,
                           mlir::ArrayRef<EmittedParam> params,
                           mlir::StringRef indent = "  ");
/// The entry point's parameters as a call's arguments, `name, name, ...` in
/// the list's order, `nullptr` for an absent one.
void printForwardedArguments(llvm::raw_ostream &os,
                             mlir::ArrayRef<EmittedParam> params);
/// The extern "C" entry point `__launch_bounds__(<launchBounds>) name(...)`
/// that forwards its parameters to `callee(...)` (a template instantiated
/// for the Config; nullptr for the absent ones).
void printForwardingEntryPoint(llvm::raw_ostream &os,
                               mlir::StringRef launchBounds,
                               mlir::StringRef name, mlir::StringRef callee,
                               mlir::ArrayRef<EmittedParam> params);
/// The extern "C" entry point that fills `<ns>::Params<Config> p` with its
/// parameters and runs `<ns>::Kernel<Config>::run(p)`.
void printParamsEntryPoint(llvm::raw_ostream &os, mlir::StringRef launchBounds,
                           mlir::StringRef name, mlir::StringRef ns,
                           mlir::ArrayRef<EmittedParam> params);
/// The ABI's parameter list: the present parameters, in order.
std::vector<runtime::KernelParam> abiParams(mlir::ArrayRef<EmittedParam> params);
/// The kernel op's emission attribute (#attn.preprocess_emission or
/// #attn.attention_emission); an error at the op when attn-prepare-emission
/// (or attn-specialize, which sets the schedule) has not run on it.
template <typename EmissionAttr>
mlir::FailureOr<EmissionAttr> preparedEmission(mlir::Operation *op,
                                               mlir::Attribute schedule) {
  auto emission = op->getAttrOfType<EmissionAttr>(kEmissionAttr);
  if (!emission || !schedule)
    return op->emitOpError() << "is not prepared for emission (run "
                                "attn-prepare-emission first)";
  return emission;
}
/// The layer function a kernel function was outlined from.
std::string layerOf(mlir::func::FuncOp kernel);

/// The printers of the kernel families.
mlir::FailureOr<EmittedKernel> emitPreprocess(mlir::func::FuncOp function,
                                              attn::FusedPreprocessOp op);
mlir::FailureOr<EmittedKernel> emitMlaPreprocess(mlir::func::FuncOp function,
                                                 attn::MlaPreprocessOp op);
mlir::FailureOr<EmittedKernel> emitAttention(mlir::func::FuncOp function,
                                             attn::PagedAttentionOp op,
                                             attn::OutputGateOp gateOp);
/// MLA's absorbed decode (attn.latent_attention).
mlir::FailureOr<EmittedKernel> emitLatentAttention(mlir::func::FuncOp function,
                                                   attn::LatentAttentionOp op);
mlir::FailureOr<EmittedKernel>
emitVarlenAttention(mlir::func::FuncOp function, attn::VarlenAttentionOp op);
mlir::FailureOr<EmittedKernel> emitLatentGather(mlir::func::FuncOp function,
                                                attn::LatentGatherOp op);

} // namespace attnc::emit

#endif // ATTNC_CODEGEN_LIB_EMITTERSUPPORT_H
