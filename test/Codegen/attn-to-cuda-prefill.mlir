// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s
// RUN: attn-opt %s '-attnc-pipeline=prefill-kernel=false' -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s --check-prefix=OFF

// The paged attention's warp-specialised prefill kernel (kind
// prefill_attention, attnc_attention_ws.cuh with kPagedKv, entry
// paged_attention_ws<Config>), printed after the layer's attention kernel:
// the layer's Config members (sinks, gate, window), the schedule's tiling
// and wsAttentionSharedMap (192/128, block_n 128: Q 2 x 24576, K at 49152
// in stages of 128 x 192 x 2, V at 147456 in stages of 128 x 128 x 2, the 9
// mbarriers at 212992, the owner at 213072, 213088 bytes; 256/256, block_n
// 64: 64 x 256 x 2 = 32768 for each Q, K and V stage, barriers at 196608,
// 196704 bytes), kPagedKv; the TMA attention kernel's parameters (the
// caches' tensor maps, boxes of min(block_size, block_n) rows: 16 and 64 x
// 64 values); ABI: 384 threads, the attention kernel's grid (rows of
// gqa_pack heads a token in tiles of 128, a spare tile per sequence), the
// launch scalar num_blocks, PDL, hints gqa_pack, min_rows_per_seq 64
// (AttentionTiling.h's kWsPrefillMinRowsPerSeq: the launcher's rule) and
// max_kv_splits 1. With prefill-kernel=false only the attention kernels.

// CHECK-LABEL: // ===== kernel gated__attention (attention) =====
// CHECK-LABEL: // ===== kernel gated__prefill_attention (prefill_attention) =====
// CHECK-NEXT: // attnc generated kernel gated__prefill_attention (prefill_attention) for layer gated
// CHECK-NEXT: // configuration: num_q_heads=16 num_kv_heads=2 qk_head_dim=192 v_head_dim=128 group_size=8
// CHECK-NEXT: //   softmax_scale=0.0722 causal sliding_window=1024 sinks output_gate
// CHECK-NEXT: //   activation bf16, cache bf16 (block_size 16)
// CHECK-NEXT: // schedule: block_m=128 block_n=128 num_warps=12 pipeline_stages=2 qk_dim_padded=192 v_dim_padded=128 gqa_pack=8 split_kv_min_keys=256 max_kv_splits=1 target_ctas=264 mma=wgmma_ws form=tensor_core
// CHECK: #include "attnc_attention_ws.cuh"
// CHECK: static constexpr int kBlockSize = 16;
// CHECK: static constexpr int kSlidingWindow = 1024;
// CHECK: static constexpr bool kSinks = true;
// CHECK-NEXT: static constexpr bool kFp8 = false;
// CHECK-NEXT: static constexpr bool kGate = true;
// CHECK-NEXT: static constexpr bool kGateHeadScalar = false;
// CHECK: static constexpr int kPack = 8;
// CHECK-NEXT: static constexpr int kQkPad = 192;
// CHECK-NEXT: static constexpr int kVPad = 128;
// CHECK-NEXT: static constexpr int kWarps = 12;
// CHECK-NEXT: static constexpr int kBlockM = 128;
// CHECK-NEXT: static constexpr int kBlockN = 128;
// CHECK-NEXT: static constexpr int kStages = 2;
// CHECK-NEXT: static constexpr int kProducerRegisters = 32;
// CHECK-NEXT: static constexpr int kConsumerRegisters = 232;
// CHECK: static constexpr int kWsQBytes = 24576;
// CHECK-NEXT: static constexpr int kWsKOffset = 49152;
// CHECK-NEXT: static constexpr int kWsKStageBytes = 49152;
// CHECK-NEXT: static constexpr int kWsVOffset = 147456;
// CHECK-NEXT: static constexpr int kWsVStageBytes = 32768;
// CHECK-NEXT: static constexpr int kWsBarOffset = 212992;
// CHECK-NEXT: static constexpr int kWsOwnerOffset = 213072;
// CHECK-NEXT: static constexpr int kSharedBytes = 213088;
// CHECK-NEXT: static constexpr bool kPagedKv = true;
// CHECK: gated__prefill_attention(const __nv_bfloat16 *__restrict__ query,
// CHECK: long long v_cache_head_stride,
// CHECK-NEXT: const __grid_constant__ attnc::TensorMap k_cache_map,
// CHECK-NEXT: const __grid_constant__ attnc::TensorMap v_cache_map,
// CHECK-NEXT: const int *__restrict__ block_tables,
// CHECK: attnc::paged_attention_ws<Config>(
// CHECK-NEXT: query, k_cache, v_cache, k_cache_block_stride, k_cache_token_stride, k_cache_head_stride, v_cache_block_stride, v_cache_token_stride, v_cache_head_stride, &k_cache_map, &v_cache_map, block_tables, seq_lens, query_start_loc, sinks, nullptr, nullptr, gate, output, workspace, num_tokens, num_seqs, max_blocks_per_seq, num_kv_splits);
// CHECK-LABEL: // ===== abi gated__prefill_attention =====
// CHECK: "name": "k_cache_map",
// CHECK-NEXT: "kind": "tensor_map",
// CHECK-NEXT: "tensor": "k_cache",
// CHECK-NEXT: "box": [
// CHECK-NEXT: 1,
// CHECK-NEXT: 16,
// CHECK-NEXT: 1,
// CHECK-NEXT: 64
// CHECK-NEXT: ],
// CHECK: "launch_scalars": [
// CHECK-NEXT: "num_blocks"
// CHECK-NEXT: ],
// CHECK-NEXT: "block": [
// CHECK-NEXT: 384,
// CHECK-NEXT: 1,
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 8,
// CHECK-NEXT: "divisor": 128,
// CHECK-NEXT: "plus": "num_seqs"
// CHECK-NEXT: },
// CHECK-NEXT: 2,
// CHECK: "dynamic_shared_memory_bytes": 213088,
// CHECK-NEXT: "hints": {
// CHECK-NEXT: "gqa_pack": 8,
// CHECK-NEXT: "max_kv_splits": 1,
// CHECK-NEXT: "min_rows_per_seq": 64,
// CHECK-NEXT: "target_ctas": 264
// CHECK-NEXT: },
// CHECK-NEXT: "programmatic_dependent_launch": true
// OFF-LABEL: // ===== kernel gated__attention (attention) =====
// OFF-NOT: prefill_attention
func.func @gated(%q: tensor<?x16x192xbf16>, %kc: tensor<?x16x2x192xbf16>, %vc: tensor<?x16x2x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %sinks: tensor<16xf32>, %g: tensor<?x16x128xbf16>) -> tensor<?x16x128xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts sinks %sinks {softmax_scale = 0.0722 : f64, sliding_window = 1024 : i64} : tensor<?x16x192xbf16>, tensor<?x16x2x192xbf16>, tensor<?x16x2x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<16xf32> -> tensor<?x16x128xbf16>
  %y = attn.output_gate %o, %g : tensor<?x16x128xbf16>
  return %y : tensor<?x16x128xbf16>
}

// -----

// CHECK-LABEL: // ===== kernel plain__prefill_attention (prefill_attention) =====
// CHECK: static constexpr bool kSinks = false;
// CHECK-NEXT: static constexpr bool kFp8 = false;
// CHECK-NEXT: static constexpr bool kGate = false;
// CHECK: static constexpr int kPack = 16;
// CHECK: static constexpr int kBlockN = 64;
// CHECK: static constexpr int kWsBarOffset = 196608;
// CHECK: static constexpr int kSharedBytes = 196704;
// CHECK: &k_cache_map, &v_cache_map, block_tables, seq_lens, query_start_loc, nullptr, nullptr, nullptr, nullptr, output,
// CHECK-LABEL: // ===== abi plain__prefill_attention =====
// CHECK: "box": [
// CHECK-NEXT: 1,
// CHECK-NEXT: 64,
// CHECK-NEXT: 1,
// CHECK-NEXT: 64
// CHECK: "dynamic_shared_memory_bytes": 196704,
// OFF-NOT: prefill_attention
func.func @plain(%q: tensor<?x16x256xbf16>, %kc: tensor<?x64x1x256xbf16>, %vc: tensor<?x64x1x256xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> tensor<?x16x256xbf16> {
  %o = attn.paged_attention %q, %kc, %vc, %tables, %lens, %starts {softmax_scale = 0.0625 : f64} : tensor<?x16x256xbf16>, tensor<?x64x1x256xbf16>, tensor<?x64x1x256xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x16x256xbf16>
  return %o : tensor<?x16x256xbf16>
}
