/*===- attnc-c/Compiler.h - C API of the attnc JIT compiler -------*- C -*-===*\
|*                                                                            *|
|* Compiles a model's attention layers into kernels: a Hugging Face          *|
|* config.json (or attnc spec) text, or `attn` IR, goes through the attn     *|
|* pipeline and the CUDA emitter, and each kernel through NVRTC and the      *|
|* context's kernel cache (attnc-c/Runtime.h). The result, an attnc_model_t,*|
|* holds one kernel set per kernel; launch them with attnc_kernel_launch.     *|
|*                                                                            *|
|* Kernels of a model, per layer kind <layer> ("full_attention", ...):       *|
|*  - "<layer>__preprocess" (kind "preprocess"): QKV(G) split, optional q/k  *|
|*    norm and rope, paged KV-cache write; outputs q (and the gate).         *|
|*  - "<layer>__attention" (kind "attention"): paged attention over varlen   *|
|*    rows, with the output gate as its epilogue when the model has one.     *|
|*  - "<layer>__prefill_attention" (kind "prefill_attention", sm_90a, 16-bit *|
|*    caches in pages of 8+ tokens): the same attention, warp-specialised,  *|
|*    for prefill-heavy batches (the attention kernel's parameters, no      *|
|*    split-KV; the caller picks one of the two per batch).                 *|
|* Each kernel's ABI (attnc_kernel_abi_json) names its parameters.           *|
|*                                                                            *|
|* Thread safety: compiling is thread-safe per context (as in Runtime.h;   *|
|* concurrent requests for one kernel compile once); an attnc_model_t is    *|
|* immutable after creation but for its tiered kernel sets' one swap        *|
|* (Runtime.h).                                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef ATTNC_C_COMPILER_H
#define ATTNC_C_COMPILER_H

#include "attnc-c/Runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A compiled (or loaded) model: its kernels, their sources and ABIs. */
typedef struct attnc_model_s *attnc_model_t;

/** Tiered compilation. Where a kernel's optimised form takes seconds in
 *  NVRTC (the wgmma attention tiles on sm_90a), a baseline form of the same
 *  kernel (the same tiles on mma.sync, a fraction of the compile time;
 *  attn-specialize's `baseline` option) compiles first and serves the first
 *  launches while the optimised one compiles on a background thread; the
 *  kernel set then swaps to it at a launch boundary, never while the launch
 *  stream is capturing a CUDA graph (attnc_kernel_set_tier in Runtime.h).
 *  Launch plans keep the kernel they were made with: an engine that
 *  captures graphs calls attnc_model_wait_optimised before making the plans
 *  it captures (or compiles with ATTNC_TIERING_OFF). Kernels with one form,
 *  and kernels whose optimised binary is already cached, have one tier.
 *
 *  The default is OFF: a compile returns the kernels that will run, so what
 *  an engine benchmarks, checks and captures is the optimised code whatever
 *  the cache held. An engine that wants its first launch within a second of
 *  a cold start asks for ON and makes its capture plans after
 *  attnc_model_wait_optimised. */
typedef enum attnc_tiering_e {
  ATTNC_TIERING_DEFAULT = 0,       /**< ATTNC_TIERING_OFF */
  ATTNC_TIERING_ON = 1,            /**< baseline first, optimised later */
  ATTNC_TIERING_OFF = 2,           /**< wait for the optimised kernels */
  ATTNC_TIERING_BASELINE_ONLY = 3, /**< baseline kernels only (tests,
                                        benchmarks): never swapped */
} attnc_tiering_t;

typedef struct attnc_model_options_t {
  /** Target arch, e.g. "sm_90a". NULL: the context's first arch. */
  const char *arch;
  /** Tensor-parallel degree and rank (0: 1 and 0). */
  int64_t tp;
  int64_t rank;
  /** Tokens per KV-cache block (0: 16). */
  int64_t block_size;
  /** Activation dtype "bf16" | "fp16". NULL: the config's. */
  const char *dtype;
  /** KV-cache dtype "bf16" | "fp16" | "fp8". NULL: the activation dtype. */
  const char *kv_dtype;
  /** Tiered compilation (attnc_tiering_t; 0: ATTNC_TIERING_OFF). */
  int32_t tiering;
} attnc_model_options_t;

/** Sets every field to its default (NULL / 0). */
void attnc_model_options_initialize(attnc_model_options_t *options);

/** Compiles a model configuration (JSON text, NUL-terminated).
 *  INVALID_ARGUMENT names the config field or option and the rule;
 *  COMPILE_ERROR carries the NVRTC log, options and saved source path.
 *
 *  Fast paths (none when the context's cache is disabled):
 *  - hot: the context remembers each compile by its input (the text's
 *    bytes and every option); the same input again returns a model sharing
 *    the first one's kernels (and its tier swaps) without running the
 *    compiler. The memo lives as long as the context handle.
 *  - warm: the disk cache holds an index from the input (with the attnc
 *    build, the NVRTC library and the arch) to the model's final kernels,
 *    written once they are all compiled; a new process reads it and the
 *    binaries without importing, running the pipeline or loading NVRTC.
 *  The kernels of one compile are compiled concurrently, one NVRTC thread
 *  per kernel (at most the machine's hardware threads). */
attnc_status_t attnc_model_compile_config(attnc_context_t context,
                                          const char *config_json,
                                          const attnc_model_options_t *options,
                                          attnc_model_t *out_model);

/** Compiles `attn` IR text (layer form: one func.func per layer kind, as
 *  `attnc import` prints it). Only options->arch is used. */
attnc_status_t attnc_model_compile_ir(attnc_context_t context,
                                      const char *mlir_text,
                                      const attnc_model_options_t *options,
                                      attnc_model_t *out_model);

/** Loads a model bundle written by attnc_model_write_bundle or
 *  `attnc compile` (no NVRTC, no MLIR work, no GPU needed). */
attnc_status_t attnc_model_load_bundle(attnc_context_t context,
                                       const char *directory,
                                       attnc_model_t *out_model);

/** Writes the model as a bundle directory (manifest.json, and per kernel its
 *  .cu source and a kernel-set bundle). */
attnc_status_t attnc_model_write_bundle(attnc_model_t model,
                                        const char *directory);

void attnc_model_destroy(attnc_model_t model);

/** The model manifest as JSON: config, arch, kernels with kind, layer,
 *  schedule and ABI. Owned by the model. */
const char *attnc_model_manifest_json(attnc_model_t model);

size_t attnc_model_kernel_count(attnc_model_t model);
/** Kernel i's entry point name, kind ("preprocess" | "attention"), layer
 *  kind, and CUDA source. Owned by the model; NULL if i is out of range. */
const char *attnc_model_kernel_name(attnc_model_t model, size_t i);
const char *attnc_model_kernel_kind(attnc_model_t model, size_t i);
const char *attnc_model_kernel_layer(attnc_model_t model, size_t i);
const char *attnc_model_kernel_source(attnc_model_t model, size_t i);
/** Kernel i's kernel set (owned by the model; do not destroy). NULL if i is
 *  out of range. For a tiered kernel the set starts in its baseline tier
 *  (attnc_kernel_set_tier). The source, manifest and schedule of such a
 *  kernel describe the tier the model was delivered with. */
attnc_kernel_set_t attnc_model_kernel_set(attnc_model_t model, size_t i);

/** Blocks until every optimised tier of the model has finished compiling
 *  (at once when there is none). OK, or the first failure (COMPILE_ERROR
 *  ...); a failed tier leaves its kernel on the baseline. The swap itself
 *  happens at the kernel sets' next launch boundary. */
attnc_status_t attnc_model_wait_optimised(attnc_model_t model);

#ifdef __cplusplus
} // extern "C"
#endif

#endif /* ATTNC_C_COMPILER_H */
