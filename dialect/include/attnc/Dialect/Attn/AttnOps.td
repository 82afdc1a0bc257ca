//===- AttnOps.td - Operations of the attn dialect ---------*- tablegen -*-===//
#ifndef ATTNC_DIALECT_ATTN_OPS_TD
#define ATTNC_DIALECT_ATTN_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "attnc/Dialect/Attn/AttnDialect.td"
include "attnc/Dialect/Attn/AttnEnums.td"
include "attnc/Dialect/Attn/AttnAttrs.td"

// Integer attributes are signless 64-bit; verifiers read them signed so a
// negative value is reported as negative, not as a huge unsigned number.

def Attn_QkvSplitOp : Attn_Op<"qkv_split", [Pure]> {
  let summary = "split the fused QKV(G) projection output into q, k, v and gate";
  let description = [{
    Splits the fused projection output `[tokens, W]` into
    q `[tokens, Hq, Dqk]`, k `[tokens, Hkv, Dqk]`, v `[tokens, Hkv, Dv]` and,
    when `gate_layout` is not `none`, the output gate `[tokens, Hq, Dv]`.
    W must equal Hq*Dqk + Hkv*Dqk + Hkv*Dv (+ Hq*Dv with a gate). With
    `gate_layout = qkvg` the gate is the fourth contiguous segment; with
    `interleaved` each query head of Dqk is followed by its gate head of Dv.
    The gate result may be left out when nothing uses it (canonicalization
    drops an unused one): the gate columns are still part of W and skipped.
    The segment offsets are those of the layout library (attnc/Plan/Layout.h).

    Example (MiMo-V2-Flash full-attention layer, 192/128):
    ```mlir
    %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 64, num_kv_heads = 4,
        qk_head_dim = 192, v_head_dim = 128}
        : tensor<?x13568xbf16>
        -> tensor<?x64x192xbf16>, tensor<?x4x192xbf16>, tensor<?x4x128xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$qkv,
    I64Attr:$num_q_heads,
    I64Attr:$num_kv_heads,
    I64Attr:$qk_head_dim,
    I64Attr:$v_head_dim,
    DefaultValuedAttr<Attn_GateLayoutAttr, "GateLayout::none">:$gate_layout
  );
  let results = (outs
    AnyRankedTensor:$q,
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    Optional<AnyRankedTensor>:$gate
  );
  let assemblyFormat = "$qkv attr-dict `:` type($qkv) `->` type(results)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Attn_QueryTemperatureOp : Attn_Op<"query_temperature",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Llama 4's attention temperature: q scaled by its position";
  let description = [{
    `result[t] = input[t] * (log(floor((positions[t] + 1) / floor_scale) + 1)
    * scale + 1)`: Llama 4's `attn_temperature_tuning` on its NoPE layers,
    which sharpens the softmax of long contexts. `floor_scale` > 0.

    Example:
    ```mlir
    %qt = attn.query_temperature %q, %positions {floor_scale = 8192.0 : f64,
        scale = 0.1 : f64} : tensor<?x40x128xbf16>, tensor<?xi64>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    AnyRankedTensor:$positions,
    F64Attr:$floor_scale,
    F64Attr:$scale
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $positions attr-dict `:` type($input) `,` type($positions)
  }];
  let hasVerifier = 1;
}

def Attn_RmsNormOp : Attn_Op<"rms_norm",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "the q/k norm: RMSNorm (plain, Gemma, unweighted) or LayerNorm";
  let description = [{
    Normalises q or k `[tokens, H, D]`, in float32:
    - `rms`: `x * rsqrt(mean(x^2) + eps) * w`
    - `gemma`: `x * rsqrt(mean(x^2) + eps) * (1 + w)`
    - `unweighted`: `x * rsqrt(mean(x^2) + eps)` (Llama 4's L2Norm; no weight)
    - `layernorm`: `(x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps) * w`,
      `+ b` when the `bias` operand is present (the biased variance).

    `scope` says what the mean (and variance) are taken over and the
    weight's shape (the bias has the weight's):
    - `head` (default): each head's D values; weight `[D]`, shared by heads;
    - `head_weights`: each head's D values; weight `[H, D]`, row h for head h
      (Cohere, StableLM);
    - `projection`: all H * D values of a token together; weight `[H * D]`
      (OLMo-2, MiniMax-M2). Every head of the projection must be present: a
      module split for tensor parallelism (`attn.tensor_parallel`) cannot
      have it.

    The weight is required except for `unweighted`, where it is absent; a
    model without q/k norm has no `attn.rms_norm`.

    Example:
    ```mlir
    %qn = attn.rms_norm %q, %q_norm_weight {eps = 1.0e-06 : f64,
        style = #attn.norm_style<rms>}
        : tensor<?x32x128xbf16>, tensor<128xbf16>
    %kn = attn.rms_norm %k, %k_norm_weight bias %k_norm_bias {eps = 1.0e-05 : f64,
        style = #attn.norm_style<layernorm>, scope = #attn.norm_scope<head_weights>}
        : tensor<?x8x128xbf16>, tensor<8x128xbf16> bias tensor<8x128xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    Optional<AnyRankedTensor>:$weight,
    Optional<AnyRankedTensor>:$bias,
    F64Attr:$eps,
    DefaultValuedAttr<Attn_NormStyleAttr, "NormStyle::rms">:$style,
    DefaultValuedAttr<Attn_NormScopeAttr, "NormScope::head">:$scope
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? (`bias` $bias^)? attr-dict `:` type($input)
    (`,` type($weight)^)? (`bias` type($bias)^)?
  }];
  let hasVerifier = 1;
}

def Attn_RopeOp : Attn_Op<"rope", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding over part of the head dimension";
  let description = [{
    Rotates dims `[rotary_offset, rotary_offset + rotary_dim)` of every head
    of `input` `[tokens, heads, Dqk]` by angles `positions[t] * inv_freq[i]`,
    `inv_freq[i] = theta^(-2i / rotary_dim)`, adjusted by `scaling`. `neox`
    pairs element i with i + rotary_dim/2; `gptj` pairs 2i with 2i+1. Dims
    outside the rotated range pass through. `rotary_dim = 0` is the identity.

    Example (partial rotary, 64 of 192 dims):
    ```mlir
    %qr = attn.rope %q, %positions {style = #attn.rope_style<neox>,
        rotary_dim = 64, theta = 5.0e+06 : f64}
        : tensor<?x64x192xbf16>, tensor<?xi64>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    AnyRankedTensor:$positions,
    DefaultValuedAttr<Attn_RopeStyleAttr, "RopeStyle::neox">:$style,
    I64Attr:$rotary_dim,
    DefaultValuedAttr<I64Attr, "0">:$rotary_offset,
    F64Attr:$theta,
    OptionalAttr<Attn_RopeScalingAttr>:$scaling
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $positions attr-dict `:` type($input) `,` type($positions)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Attn_CacheWriteOp : Attn_Op<"cache_write",
    [Pure, AttrSizedOperandSegments,
     AllTypesMatch<["k_cache", "k_cache_out"]>,
     AllTypesMatch<["v_cache", "v_cache_out"]>]> {
  let summary = "write k and v into the paged KV cache through a slot mapping";
  let description = [{
    For every token t with `slot_mapping[t] >= 0`, writes `k[t]` to
    `k_cache[slot / block_size, slot % block_size]` and `v[t]` likewise;
    tokens with a negative slot are padding and write nothing. The K cache
    head dim is Dqk, the V cache head dim Dv. The caches are values: the
    results are the caches after the write. A cache of `f8E4M3FN` stores
    `x / scale` and needs the `k_scale` and `v_scale` operands (f32 scalars);
    other caches have the activation dtype and no scales.

    Example:
    ```mlir
    %kc, %vc = attn.cache_write %k, %v, %slot_mapping into %k_cache, %v_cache
        : tensor<?x4x192xbf16>, tensor<?x4x128xbf16>, tensor<?xi64>
        into tensor<?x16x4x192xbf16>, tensor<?x16x4x128xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$k,
    AnyRankedTensor:$v,
    AnyRankedTensor:$slot_mapping,
    AnyRankedTensor:$k_cache,
    AnyRankedTensor:$v_cache,
    Optional<AnyRankedTensor>:$k_scale,
    Optional<AnyRankedTensor>:$v_scale
  );
  let results = (outs AnyRankedTensor:$k_cache_out, AnyRankedTensor:$v_cache_out);
  let assemblyFormat = [{
    $k `,` $v `,` $slot_mapping `into` $k_cache `,` $v_cache
    (`scales` $k_scale^ `,` $v_scale)? attr-dict
    `:` type($k) `,` type($v) `,` type($slot_mapping)
    `into` type($k_cache) `,` type($v_cache)
    (`scales` type($k_scale)^ `,` type($v_scale))?
  }];
  let hasVerifier = 1;
}

def Attn_PagedAttentionOp : Attn_Op<"paged_attention",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "attention of varlen queries against a paged KV cache";
  let description = [{
    Queries `[tokens, Hq, Dqk]` of a varlen batch (decode rows and
    prefill/append rows together): sequence s owns query rows
    `[query_start_loc[s], query_start_loc[s+1])`, has `seq_lens[s]` keys in
    the cache, and its blocks are `block_tables[s, :]`. GQA: query head h
    reads KV head `h / (Hq / Hkv)`. `causal` aligns the last query row of a
    sequence with its last key. `sliding_window > 0` limits each query to the
    last `sliding_window` keys. `attention_chunk > 0` (causal only; Llama 4's
    chunked attention) limits a query at position p to the keys of its
    chunk, `[p - p % attention_chunk, p]`. `sinks` (f32 `[Hq]`) adds one learned logit
    per head to the softmax denominator. `logit_softcap > 0` applies
    `c * tanh(x / c)` to the logits. `value_scale` multiplies V (equivalently
    the output). The output is `[tokens, Hq, Dv]`. `schedule` is the tiling
    chosen by `attn-specialize`.

    Example:
    ```mlir
    %o = attn.paged_attention %q, %kc, %vc, %block_tables, %seq_lens,
        %query_start_loc {softmax_scale = 0.0721 : f64, causal = true}
        : tensor<?x64x192xbf16>, tensor<?x16x4x192xbf16>,
          tensor<?x16x4x128xbf16>, tensor<?x?xi32>, tensor<?xi32>,
          tensor<?xi32> -> tensor<?x64x128xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$k_cache,
    AnyRankedTensor:$v_cache,
    AnyRankedTensor:$block_tables,
    AnyRankedTensor:$seq_lens,
    AnyRankedTensor:$query_start_loc,
    Optional<AnyRankedTensor>:$sinks,
    Optional<AnyRankedTensor>:$k_scale,
    Optional<AnyRankedTensor>:$v_scale,
    F64Attr:$softmax_scale,
    DefaultValuedAttr<BoolAttr, "true">:$causal,
    DefaultValuedAttr<I64Attr, "0">:$sliding_window,
    DefaultValuedAttr<F64Attr, "0.0">:$logit_softcap,
    DefaultValuedAttr<F64Attr, "1.0">:$value_scale,
    DefaultValuedAttr<I64Attr, "0">:$attention_chunk,
    OptionalAttr<Attn_AttentionScheduleAttr>:$schedule
  );
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = [{
    $query `,` $k_cache `,` $v_cache `,` $block_tables `,` $seq_lens `,`
    $query_start_loc (`sinks` $sinks^)? (`scales` $k_scale^ `,` $v_scale)?
    attr-dict `:` type($query) `,` type($k_cache) `,` type($v_cache) `,`
    type($block_tables) `,` type($seq_lens) `,` type($query_start_loc)
    (`sinks` type($sinks)^)? (`scales` type($k_scale)^ `,` type($v_scale))?
    `->` type($output)
  }];
  let hasVerifier = 1;
}

def Attn_OutputGateOp : Attn_Op<"output_gate", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "gate the attention output: out * sigmoid(gate)";
  let description = [{
    Multiplies the attention output `[tokens, Hq, Dv]` by `sigmoid(gate)`;
    the gate comes from `attn.qkv_split` and is Dv wide per query head
    (element-wise), or one value per query head (`[tokens, Hq, 1]`,
    gate_layout head_scalar), which multiplies all Dv values of its head.
    The gate's type is printed only when it differs from the output's.

    Example:
    ```mlir
    %y = attn.output_gate %o, %g : tensor<?x16x256xbf16>
    %z = attn.output_gate %o, %s : tensor<?x16x256xbf16>, tensor<?x16x1xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$gate);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $gate attr-dict `:` custom<GateTypes>(type($input), type($gate), type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Multi-head latent attention (MLA: DeepSeek-V2/V3, Kimi-K2, GLM-4.x-Flash,
// Mistral's and LongCat's). Each op is one kernel as it stands; the passes
// only choose their schedules. The latent cache holds, per token, one row of
// kv_lora_rank (R) normalised latent values c_kv followed by qk_rope_head_dim
// (P) rotated k_pe values: [num_blocks, block_size, R + P]. V is the first R
// values of the same rows (one allocation, no second cache).
//===----------------------------------------------------------------------===//

def Attn_MlaPreprocessOp : Attn_Op<"mla_preprocess",
    [Pure,
     AllTypesMatch<["latent_cache", "latent_cache_out"]>,
     AllTypesMatch<["kv_a", "latent"]>,
     AllTypesMatch<["q_rope", "q_rope_out"]>]> {
  let summary = "MLA's preprocess: kv_a_layernorm, rope on k_pe and q_pe, latent cache write";
  let description = [{
    From the `kv_a_proj_with_mqa` output `kv_a [tokens, R + P]` and the
    query's rope part `q_rope [tokens, H, P]` (a view of the query
    projection output): normalises c_kv = `kv_a[:, :R]` (RMSNorm with
    `kv_norm_weight [R]` and `norm_eps`, then times `latent_scale`, LongCat's
    sqrt(hidden / kv_lora_rank); 1 elsewhere), rotates k_pe = `kv_a[:, R:]`
    and every head of `q_rope` at `positions` (`rope_style` gptj: interleaved
    pairs; neox: halves; `rope_deinterleave` (gptj only): interleaved pairs
    in, rotated values out in halves order, as Hugging Face's
    `apply_rotary_pos_emb_interleave`), and writes `[c_kv | k_pe]` into the
    latent cache row `slot_mapping[t]` (slot < 0: padding, nothing written).
    Results: `latent` (the normalised, rotated `[tokens, R + P]` rows, for
    the prefill's up-projection), `q_rope_out` (the rotated query rope part:
    the engine passes a view into the absorbed `[tokens, H, R + P]` query, or
    into the `[tokens, H, nope + P]` query of the decompressed prefill) and
    the cache. An f8E4M3FN cache stores `x / scale` and needs `cache_scale`
    (tensor<f32>). `schedule` is chosen by `attn-specialize`.

    Example (DeepSeek-V3, 128 heads):
    ```mlir
    %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w
        into %cache {num_heads = 128, kv_lora_rank = 512, rope_head_dim = 64,
        norm_eps = 1.0e-06 : f64, rope_style = #attn.rope_style<gptj>,
        rope_deinterleave = true, theta = 1.0e+04 : f64}
        : tensor<?x576xbf16>, tensor<?x128x64xbf16>, tensor<?xi64>,
          tensor<?xi64>, tensor<512xbf16> into tensor<?x64x576xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$kv_a,
    AnyRankedTensor:$q_rope,
    AnyRankedTensor:$slot_mapping,
    AnyRankedTensor:$positions,
    AnyRankedTensor:$kv_norm_weight,
    AnyRankedTensor:$latent_cache,
    Optional<AnyRankedTensor>:$cache_scale,
    I64Attr:$num_heads,
    I64Attr:$kv_lora_rank,
    I64Attr:$rope_head_dim,
    F64Attr:$norm_eps,
    DefaultValuedAttr<F64Attr, "1.0">:$latent_scale,
    Attn_RopeStyleAttr:$rope_style,
    DefaultValuedAttr<BoolAttr, "false">:$rope_deinterleave,
    F64Attr:$theta,
    OptionalAttr<Attn_RopeScalingAttr>:$scaling,
    OptionalAttr<Attn_MlaPreprocessScheduleAttr>:$schedule
  );
  let results = (outs
    AnyRankedTensor:$latent,
    AnyRankedTensor:$q_rope_out,
    AnyRankedTensor:$latent_cache_out
  );
  let assemblyFormat = [{
    $kv_a `,` $q_rope `,` $slot_mapping `,` $positions `,` $kv_norm_weight
    `into` $latent_cache (`scale` $cache_scale^)? attr-dict
    `:` type($kv_a) `,` type($q_rope) `,` type($slot_mapping) `,`
    type($positions) `,` type($kv_norm_weight) `into` type($latent_cache)
    (`scale` type($cache_scale)^)?
  }];
  let hasVerifier = 1;
}

def Attn_LatentAttentionOp : Attn_Op<"latent_attention", [Pure]> {
  let summary = "MLA's absorbed attention over the paged latent cache (decode, MTP rows)";
  let description = [{
    Queries `[tokens, H, R + P]` (the engine's absorbed q_nope · W_UK in the
    first R values, the rotated q_pe after them) of a varlen batch attend to
    one shared KV head: K is the latent cache row `[c_kv | k_pe]` (R + P), V
    its first R values. Sequence s owns query rows
    `[query_start_loc[s], query_start_loc[s+1])` (1 for decode, a few for
    speculative/MTP rows), `seq_lens[s]` cached rows, blocks
    `block_tables[s, :]`; `causal` aligns the last query row of a sequence
    with its last key. `softmax_scale` is that of the decompressed head
    (qk_head_dim^-0.5, times mscale^2 with DeepSeek's YaRN). The output is
    `[tokens, H, R]`, the latent-space attention output (the engine applies
    W_UV). An f8E4M3FN cache needs `cache_scale`.

    Example:
    ```mlir
    %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
        {kv_lora_rank = 512, softmax_scale = 0.1352 : f64}
        : tensor<?x128x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>,
          tensor<?xi32>, tensor<?xi32> -> tensor<?x128x512xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$latent_cache,
    AnyRankedTensor:$block_tables,
    AnyRankedTensor:$seq_lens,
    AnyRankedTensor:$query_start_loc,
    Optional<AnyRankedTensor>:$cache_scale,
    I64Attr:$kv_lora_rank,
    F64Attr:$softmax_scale,
    DefaultValuedAttr<BoolAttr, "true">:$causal,
    OptionalAttr<Attn_LatentAttentionScheduleAttr>:$schedule
  );
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = [{
    $query `,` $latent_cache `,` $block_tables `,` $seq_lens `,`
    $query_start_loc (`scale` $cache_scale^)? attr-dict `:` type($query) `,`
    type($latent_cache) `,` type($block_tables) `,` type($seq_lens) `,`
    type($query_start_loc) (`scale` type($cache_scale)^)? `->` type($output)
  }];
  let hasVerifier = 1;
}

def Attn_VarlenAttentionOp : Attn_Op<"varlen_attention", [Pure]> {
  let summary = "attention over ragged contiguous K/V (no pages): MLA's decompressed prefill, and any prefill";
  let description = [{
    Queries `[tokens_q, Hq, Dqk]`, keys `[tokens_k, Hkv, Dqk]`, values
    `[tokens_k, Hkv, Dv]`, all ragged: sequence s owns query rows
    `[cu_seqlens_q[s], cu_seqlens_q[s+1])` and key/value rows
    `[cu_seqlens_k[s], cu_seqlens_k[s+1])`. GQA as in `attn.paged_attention`
    (query head h reads KV head h / (Hq / Hkv)); `causal` aligns the last
    query row of a sequence with its last key (a chunk of new tokens after
    the cached ones). The output is `[tokens_q, Hq, Dv]`. For MLA the engine
    up-projects k_nope and v from the latent rows (`kv_b_proj`) and passes
    k = [k_nope | k_pe] per head: Hkv = Hq, Dqk = nope + P, Dv = v_head_dim.

    Example:
    ```mlir
    %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k
        {softmax_scale = 0.1352 : f64}
        : tensor<?x128x192xbf16>, tensor<?x128x192xbf16>,
          tensor<?x128x128xbf16>, tensor<?xi32>, tensor<?xi32>
          -> tensor<?x128x128xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    AnyRankedTensor:$cu_seqlens_q,
    AnyRankedTensor:$cu_seqlens_k,
    F64Attr:$softmax_scale,
    DefaultValuedAttr<BoolAttr, "true">:$causal,
    OptionalAttr<Attn_AttentionScheduleAttr>:$schedule
  );
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $cu_seqlens_q `,` $cu_seqlens_k attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($cu_seqlens_q)
    `,` type($cu_seqlens_k) `->` type($output)
  }];
  let hasVerifier = 1;
}

def Attn_LatentGatherOp : Attn_Op<"latent_gather", [Pure]> {
  let summary = "a sequence's cached latent rows, written contiguously (chunked MLA prefill)";
  let description = [{
    For every sequence s, copies its first `cu_seqlens[s+1] - cu_seqlens[s]`
    latent cache rows (through `block_tables[s, :]`) to output rows
    `[cu_seqlens[s], cu_seqlens[s+1])` of `[tokens, R + P]`, in the
    activation type (an f8E4M3FN cache is multiplied by `cache_scale`), so
    the engine can up-project the cached prefix with `kv_b_proj`.

    Example:
    ```mlir
    %rows = attn.latent_gather %cache, %tables, %cu
        : tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>
          -> tensor<?x576xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$latent_cache,
    AnyRankedTensor:$block_tables,
    AnyRankedTensor:$cu_seqlens,
    Optional<AnyRankedTensor>:$cache_scale
  );
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = [{
    $latent_cache `,` $block_tables `,` $cu_seqlens (`scale` $cache_scale^)?
    attr-dict `:` type($latent_cache) `,` type($block_tables) `,`
    type($cu_seqlens) (`scale` type($cache_scale)^)? `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Kernel-level operations (produced by the passes, printed by codegen)
//===----------------------------------------------------------------------===//

def Attn_FusedPreprocessOp : Attn_Op<"fused_preprocess",
    [Pure, AttrSizedOperandSegments,
     AllTypesMatch<["k_cache", "k_cache_out"]>,
     AllTypesMatch<["v_cache", "v_cache_out"]>]> {
  let summary = "QKV(G) split, optional q/k norm and rope, and cache write in one kernel";
  let description = [{
    The fusion of `attn.qkv_split` → [`attn.rms_norm` on q and/or k] →
    [`attn.rope`] → `attn.cache_write` made by `attn-fuse-preprocess`. One
    kernel reads each token's fused projection row once, normalises and
    rotates q and k in registers, writes k and v into the paged cache and q
    (and the gate, when there is one) to their outputs.

    `stages` lists exactly the stages present, in the model's order
    (e.g. `[q_norm, k_norm, rope]`, or `[rope, q_norm, k_norm]` for a model
    that normalises after rotating); a stage that is absent has no operands,
    no attributes and no code. `q_norm` / `k_norm` need `norm_style` +
    `norm_eps`, and `q_norm_weight` / `k_norm_weight` unless the style is
    `unweighted`; `q_norm_bias` / `k_norm_bias` (a layernorm's bias) are
    optional. `norm_scope` is that of `attn.rms_norm` (absent: `head`); the
    weights and biases have the shapes it gives them (`[Dqk]`, `[H, Dqk]` or
    `[H * Dqk]`, H the heads of q resp. k). `rope` needs `positions`
    and `rope_style`, `rotary_dim`, `rotary_offset`, `theta` (and optionally
    `scaling`). `q_temperature` (last, q only: `attn.query_temperature`)
    needs `positions`, `temperature_floor_scale` and `temperature_scale`.
    `schedule` is chosen by `attn-specialize`.

    Example (Qwen3: q/k norm then rope, no gate):
    ```mlir
    %q, %kc, %vc = attn.fused_preprocess %qkv, %slot_mapping
        into %k_cache, %v_cache positions %positions
        q_norm_weight %q_w k_norm_weight %k_w {num_q_heads = 32, num_kv_heads = 8,
        qk_head_dim = 128, v_head_dim = 128,
        stages = [#attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<rope>],
        norm_style = #attn.norm_style<rms>, norm_eps = 1.0e-06 : f64,
        rotary_dim = 128, rotary_offset = 0,
        rope_style = #attn.rope_style<neox>, theta = 1.0e+06 : f64}
        : tensor<?x6144xbf16>, tensor<?xi64> into tensor<?x16x8x128xbf16>,
          tensor<?x16x8x128xbf16> positions tensor<?xi64>
          q_norm_weight tensor<128xbf16> k_norm_weight tensor<128xbf16>
        -> tensor<?x32x128xbf16>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$qkv,
    AnyRankedTensor:$slot_mapping,
    AnyRankedTensor:$k_cache,
    AnyRankedTensor:$v_cache,
    Optional<AnyRankedTensor>:$positions,
    Optional<AnyRankedTensor>:$q_norm_weight,
    Optional<AnyRankedTensor>:$k_norm_weight,
    Optional<AnyRankedTensor>:$q_norm_bias,
    Optional<AnyRankedTensor>:$k_norm_bias,
    Optional<AnyRankedTensor>:$k_scale,
    Optional<AnyRankedTensor>:$v_scale,
    I64Attr:$num_q_heads,
    I64Attr:$num_kv_heads,
    I64Attr:$qk_head_dim,
    I64Attr:$v_head_dim,
    DefaultValuedAttr<Attn_GateLayoutAttr, "GateLayout::none">:$gate_layout,
    Attn_PreprocessStageArrayAttr:$stages,
    OptionalAttr<Attn_NormStyleAttr>:$norm_style,
    OptionalAttr<F64Attr>:$norm_eps,
    OptionalAttr<Attn_NormScopeAttr>:$norm_scope,
    OptionalAttr<Attn_RopeStyleAttr>:$rope_style,
    OptionalAttr<I64Attr>:$rotary_dim,
    OptionalAttr<I64Attr>:$rotary_offset,
    OptionalAttr<F64Attr>:$theta,
    OptionalAttr<Attn_RopeScalingAttr>:$scaling,
    OptionalAttr<F64Attr>:$temperature_floor_scale,
    OptionalAttr<F64Attr>:$temperature_scale,
    OptionalAttr<Attn_PreprocessScheduleAttr>:$schedule
  );
  let results = (outs
    AnyRankedTensor:$q,
    AnyRankedTensor:$k_cache_out,
    AnyRankedTensor:$v_cache_out,
    Optional<AnyRankedTensor>:$gate
  );
  let assemblyFormat = [{
    $qkv `,` $slot_mapping `into` $k_cache `,` $v_cache
    (`positions` $positions^)?
    (`q_norm_weight` $q_norm_weight^)?
    (`k_norm_weight` $k_norm_weight^)?
    (`q_norm_bias` $q_norm_bias^)?
    (`k_norm_bias` $k_norm_bias^)?
    (`scales` $k_scale^ `,` $v_scale)?
    attr-dict `:` type($qkv) `,` type($slot_mapping)
    `into` type($k_cache) `,` type($v_cache)
    (`positions` type($positions)^)?
    (`q_norm_weight` type($q_norm_weight)^)?
    (`k_norm_weight` type($k_norm_weight)^)?
    (`q_norm_bias` type($q_norm_bias)^)?
    (`k_norm_bias` type($k_norm_bias)^)?
    (`scales` type($k_scale)^ `,` type($v_scale))?
    `->` type($q) (`,` type($gate)^)?
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// True when `stage` is in `stages`.
    bool hasStage(::attnc::attn::PreprocessStage stage);
    /// True when a norm stage is listed after rope (the verifier keeps
    /// q_norm and k_norm on one side of it): the rotated head is normalised.
    bool normAfterRope();
    /// The norm's scope (`head` when the attribute is absent).
    ::attnc::attn::NormScope normScope();
  }];
}

#endif // ATTNC_DIALECT_ATTN_OPS_TD
