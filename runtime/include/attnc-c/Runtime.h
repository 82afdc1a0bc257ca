/*===- attnc-c/Runtime.h - C API of the attnc runtime -------------*- C -*-===*\
|*                                                                            *|
|* The runtime in a small C API, in the style of IREE's: opaque handles,     *|
|* every fallible call returns an attnc_status_t, options structs with       *|
|* initialisers, and the details of the last failure in a thread-local       *|
|* string (attnc_last_error()).                                               *|
|*                                                                            *|
|* An engine creates one context, compiles CUDA source (or loads an AOT      *|
|* bundle) into kernel sets, and launches their kernels on its own CUDA      *|
|* streams with its own device pointers. No GPU or driver is needed for      *|
|* anything but launching; NVRTC is needed only for compiling.               *|
|*                                                                            *|
|* Thread safety:                                                             *|
|* - attnc_context_t: every function taking a context may be called from     *|
|*   any number of threads at once; concurrent compiles of the same source   *|
|*   compile once. attnc_context_destroy must not race with other uses.      *|
|* - attnc_kernel_set_t and attnc_kernel_t are immutable, but for the one   *|
|*   swap of a tiered set's tier (attnc_kernel_set_tier), which is atomic:   *|
|*   queries and launches may run concurrently from any threads. A kernel    *|
|*   set keeps its context's internals alive, so it may outlive             *|
|*   attnc_context_destroy;                                                  *|
|*   attnc_kernel_t handles are owned by their set.                          *|
|* - attnc_launch_plan_t is immutable: run it from any threads at once.     *|
|* - attnc_last_error() is per thread.                                        *|
|*                                                                            *|
|* Strings returned by query functions are owned by the object they come     *|
|* from and live as long as it does.                                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef ATTNC_C_RUNTIME_H
#define ATTNC_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

/** What a call did. Non-zero values are failures; attnc_last_error() then
 *  says what failed, where and why. */
typedef enum attnc_status_e {
  ATTNC_STATUS_OK = 0,
  ATTNC_STATUS_INVALID_ARGUMENT = 1, /**< malformed input (names the field) */
  ATTNC_STATUS_COMPILE_ERROR = 2, /**< NVRTC rejected the source: the message
                                       has the log, the options and the path
                                       of the saved source */
  ATTNC_STATUS_CUDA_ERROR = 3,    /**< a CUDA driver call failed */
  ATTNC_STATUS_NO_DRIVER = 4,     /**< libcuda.so.1 or NVRTC cannot be loaded */
  ATTNC_STATUS_IO_ERROR = 5,      /**< reading or writing a file failed */
  ATTNC_STATUS_CORRUPT = 6,       /**< stored data failed its checks */
  ATTNC_STATUS_NOT_FOUND = 7,     /**< no such kernel, arch or file */
  ATTNC_STATUS_INTERNAL = 8,      /**< a bug in attnc, or out of memory */
} attnc_status_t;

/** "ok", "invalid_argument", ... (static storage). */
const char *attnc_status_name(attnc_status_t status);

/** The message of the last failed call on this thread ("" if none yet).
 *  Valid until the next failing call on this thread. Successful calls leave
 *  it unchanged. */
const char *attnc_last_error(void);

/** The attnc version, e.g. "0.1.0" (static storage). */
const char *attnc_version(void);

/*===----------------------------------------------------------------------===*
 * Handles
 *===----------------------------------------------------------------------===*/

/** The runtime for one embedding: options, kernel cache, NVRTC, driver. */
typedef struct attnc_context_s *attnc_context_t;
/** Kernels compiled from one source (or loaded from one bundle), with their
 *  ABIs and one cubin per arch. */
typedef struct attnc_kernel_set_s *attnc_kernel_set_t;
/** One kernel of a set; owned by the set. */
typedef struct attnc_kernel_s *attnc_kernel_t;

/** Receives warnings that must not be swallowed (a corrupt cache entry
 *  that was deleted and recompiled, an unwritable cache directory). May be
 *  called from any thread that uses the context. */
typedef void (*attnc_warning_callback_t)(void *user_data, const char *message);

/*===----------------------------------------------------------------------===*
 * Context
 *===----------------------------------------------------------------------===*/

typedef struct attnc_context_options_t {
  /** Disk cache root. NULL: $ATTNC_CACHE_DIR, else $XDG_CACHE_HOME/attnc,
   *  else ~/.cache/attnc. */
  const char *cache_dir;
  /** Archs to compile for, e.g. {"sm_90a"}. NULL/0: {"sm_90a"}. */
  const char *const *archs;
  size_t num_archs;
  /** Non-zero: bypass the memory and disk caches (ATTNC_DISABLE_CACHE=1 in
   *  the environment does the same). */
  int disable_cache;
  /** libnvrtc to load. NULL: $CUDA_HOME/lib64, /usr/local/cuda/lib64, then
   *  the loader's search path. */
  const char *nvrtc_library_path;
  /** CUDA driver library to load. NULL: "libcuda.so.1". */
  const char *cuda_driver_library;
  /** NULL: warnings go to stderr. */
  attnc_warning_callback_t warning_callback;
  void *warning_user_data;
  /** Non-zero: launch kernels whose ABI says "programmatic_dependent_launch"
   *  without it (plain cuLaunchKernel). ATTNC_PDL=0 in the environment (read
   *  once per process) does the same for every context. */
  int disable_pdl;
} attnc_context_options_t;

/** Sets every field to its default (NULL / 0). */
void attnc_context_options_initialize(attnc_context_options_t *options);

/** Creates a context. `options` may be NULL for the defaults. Loads neither
 *  NVRTC nor the driver (each is loaded when first needed). */
attnc_status_t attnc_context_create(const attnc_context_options_t *options,
                                    attnc_context_t *out_context);
/** Destroys a context (NULL is ignored). Kernel sets made from it stay
 *  valid. Modules loaded into CUDA contexts are unloaded when the last set
 *  goes too: do that before destroying those CUDA contexts. */
void attnc_context_destroy(attnc_context_t context);

/** The version of the NVRTC this context compiles with, loading NVRTC if
 *  needed (part of every cache key). NO_DRIVER if it cannot be loaded. */
attnc_status_t attnc_context_nvrtc_version(attnc_context_t context,
                                           int *out_major, int *out_minor);

/*===----------------------------------------------------------------------===*
 * Compiling and loading kernel sets
 *
 * The compile entry point that takes a model configuration and runs the
 * attnc compiler (config -> attn IR -> CUDA source + ABI) will be declared
 * here by the compiler library, which links MLIR; this runtime only takes
 * source text or bundles.
 *===----------------------------------------------------------------------===*/

typedef struct attnc_compile_options_t {
  /** File name in NVRTC's log. NULL: "attnc_kernels.cu". */
  const char *source_name;
  /** In-memory headers: num_headers names (as #included) and texts. */
  const char *const *header_names;
  const char *const *header_sources;
  size_t num_headers;
  /** NVRTC options after attnc's own (e.g. "-lineinfo"). */
  const char *const *extra_options;
  size_t num_extra_options;
  /** Archs for this compile. NULL/0: the context's. */
  const char *const *archs;
  size_t num_archs;
} attnc_compile_options_t;

/** Sets every field to its default (NULL / 0). */
void attnc_compile_options_initialize(attnc_compile_options_t *options);

/** Compiles `cuda_source` (NUL-terminated) with NVRTC, through the cache,
 *  for each arch, and checks the kernels against `abi_json`
 *  ({"kernels": [...]}, format in attnc/Runtime/KernelAbi.h). `options`
 *  may be NULL. */
attnc_status_t attnc_kernel_set_compile(attnc_context_t context,
                                        const char *cuda_source,
                                        const char *abi_json,
                                        const attnc_compile_options_t *options,
                                        attnc_kernel_set_t *out_set);

/** Loads an AOT bundle directory (manifest.json and .cubin files). Needs
 *  neither NVRTC nor a GPU. */
attnc_status_t attnc_kernel_set_load_bundle(attnc_context_t context,
                                            const char *directory,
                                            attnc_kernel_set_t *out_set);

/** Writes the set as an AOT bundle into `directory` (created if needed). */
attnc_status_t attnc_kernel_set_write_bundle(attnc_kernel_set_t set,
                                             const char *directory);

/** Destroys a kernel set and its kernel handles (NULL is ignored). */
void attnc_kernel_set_destroy(attnc_kernel_set_t set);

/*===----------------------------------------------------------------------===*
 * Queries
 *===----------------------------------------------------------------------===*/

/** Number of kernels in the set. */
size_t attnc_kernel_set_kernel_count(attnc_kernel_set_t set);
/** The kernel at `index` (in ABI order). NOT_FOUND past the end. */
attnc_status_t attnc_kernel_set_kernel_at(attnc_kernel_set_t set, size_t index,
                                          attnc_kernel_t *out_kernel);
/** The kernel called `name`. NOT_FOUND if absent. */
attnc_status_t attnc_kernel_set_find_kernel(attnc_kernel_set_t set,
                                            const char *name,
                                            attnc_kernel_t *out_kernel);

/** The kernel's entry point name. */
const char *attnc_kernel_name(attnc_kernel_t kernel);
/** The kernel's ABI as one JSON object (format in KernelAbi.h: params,
 *  launch_scalars, block, grid rules with optional "plus", dynamic shared
 *  memory, optional "hints"). */
const char *attnc_kernel_abi_json(attnc_kernel_t kernel);
/** Number of parameters a launch must pass. */
size_t attnc_kernel_param_count(attnc_kernel_t kernel);
/** Number of launch scalars a launch must pass. */
size_t attnc_kernel_launch_scalar_count(attnc_kernel_t kernel);

/** Which tier of a kernel set launches use now (attnc-c/Compiler.h's
 *  tiered compilation). Sets compiled or loaded any other way have one
 *  tier, reported as ATTNC_KERNEL_TIER_OPTIMISED. */
typedef enum attnc_kernel_tier_e {
  ATTNC_KERNEL_TIER_OPTIMISED = 0, /**< the set's final kernels */
  ATTNC_KERNEL_TIER_BASELINE = 1,  /**< the fast-compiling baseline, while
                                        the optimised kernels compile or
                                        wait for a launch boundary */
} attnc_kernel_tier_t;

/** The tier launches of `set` use now. A tiered set takes its optimised
 *  tier, once compiled, at the next launch boundary: attnc_kernel_launch,
 *  attnc_kernel_set_launch or attnc_kernel_launch_checked on a stream that
 *  is not capturing a CUDA graph (cuStreamIsCapturing), or
 *  attnc_kernel_prepare / attnc_launch_plan_create (which launch nothing;
 *  call them before a capture, as always). Launch plans made before keep
 *  the kernel they were made with (a captured graph stays valid); plans
 *  made after use the optimised one. The queries of the set and its
 *  kernels (ABI, cubin, build report) answer for the tier in use; strings
 *  from the earlier tier stay valid. If the optimised compile fails, the
 *  warning callback says so once and the baseline stays. */
attnc_kernel_tier_t attnc_kernel_set_tier(attnc_kernel_set_t set);

/** Number of archs (binaries) in the set. */
size_t attnc_kernel_set_arch_count(attnc_kernel_set_t set);
/** The arch of binary `index`, e.g. "sm_90a"; NULL past the end. */
const char *attnc_kernel_set_arch(attnc_kernel_set_t set, size_t index);
/** The cubin for `arch`: *out_data and *out_size, owned by the set.
 *  NOT_FOUND if the set has no binary for that arch. */
attnc_status_t attnc_kernel_set_cubin(attnc_kernel_set_t set, const char *arch,
                                      const void **out_data, size_t *out_size);
/** The PTX for `arch` (NUL-terminated; "" for sets from bundles). */
attnc_status_t attnc_kernel_set_ptx(attnc_kernel_set_t set, const char *arch,
                                    const char **out_ptx);

/** Where a binary came from. */
typedef enum attnc_build_outcome_e {
  ATTNC_BUILD_MEMORY_HIT = 0, /**< this process had it */
  ATTNC_BUILD_DISK_HIT = 1,   /**< read from the disk cache */
  ATTNC_BUILD_COMPILED = 2,   /**< NVRTC compiled it */
  ATTNC_BUILD_BUNDLE = 3,     /**< read from an AOT bundle */
} attnc_build_outcome_t;

/** How binary `arch_index` of a set was obtained, with timings. */
typedef struct attnc_build_report_t {
  const char *arch;
  attnc_build_outcome_t outcome;
  double total_ms;
  double compile_ms;   /**< NVRTC time, when it ran */
  double lock_wait_ms; /**< waiting for another process's compile */
  const char *cache_key;        /**< 64 hex digits */
  const char *cache_entry_path; /**< disk entry or bundle file; "" if none */
} attnc_build_report_t;

/** Fills *out_report for binary `arch_index`. NOT_FOUND past the end. */
attnc_status_t attnc_kernel_set_build_report(attnc_kernel_set_t set,
                                             size_t arch_index,
                                             attnc_build_report_t *out_report);

/*===----------------------------------------------------------------------===*
 * Launching
 *===----------------------------------------------------------------------===*/

/** Launches `kernel` on `stream` (a CUstream; NULL: the legacy default
 *  stream) in the calling thread's current CUDA context.
 *
 *  `args[i]` points to the value of parameter i (a device pointer, an
 *  int32_t, ...), as for cuLaunchKernel; num_args must equal the ABI's
 *  parameter count. `launch_scalars` are the values of the ABI's
 *  launch_scalars, in order. The grid comes from the ABI's rule (per axis a
 *  constant or ceil_div(value * multiplier, divisor) [+ plus], the symbols
 *  read from these arguments; KernelAbi.h); a grid with a zero dimension
 *  launches nothing and returns OK. The ABI's optional "hints" are for the
 *  caller (e.g. to choose a parameter's value); the launch ignores them.
 *
 *  Argument errors are INVALID_ARGUMENT on any machine; without a driver the
 *  call returns NO_DRIVER. */
attnc_status_t attnc_kernel_launch(attnc_kernel_t kernel, void *stream,
                                   void *const *args, size_t num_args,
                                   const int64_t *launch_scalars,
                                   size_t num_launch_scalars);

/** attnc_kernel_launch by kernel name. NOT_FOUND if the set has none. */
attnc_status_t attnc_kernel_set_launch(attnc_kernel_set_t set,
                                       const char *kernel_name, void *stream,
                                       void *const *args, size_t num_args,
                                       const int64_t *launch_scalars,
                                       size_t num_launch_scalars);

/* ---- Launch plans (the fast path) ---------------------------------------- */

/** A kernel ready to launch in one CUDA context: its CUfunction, block,
 *  dynamic shared memory and grid rule compiled to parameter indices. */
typedef struct attnc_launch_plan_s *attnc_launch_plan_t;

/** Loads `kernel`'s module into the calling thread's current CUDA context,
 *  gets the function and sets its dynamic shared memory attribute (what
 *  the first launch there would do). Idempotent. Call it before a stream
 *  capture, so nothing is loaded while capturing. INVALID_ARGUMENT without
 *  a current context, NO_DRIVER without a driver, NOT_FOUND when no binary
 *  of the set runs on the current device. */
attnc_status_t attnc_kernel_prepare(attnc_kernel_t kernel);

/** A plan for `kernel` in the current CUDA context (prepared as by
 *  attnc_kernel_prepare). Valid while the kernel's set lives; run it only
 *  in the context it was made in. Destroy with attnc_launch_plan_destroy. */
attnc_status_t attnc_launch_plan_create(attnc_kernel_t kernel,
                                        attnc_launch_plan_t *out_plan);

/** Destroys a plan (NULL is ignored). */
void attnc_launch_plan_destroy(attnc_launch_plan_t plan);

/** Launches `plan` on `stream`: the grid from the rule over `args` and
 *  `launch_scalars` (exactly as attnc_kernel_launch: args[i] points to
 *  parameter i's value, launch_scalars are the ABI's, in order), then
 *  cuLaunchKernel (cuLaunchKernelEx where the launch is programmatic:
 *  attnc_launch_plan_programmatic_launch) through a function pointer the
 *  plan holds. No lock,
 *  allocation, lookup or string on success, so it may run inside a stream
 *  capture. A grid with a zero dimension launches nothing and returns OK.
 *  Failures are INVALID_ARGUMENT (a negative grid value, a grid over CUDA's
 *  limits, NULL args or a NULL argument the grid reads), with the message
 *  built only then, or CUDA_ERROR from cuLaunchKernel. launch_scalars may
 *  be NULL when the kernel has none. The caller guarantees the counts: the
 *  plan reads args[0 .. attnc_kernel_param_count) and the launch scalars
 *  the grid rule names. Thread-safe. */
attnc_status_t attnc_launch_plan_run(attnc_launch_plan_t plan, void *stream,
                                     void *const *args,
                                     const int64_t *launch_scalars);

/** 1 when `plan`'s launches use programmatic dependent launch
 *  (cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_-
 *  SERIALIZATION = 1, so the kernel's launch and prologue overlap the tail
 *  of the previous kernel on the stream, in CUDA graphs too); 0 when the
 *  kernel's ABI does not say "programmatic_dependent_launch", the switch is
 *  off (the context's disable_pdl, ATTNC_PDL=0), the device is older than
 *  sm_90 or the driver has no cuLaunchKernelEx (then plain cuLaunchKernel)
 *  -- and for NULL. attnc_kernel_launch and attnc_kernel_launch_checked
 *  launch the same way as the plan of the current context. */
int attnc_launch_plan_programmatic_launch(attnc_launch_plan_t plan);

/* ---- Checked launch ------------------------------------------------------ */

/** Element types of tensors (attnc::runtime::ElementType, value for
 *  value). */
typedef enum attnc_dtype_e {
  ATTNC_DTYPE_F32 = 0,
  ATTNC_DTYPE_F16 = 1,
  ATTNC_DTYPE_BF16 = 2,
  ATTNC_DTYPE_FP8_E4M3 = 3,
  ATTNC_DTYPE_FP8_E5M2 = 4,
  ATTNC_DTYPE_I8 = 5,
  ATTNC_DTYPE_U8 = 6,
  ATTNC_DTYPE_I32 = 7,
  ATTNC_DTYPE_I64 = 8,
} attnc_dtype_t;

/** The most dims of an attnc_tensor_t. */
#define ATTNC_MAX_TENSOR_DIMS 8

/** One tensor argument of a checked launch (a pointer parameter). */
typedef struct attnc_tensor_t {
  void *data;       /**< device pointer; NULL only when a dim is 0 */
  int32_t dtype;    /**< attnc_dtype_t */
  int32_t device;   /**< CUDA device ordinal; -1: unknown (not checked) */
  int32_t ndim;     /**< 0..ATTNC_MAX_TENSOR_DIMS */
  int32_t readonly; /**< non-zero: the caller may not have it written */
  int64_t shape[ATTNC_MAX_TENSOR_DIMS];
  int64_t strides[ATTNC_MAX_TENSOR_DIMS]; /**< in elements */
} attnc_tensor_t;

/** A value for a symbol no tensor carries. */
typedef struct attnc_symbol_t {
  const char *name;
  int64_t value;
} attnc_symbol_t;

/** The launch checks alone (no GPU, no launch). `tensors[i]` is the
 *  kernel's i-th pointer parameter (ABI order; num_tensors must equal the
 *  pointer count). `symbols` give values no tensor carries
 *  ("num_kv_splits": the requested count; absent: the split rule); an
 *  unknown name is an error.
 *
 *  Rules (errors are INVALID_ARGUMENT naming the parameter as the field,
 *  e.g. "k_cache: shape [4, 16, 8, 128] does not match [num_blocks, 16, 8,
 *  192]: dim 3 is 128, expected 192"): the dtype; the rank and every dim of
 *  the ABI shape, a symbol bound by the first tensor that has it and equal
 *  everywhere after (num_seqs_plus_one is num_seqs + 1; shape [] accepts []
 *  or [1]; a "workspace" parameter's [W] is a minimum: 1-D, >= W elements);
 *  strides: C-contiguous (size-1 dims ignored) unless the ABI has
 *  "strides", whose constants must match and whose symbols (i64
 *  parameters) take the tensor's strides, with the innermost stride 1 and
 *  every other stride of a dim of size > 1 a positive multiple of 16 bytes;
 *  a 16-byte aligned data pointer, NULL only without elements; no read-only
 *  tensor where the kernel writes ("writes" in the ABI); one device for
 *  every tensor that has one; sequences when there are tokens (named
 *  seq_lens); i32 values that fit; num_kv_splits in the split-KV contract
 *  (attnc_split_kv_count's rule and checks).
 *
 *  On success out_params[i] is the value of parameter i when it is an
 *  i32/i64 scalar (0 for pointers; num_params must be
 *  attnc_kernel_param_count) and out_launch_scalars the launch scalars
 *  (may be NULL when the kernel has none). Kernels with f32 parameters
 *  cannot be checked (INVALID_ARGUMENT naming the parameter). Thread-safe;
 *  little string work and no allocation on success. */
attnc_status_t attnc_kernel_check_tensors(
    attnc_kernel_t kernel, const attnc_tensor_t *tensors, size_t num_tensors,
    const attnc_symbol_t *symbols, size_t num_symbols, int64_t *out_params,
    size_t num_params, int64_t *out_launch_scalars, size_t num_launch_scalars);

/** Checks as attnc_kernel_check_tensors, then also that every tensor with
 *  a known device is on the current context's device, then launches
 *  through the kernel's plan for the current CUDA context (made on first
 *  use) on `stream`. Nothing is launched on any error; an empty grid
 *  launches nothing and returns OK. */
attnc_status_t attnc_kernel_launch_checked(attnc_kernel_t kernel, void *stream,
                                           const attnc_tensor_t *tensors,
                                           size_t num_tensors,
                                           const attnc_symbol_t *symbols,
                                           size_t num_symbols);

/* ---- Split-KV ------------------------------------------------------------ */

/** The num_kv_splits of one launch of a split-KV attention kernel whose ABI
 *  hints are target_ctas and max_kv_splits: `base` is the launch's CTAs per
 *  split (the product of the grid axes that do not follow num_kv_splits),
 *  `busy` how many of them surely have rows. requested NULL: the split rule
 *  (1 if busy >= target_ctas, else min(max_kv_splits, floor(target_ctas /
 *  busy))); otherwise *requested, checked against [1, max_kv_splits] and the
 *  workspace's capacity of 2 * target_ctas CTAs (INVALID_ARGUMENT naming
 *  num_kv_splits and the rule). `base_axes` names the base's grid axes in
 *  messages (NULL: "x * y"). Thread-safe; no GPU needed. */
attnc_status_t attnc_split_kv_count(int64_t target_ctas, int64_t max_kv_splits,
                                    int64_t base, int64_t busy,
                                    const int64_t *requested,
                                    const char *base_axes,
                                    int64_t *out_splits);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ATTNC_C_RUNTIME_H */
