//===- AttnAttrs.td - Attributes of the attn dialect -------*- tablegen -*-===//
#ifndef ATTNC_DIALECT_ATTN_ATTRS_TD
#define ATTNC_DIALECT_ATTN_ATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "attnc/Dialect/Attn/AttnDialect.td"
include "attnc/Dialect/Attn/AttnEnums.td"

/// A double parameter printed exactly (shortest round-trip form).
class Attn_F64Parameter<string desc, string default>
    : AttrParameter<"::attnc::attn::F64", desc> {
  let parser = [{ ::attnc::attn::parseF64Parameter($_parser) }];
  let printer = [{ ::attnc::attn::printF64Parameter($_printer, $_self) }];
  let defaultValue = default;
}

/// A bool parameter spelled `true` / `false`.
class Attn_BoolParameter<string desc, string default>
    : AttrParameter<"bool", desc> {
  let parser = [{ ::attnc::attn::parseBoolParameter($_parser) }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
  let defaultValue = default;
}

def Attn_RopeScalingAttr : AttrDef<Attn_Dialect, "RopeScaling"> {
  let mnemonic = "rope_scaling";
  let summary = "rotary frequency scaling (linear, llama3, yarn, dynamic NTK)";
  let description = [{
    Parameters of the rotary frequency scaling. Which fields matter depends on
    `kind`: linear and dynamic use `factor`; llama3 uses `factor`,
    `original_max_position`, `low_freq_factor` and `high_freq_factor`; yarn
    uses `factor`, `original_max_position`, `beta_fast`, `beta_slow`,
    `mscale`, `mscale_all_dim` and `truncate`. Fields equal to their default
    are not printed.

    Example:
    ```mlir
    #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096>
    ```
  }];
  let parameters = (ins
    EnumParameter<Attn_RopeScalingKind>:$kind,
    Attn_F64Parameter<"scaling factor", "1.0">:$factor,
    DefaultValuedParameter<"int64_t", "0">:$original_max_position,
    Attn_F64Parameter<"llama3 low-frequency factor", "1.0">:$low_freq_factor,
    Attn_F64Parameter<"llama3 high-frequency factor", "4.0">:$high_freq_factor,
    Attn_F64Parameter<"yarn beta_fast", "32.0">:$beta_fast,
    Attn_F64Parameter<"yarn beta_slow", "1.0">:$beta_slow,
    Attn_F64Parameter<"yarn mscale", "1.0">:$mscale,
    Attn_F64Parameter<"yarn mscale_all_dim (0: absent)", "0.0">:$mscale_all_dim,
    Attn_BoolParameter<"yarn truncate", "true">:$truncate
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // ATTNC_DIALECT_ATTN_ATTRS_TD
