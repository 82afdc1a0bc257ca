// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s
// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s --check-prefix=ABSENT

// varlen_attention on sm_90a takes the warp-specialised template
// (attnc_attention_ws.cuh, schedule mma "wgmma_ws"): its Config has the
// layer's members, the schedule (block_m 128, block_n 128, 2 stages, 12
// warps, setmaxnreg 32/232: AttentionTiling.h) and wsAttentionSharedMap's
// offsets: Q 2 x 64 x 192 x 2 (24576 each), K at 49152 in stages of 128 x
// 192 x 2 = 49152, V at 147456 in stages of 128 x 128 x 2 = 32768, the 9
// mbarriers at 212992, the owner at 213072 (16-aligned), 213088 bytes in
// all. Query, key and value are views (ABI strides [<name>_token_stride,
// <name>_head_stride, 1] and those i64 parameters after the three
// pointers); tensor maps over key and value follow (boxes of 128 rows x 64
// values of one head, 128-byte swizzle), whose outer dim is the launch
// scalar num_kv_tokens. No split-KV (max_kv_splits 1); the workspace
// parameter stays (2 x 264 x 128 x (128 + 2) + 264 floats). latent_gather
// prints the copy template's Config: the row width and block size from the
// cache type, fp8 with cache_scale, one warp a row and 8 rows a block
// (attnc/Plan/LatentGather.h).

// CHECK-LABEL: // ===== kernel mla__varlen_attention (varlen_attention) =====
// CHECK-NEXT: // attnc generated kernel mla__varlen_attention (varlen_attention) for layer mla
// CHECK-NEXT: // configuration: num_q_heads=16 num_kv_heads=16 qk_head_dim=192 v_head_dim=128 group_size=1
// CHECK-NEXT: //   softmax_scale=0.13519999999999999 causal
// CHECK-NEXT: //   activation bf16, ragged contiguous K/V (cu_seqlens_q, cu_seqlens_k)
// CHECK-NEXT: // schedule: block_m=128 block_n=128 num_warps=12 pipeline_stages=2 qk_dim_padded=192 v_dim_padded=128 gqa_pack=1 split_kv_min_keys=256 max_kv_splits=1 target_ctas=264 mma=wgmma_ws form=tensor_core
// CHECK: #include "attnc_attention_ws.cuh"
// CHECK: using act_t = __nv_bfloat16;
// CHECK-NEXT: using cache_t = __nv_bfloat16;
// CHECK: static constexpr bool kCausal = true;
// CHECK: static constexpr bool kFp8 = false;
// CHECK: static constexpr int kPack = 1;
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
// CHECK: mla__varlen_attention(const __nv_bfloat16 *__restrict__ query,
// CHECK-NEXT: const __nv_bfloat16 *__restrict__ key,
// CHECK-NEXT: const __nv_bfloat16 *__restrict__ value,
// CHECK-NEXT: long long query_token_stride,
// CHECK-NEXT: long long query_head_stride,
// CHECK-NEXT: long long key_token_stride,
// CHECK-NEXT: long long key_head_stride,
// CHECK-NEXT: long long value_token_stride,
// CHECK-NEXT: long long value_head_stride,
// CHECK-NEXT: const __grid_constant__ attnc::TensorMap key_map,
// CHECK-NEXT: const __grid_constant__ attnc::TensorMap value_map,
// CHECK-NEXT: const int *__restrict__ cu_seqlens_q,
// CHECK-NEXT: const int *__restrict__ cu_seqlens_k,
// CHECK-NEXT: __nv_bfloat16 *__restrict__ output,
// CHECK-NEXT: float *__restrict__ workspace,
// CHECK-NEXT: int num_tokens,
// CHECK-NEXT: int num_seqs,
// CHECK-NEXT: int num_kv_splits) {
// CHECK-NEXT: attnc::varlen_attention_ws<Config>(
// CHECK: // ===== abi mla__varlen_attention =====
// CHECK: "name": "key",
// CHECK: "shape": [
// CHECK-NEXT: "num_kv_tokens",
// CHECK-NEXT: 16,
// CHECK-NEXT: 192
// CHECK-NEXT: ],
// CHECK-NEXT: "strides": [
// CHECK-NEXT: "key_token_stride",
// CHECK-NEXT: "key_head_stride",
// CHECK-NEXT: 1
// CHECK: "name": "key_map",
// CHECK-NEXT: "kind": "tensor_map",
// CHECK-NEXT: "tensor": "key",
// CHECK-NEXT: "box": [
// CHECK-NEXT: 128,
// CHECK-NEXT: 1,
// CHECK-NEXT: 64
// CHECK-NEXT: ],
// CHECK-NEXT: "swizzle": 128
// CHECK: "name": "value_map",
// CHECK-NEXT: "kind": "tensor_map",
// CHECK-NEXT: "tensor": "value",
// CHECK: "name": "workspace",
// CHECK: 8786184
// CHECK: "launch_scalars": [
// CHECK-NEXT: "num_kv_tokens"
// CHECK-NEXT: ],
// CHECK-NEXT: "block": [
// CHECK-NEXT: 384,
// CHECK: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 1,
// CHECK-NEXT: "divisor": 128,
// CHECK-NEXT: "plus": "num_seqs"
// CHECK-NEXT: },
// CHECK-NEXT: 16,
// CHECK: "dynamic_shared_memory_bytes": 213088,
// CHECK: "max_kv_splits": 1,
// CHECK: "programmatic_dependent_launch": true

// ABSENT-LABEL: // ===== kernel mla__varlen_attention (varlen_attention) =====
// ABSENT-NOT: __restrict__ block_tables
// ABSENT-NOT: __restrict__ seq_lens
// ABSENT-NOT: __restrict__ k_scale
// ABSENT-NOT: __restrict__ sinks
// ABSENT-NOT: __restrict__ gate
// ABSENT-LABEL: // ===== abi mla__varlen_attention =====

// CHECK-LABEL: // ===== kernel mla__latent_gather (latent_gather) =====
// CHECK-NEXT: // attnc generated kernel mla__latent_gather (latent_gather) for layer mla
// CHECK-NEXT: // configuration: latent row width=576 (kv_lora_rank + rope_head_dim), cache block_size=64
// CHECK-NEXT: //   activation bf16, cache fp8_e4m3 (times cache_scale)
// CHECK-NEXT: // schedule: one warp a row, 8 rows a block, 16-byte stores
// CHECK-NEXT: #include "attnc_latent_gather.cuh"
// CHECK: using act_t = __nv_bfloat16;
// CHECK-NEXT: using cache_t = __nv_fp8_e4m3;
// CHECK-NEXT: static constexpr int kWidth = 576;
// CHECK-NEXT: static constexpr int kBlockSize = 64;
// CHECK-NEXT: static constexpr bool kFp8 = true;
// CHECK-NEXT: static constexpr bool kVector = true;
// CHECK-NEXT: static constexpr int kWarps = 8;
// CHECK: mla__latent_gather(const __nv_fp8_e4m3 *__restrict__ latent_cache,
// CHECK-NEXT: long long latent_cache_block_stride,
// CHECK-NEXT: long long latent_cache_token_stride,
// CHECK-NEXT: const int *__restrict__ block_tables,
// CHECK-NEXT: const int *__restrict__ cu_seqlens,
// CHECK-NEXT: const float *__restrict__ cache_scale,
// CHECK-NEXT: __nv_bfloat16 *__restrict__ output,
// CHECK-NEXT: int num_tokens,
// CHECK-NEXT: int num_seqs,
// CHECK-NEXT: int max_blocks_per_seq) {
// CHECK-NEXT: attnc::latent_gather<Config>(
// CHECK: // ===== abi mla__latent_gather =====
// CHECK: "block": [
// CHECK-NEXT: 256,
// CHECK: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 1,
// CHECK-NEXT: "divisor": 8
// The gather does not wait (griddepcontrol): launched plainly.
// CHECK-NOT: "programmatic_dependent_launch"
func.func @mla(%q: tensor<?x16x192xbf16>, %k: tensor<?x16x192xbf16>,
    %v: tensor<?x16x128xbf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>,
    %cache: tensor<?x64x576xf8E4M3FN>, %s: tensor<f32>, %tables: tensor<?x?xi32>)
    -> (tensor<?x16x128xbf16>, tensor<?x576xbf16>) {
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.1352 : f64}
      : tensor<?x16x192xbf16>, tensor<?x16x192xbf16>, tensor<?x16x128xbf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x16x128xbf16>
  %rows = attn.latent_gather %cache, %tables, %cu_k scale %s
      : tensor<?x64x576xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32> scale tensor<f32>
        -> tensor<?x576xbf16>
  return %o, %rows : tensor<?x16x128xbf16>, tensor<?x576xbf16>
}

// -----

// A 16-bit cache of 16-token pages whose rows are not whole 8-value chunks
// (36 = 32 + 4): element copies, no cache_scale; a GQA group of 4 packs its
// 4 heads per row group (grid x multiplier 4, grid y the 2 KV heads).
// CHECK-LABEL: // ===== kernel small__varlen_attention (varlen_attention) =====
// CHECK: //   softmax_scale=0.125 non-causal
// CHECK: static constexpr int kPack = 4;
// CHECK: // ===== abi small__varlen_attention =====
// CHECK: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 4,
// CHECK-NEXT: "divisor": 128,
// CHECK-NEXT: "plus": "num_seqs"
// CHECK-NEXT: },
// CHECK-NEXT: 2,
// CHECK-LABEL: // ===== kernel small__latent_gather (latent_gather) =====
// CHECK: //   activation fp16, cache fp16
// CHECK-NEXT: // schedule: one warp a row, 8 rows a block, element copies
// CHECK: static constexpr int kWidth = 36;
// CHECK-NEXT: static constexpr int kBlockSize = 16;
// CHECK-NEXT: static constexpr bool kFp8 = false;
// CHECK-NEXT: static constexpr bool kVector = false;
// ABSENT-LABEL: // ===== kernel small__latent_gather (latent_gather) =====
// ABSENT-NOT: __restrict__ cache_scale
// ABSENT: // ===== abi small__latent_gather =====
// ABSENT-NOT: "name": "cache_scale"
// ABSENT: "block"
func.func @small(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>,
    %v: tensor<?x2x64xf16>, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>,
    %cache: tensor<?x16x36xf16>, %tables: tensor<?x?xi32>)
    -> (tensor<?x8x64xf16>, tensor<?x36xf16>) {
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {softmax_scale = 0.125 : f64, causal = false}
      : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16>,
        tensor<?xi32>, tensor<?xi32> -> tensor<?x8x64xf16>
  %rows = attn.latent_gather %cache, %tables, %cu_k
      : tensor<?x16x36xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x36xf16>
  return %o, %rows : tensor<?x8x64xf16>, tensor<?x36xf16>
}
