// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s
// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s --check-prefix=FP8

// MLA's absorbed decode, DeepSeek-V3 at TP 8 (16 heads), worked out by hand
// from plan/LatentAttention.h (sm_90a, 132 SMs): one CTA per SM, so
// target_ctas 132, max_kv_splits min(32, 132) = 32, workspace tiles 2 x 132
// = 264. Shared memory: Q 64 x 576 x 2 = 73728 bytes, two K tiles of 73728
// from 73728, P (64 x 64 x 2) at 221184, row maxima (2 x 2 x 64 floats) at
// 229376, row sums (2 x 64 floats) at 230400, split flag at 230912, the
// tile's sequence at 230928, 230944 in all (the split merge, a tree over
// the splits, keeps its state in registers and the workspace). Workspace W =
// 264 x 64 x (512 + 2) + 132 = 8684676 floats. Grid: x = ceil(num_tokens x
// 16 / 64) + num_seqs, y = 1, z = num_kv_splits.

// CHECK-LABEL: // ===== kernel mla__latent_attention (latent_attention) =====
// CHECK: // configuration: num_heads=16 kv_lora_rank=512 rope_head_dim=64 softmax_scale=0.13519999999999999 causal
// CHECK-NEXT: //   activation bf16, latent cache bf16 (block_size 64)
// CHECK-NEXT: // schedule: block_m=64 block_n=64 num_warps=8 max_kv_splits=32 target_ctas=132
// CHECK: #include "attnc_mla_decode.cuh"
// CHECK: using act_t = __nv_bfloat16;
// CHECK-NEXT: using cache_t = __nv_bfloat16;
// CHECK-NEXT: static constexpr bool kFp8 = false;
// CHECK-NEXT: static constexpr int kNumHeads = 16;
// CHECK-NEXT: static constexpr int kLatentDim = 512;
// CHECK-NEXT: static constexpr int kQkDim = 576;
// CHECK-NEXT: static constexpr int kBlockSize = 64;
// A TMA box is one page's 64 rows (the ABI's box below says the same).
// CHECK-NEXT: static constexpr int kBoxRows = 64;  // rows of a K tile's TMA box
// 0.1352 x log2(e) = 0.195052369528...
// CHECK-NEXT: static constexpr float kScaleLog2 = 0.1950523695
// CHECK-NEXT: static constexpr bool kCausal = true;
// CHECK-NEXT: static constexpr int kBlockM = 64;
// CHECK-NEXT: static constexpr int kBlockN = 64;
// CHECK-NEXT: static constexpr int kThreads = 256;
// CHECK-NEXT: static constexpr int kMaxSplits = 32;
// CHECK-NEXT: static constexpr int kTargetCtas = 132;
// CHECK-NEXT: static constexpr int kWorkspaceTiles = 264;
// CHECK: static constexpr int kQOffset = 0;
// CHECK-NEXT: static constexpr int kKOffset = 73728;
// CHECK-NEXT: static constexpr int kKBytes = 73728;
// CHECK-NEXT: static constexpr int kPOffset = 221184;
// CHECK-NEXT: static constexpr int kMaxOffset = 229376;
// CHECK-NEXT: static constexpr int kLOffset = 230400;
// CHECK-NEXT: static constexpr int kSplitFlagOffset = 230912;
// CHECK-NEXT: static constexpr int kOwnerOffset = 230928;
// CHECK-NEXT: static constexpr int kBarOffset = 230944;
// CHECK-NEXT: static constexpr int kSharedBytes = 231088;
// CHECK: extern "C" __global__ void __launch_bounds__(Config::kThreads, 1)
// CHECK-NEXT: mla__latent_attention(const __nv_bfloat16 *__restrict__ query,
// CHECK-NEXT: const __nv_bfloat16 *__restrict__ latent_cache,
// CHECK-NEXT: const __grid_constant__ attnc::TensorMap latent_cache_map,
// CHECK-NEXT: long long latent_cache_block_stride,
// CHECK-NEXT: long long latent_cache_token_stride,
// CHECK-NEXT: const int *__restrict__ block_tables,
// CHECK-NEXT: const int *__restrict__ seq_lens,
// CHECK-NEXT: const int *__restrict__ query_start_loc,
// CHECK-NEXT: __nv_bfloat16 *__restrict__ output,
// CHECK-NEXT: float *__restrict__ workspace,
// CHECK-NEXT: int num_tokens,
// CHECK-NEXT: int num_seqs,
// CHECK-NEXT: int max_blocks_per_seq,
// CHECK-NEXT: int num_kv_splits) {
// The template's cache_scale is absent (a bf16 cache): nullptr.
// CHECK-NEXT: attnc::latent_attention<Config>(
// CHECK-NEXT: query, latent_cache, &latent_cache_map, latent_cache_block_stride, latent_cache_token_stride, block_tables, seq_lens, query_start_loc, nullptr, output, workspace, num_tokens, num_seqs, max_blocks_per_seq, num_kv_splits);
// CHECK-LABEL: // ===== abi mla__latent_attention =====
// CHECK: "name": "latent_cache",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "bf16",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: "num_blocks",
// CHECK-NEXT: 64,
// CHECK-NEXT: 576
// CHECK-NEXT: ],
// CHECK-NEXT: "strides": [
// CHECK-NEXT: "latent_cache_block_stride",
// CHECK-NEXT: "latent_cache_token_stride",
// CHECK-NEXT: 1
// CHECK-NEXT: ]
// The K tiles' tensor map: one page's 64 rows x 64 values a box, 128-byte
// swizzle (the kernel's tile layout); num_blocks, its outer dim, is a
// launch scalar.
// CHECK: "name": "latent_cache_map",
// CHECK-NEXT: "kind": "tensor_map",
// CHECK-NEXT: "tensor": "latent_cache",
// CHECK-NEXT: "box": [
// CHECK-NEXT: 1,
// CHECK-NEXT: 64,
// CHECK-NEXT: 64
// CHECK-NEXT: ],
// CHECK-NEXT: "swizzle": 128
// CHECK: "name": "workspace",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: 8684676
// CHECK: "launch_scalars": [
// CHECK-NEXT: "num_blocks"
// CHECK-NEXT: ],
// CHECK-NEXT: "block": [
// CHECK-NEXT: 256,
// CHECK: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 16,
// CHECK-NEXT: "divisor": 64,
// CHECK-NEXT: "plus": "num_seqs"
// CHECK-NEXT: },
// CHECK-NEXT: 1,
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_kv_splits",
// CHECK: "dynamic_shared_memory_bytes": 231088,
// CHECK-NEXT: "hints": {
// CHECK-NEXT: "max_kv_splits": 32,
// CHECK-NEXT: "target_ctas": 132
// CHECK-NEXT: },
// CHECK-NEXT: "programmatic_dependent_launch": true
func.func @mla(%q: tensor<?x16x576xbf16>, %cache: tensor<?x64x576xbf16>,
               %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>)
    -> tensor<?x16x512xbf16> {
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts
      {kv_lora_rank = 512, softmax_scale = 0.1352 : f64}
      : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x16x512xbf16>
  return %o : tensor<?x16x512xbf16>
}

// -----

// An fp8 e4m3 latent cache with its scale (DeepSeek-V3 with an fp8 KV cache,
// TP 1): the Config says so (cache_t, kFp8), the entry point takes the
// cache as __nv_fp8_e4m3 and cache_scale after query_start_loc (the
// template's order) and forwards it; the ABI has the f32 scalar and the
// fp8 cache. The fp8 rows land in the 16-bit K tiles (half their bytes)
// and are widened there, so the shared memory is the bf16 kernel's,
// 231088 bytes (the bf16 case above works it out; its 144 bytes of
// mbarriers unused). The fp8 rows come by cp.async, not by the tensor
// memory accelerator: no tensor map, nullptr forwarded in its place, no
// launch scalar.

// (The bf16 kernel of the first case comes first in the output.)
// FP8-LABEL: // configuration: num_heads=128 kv_lora_rank=512 rope_head_dim=64
// FP8-NEXT: //   activation bf16, latent cache fp8_e4m3 (block_size 64, times cache_scale)
// FP8: using act_t = __nv_bfloat16;
// FP8-NEXT: using cache_t = __nv_fp8_e4m3;
// FP8-NEXT: static constexpr bool kFp8 = true;
// FP8-NEXT: static constexpr int kNumHeads = 128;
// FP8: static constexpr int kKBytes = 73728;
// FP8: static constexpr int kSharedBytes = 231088;
// FP8: mla__latent_attention(const __nv_bfloat16 *__restrict__ query,
// FP8-NEXT: const __nv_fp8_e4m3 *__restrict__ latent_cache,
// FP8: const int *__restrict__ query_start_loc,
// FP8-NEXT: const float *__restrict__ cache_scale,
// FP8-NEXT: __nv_bfloat16 *__restrict__ output,
// FP8: attnc::latent_attention<Config>(
// FP8-NEXT: query, latent_cache, nullptr, latent_cache_block_stride, latent_cache_token_stride, block_tables, seq_lens, query_start_loc, cache_scale, output, workspace, num_tokens, num_seqs, max_blocks_per_seq, num_kv_splits);
// FP8: // ===== abi mla__latent_attention =====
// FP8: "name": "latent_cache",
// FP8-NEXT: "kind": "pointer",
// FP8-NEXT: "dtype": "fp8_e4m3",
// FP8-NOT: "tensor_map"
// FP8: "name": "cache_scale",
// FP8-NEXT: "kind": "pointer",
// FP8-NEXT: "dtype": "f32",
// FP8-NOT: "launch_scalars"
// FP8: "dynamic_shared_memory_bytes": 231088,
// FP8: "programmatic_dependent_launch": true
func.func @mla(%q: tensor<?x128x576xbf16>, %cache: tensor<?x64x576xf8E4M3FN>,
               %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>,
               %scale: tensor<f32>) -> tensor<?x128x512xbf16> {
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts scale %scale
      {kv_lora_rank = 512, softmax_scale = 0.1352 : f64}
      : tensor<?x128x576xbf16>, tensor<?x64x576xf8E4M3FN>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32> scale tensor<f32> -> tensor<?x128x512xbf16>
  return %o : tensor<?x128x512xbf16>
}
