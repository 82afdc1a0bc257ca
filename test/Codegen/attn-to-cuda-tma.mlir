// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s
// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s --check-prefix=SMALL

// The wgmma form's TMA K/V (docs/attention-kernel.md): a 16-bit cache of
// the activation type, rows of whole 16-byte chunks and pages of 64 or more
// tokens (kTmaMinPageRows in AttentionEmitter.cpp). Two tensor maps follow
// the caches' strides; their box is one page's rows (at most the tile's 64
// keys) x 64 values of one KV head, 128-byte swizzled; the maps' outer dim,
// the caches' blocks, is the launch scalar num_blocks.
// CHECK-LABEL: // ===== kernel page64__attention (attention) =====
// CHECK: mma=wgmma form=tensor_core
// CHECK-NEXT: // Tensor-core form: wgmma m64nNk16 (sm_90a) for tiles of more than 16 rows, K/V tiles loaded
// CHECK-NEXT: // by the tensor memory accelerator (tensor maps over the caches, boxes of one page's
// CHECK: static constexpr int kBlockSize = 64;
// CHECK: static constexpr bool kWgmma = true;
// CHECK: static constexpr bool kTmaKv = true;
// CHECK: long long v_cache_head_stride,
// CHECK-NEXT: const __grid_constant__ attnc::TensorMap k_cache_map,
// CHECK-NEXT: const __grid_constant__ attnc::TensorMap v_cache_map,
// CHECK-NEXT: const int *__restrict__ block_tables,
// CHECK: attnc::paged_attention_tma<Config>(
// CHECK-NEXT: query, k_cache, v_cache, k_cache_block_stride, k_cache_token_stride, k_cache_head_stride, v_cache_block_stride, v_cache_token_stride, v_cache_head_stride, &k_cache_map, &v_cache_map, block_tables, seq_lens, query_start_loc, nullptr, nullptr, nullptr, nullptr, output, workspace, num_tokens, num_seqs, max_blocks_per_seq, num_kv_splits);
// CHECK-LABEL: // ===== abi page64__attention =====
// CHECK: "name": "v_cache_head_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "k_cache_map",
// CHECK-NEXT: "kind": "tensor_map",
// CHECK-NEXT: "tensor": "k_cache",
// CHECK-NEXT: "box": [
// CHECK-NEXT: 1,
// CHECK-NEXT: 64,
// CHECK-NEXT: 1,
// CHECK-NEXT: 64
// CHECK-NEXT: ],
// CHECK-NEXT: "swizzle": 128
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "v_cache_map",
// CHECK-NEXT: "kind": "tensor_map",
// CHECK-NEXT: "tensor": "v_cache",
// CHECK: "launch_scalars": [
// CHECK-NEXT: "num_blocks"
// CHECK-NEXT: ],
func.func @page64(%qkv: tensor<?x6144xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x64x8x128xbf16>, %vc: tensor<?x64x8x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> (tensor<?x32x128xbf16>, tensor<?x64x8x128xbf16>, tensor<?x64x8x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 8, qk_head_dim = 128, v_head_dim = 128} : tensor<?x6144xbf16> -> tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x32x128xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x8x128xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64> into tensor<?x64x8x128xbf16>, tensor<?x64x8x128xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.0884 : f64} : tensor<?x32x128xbf16>, tensor<?x64x8x128xbf16>, tensor<?x64x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o, %kc2, %vc2 : tensor<?x32x128xbf16>, tensor<?x64x8x128xbf16>, tensor<?x64x8x128xbf16>
}

// -----

// Pages of 16 keep the cp.async gather (one thread issuing 12 boxes a K
// tile was slower there): no kTmaKv, no tensor maps, no launch scalar.
// SMALL-LABEL: // ===== kernel page16__attention (attention) =====
// SMALL: mma=wgmma form=tensor_core
// SMALL-NEXT: // Tensor-core form: wgmma m64nNk16 (sm_90a) for tiles of more than 16 rows, mma.sync m16n8k16
// SMALL-NOT: kTmaKv
// SMALL-NOT: TensorMap
// SMALL: attnc::paged_attention<Config>(
// SMALL-LABEL: // ===== abi page16__attention =====
// SMALL-NOT: tensor_map
// SMALL-NOT: launch_scalars
// SMALL: "block": [
func.func @page16(%qkv: tensor<?x6144xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x8x128xbf16>, %vc: tensor<?x16x8x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> (tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 8, qk_head_dim = 128, v_head_dim = 128} : tensor<?x6144xbf16> -> tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>
  %qr = attn.rope %q, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x32x128xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x8x128xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64> into tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.0884 : f64} : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o, %kc2, %vc2 : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
}
