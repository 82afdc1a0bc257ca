//===- AttnDialect.td - The attn dialect -------------------*- tablegen -*-===//
#ifndef ATTNC_DIALECT_ATTN_DIALECT_TD
#define ATTNC_DIALECT_ATTN_DIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::attnc::attn";
  let summary = "Attention layers of large language models";
  let description = [{
    The `attn` dialect describes one attention layer of a language model as
    the engine runs it: the fused QKV(G) projection output is split into q, k,
    v (and an optional output gate), q and k get an optional norm (RMSNorm,
    Gemma's, unweighted or LayerNorm; per head or over the whole projection)
    and an optional rotary embedding, k and v are written to a paged KV cache,
    attention runs over the paged cache, and the output is optionally gated.

    The query/key head dimension (`qk_head_dim`, Dqk) and the value head
    dimension (`v_head_dim`, Dv) are separate everywhere: q and k heads are
    Dqk wide, v heads, the gate and the attention output are Dv wide, the K
    cache stores Dqk and the V cache Dv per head.

    Optional features are present or absent ops, never null operands: a model
    without q/k norm has no `attn.rms_norm`, a model without an output gate
    has no `attn.output_gate` and a `qkv_split` with `gate_layout = none`.

    Values are ranked tensors of the builtin dialect; the token dimension is
    dynamic (`?`), head counts and head dims are static. Caches are
    `[num_blocks, block_size, num_kv_heads, head_dim]` and are threaded
    through `attn.cache_write` as values so that the data flow orders the
    write before the attention that reads it.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTNC_DIALECT_ATTN_DIALECT_TD
