//===- EmitterSupport.cpp - Shared pieces of the CUDA printers ------------===//
#include "EmitterSupport.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdio>

using namespace mlir;
using namespace attnc::attn;
using attnc::runtime::ElementType;
using attnc::runtime::KernelParam;
using attnc::runtime::ParamKind;
using attnc::runtime::ShapeDim;

namespace attnc::emit {

/// A double as a C++ literal that reads back exactly.
std::string literal(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  std::string out = text;
  if (out.find_first_of(".eEn") == std::string::npos)
    out += ".0";
  return out;
}

const char *boolLiteral(bool value) { return value ? "true" : "false"; }

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

EmittedParam inputParam(StringRef name, ElementType dtype,
                        std::vector<ShapeDim> shape, StringRef cudaType) {
  return EmittedParam{pointerParam(name, dtype, std::move(shape)),
                      cudaType.str(), /*writes=*/false};
}

EmittedParam outputParam(StringRef name, ElementType dtype,
                         std::vector<ShapeDim> shape, StringRef cudaType) {
  return EmittedParam{pointerParam(name, dtype, std::move(shape)),
                      cudaType.str(), /*writes=*/true};
}

EmittedParam scalarArg(StringRef name, ParamKind kind) {
  const char *type = kind == ParamKind::I64   ? "long long"
                     : kind == ParamKind::F32 ? "float"
                                              : "int";
  return EmittedParam{scalarParam(name, kind), type, /*writes=*/false};
}

EmittedParam tensorMapParam(StringRef name, StringRef tensor,
                            std::vector<int64_t> box, int64_t swizzle) {
  EmittedParam param;
  param.abi.name = name.str();
  param.abi.kind = ParamKind::TensorMap;
  param.abi.tensor_map = runtime::TensorMapSpec{tensor.str(), std::move(box), swizzle};
  param.cudaType = "attnc::TensorMap";
  return param;
}

EmittedParam presentIf(bool present, EmittedParam param) {
  param.present = present;
  return param;
}

EmittedParam mayAlias(EmittedParam param) {
  param.restrict = false;
  return param;
}

std::vector<EmittedParam> stridedView(EmittedParam &param,
                                      ArrayRef<StringRef> dimNames) {
  std::vector<EmittedParam> strideParams;
  std::vector<ShapeDim> strides;
  for (StringRef dim : dimNames) {
    std::string symbol = param.abi.name + "_" + dim.str();
    strides.push_back(ShapeDim::named(symbol));
    strideParams.push_back(scalarArg(symbol, ParamKind::I64));
  }
  strides.push_back(ShapeDim::constant(1)); // the innermost dim is contiguous
  param.abi.strides = std::move(strides);
  return strideParams;
}

std::vector<EmittedParam> cacheViewParams(EmittedParam kCache,
                                          EmittedParam vCache) {
  static const char *const dims[] = {"block_stride", "token_stride",
                                     "head_stride"};
  std::vector<EmittedParam> params = {std::move(kCache), std::move(vCache)};
  for (size_t i = 0; i < 2; ++i) {
    std::vector<ShapeDim> strides;
    for (const char *dim : dims) {
      std::string symbol = params[i].abi.name + "_" + dim;
      strides.push_back(ShapeDim::named(symbol));
      params.push_back(scalarArg(symbol, ParamKind::I64));
    }
    strides.push_back(ShapeDim::constant(1)); // the head dim is contiguous
    params[i].abi.strides = std::move(strides);
  }
  return params;
}

std::string cudaDeclaration(const EmittedParam &param) {
  if (param.abi.kind == ParamKind::TensorMap)
    return "const __grid_constant__ " + param.cudaType + " " + param.abi.name;
  if (param.abi.kind != ParamKind::Pointer)
    return param.cudaType + " " + param.abi.name;
  return (param.writes ? "" : "const ") + param.cudaType +
         (param.restrict ? " *__restrict__ " : " *") + param.abi.name;
}

/// The parameter's name where the kernel has it (a tensor map's address:
/// the template takes it by pointer), else nullptr.
static std::string forwardedName(const EmittedParam &param) {
  if (!param.present)
    return "nullptr";
  return (param.abi.kind == ParamKind::TensorMap ? "&" : "") + param.abi.name;
}

void printSignature(llvm::raw_ostream &os, StringRef name,
                    ArrayRef<EmittedParam> params) {
  os << name << "(";
  llvm::interleave(
      llvm::make_filter_range(
          params, [](const EmittedParam &param) { return param.present; }),
      os, [&](const EmittedParam &param) { os << cudaDeclaration(param); },
      ",\n    ");
  os << ")";
}

void printFieldAssignments(llvm::raw_ostream &os, StringRef object,
                           ArrayRef<EmittedParam> params, StringRef indent) {
  for (const EmittedParam &param : params)
    os << indent << object << "." << param.abi.name << " = "
       << forwardedName(param) << ";\n";
}

void printForwardedArguments(llvm::raw_ostream &os,
                             ArrayRef<EmittedParam> params) {
  llvm::interleave(
      params, os,
      [&](const EmittedParam &param) { os << forwardedName(param); }, ", ");
}

void printForwardingEntryPoint(llvm::raw_ostream &os, StringRef launchBounds,
                               StringRef name, StringRef callee,
                               ArrayRef<EmittedParam> params) {
  os << "extern \"C\" __global__ void __launch_bounds__(" << launchBounds
     << ")\n";
  printSignature(os, name, params);
  os << " {\n  " << callee << "(\n      ";
  printForwardedArguments(os, params);
  os << ");\n}\n";
}

void printParamsEntryPoint(llvm::raw_ostream &os, StringRef launchBounds,
                           StringRef name, StringRef ns,
                           ArrayRef<EmittedParam> params) {
  os << "extern \"C\" __global__ void __launch_bounds__(" << launchBounds
     << ")\n";
  printSignature(os, name, params);
  os << " {\n  " << ns << "::Params<Config> p{};\n";
  printFieldAssignments(os, "p", params);
  os << "  " << ns << "::Kernel<Config>::run(p);\n}\n";
}

std::vector<KernelParam> abiParams(ArrayRef<EmittedParam> params) {
  std::vector<KernelParam> abi;
  abi.reserve(params.size());
  for (const EmittedParam &param : params)
    if (param.present) {
      abi.push_back(param.abi);
      abi.back().writes = param.writes; // "writes" in the ABI JSON
    }
  return abi;
}

/// The layer function a kernel function was outlined from.
std::string layerOf(func::FuncOp kernel) {
  return kernel->getAttrOfType<StringAttr>("attn.layer").str();
}

} // namespace attnc::emit
