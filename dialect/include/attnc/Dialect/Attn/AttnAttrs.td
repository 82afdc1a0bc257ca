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
/// An optional array of doubles, printed as `array<f64: ...>` (exactly).
class Attn_F64ArrayParameter<string desc>
    : OptionalParameter<"::mlir::DenseF64ArrayAttr", desc> {
  let parser = [{ ::attnc::attn::parseF64ArrayParameter($_parser) }];
  let printer = [{ $_printer.printAttribute($_self) }];
}

class Attn_BoolParameter<string desc, string default>
    : AttrParameter<"bool", desc> {
  let parser = [{ ::attnc::attn::parseBoolParameter($_parser) }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
  let defaultValue = default;
}

def Attn_RopeScalingAttr : AttrDef<Attn_Dialect, "RopeScaling"> {
  let mnemonic = "rope_scaling";
  let summary = "rotary frequency scaling (linear, llama3, yarn, dynamic NTK, longrope)";
  let description = [{
    Parameters of the rotary frequency scaling. Which fields matter depends on
    `kind`: linear and dynamic use `factor`; llama3 uses `factor`,
    `original_max_position`, `low_freq_factor` and `high_freq_factor`; yarn
    uses `factor`, `original_max_position`, `beta_fast`, `beta_slow`,
    `mscale`, `mscale_all_dim` and `truncate`; longrope (Phi-3) uses
    `original_max_position`, `short_factor` and `long_factor` (rotary_dim / 2
    divisors of the inverse frequencies each: a position below
    original_max_position rotates with the short list, one at or past it with
    the long list) and `factor` (for its default attention factor).
    `attention_factor` (yarn, longrope) multiplies cos and sin; 0 means the
    kind's default. Fields equal to their default are not printed.

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
    Attn_BoolParameter<"yarn truncate", "true">:$truncate,
    Attn_F64ArrayParameter<"longrope divisors below original_max_position">:$short_factor,
    Attn_F64ArrayParameter<"longrope divisors from original_max_position on">:$long_factor,
    Attn_F64Parameter<"factor on cos and sin (yarn, longrope); 0: the default",
                      "0.0">:$attention_factor
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Schedules (written by attn-specialize, read by codegen)
//===----------------------------------------------------------------------===//

def Attn_PreprocessScheduleAttr : AttrDef<Attn_Dialect, "PreprocessSchedule"> {
  let mnemonic = "preprocess_schedule";
  let summary = "launch shape of the fused preprocess kernel";
  let description = [{
    How `attn.fused_preprocess` maps onto threads. Each (token, head) pair of
    q, k, v (and gate) is a work item handled by `threads_per_head` threads
    that each move `vector_width` elements per access (16 bytes for 2-byte
    types when the head dims allow it); a block of `threads_per_block`
    threads handles `heads_per_block` work items of `tokens_per_block`
    tokens. Widths that do not divide a head dim are handled by a remainder
    loop, so any head dim (2, 3, ...) is valid. `min_blocks_per_sm` is the
    kernel's launch bound: the blocks per SM its register allocation must
    allow.

    `pair_layout` (a neox rotation over the whole q/k head only, with
    threads_per_head dividing half the head in vectors): chunk c <
    Dqk / 2 / vector_width / threads_per_head of a lane holds vector
    c * threads_per_head + lane of the first half and the chunk as many
    further on its rotation partner, so the rotation needs no exchange
    between lanes. False (the default, omitted when printed): chunk c holds
    vector c * threads_per_head + lane. `prefetch` is the number of work
    items whose loads are issued together (default 2, omitted when
    printed).

    Example:
    ```mlir
    #attn.preprocess_schedule<vector_width = 8, threads_per_head = 4,
        threads_per_block = 192, heads_per_block = 48, tokens_per_block = 1,
        min_blocks_per_sm = 3, pair_layout = true, prefetch = 1>
    ```
  }];
  let parameters = (ins
    "int64_t":$vector_width,
    "int64_t":$threads_per_head,
    "int64_t":$threads_per_block,
    "int64_t":$heads_per_block,
    "int64_t":$tokens_per_block,
    "int64_t":$min_blocks_per_sm,
    Attn_BoolParameter<"lanes hold both halves of their rotation pairs",
                       "false">:$pair_layout,
    DefaultValuedParameter<"int64_t", "2",
                           "work items whose loads are issued together">:$prefetch
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_MlaPreprocessScheduleAttr : AttrDef<Attn_Dialect, "MlaPreprocessSchedule"> {
  let mnemonic = "mla_preprocess_schedule";
  let summary = "launch shape of MLA's preprocess kernel";
  let description = [{
    How `attn.mla_preprocess` maps onto threads. Each token has one latent
    warp, which normalises, rotates and writes the token's latent row (one
    warp, so the RMSNorm reduces by shuffles), and `warps_per_token` query
    warps, over whose lanes its query rope work is spread (num_heads x
    rope_head_dim / (2 x vector_width) units, each two vectors of
    `vector_width` elements: the elements of vector_width rotation pairs).
    A block holds `tokens_per_block` tokens side by side,
    `threads_per_block` = 32 x (warps_per_token + 1) x tokens_per_block
    threads. `min_blocks_per_sm` is the launch bound the register
    allocation must allow.

    The memory-level knobs (each omitted when printed at its default):
    `token_steps` (default 1): each token place of a block handles this
    many tokens in turn (the grid is num_tokens / (tokens_per_block x
    token_steps) blocks), the loads of the next one issued before the math
    and stores of the current one (a register double buffer). `l2_prefetch`
    (default false): the row loads (kv_a, q_rope) ask L2 for the 256-byte
    block around each access (`ld.global.L2::256B`). `streaming_stores`
    (default false): the outputs are stored evict-first (`st.global.cs`)
    instead of L2-only (`st.global.cg`). `stage_in_shared` (default false):
    the row loads of all token_steps tokens of a block are issued at once
    as cp.async copies into shared memory (no registers held while they
    fly; token_steps x the held vectors x threads_per_block must fit 48 KB,
    the kernel's static_assert says so).

    attn-specialize keeps a schedule the op already has (hand-written IR,
    a benchmark's variant); attn-prepare-emission checks it against the op.

    Example:
    ```mlir
    #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 8,
        tokens_per_block = 1, threads_per_block = 288, min_blocks_per_sm = 3>
    #attn.mla_preprocess_schedule<vector_width = 8, warps_per_token = 4,
        tokens_per_block = 1, threads_per_block = 160, min_blocks_per_sm = 4,
        token_steps = 2, l2_prefetch = true, streaming_stores = true,
        stage_in_shared = true>
    ```
  }];
  let parameters = (ins
    "int64_t":$vector_width,
    "int64_t":$warps_per_token,
    "int64_t":$tokens_per_block,
    "int64_t":$threads_per_block,
    "int64_t":$min_blocks_per_sm,
    DefaultValuedParameter<"int64_t", "1",
                           "tokens each token place handles in turn">:$token_steps,
    Attn_BoolParameter<"row loads with an L2 256-byte prefetch hint",
                       "false">:$l2_prefetch,
    Attn_BoolParameter<"outputs stored evict-first (st.global.cs)",
                       "false">:$streaming_stores,
    Attn_BoolParameter<"row loads copied into shared memory (cp.async), all "
                       "steps at once", "false">:$stage_in_shared
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_AttentionScheduleAttr : AttrDef<Attn_Dialect, "AttentionSchedule"> {
  let mnemonic = "attention_schedule";
  let summary = "tiling of the paged attention kernel";
  let description = [{
    Tiles of the paged attention kernel: `block_m` query rows (GQA: the
    query heads of one KV group are packed into the rows, `gqa_pack` of them)
    against `block_n` keys per step, `num_warps` warps, `pipeline_stages`
    shared-memory stages for K/V tiles. Head dims are padded to
    `qk_dim_padded` / `v_dim_padded` (multiples of the MMA k/n step, 16).
    block_n 16 at 1 stage marks the CUDA-core form, which keeps no K/V
    tiles. Split-KV: the launcher splits each row block's keys over
    `num_kv_splits` blocks (grid z), at most `max_kv_splits`, enough to
    bring the grid to `target_ctas`; the last split to finish merges the
    partial results (docs/attention-kernel.md). `split_kv_min_keys` is the
    smallest share of keys a split is meant to get; the kernel does not
    enforce it yet (a split may get a single 64-key tile, or none).
    `mma` is the matrix instruction of tiles of more than 16 rows:
    "mma.sync" (m16n8k16 from registers; the default, omitted when printed)
    or "wgmma" (sm_90a warpgroup MMA from 128-byte-swizzled shared memory;
    it needs block_m 128 and head dims padded to multiples of 64 with
    v_dim_padded <= 256). Tiles of at most 16 rows use mma.sync either way.
    attn.varlen_attention may take "wgmma_ws" on sm_90a: the warp-specialised
    kernel (attnc_attention_ws.cuh), num_warps 12 = a producer warpgroup
    (bulk tensor copies into `pipeline_stages` K/V stages) and two consumer
    warpgroups of 64 rows each (block_m 128) taking turns at the tensor
    cores; block_n 64, 80, 128, 176 or 192; no split-KV (max_kv_splits
    1). With `persistent = true` (wgmma_ws only; false, the default, is
    omitted when printed) the grid is one block an SM (target_ctas / 2),
    each striding over all row tiles and KV head packs, last row tiles
    first, so that a block's next tile loads under its current one.
    `form` is the kernel form attn-specialize chose: `tensor_core` (the
    default, omitted when printed; runtime/device/attnc_attention.cuh) or
    `cuda_core` (one block per query row and KV head,
    attnc_attention_reference.cuh; its schedule is block_n 16 at 1 stage,
    as it keeps no K/V tiles). The printer reads it and re-derives nothing.

    Example:
    ```mlir
    #attn.attention_schedule<block_m = 128, block_n = 64, num_warps = 4,
        pipeline_stages = 2, qk_dim_padded = 192, v_dim_padded = 128,
        gqa_pack = 8, split_kv_min_keys = 256, max_kv_splits = 64,
        target_ctas = 264>
    ```
  }];
  let parameters = (ins
    "int64_t":$block_m,
    "int64_t":$block_n,
    "int64_t":$num_warps,
    "int64_t":$pipeline_stages,
    "int64_t":$qk_dim_padded,
    "int64_t":$v_dim_padded,
    "int64_t":$gqa_pack,
    "int64_t":$split_kv_min_keys,
    "int64_t":$max_kv_splits,
    "int64_t":$target_ctas,
    StringRefParameter<"matrix instruction of tiles of more than 16 rows",
                       "\"mma.sync\"">:$mma,
    DefaultValuedParameter<"::attnc::attn::AttentionForm",
                           "::attnc::attn::AttentionForm::tensor_core",
                           "the kernel form">:$form,
    DefaultValuedParameter<"bool", "false",
                           "persistent blocks (wgmma_ws only)">:$persistent
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_LatentAttentionScheduleAttr : AttrDef<Attn_Dialect, "LatentAttentionSchedule"> {
  let mnemonic = "latent_attention_schedule";
  let summary = "tiling of MLA's absorbed decode kernel (attn.latent_attention)";
  let description = [{
    The MLA decode kernel (runtime/device/attnc_mla_decode.cuh; sizes in
    plan/include/attnc/Plan/LatentAttention.h): a CTA of `num_warps` warps
    (two warpgroups) takes `block_m` query rows (heads x MTP rows of one
    sequence) against `block_n`-key tiles of the latent cache, Q and two K
    tiles in shared memory, wgmma (sm_90a). Split-KV: the launcher splits a
    row tile's keys over `num_kv_splits` CTAs (grid z), at most
    `max_kv_splits`, enough to bring the busy CTAs to `target_ctas` (one
    CTA per SM); the last split merges.

    Example:
    ```mlir
    #attn.latent_attention_schedule<block_m = 64, block_n = 64,
        num_warps = 8, max_kv_splits = 32, target_ctas = 132>
    ```
  }];
  let parameters = (ins
    "int64_t":$block_m,
    "int64_t":$block_n,
    "int64_t":$num_warps,
    "int64_t":$max_kv_splits,
    "int64_t":$target_ctas
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_PreprocessEmissionAttr : AttrDef<Attn_Dialect, "PreprocessEmission"> {
  let mnemonic = "preprocess_emission";
  let summary = "what the preprocess printer needs beyond the op (attn-prepare-emission)";
  let description = [{
    Set on `attn.fused_preprocess` by attn-prepare-emission, read by the CUDA
    printer only: element types as the runtime ABI spells them, the cache's
    block size, the fused row's layout from the layout library (width, q, k,
    v and, when the kernel outputs the gate, gate offsets and head strides),
    and with rope the inverse frequencies (scaling applied, in double) and
    the attention factor (yarn, longrope); longrope adds the second table
    `inv_freq_long`, used from position `rope_long_from` on.

    Example:
    ```mlir
    #attn.preprocess_emission<activation = "bf16", cache = "bf16",
        block_size = 16, fused_width = 30, q_offset = 0, q_head_stride = 2,
        k_offset = 8, v_offset = 12, gate_offset = 18, gate_head_stride = 3,
        inv_freq = array<f64: 1.0>>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"activation element type (bf16, fp16)">:$activation,
    StringRefParameter<"cache element type (bf16, fp16, fp8_e4m3)">:$cache,
    "int64_t":$block_size,
    "int64_t":$fused_width,
    "int64_t":$q_offset,
    "int64_t":$q_head_stride,
    "int64_t":$k_offset,
    "int64_t":$v_offset,
    OptionalParameter<"std::optional<int64_t>", "gate segment offset">:$gate_offset,
    OptionalParameter<"std::optional<int64_t>", "gate head stride">:$gate_head_stride,
    Attn_F64ArrayParameter<"rope inverse frequencies, rotary_dim / 2 of them">:$inv_freq,
    Attn_F64Parameter<"factor on cos and sin (yarn, longrope)", "1.0">:$rope_attention_factor,
    Attn_F64ArrayParameter<"longrope: the inverse frequencies from rope_long_from on">:$inv_freq_long,
    DefaultValuedParameter<"int64_t", "0",
        "longrope: the first position of inv_freq_long (0: none)">:$rope_long_from
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

def Attn_AttentionEmissionAttr : AttrDef<Attn_Dialect, "AttentionEmission"> {
  let mnemonic = "attention_emission";
  let summary = "what the attention printer needs beyond the op (attn-prepare-emission)";
  let description = [{
    Set on `attn.paged_attention` by attn-prepare-emission, read by the CUDA
    printer only: element types as the runtime ABI spells them, the cache's
    block size, the GQA group (query heads per KV head), the softmax scale
    in log2 units (scores are exponentiated with exp2) and whether the
    output gate is the kernel's epilogue.

    Example:
    ```mlir
    #attn.attention_emission<activation = "fp16", cache = "fp16",
        block_size = 16, group_size = 2, scale_log2 = 0.72134752044448169>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"activation element type (bf16, fp16)">:$activation,
    StringRefParameter<"cache element type (bf16, fp16, fp8_e4m3)">:$cache,
    "int64_t":$block_size,
    "int64_t":$group_size,
    Attn_F64Parameter<"softmax_scale * log2(e)", "1.0">:$scale_log2,
    Attn_BoolParameter<"the output gate is the epilogue", "false">:$gate
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

def Attn_MlaPreprocessEmissionAttr : AttrDef<Attn_Dialect, "MlaPreprocessEmission"> {
  let mnemonic = "mla_preprocess_emission";
  let summary = "what the MLA preprocess printer needs beyond the op (attn-prepare-emission)";
  let description = [{
    Set on `attn.mla_preprocess` by attn-prepare-emission, read by the CUDA
    printer only: element types as the runtime ABI spells them, the latent
    cache's block size, the rope inverse frequencies (rope_head_dim / 2 of
    them, scaling applied, in double) and the factor on cos and sin (yarn's
    attention factor; 1 otherwise).

    Example:
    ```mlir
    #attn.mla_preprocess_emission<activation = "bf16", cache = "fp8_e4m3",
        block_size = 64, inv_freq = array<f64: 1.0, 0.01>>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"activation element type (bf16, fp16)">:$activation,
    StringRefParameter<"cache element type (bf16, fp16, fp8_e4m3)">:$cache,
    "int64_t":$block_size,
    Attn_F64ArrayParameter<"rope inverse frequencies, rope_head_dim / 2 of them">:$inv_freq,
    Attn_F64Parameter<"factor on cos and sin (yarn)", "1.0">:$rope_attention_factor
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // ATTNC_DIALECT_ATTN_ATTRS_TD
