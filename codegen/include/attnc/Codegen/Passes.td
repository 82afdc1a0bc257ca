//===- Passes.td - codegen preparation passes --------------*- tablegen -*-===//
#ifndef ATTNC_CODEGEN_PASSES_TD
#define ATTNC_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnPrepareEmission : Pass<"attn-prepare-emission", "::mlir::ModuleOp"> {
  let summary = "Check kernels for CUDA emission and record every derived constant";
  let description = [{
    Runs on the kernel form (after attn-outline-kernels). For every kernel
    function it checks what the CUDA emitter supports, reporting anything
    else as a diagnostic at the op (missing schedule, an unsupported dtype,
    dynamic NTK rope scaling, a non-static head dim), and records on the
    kernel op an `attn.emission` attribute (#attn.preprocess_emission or
    #attn.attention_emission) with every number the printer needs: segment offsets and head strides from the layout library, cache
    element types, the rotary inverse-frequency table computed in double
    precision with its scaling applied, the yarn attention factor, the GQA
    group size, the softmax scale in log2 units. The printer then only
    prints.
  }];
  let dependentDialects = ["::attnc::attn::AttnDialect"];
}

#endif // ATTNC_CODEGEN_PASSES_TD
