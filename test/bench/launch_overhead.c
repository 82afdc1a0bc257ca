/*===- launch_overhead.c - Host cost of each launch path (fake driver) ----===*\
|*                                                                            *|
|* Times, against the fake libcuda of test/unittests/Runtime, N calls of:    *|
|*   cuLaunchKernel            the fake's own entry point (dlsym), the floor *|
|*   attnc_launch_plan_run     the plan path                                  *|
|*   attnc_kernel_launch       the unchecked launch by handle                 *|
|*   attnc_kernel_launch_checked   tensors checked against the ABI            *|
|* and prints ns per call (the minimum over 5 repetitions, for a noisy CI    *|
|* machine). Exits 1 when plan_run costs more than 300 ns over              *|
|* cuLaunchKernel, 0 otherwise; 0 with "skipped" when NVRTC is absent (the  *|
|* test kernel is compiled with it). Plain C: the C API is all it uses.     *|
|*                                                                            *|
|* usage: attnc-launch-overhead [--json PATH] [--calls N]                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#include "attnc-c/Runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPETITIONS 5
#define LIMIT_NS 300.0

/* A decode-attention-shaped kernel: seven tensors, shape symbols, a derived
 * symbol, a strided cache view, a plus in the grid. */
static const char *kSource =
    "extern \"C\" __global__ void attnc_test_bench(\n"
    "    const void *q, const void *k_cache, const void *v_cache,\n"
    "    const int *block_table, const int *seq_lens,\n"
    "    const int *query_start_loc, void *out, int num_tokens,\n"
    "    int num_seqs, int max_blocks_per_seq,\n"
    "    long long k_cache_block_stride, long long v_cache_block_stride) {}\n";

static const char *kAbi =
    "{\"kernels\": [{\"name\": \"attnc_test_bench\", \"params\": [\n"
    " {\"name\": \"q\", \"kind\": \"pointer\", \"dtype\": \"bf16\",\n"
    "  \"shape\": [\"num_tokens\", 16, 192]},\n"
    " {\"name\": \"k_cache\", \"kind\": \"pointer\", \"dtype\": \"bf16\",\n"
    "  \"shape\": [\"num_blocks\", 16, 2, 192],\n"
    "  \"strides\": [\"k_cache_block_stride\", 384, 192, 1]},\n"
    " {\"name\": \"v_cache\", \"kind\": \"pointer\", \"dtype\": \"bf16\",\n"
    "  \"shape\": [\"num_blocks\", 16, 2, 128],\n"
    "  \"strides\": [\"v_cache_block_stride\", 256, 128, 1]},\n"
    " {\"name\": \"block_table\", \"kind\": \"pointer\", \"dtype\": \"i32\",\n"
    "  \"shape\": [\"num_seqs\", \"max_blocks_per_seq\"]},\n"
    " {\"name\": \"seq_lens\", \"kind\": \"pointer\", \"dtype\": \"i32\",\n"
    "  \"shape\": [\"num_seqs\"]},\n"
    " {\"name\": \"query_start_loc\", \"kind\": \"pointer\", \"dtype\": \"i32\",\n"
    "  \"shape\": [\"num_seqs_plus_one\"]},\n"
    " {\"name\": \"out\", \"kind\": \"pointer\", \"dtype\": \"bf16\",\n"
    "  \"shape\": [\"num_tokens\", 16, 128], \"writes\": true},\n"
    " {\"name\": \"num_tokens\", \"kind\": \"i32\"},\n"
    " {\"name\": \"num_seqs\", \"kind\": \"i32\"},\n"
    " {\"name\": \"max_blocks_per_seq\", \"kind\": \"i32\"},\n"
    " {\"name\": \"k_cache_block_stride\", \"kind\": \"i64\"},\n"
    " {\"name\": \"v_cache_block_stride\", \"kind\": \"i64\"}],\n"
    " \"launch_scalars\": [\"num_blocks\"],\n"
    " \"block\": [128, 1, 1],\n"
    " \"grid\": [{\"value\": \"num_tokens\", \"multiplier\": 8,\n"
    "            \"divisor\": 64, \"plus\": \"num_seqs\"}, 2, 1],\n"
    " \"dynamic_shared_memory_bytes\": 65536}]}";

typedef int (*cu_launch_kernel_t)(void *, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, unsigned, unsigned,
                                  void *, void **, void **);

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static attnc_tensor_t tensor(uintptr_t data, attnc_dtype_t dtype, int ndim,
                             const int64_t *shape, const int64_t *strides) {
  attnc_tensor_t t;
  int64_t step = 1;
  memset(&t, 0, sizeof(t));
  t.data = (void *)data;
  t.dtype = dtype;
  t.device = 0;
  t.ndim = ndim;
  for (int d = ndim - 1; d >= 0; --d) {
    t.shape[d] = shape[d];
    t.strides[d] = strides ? strides[d] : step;
    step *= shape[d] > 1 ? shape[d] : 1;
  }
  return t;
}

static int die(const char *what, attnc_status_t status) {
  fprintf(stderr, "launch_overhead: %s: %s: %s\n", what,
          attnc_status_name(status), attnc_last_error());
  return 2;
}

enum { CU_LAUNCH, PLAN_RUN, KERNEL_LAUNCH, LAUNCH_CHECKED, NUM_PATHS };
static const char *kPathNames[NUM_PATHS] = {
    "cuLaunchKernel", "attnc_launch_plan_run", "attnc_kernel_launch",
    "attnc_kernel_launch_checked"};

int main(int argc, char **argv) {
  const char *json_path = NULL;
  long calls = 1000000;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json_path = argv[++i];
    else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
      calls = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--json PATH] [--calls N]\n", argv[0]);
      return 2;
    }
  }

  attnc_context_options_t options;
  attnc_context_options_initialize(&options);
  options.cuda_driver_library = ATTNC_FAKE_CUDA_PATH;
  options.disable_cache = 1;
  attnc_context_t context = NULL;
  attnc_status_t status = attnc_context_create(&options, &context);
  if (status)
    return die("attnc_context_create", status);
  attnc_kernel_set_t set = NULL;
  status = attnc_kernel_set_compile(context, kSource, kAbi, NULL, &set);
  if (status == ATTNC_STATUS_NO_DRIVER) {
    printf("launch_overhead: skipped: NVRTC not available (%s)\n",
           attnc_last_error());
    return 0;
  }
  if (status)
    return die("attnc_kernel_set_compile", status);
  attnc_kernel_t kernel = NULL;
  attnc_kernel_set_kernel_at(set, 0, &kernel);
  attnc_launch_plan_t plan = NULL;
  if ((status = attnc_launch_plan_create(kernel, &plan)))
    return die("attnc_launch_plan_create", status);

  /* The runtime has loaded the fake; find its entry point without loading
   * anything. */
  void *fake = dlopen(ATTNC_FAKE_CUDA_PATH, RTLD_NOW | RTLD_NOLOAD);
  cu_launch_kernel_t cu_launch_kernel =
      fake ? (cu_launch_kernel_t)dlsym(fake, "cuLaunchKernel") : NULL;
  if (!cu_launch_kernel) {
    fprintf(stderr, "launch_overhead: no cuLaunchKernel in the fake driver\n");
    return 2;
  }

  /* 64 decode tokens of 64 sequences, 8 blocks each, 4096 cache blocks. */
  int64_t q_shape[] = {64, 16, 192}, out_shape[] = {64, 16, 128};
  int64_t k_shape[] = {4096, 16, 2, 192}, k_strides[] = {6144, 384, 192, 1};
  int64_t v_shape[] = {4096, 16, 2, 128}, v_strides[] = {4096, 256, 128, 1};
  int64_t table_shape[] = {64, 8}, seqs_shape[] = {64}, starts_shape[] = {65};
  attnc_tensor_t tensors[7];
  tensors[0] = tensor(0x100000, ATTNC_DTYPE_BF16, 3, q_shape, NULL);
  tensors[1] = tensor(0x200000, ATTNC_DTYPE_BF16, 4, k_shape, k_strides);
  tensors[2] = tensor(0x300000, ATTNC_DTYPE_BF16, 4, v_shape, v_strides);
  tensors[3] = tensor(0x400000, ATTNC_DTYPE_I32, 2, table_shape, NULL);
  tensors[4] = tensor(0x500000, ATTNC_DTYPE_I32, 1, seqs_shape, NULL);
  tensors[5] = tensor(0x600000, ATTNC_DTYPE_I32, 1, starts_shape, NULL);
  tensors[6] = tensor(0x700000, ATTNC_DTYPE_BF16, 3, out_shape, NULL);
  for (int i = 0; i < 6; ++i)
    tensors[i].readonly = 1;

  void *pointers[7];
  for (int i = 0; i < 7; ++i)
    pointers[i] = tensors[i].data;
  int32_t num_tokens = 64, num_seqs = 64, max_blocks = 8;
  int64_t k_stride = 6144, v_stride = 4096;
  void *args[12];
  for (int i = 0; i < 7; ++i)
    args[i] = &pointers[i];
  args[7] = &num_tokens;
  args[8] = &num_seqs;
  args[9] = &max_blocks;
  args[10] = &k_stride;
  args[11] = &v_stride;
  int64_t launch_scalars[] = {4096};
  void *stream = (void *)0x5;

  /* Each path once, checked, before timing. */
  if ((status = attnc_launch_plan_run(plan, stream, args, launch_scalars)))
    return die("attnc_launch_plan_run", status);
  if ((status = attnc_kernel_launch(kernel, stream, args, 12, launch_scalars,
                                    1)))
    return die("attnc_kernel_launch", status);
  if ((status = attnc_kernel_launch_checked(kernel, stream, tensors, 7, NULL,
                                            0)))
    return die("attnc_kernel_launch_checked", status);

  double best[NUM_PATHS];
  for (int p = 0; p < NUM_PATHS; ++p)
    best[p] = 1e30;
  for (int rep = 0; rep < REPETITIONS; ++rep) {
    for (int p = 0; p < NUM_PATHS; ++p) {
      int failed = 0;
      double start = now_ns();
      for (long i = 0; i < calls; ++i) {
        switch (p) {
        case CU_LAUNCH: /* the grid a plan computes for these values */
          failed |= cu_launch_kernel(NULL, 72, 2, 1, 128, 1, 1, 65536, stream,
                                     args, NULL);
          break;
        case PLAN_RUN:
          failed |= (int)attnc_launch_plan_run(plan, stream, args,
                                               launch_scalars);
          break;
        case KERNEL_LAUNCH:
          failed |= (int)attnc_kernel_launch(kernel, stream, args, 12,
                                             launch_scalars, 1);
          break;
        default:
          failed |= (int)attnc_kernel_launch_checked(kernel, stream, tensors,
                                                     7, NULL, 0);
        }
      }
      double per_call = (now_ns() - start) / (double)calls;
      if (failed) {
        fprintf(stderr, "launch_overhead: %s failed\n", kPathNames[p]);
        return 2;
      }
      if (per_call < best[p])
        best[p] = per_call;
    }
  }

  double overhead = best[PLAN_RUN] - best[CU_LAUNCH];
  printf("launch overhead (fake driver, %ld calls, min of %d)\n", calls,
         REPETITIONS);
  printf("%-30s %10s %14s\n", "path", "ns/call", "over cuLaunch");
  for (int p = 0; p < NUM_PATHS; ++p)
    printf("%-30s %10.1f %14.1f\n", kPathNames[p], best[p],
           best[p] - best[CU_LAUNCH]);
  if (json_path) {
    FILE *out = fopen(json_path, "w");
    if (!out) {
      perror(json_path);
      return 2;
    }
    fprintf(out, "{\"calls\": %ld, \"repetitions\": %d, \"ns_per_call\": {",
            calls, REPETITIONS);
    for (int p = 0; p < NUM_PATHS; ++p)
      fprintf(out, "%s\"%s\": %.1f", p ? ", " : "", kPathNames[p], best[p]);
    fprintf(out, "}, \"plan_run_over_cu_launch_ns\": %.1f, \"limit_ns\": %.0f}\n",
            overhead, LIMIT_NS);
    fclose(out);
  }

  attnc_launch_plan_destroy(plan);
  attnc_kernel_set_destroy(set);
  attnc_context_destroy(context);
  if (overhead > LIMIT_NS) {
    printf("launch_overhead: FAILED: attnc_launch_plan_run costs %.1f ns over "
           "cuLaunchKernel (limit %.0f)\n",
           overhead, LIMIT_NS);
    return 1;
  }
  printf("launch_overhead: passed: attnc_launch_plan_run costs %.1f ns over "
         "cuLaunchKernel (limit %.0f)\n",
         overhead, LIMIT_NS);
  return 0;
}
