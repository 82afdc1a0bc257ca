//===- Passes.td - attn transformation passes --------------*- tablegen -*-===//
#ifndef ATTNC_TRANSFORMS_PASSES_TD
#define ATTNC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnCanonicalize : Pass<"attn-canonicalize"> {
  let summary = "Fold identity ropes, trivial gates and dead results of attn ops";
  let description = [{
    Applies the attn dialect's folders and canonicalization patterns, and
    erases attn ops whose results are unused:
    - `attn.rope` with `rotary_dim = 0` is the identity and folds to its input;
    - `attn.output_gate` whose gate is a splat constant >= 64 (sigmoid is 1
      in every supported type) folds to its input;
    - an unused gate result of `attn.qkv_split` / `attn.fused_preprocess` is
      dropped (the gate columns stay in the layout and are skipped);
    - attn ops with no used results are erased.

    Before:
    ```mlir
    %r = attn.rope %q, %pos {rotary_dim = 0 : i64, theta = 1.0e4 : f64} ...
    %o = attn.paged_attention %r, ...
    ```
    After:
    ```mlir
    %o = attn.paged_attention %q, ...
    ```
  }];
  let dependentDialects = ["::attnc::attn::AttnDialect"];
}

def AttnFusePreprocess : Pass<"attn-fuse-preprocess"> {
  let summary = "Fuse split, q/k norm, rope and cache write into one op";
  let description = [{
    Rewrites the chain
      `attn.qkv_split` → [`attn.rms_norm` on q] → [`attn.rms_norm` on k]
      → [`attn.rope` on q and k] → `attn.cache_write`
    into one `attn.fused_preprocess` whose `stages` list exactly the stages
    present, in the model's order. The fused op produces q (after its
    stages), the updated caches and, when the split has one, the gate.

    No fusion happens when an intermediate value (a split result, a normed
    or rotated q/k) has a user outside the chain that needs it materialised,
    when q and k are rotated with different parameters or positions, or when
    q and k are normalised with different styles, scopes or eps, or on
    different sides of the rotation. Such IR is left as it is. The norms'
    weights and biases become the fused op's `q_norm_weight`,
    `k_norm_weight`, `q_norm_bias`, `k_norm_bias`, their style and eps its
    `norm_style` and `norm_eps`, a scope other than `head` its `norm_scope`.

    Before:
    ```mlir
    %q, %k, %v = attn.qkv_split %qkv {...}
    %qn = attn.rms_norm %q, %qw {...}
    %kn = attn.rms_norm %k, %kw {...}
    %qr = attn.rope %qn, %pos {...}
    %kr = attn.rope %kn, %pos {...}
    %kc, %vc = attn.cache_write %kr, %v, %slots into %k_cache, %v_cache
    ```
    After:
    ```mlir
    %qr, %kc, %vc = attn.fused_preprocess %qkv, %slots into %k_cache, %v_cache
        positions %pos q_norm_weight %qw k_norm_weight %kw
        {stages = [#attn.stage<q_norm>, #attn.stage<k_norm>, #attn.stage<rope>], ...}
    ```
  }];
  let dependentDialects = ["::attnc::attn::AttnDialect"];
}

def AttnSpecialize : Pass<"attn-specialize", "::mlir::ModuleOp"> {
  let summary = "Choose kernel schedules for a target architecture and shape";
  let description = [{
    Writes a `#attn.preprocess_schedule` on every `attn.fused_preprocess`, a
    `#attn.mla_preprocess_schedule` on every `attn.mla_preprocess` and
    an `#attn.attention_schedule` on every `attn.paged_attention`, chosen from
    the target (`arch`) and the op's shape: vector width, threads per head
    and heads/tokens per block for the preprocess kernel; tile sizes, warps,
    pipeline depth, padded head dims, GQA packing and the split-KV rule for
    attention. Records the target on the module as `attn.target`. Schedules
    are valid for any head dim (2/3 as well as 192/128); a request the target
    cannot serve (unknown arch, head dims beyond the supported maximum, shared
    memory over the limit) is a diagnostic at the op. With `baseline` the
    attention schedule keeps mma = "mma.sync" where it would take "wgmma"
    (the tiered JIT compiles that form first, for the first launches).
    An `attn.mla_preprocess` that already has a schedule keeps it
    (hand-written IR, bench/sweep_mla_preprocess.py's variants);
    attn-prepare-emission checks it against the op.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "Target GPU architecture (sm_80, sm_86, sm_89, sm_90, sm_90a)">,
    Option<"numSms", "num-sms", "int64_t", /*default=*/"0",
           "Streaming multiprocessors to fill (0: the arch's flagship part)">,
    Option<"baseline", "baseline", "bool", /*default=*/"false",
           "The tiered JIT's baseline: attention takes mma.sync even where "
           "wgmma would be chosen (the same tiles; it compiles in a fraction "
           "of the time)">,
    Option<"prefillKernel", "prefill-kernel", "bool", /*default=*/"true",
           "On sm_90a, give each paged attention whose shape takes the "
           "warp-specialised form (16-bit cache, pages of 8+ tokens) a "
           "prefill schedule (attn.prefill_schedule), from which "
           "attn-outline-kernels makes a second kernel, prefill_attention; "
           "not in the baseline">,
  ];
  let dependentDialects = ["::attnc::attn::AttnDialect"];
}

def AttnOutlineKernels : Pass<"attn-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Lower layer functions to the kernel form";
  let description = [{
    The kernel form that codegen prints: every `attn.fused_preprocess` and
    every `attn.paged_attention` (with a following `attn.output_gate` folded
    in as its epilogue) is outlined into its own `func.func`, named
    `<layer>__preprocess` / `<layer>__attention` and marked
    `attn.kernel = "preprocess" | "attention"`; its arguments carry
    `attn.arg` names (the kernel ABI) and its body is exactly the kernel op
    (plus the gate). The layer function becomes a sequence of `func.call`s.
    Ops left unfused (a split, norm, rope or cache write outside a fused op)
    are an error: the kernel form has no kernel for them.
  }];
  let dependentDialects = ["::attnc::attn::AttnDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // ATTNC_TRANSFORMS_PASSES_TD
