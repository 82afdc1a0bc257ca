//===- AttnEnums.td - Enumerations of the attn dialect -----*- tablegen -*-===//
#ifndef ATTNC_DIALECT_ATTN_ENUMS_TD
#define ATTNC_DIALECT_ATTN_ENUMS_TD

include "mlir/IR/EnumAttr.td"
include "attnc/Dialect/Attn/AttnDialect.td"

def Attn_GateLayout : I32EnumAttr<"GateLayout",
    "where the output gate sits in the fused projection output", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"qkvg", 1>,
      I32EnumAttrCase<"interleaved", 2>,
      I32EnumAttrCase<"head_scalar", 3>]> {
  let cppNamespace = "::attnc::attn";
  let genSpecializedAttr = 0;
}
def Attn_GateLayoutAttr : EnumAttr<Attn_Dialect, Attn_GateLayout, "gate_layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_NormStyle : I32EnumAttr<"NormStyle", "the q/k norm's formula", [
      I32EnumAttrCase<"rms", 0>,
      I32EnumAttrCase<"gemma", 1>,
      I32EnumAttrCase<"unweighted", 2>,
      I32EnumAttrCase<"layernorm", 3>]> {
  let cppNamespace = "::attnc::attn";
  let genSpecializedAttr = 0;
}
def Attn_NormStyleAttr : EnumAttr<Attn_Dialect, Attn_NormStyle, "norm_style"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_NormScope : I32EnumAttr<"NormScope",
    "what the q/k norm's statistics are taken over, and its weight's shape", [
      I32EnumAttrCase<"head", 0>,
      I32EnumAttrCase<"head_weights", 1>,
      I32EnumAttrCase<"projection", 2>]> {
  let cppNamespace = "::attnc::attn";
  let genSpecializedAttr = 0;
}
def Attn_NormScopeAttr : EnumAttr<Attn_Dialect, Attn_NormScope, "norm_scope"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_RopeStyle : I32EnumAttr<"RopeStyle", "rotary embedding pairing", [
      I32EnumAttrCase<"neox", 0>,
      I32EnumAttrCase<"gptj", 1>]> {
  let cppNamespace = "::attnc::attn";
  let genSpecializedAttr = 0;
}
def Attn_RopeStyleAttr : EnumAttr<Attn_Dialect, Attn_RopeStyle, "rope_style"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_RopeScalingKind : I32EnumAttr<"RopeScalingKind",
    "rotary frequency scaling", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"linear", 1>,
      I32EnumAttrCase<"llama3", 2>,
      I32EnumAttrCase<"yarn", 3>,
      I32EnumAttrCase<"dynamic", 4>,
      I32EnumAttrCase<"longrope", 5>]> {
  let cppNamespace = "::attnc::attn";
}

def Attn_AttentionForm : I32EnumAttr<"AttentionForm",
    "the paged attention kernel's form", [
      I32EnumAttrCase<"tensor_core", 0>,
      I32EnumAttrCase<"cuda_core", 1>]> {
  let cppNamespace = "::attnc::attn";
  let genSpecializedAttr = 0;
}

def Attn_PreprocessStage : I32EnumAttr<"PreprocessStage",
    "a stage of the fused preprocess kernel", [
      I32EnumAttrCase<"q_norm", 0>,
      I32EnumAttrCase<"k_norm", 1>,
      I32EnumAttrCase<"rope", 2>,
      I32EnumAttrCase<"q_temperature", 3>]> {
  let cppNamespace = "::attnc::attn";
  let genSpecializedAttr = 0;
}
def Attn_PreprocessStageAttr
    : EnumAttr<Attn_Dialect, Attn_PreprocessStage, "stage"> {
  let assemblyFormat = "`<` $value `>`";
}
def Attn_PreprocessStageArrayAttr
    : TypedArrayAttrBase<Attn_PreprocessStageAttr, "preprocess stages">;

#endif // ATTNC_DIALECT_ATTN_ENUMS_TD
