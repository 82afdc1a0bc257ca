// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s
// RUN: attn-opt %s -attnc-pipeline -split-input-file | attn-translate --attn-to-cuda -split-input-file | FileCheck %s --check-prefix=ABSENT

// ABSENT checks that features a model lacks leave no trace in its attention
// kernel: each ABSENT-NOT covers the whole text between two labels.
//
// The attention expectations were worked out by hand (sm_90a, 132 SMs) from
// passes/lib/Specialize.cpp and attnc/Plan/AttentionTiling.h (the
// shared-memory map the emitter prints into the kernel's Config; the kernel
// bodies are templates in runtime/device/attnc_attention*.cuh, so only the
// Config and the entry point are checked here): block_m 128, 4 warps (128 threads), 2 stages, block_n 64
// when it fits; target_ctas 2 x 132 = 264, max_kv_splits min(64, 264) = 64,
// workspace tiles 2 x 264 = 528. Shared memory, with rows of P =
// qk_dim_padded + 8 and V = v_dim_padded + 8 16-bit elements, K and V tiles
// of 64 x P x 2 and 64 x V x 2 bytes (fp8 landing tiles 64 x (qk_dim_padded
// + 16) and 64 x (v_dim_padded + 16) bytes): max(staggered 128 x P x 2 + K +
// V (+ landing), ring 16 x P x 2 + 2 x (K + V, or the landing tiles) (+ K +
// V for fp8), merge 4 x 128 x (V + 5), split 4 x (2 x 64 x 128 + 2 x 128) =
// 66560) + slots 3 x 64 x 4 = 768 + 32 (split flag, tile's sequence). Where
// the schedule's mma is "wgmma" (sm_90a, 16-bit activations with a cache of
// the same type, both pads multiples of 64 and v_dim_padded <= 128) the
// staggered term is the swizzled wgmma tile instead: 128 x qk_dim_padded x 2
// + 2 x 64 x qk_dim_padded x 2 + 64 x v_dim_padded x 2. Workspace W = 2 x 264 x 128 x
// (v_dim_padded + 2) + 264 floats. Grid: x = ceil(num_tokens x gqa_pack /
// 128) + num_seqs, y = Hkv x (group / gqa_pack), z = num_kv_splits.
// v_dim_padded > 256 takes the CUDA-core reference kernel instead
// (form = cuda_core in the schedule).

// A 2/3 layer with an interleaved gate, no q/k norm, no rope (Dqk != Dv
// everywhere): per q head [q (2) | gate (3)], so q and gate heads stride 5;
// k starts after the 4 q/gate blocks (4*5 = 20), v after the k heads
// (20 + 2*2 = 24); the fused width is 24 + 2*3 = 30. The kernel body is the
// template of attnc_preprocess.cuh; the Config says which features it has
// (test/tools/attnc/compile.test checks on the PTX that an absent one leaves
// no instruction). The entry point's parameters are the ABI's, in its order.
// CHECK-LABEL: // ===== kernel small__preprocess (preprocess) =====
// CHECK: // configuration: num_q_heads=4 num_kv_heads=2 qk_head_dim=2 v_head_dim=3 gate_layout=interleaved (gate output)
// CHECK-NEXT: //   stages: none
// CHECK: // layout: fused_width=30 q@0 (head stride 5) k@20 v@24 gate@2 (head stride 5)
// CHECK: // schedule: vector_width=1
// CHECK-NEXT: #include "attnc_preprocess.cuh"
// No rope: no inverse-frequency table before the Config.
// CHECK-NOT: rope_inv_freq
// CHECK: struct Config : attnc::preprocess::Defaults {
// CHECK-NEXT: using act_t = __nv_bfloat16;
// CHECK-NEXT: using cache_t = __nv_bfloat16;
// CHECK-NEXT: using slot_t = long long;
// CHECK: static constexpr int num_q_heads = 4;
// CHECK-NEXT: static constexpr int num_kv_heads = 2;
// CHECK-NEXT: static constexpr int qk_head_dim = 2;
// CHECK-NEXT: static constexpr int v_head_dim = 3;
// CHECK-NEXT: static constexpr int block_size = 16;
// CHECK-NEXT: static constexpr long long fused_width = 30;
// CHECK-NEXT: static constexpr long long q_offset = 0;
// CHECK-NEXT: static constexpr long long q_head_stride = 5;
// CHECK-NEXT: static constexpr long long k_offset = 20;
// CHECK-NEXT: static constexpr long long v_offset = 24;
// CHECK-NEXT: // Features
// CHECK-NEXT: static constexpr bool has_q_norm = false;
// CHECK-NEXT: static constexpr bool has_k_norm = false;
// CHECK-NEXT: static constexpr bool has_rope = false;
// CHECK-NEXT: static constexpr bool has_gate = true;
// CHECK-NEXT: static constexpr bool fp8_cache = false;
// CHECK-NEXT: static constexpr long long gate_offset = 2;
// CHECK-NEXT: static constexpr long long gate_head_stride = 5;
// CHECK-NEXT: // Schedule
// CHECK-NEXT: static constexpr int vector_width = 1;
// CHECK: extern "C" __global__ void __launch_bounds__(Config::threads_per_block, Config::min_blocks_per_sm)
// CHECK-NEXT: small__preprocess(const Config::act_t *__restrict__ qkv,
// CHECK-NEXT: const Config::slot_t *__restrict__ slot_mapping,
// CHECK-NEXT: Config::cache_t *__restrict__ k_cache,
// CHECK-NEXT: Config::cache_t *__restrict__ v_cache,
// CHECK-NEXT: long long k_cache_block_stride,
// CHECK-NEXT: long long k_cache_token_stride,
// CHECK-NEXT: long long k_cache_head_stride,
// CHECK-NEXT: long long v_cache_block_stride,
// CHECK-NEXT: long long v_cache_token_stride,
// CHECK-NEXT: long long v_cache_head_stride,
// CHECK-NEXT: Config::act_t *__restrict__ q_out,
// CHECK-NEXT: Config::act_t *__restrict__ gate_out,
// CHECK-NEXT: int num_tokens) {
// CHECK-NEXT: attnc::preprocess::Params<Config> p{};
// CHECK-NEXT: p.qkv = qkv;
// CHECK-NEXT: p.slot_mapping = slot_mapping;
// CHECK-NEXT: p.k_cache = k_cache;
// CHECK-NEXT: p.v_cache = v_cache;
// CHECK-NEXT: p.k_cache_block_stride = k_cache_block_stride;
// CHECK-NEXT: p.k_cache_token_stride = k_cache_token_stride;
// CHECK-NEXT: p.k_cache_head_stride = k_cache_head_stride;
// CHECK-NEXT: p.v_cache_block_stride = v_cache_block_stride;
// CHECK-NEXT: p.v_cache_token_stride = v_cache_token_stride;
// CHECK-NEXT: p.v_cache_head_stride = v_cache_head_stride;
// CHECK-NEXT: p.q_out = q_out;
// CHECK-NEXT: p.gate_out = gate_out;
// CHECK-NEXT: p.num_tokens = num_tokens;
// CHECK-NEXT: attnc::preprocess::Kernel<Config>::run(p);
// CHECK-NEXT: }
// CHECK-LABEL: // ===== abi small__preprocess =====
// The caches are views of the engine's allocation: their ABI strides name
// the six i64 parameters after v_cache (K's block, token and head strides,
// then V's, in elements; the head dim contiguous), set by the launcher to
// the tensors' strides. No other tensor has strides (C-contiguous).
// CHECK: "name": "k_cache",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "bf16",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: "num_blocks",
// CHECK-NEXT: 16,
// CHECK-NEXT: 2,
// CHECK-NEXT: 2
// CHECK-NEXT: ],
// CHECK-NEXT: "strides": [
// CHECK-NEXT: "k_cache_block_stride",
// CHECK-NEXT: "k_cache_token_stride",
// CHECK-NEXT: "k_cache_head_stride",
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "writes": true
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "v_cache",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "bf16",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: "num_blocks",
// CHECK-NEXT: 16,
// CHECK-NEXT: 2,
// CHECK-NEXT: 3
// CHECK-NEXT: ],
// CHECK-NEXT: "strides": [
// CHECK-NEXT: "v_cache_block_stride",
// CHECK-NEXT: "v_cache_token_stride",
// CHECK-NEXT: "v_cache_head_stride",
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "writes": true
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "k_cache_block_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "k_cache_token_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "k_cache_head_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "v_cache_block_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "v_cache_token_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "v_cache_head_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "q_out",
// CHECK-NOT: norm_weight
// CHECK-NOT: positions
// CHECK-NOT: "strides"
// CHECK: "name": "gate_out"
// The preprocess waits (griddepcontrol) before its first global access.
// CHECK: "programmatic_dependent_launch": true
// Attention: Hq 4 / Hkv 2, group 2, pack 2; head dims pad to 16 (P = V =
// 24, K = V = 64 x 24 x 2 = 3072). Shared memory: max(staggered 128 x 24 x
// 2 + 2 x 3072 = 12288, ring 16 x 24 x 2 + 2 x 6144 = 13056, merge 4 x 128 x
// 29 = 14848, split 66560) + 768 + 32 = 67360 bytes (pads of 16: mma.sync). W = 2 x 264 x 128 x
// (16 + 2) + 264 = 1216512 + 264 = 1216776. Grid y = 2 x (2 / 2) = 2.
// scale_log2 = 0.7071 x log2(e) = 0.7071 x 1.44269504088896 = 1.0201296634...
// CHECK-LABEL: // ===== kernel small__attention (attention) =====
// CHECK: // configuration: num_q_heads=4 num_kv_heads=2 qk_head_dim=2 v_head_dim=3 group_size=2
// CHECK: // schedule: block_m=128 block_n=64 num_warps=4 pipeline_stages=2 qk_dim_padded=16 v_dim_padded=16 gqa_pack=2 split_kv_min_keys=256 max_kv_splits=64 target_ctas=264 mma=mma.sync form=tensor_core
// CHECK-NEXT: // Tensor-core form: mma.sync m16n8k16
// CHECK: #include "attnc_attention.cuh"
// CHECK: struct Config {
// CHECK-NEXT: using act_t = __nv_bfloat16;
// CHECK-NEXT: using cache_t = __nv_bfloat16;
// CHECK-NEXT: static constexpr int kNumQHeads = 4;
// CHECK-NEXT: static constexpr int kNumKvHeads = 2;
// CHECK-NEXT: static constexpr int kGroupSize = 2;
// CHECK-NEXT: static constexpr int kQkHeadDim = 2;
// CHECK-NEXT: static constexpr int kVHeadDim = 3;
// CHECK-NEXT: static constexpr int kBlockSize = 16;
// CHECK-NEXT: static constexpr float kScaleLog2 = 1.0201296634{{[0-9]*}}f;
// Causal, no window, no sinks, no fp8, the gate, no soft-cap, no value scale.
// CHECK: static constexpr bool kCausal = true;
// CHECK-NEXT: static constexpr int kSlidingWindow = 0;
// CHECK-NEXT: static constexpr int kAttentionChunk = 0;
// CHECK-NEXT: static constexpr bool kSinks = false;
// CHECK-NEXT: static constexpr bool kFp8 = false;
// CHECK: static constexpr bool kGate = true;
// CHECK: static constexpr bool kHasSoftcap = false;
// CHECK: static constexpr bool kHasValueScale = false;
// CHECK: static constexpr int kPack = 2;
// CHECK-NEXT: static constexpr int kQkPad = 16;
// CHECK-NEXT: static constexpr int kVPad = 16;
// CHECK-NEXT: static constexpr int kWarps = 4;
// CHECK-NEXT: static constexpr int kBlockM = 128;
// CHECK-NEXT: static constexpr int kBlockN = 64;
// CHECK-NEXT: static constexpr int kStages = 2;
// CHECK-NEXT: static constexpr int kMaxSplits = 64;
// CHECK-NEXT: static constexpr int kSplitKvMinKeys = 256;
// CHECK-NEXT: static constexpr int kTargetCtas = 264;
// CHECK-NEXT: static constexpr int kWorkspaceTiles = 528;
// CHECK-NEXT: static constexpr bool kWgmma = false;
// The rows are not whole 16-byte chunks: a q row is 2 x 2 = 4 bytes, a K row
// 2 x 2 = 4 (bf16 cache), a V row 3 x 2 = 6, so kQVector, kKVector and
// kVVector are false and Q, K and V load element by element.
// CHECK: static constexpr bool kQVector = false;
// CHECK-NEXT: static constexpr bool kKVector = false;
// CHECK-NEXT: static constexpr bool kVVector = false;
// The shared-memory map: strides 16 + 8 = 24 elements (K/V rows land in
// place: 48 bytes); the staggered K and V tiles after the Q tile (6144,
// 6144 + 3072); the ring after the 16-row Q tile (16 x 24 x 2 = 768) in
// stages of 2 x 3072, the widened pair after both stages (768 + 2 x 6144 =
// 13056, + 3072); wgmma Q 128 x 16 x 2 = 4096, K tiles of 64 x 16 x 2 =
// 2048, V after two; merge rows of 4 x 128 = 512 bytes: m after
// 512 x 24 = 12288, then l, weights, row m, row l; split l after
// 64 x 512 = 32768, merged m, l after 65536; slots after the front area
// (66560), the flag after 768 bytes of slots, the sequence 16 bytes later.
// CHECK: static constexpr int kQStride = 24;
// CHECK-NEXT: static constexpr int kKStride = 24;
// CHECK-NEXT: static constexpr int kVStride = 24;
// CHECK-NEXT: static constexpr int kOStride = 24;
// CHECK-NEXT: static constexpr int kKLandStride = 48;
// CHECK-NEXT: static constexpr int kVLandStride = 48;
// CHECK-NEXT: static constexpr int kStaggeredKOffset = 6144;
// CHECK-NEXT: static constexpr int kStaggeredVOffset = 9216;
// CHECK-NEXT: static constexpr int kStaggeredKLandOffset = 6144;
// CHECK-NEXT: static constexpr int kStaggeredVLandOffset = 9216;
// CHECK-NEXT: static constexpr int kRingOffset = 768;
// CHECK-NEXT: static constexpr int kRingStageBytes = 6144;
// CHECK-NEXT: static constexpr int kRingVOffset = 3072;
// CHECK-NEXT: static constexpr int kRingWidenKOffset = 13056;
// CHECK-NEXT: static constexpr int kRingWidenVOffset = 16128;
// CHECK-NEXT: static constexpr int kWgmmaKOffset = 4096;
// CHECK-NEXT: static constexpr int kWgmmaKBytes = 2048;
// CHECK-NEXT: static constexpr int kWgmmaVOffset = 8192;
// CHECK-NEXT: static constexpr int kMergeMOffset = 12288;
// CHECK-NEXT: static constexpr int kMergeLOffset = 12800;
// CHECK-NEXT: static constexpr int kMergeWeightOffset = 13312;
// CHECK-NEXT: static constexpr int kMergeRowMOffset = 13824;
// CHECK-NEXT: static constexpr int kMergeRowLOffset = 14336;
// CHECK-NEXT: static constexpr int kSplitLOffset = 32768;
// CHECK-NEXT: static constexpr int kSplitMergedMOffset = 65536;
// CHECK-NEXT: static constexpr int kSplitMergedLOffset = 66048;
// CHECK-NEXT: static constexpr int kSlotOffset = 66560;
// CHECK-NEXT: static constexpr int kSplitFlagOffset = 67328;
// CHECK-NEXT: static constexpr int kOwnerOffset = 67344;
// CHECK-NEXT: static constexpr int kSharedBytes = 67360;
// CHECK-NEXT: };
// CHECK: extern "C" __global__ void __launch_bounds__(Config::kWarps * 32)
// CHECK-NEXT: small__attention(const __nv_bfloat16 *__restrict__ query,
// CHECK-NEXT: const __nv_bfloat16 *__restrict__ k_cache,
// CHECK-NEXT: const __nv_bfloat16 *__restrict__ v_cache,
// CHECK-NEXT: long long k_cache_block_stride,
// CHECK-NEXT: long long k_cache_token_stride,
// CHECK-NEXT: long long k_cache_head_stride,
// CHECK-NEXT: long long v_cache_block_stride,
// CHECK-NEXT: long long v_cache_token_stride,
// CHECK-NEXT: long long v_cache_head_stride,
// CHECK-NEXT: const int *__restrict__ block_tables,
// CHECK-NEXT: const int *__restrict__ seq_lens,
// CHECK-NEXT: const int *__restrict__ query_start_loc,
// CHECK-NEXT: const __nv_bfloat16 *__restrict__ gate,
// CHECK-NEXT: __nv_bfloat16 *__restrict__ output,
// CHECK-NEXT: float *__restrict__ workspace,
// CHECK-NEXT: int num_tokens,
// CHECK-NEXT: int num_seqs,
// CHECK-NEXT: int max_blocks_per_seq,
// CHECK-NEXT: int num_kv_splits) {
// The template's parameters: sinks, k_scale and v_scale absent (nullptr).
// CHECK-NEXT: attnc::paged_attention<Config>(
// CHECK-NEXT: query, k_cache, v_cache, k_cache_block_stride, k_cache_token_stride, k_cache_head_stride, v_cache_block_stride, v_cache_token_stride, v_cache_head_stride, block_tables, seq_lens, query_start_loc, nullptr, nullptr, nullptr, gate, output, workspace, num_tokens, num_seqs, max_blocks_per_seq, num_kv_splits);
// CHECK-NEXT: }
// ABSENT-LABEL: // ===== kernel small__attention (attention) =====
// ABSENT-NOT: __restrict__ sinks
// ABSENT-NOT: __restrict__ k_scale
// ABSENT-NOT: __restrict__ v_scale
// ABSENT-NOT: wgmma m64nNk16
// CHECK-LABEL: // ===== abi small__attention =====
// The same views and stride parameters as the preprocess kernel's.
// CHECK: "name": "k_cache",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "bf16",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: "num_blocks",
// CHECK-NEXT: 16,
// CHECK-NEXT: 2,
// CHECK-NEXT: 2
// CHECK-NEXT: ],
// CHECK-NEXT: "strides": [
// CHECK-NEXT: "k_cache_block_stride",
// CHECK-NEXT: "k_cache_token_stride",
// CHECK-NEXT: "k_cache_head_stride",
// CHECK-NEXT: 1
// CHECK-NEXT: ]
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "v_cache",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "bf16",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: "num_blocks",
// CHECK-NEXT: 16,
// CHECK-NEXT: 2,
// CHECK-NEXT: 3
// CHECK-NEXT: ],
// CHECK-NEXT: "strides": [
// CHECK-NEXT: "v_cache_block_stride",
// CHECK-NEXT: "v_cache_token_stride",
// CHECK-NEXT: "v_cache_head_stride",
// CHECK-NEXT: 1
// CHECK-NEXT: ]
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "k_cache_block_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "k_cache_token_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "k_cache_head_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "v_cache_block_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "v_cache_token_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "v_cache_head_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "block_tables",
// CHECK-NOT: "strides"
// CHECK: "name": "gate",
// CHECK: "name": "output",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "bf16",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: "num_tokens",
// CHECK-NEXT: 4,
// CHECK-NEXT: 3
// CHECK-NEXT: ],
// CHECK-NEXT: "writes": true
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "workspace",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: 1216776
// CHECK-NEXT: ],
// CHECK-NEXT: "writes": true
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "num_tokens",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "num_seqs",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "max_blocks_per_seq",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "num_kv_splits",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK-NEXT: "block": [
// CHECK-NEXT: 128,
// CHECK-NEXT: 1,
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 2,
// CHECK-NEXT: "divisor": 128,
// CHECK-NEXT: "plus": "num_seqs"
// CHECK-NEXT: },
// CHECK-NEXT: 2,
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_kv_splits",
// CHECK-NEXT: "multiplier": 1,
// CHECK-NEXT: "divisor": 1
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK-NEXT: "dynamic_shared_memory_bytes": 67360,
// CHECK-NEXT: "hints": {
// CHECK-NEXT: "max_kv_splits": 64,
// CHECK-NEXT: "target_ctas": 264
// CHECK-NEXT: },
// CHECK-NEXT: "programmatic_dependent_launch": true
// CHECK-NEXT: }
// ABSENT-LABEL: // ===== abi small__attention =====
// ABSENT-NOT: "sinks"
// ABSENT-NOT: "k_scale"
// ABSENT-NOT: "v_scale"
// ABSENT-LABEL: // ===== kernel big__preprocess (preprocess) =====
func.func @small(%qkv: tensor<?x30xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x2xbf16>, %vc: tensor<?x16x2x3xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>) -> (tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 2, v_head_dim = 3, gate_layout = #attn.gate_layout<interleaved>} : tensor<?x30xbf16> -> tensor<?x4x2xbf16>, tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?x4x3xbf16>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc : tensor<?x2x2xbf16>, tensor<?x2x3xbf16>, tensor<?xi64> into tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
  %o = attn.paged_attention %q, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.7071 : f64} : tensor<?x4x2xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x3xbf16>
  %y = attn.output_gate %o, %g : tensor<?x4x3xbf16>
  return %y, %kc2, %vc2 : tensor<?x4x3xbf16>, tensor<?x16x2x2xbf16>, tensor<?x16x2x3xbf16>
}

// -----

// 192/128 with Gemma-style q/k norm after a gptj rope over the last 64 dims
// (MLA-like offset 128), yarn scaling, an fp8 cache: every stage present in
// the model's order, fp8 scales, attention with sinks and a sliding window.
// yarn with mscale 1 and no mscale_all_dim: cos and sin scale by 0.1 x
// ln(40) + 1 = 1.36888794541139...
// CHECK-LABEL: // ===== kernel big__preprocess (preprocess) =====
// CHECK: //   stages: rope q_norm k_norm
// CHECK: //   norm: gemma
// CHECK: //   rope: gptj rotary_dim=64 rotary_offset=128
// CHECK-SAME: scaling=yarn factor=40.0 original_max_position=4096
// CHECK: //   activation bf16, cache fp8_e4m3
// CHECK: __constant__ double rope_inv_freq[32] = {
// CHECK: using cache_t = __nv_fp8_e4m3;
// CHECK: static constexpr bool has_q_norm = true;
// CHECK-NEXT: static constexpr bool has_k_norm = true;
// CHECK-NEXT: static constexpr bool has_rope = true;
// CHECK-NEXT: static constexpr bool has_gate = false;
// CHECK-NEXT: static constexpr bool fp8_cache = true;
// The norm comes after the rope, as in the stages.
// CHECK-NEXT: static constexpr auto norm_style = attnc::preprocess::NormStyle::gemma;
// CHECK-NEXT: static constexpr bool norm_after_rope = true;
// CHECK-NEXT: static constexpr float norm_eps = 9.9999999999999995e-07f;
// CHECK-NEXT: using position_t = long long;
// CHECK-NEXT: static constexpr auto rope_style = attnc::preprocess::RopeStyle::gptj;
// CHECK-NEXT: static constexpr int rotary_dim = 64;
// CHECK-NEXT: static constexpr int rotary_offset = 128;
// CHECK-NEXT: static constexpr float rope_attention_factor = 1.36888794541139{{[0-9]*}}f;
// CHECK-NEXT: static __device__ __forceinline__ double inv_freq(int i) { return rope_inv_freq[i]; }
// CHECK: static constexpr bool pair_layout = false;
// CHECK: big__preprocess(const Config::act_t *__restrict__ qkv,
// CHECK-NEXT: const Config::slot_t *__restrict__ slot_mapping,
// CHECK-NEXT: Config::cache_t *__restrict__ k_cache,
// CHECK-NEXT: Config::cache_t *__restrict__ v_cache,
// CHECK-NEXT: long long k_cache_block_stride,
// CHECK-NEXT: long long k_cache_token_stride,
// CHECK-NEXT: long long k_cache_head_stride,
// CHECK-NEXT: long long v_cache_block_stride,
// CHECK-NEXT: long long v_cache_token_stride,
// CHECK-NEXT: long long v_cache_head_stride,
// CHECK-NEXT: const Config::position_t *__restrict__ positions,
// CHECK-NEXT: const Config::act_t *__restrict__ q_norm_weight,
// CHECK-NEXT: const Config::act_t *__restrict__ k_norm_weight,
// CHECK-NEXT: const float *__restrict__ k_scale,
// CHECK-NEXT: const float *__restrict__ v_scale,
// CHECK-NEXT: Config::act_t *__restrict__ q_out,
// CHECK-NEXT: int num_tokens) {
// Attention: Hq 8 / Hkv 1, group 8, pack 8; 192/128 (P = 200, V = 136; K =
// 64 x 200 x 2 = 25600, V = 64 x 136 x 2 = 17408), fp8 cache (landing tiles
// 64 x 208 = 13312 and 64 x 144 = 9216 bytes). Shared memory: max(staggered
// 128 x 200 x 2 + 25600 + 17408 + 13312 + 9216 = 116736, ring 16 x 200 x 2 +
// 2 x 22528 + 43008 = 94464, merge 4 x 128 x 141 = 72192, split 66560) + 768
// + 32 = 117536 bytes, within 232448: 64 keys, the tensor-core kernel (fp8:
// mma.sync). W =
// 2 x 264 x 128 x (128 + 2) + 264 = 8785920 + 264 = 8786184. Grid y = 1 x
// (8 / 8) = 1. scale_log2 = 0.0722 x 1.44269504088896 = 0.1041625819...; the
// fp8 scales fold into the score (k_scale) and output (v_scale) scales.
// CHECK-LABEL: // ===== kernel big__attention (attention) =====
// CHECK: // schedule: block_m=128 block_n=64 num_warps=4 pipeline_stages=2 qk_dim_padded=192 v_dim_padded=128 gqa_pack=8 split_kv_min_keys=256 max_kv_splits=64 target_ctas=264 mma=mma.sync form=tensor_core
// CHECK-NEXT: // Tensor-core form: mma.sync m16n8k16
// CHECK: using cache_t = __nv_fp8_e4m3;
// CHECK-NEXT: static constexpr int kNumQHeads = 8;
// CHECK-NEXT: static constexpr int kNumKvHeads = 1;
// CHECK-NEXT: static constexpr int kGroupSize = 8;
// CHECK-NEXT: static constexpr int kQkHeadDim = 192;
// CHECK-NEXT: static constexpr int kVHeadDim = 128;
// CHECK-NEXT: static constexpr int kBlockSize = 64;
// CHECK-NEXT: static constexpr float kScaleLog2 = 0.1041625819{{[0-9]*}}f;
// Causal with a window of 128 (a row attends keys [pos - 127, pos + 1)),
// sinks, the fp8 scales, no gate.
// CHECK: static constexpr bool kCausal = true;
// CHECK-NEXT: static constexpr int kSlidingWindow = 128;
// CHECK-NEXT: static constexpr int kAttentionChunk = 0;
// CHECK-NEXT: static constexpr bool kSinks = true;
// CHECK-NEXT: static constexpr bool kFp8 = true;
// CHECK: static constexpr bool kGate = false;
// CHECK: static constexpr int kPack = 8;
// CHECK-NEXT: static constexpr int kQkPad = 192;
// CHECK-NEXT: static constexpr int kVPad = 128;
// CHECK: static constexpr bool kWgmma = false;
// Whole 16-byte chunks: a q row is 192 x 2 = 384 bytes, fp8 K and V rows
// 192 and 128 bytes.
// CHECK: static constexpr bool kQVector = true;
// CHECK-NEXT: static constexpr bool kKVector = true;
// CHECK-NEXT: static constexpr bool kVVector = true;
// fp8 rows land raw (192 + 16 and 128 + 16 bytes); the staggered landing
// buffers after the Q tile and the 16-bit K and V tiles (51200 + 25600 +
// 17408 = 94208, + 13312), the ring's stages of 13312 + 9216 = 22528 bytes
// after the 16-row Q tile (16 x 200 x 2 = 6400), widened into the tiles
// after both stages (6400 + 2 x 22528 = 51456, + 25600).
// CHECK: static constexpr int kQStride = 200;
// CHECK-NEXT: static constexpr int kKStride = 200;
// CHECK-NEXT: static constexpr int kVStride = 136;
// CHECK-NEXT: static constexpr int kOStride = 136;
// CHECK-NEXT: static constexpr int kKLandStride = 208;
// CHECK-NEXT: static constexpr int kVLandStride = 144;
// CHECK-NEXT: static constexpr int kStaggeredKOffset = 51200;
// CHECK-NEXT: static constexpr int kStaggeredVOffset = 76800;
// CHECK-NEXT: static constexpr int kStaggeredKLandOffset = 94208;
// CHECK-NEXT: static constexpr int kStaggeredVLandOffset = 107520;
// CHECK-NEXT: static constexpr int kRingOffset = 6400;
// CHECK-NEXT: static constexpr int kRingStageBytes = 22528;
// CHECK-NEXT: static constexpr int kRingVOffset = 13312;
// CHECK-NEXT: static constexpr int kRingWidenKOffset = 51456;
// CHECK-NEXT: static constexpr int kRingWidenVOffset = 77056;
// The front area is the staggered one (116736): slots there, then + 768,
// + 16, + 16.
// CHECK: static constexpr int kSlotOffset = 116736;
// CHECK-NEXT: static constexpr int kSplitFlagOffset = 117504;
// CHECK-NEXT: static constexpr int kOwnerOffset = 117520;
// CHECK-NEXT: static constexpr int kSharedBytes = 117536;
// CHECK: big__attention(const __nv_bfloat16 *__restrict__ query,
// CHECK: const int *__restrict__ query_start_loc,
// CHECK-NEXT: const float *__restrict__ sinks,
// CHECK-NEXT: const float *__restrict__ k_scale,
// CHECK-NEXT: const float *__restrict__ v_scale,
// CHECK-NEXT: __nv_bfloat16 *__restrict__ output,
// CHECK-NEXT: float *__restrict__ workspace,
// CHECK: int num_kv_splits) {
// CHECK-NEXT: attnc::paged_attention<Config>(
// CHECK-NEXT: query, k_cache, v_cache, k_cache_block_stride, k_cache_token_stride, k_cache_head_stride, v_cache_block_stride, v_cache_token_stride, v_cache_head_stride, block_tables, seq_lens, query_start_loc, sinks, k_scale, v_scale, nullptr, output, workspace, num_tokens, num_seqs, max_blocks_per_seq, num_kv_splits);
// ABSENT-LABEL: // ===== kernel big__attention (attention) =====
// ABSENT-NOT: __restrict__ gate
// ABSENT-NOT: wgmma m64nNk16
// CHECK-LABEL: // ===== abi big__attention =====
// CHECK: "name": "sinks",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: 8
// CHECK-NEXT: ]
// CHECK: "name": "k_scale",
// CHECK: "name": "v_scale",
// CHECK: "name": "output",
// CHECK: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "workspace",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: 8786184
// CHECK-NEXT: ],
// CHECK-NEXT: "writes": true
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "num_tokens",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "num_seqs",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "max_blocks_per_seq",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "num_kv_splits",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK-NEXT: "block": [
// CHECK-NEXT: 128,
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
// CHECK-NEXT: 1,
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_kv_splits",
// CHECK-NEXT: "multiplier": 1,
// CHECK-NEXT: "divisor": 1
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK-NEXT: "dynamic_shared_memory_bytes": 117536,
// CHECK-NEXT: "hints": {
// CHECK-NEXT: "max_kv_splits": 64,
// CHECK-NEXT: "target_ctas": 264
// CHECK-NEXT: },
// CHECK-NEXT: "programmatic_dependent_launch": true
// CHECK-NEXT: }
// ABSENT-LABEL: // ===== abi big__attention =====
// ABSENT-NOT: "gate"
// ABSENT-LABEL: // ===== kernel pair__preprocess (preprocess) =====
func.func @big(%qkv: tensor<?x1856xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x64x1x192xf8E4M3FN>, %vc: tensor<?x64x1x128xf8E4M3FN>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %qw: tensor<192xbf16>, %kw: tensor<192xbf16>, %sinks: tensor<8xf32>, %ks: tensor<f32>, %vs: tensor<f32>) -> (tensor<?x8x128xbf16>, tensor<?x64x1x192xf8E4M3FN>, tensor<?x64x1x128xf8E4M3FN>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 8, num_kv_heads = 1, qk_head_dim = 192, v_head_dim = 128} : tensor<?x1856xbf16> -> tensor<?x8x192xbf16>, tensor<?x1x192xbf16>, tensor<?x1x128xbf16>
  %qr = attn.rope %q, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64, rotary_offset = 128, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096>} : tensor<?x8x192xbf16>, tensor<?xi64>
  %kr = attn.rope %k, %pos {style = #attn.rope_style<gptj>, rotary_dim = 64, rotary_offset = 128, theta = 1.0e4 : f64, scaling = #attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096>} : tensor<?x1x192xbf16>, tensor<?xi64>
  %qn = attn.rms_norm %qr, %qw {eps = 1.0e-6 : f64, style = #attn.norm_style<gemma>} : tensor<?x8x192xbf16>, tensor<192xbf16>
  %kn = attn.rms_norm %kr, %kw {eps = 1.0e-6 : f64, style = #attn.norm_style<gemma>} : tensor<?x1x192xbf16>, tensor<192xbf16>
  %kc2, %vc2 = attn.cache_write %kn, %v, %slots into %kc, %vc scales %ks, %vs : tensor<?x1x192xbf16>, tensor<?x1x128xbf16>, tensor<?xi64> into tensor<?x64x1x192xf8E4M3FN>, tensor<?x64x1x128xf8E4M3FN> scales tensor<f32>, tensor<f32>
  %o = attn.paged_attention %qn, %kc2, %vc2, %tables, %lens, %starts sinks %sinks scales %ks, %vs {softmax_scale = 0.0722 : f64, sliding_window = 128 : i64} : tensor<?x8x192xbf16>, tensor<?x64x1x192xf8E4M3FN>, tensor<?x64x1x128xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<8xf32> scales tensor<f32>, tensor<f32> -> tensor<?x8x128xbf16>
  return %o, %kc2, %vc2 : tensor<?x8x128xbf16>, tensor<?x64x1x192xf8E4M3FN>, tensor<?x64x1x128xf8E4M3FN>
}

// -----

// Neox over the whole 128-dim head (Qwen3-like): the schedule's 4 threads per
// head divide the 8 half-head vectors, so attn-specialize chose the pair
// layout (each lane holds vectors v and v + 8, chunks c and c + 2: the
// rotation needs no exchange between lanes), one work item in flight, and
// 640 / 192 = 3 blocks per SM; the Config carries them. The norms come
// before the rope.
// CHECK-LABEL: // ===== kernel pair__preprocess (preprocess) =====
// CHECK: // schedule: vector_width=8 threads_per_head=4 threads_per_block=192 heads_per_block=48 tokens_per_block=1 min_blocks_per_sm=3 pair_layout=true prefetch=1
// CHECK: static constexpr bool norm_after_rope = false;
// CHECK: static constexpr auto rope_style = attnc::preprocess::RopeStyle::neox;
// CHECK-NEXT: static constexpr int rotary_dim = 128;
// CHECK-NEXT: static constexpr int rotary_offset = 0;
// CHECK: static constexpr int min_blocks_per_sm = 3;
// CHECK-NEXT: static constexpr bool pair_layout = true;
// CHECK-NEXT: static constexpr int prefetch = 1;
// CHECK-LABEL: // ===== abi pair__preprocess =====
// CHECK: "programmatic_dependent_launch": true
// Attention: Hq 32 / Hkv 8, group 4, pack 4; 128/128 bf16 (P = V = 136, K =
// V = 17408). mma "wgmma" (bf16 cache, pads 128). Shared memory: max(wgmma
// 128 x 128 x 2 + 2 x 64 x 128 x 2 + 64 x 128 x 2 = 81920, ring 16 x 136 x 2
// + 2 x 34816 = 73984, merge 4 x 128 x 141 = 72192, split 66560) + 768 + 32
// = 82720 bytes. W = 8786184 (v_dim_padded 128 as
// above). Grid y = 8 x (4 / 4) = 8. Rows of 128 x 2 = 256 bytes are whole
// 16-byte chunks (the cp.async path). No gate, sinks, window or fp8.
// CHECK-LABEL: // ===== kernel pair__attention (attention) =====
// CHECK: // schedule: block_m=128 block_n=64 num_warps=4 pipeline_stages=2 qk_dim_padded=128 v_dim_padded=128 gqa_pack=4 split_kv_min_keys=256 max_kv_splits=64 target_ctas=264 mma=wgmma form=tensor_core
// CHECK-NEXT: // Tensor-core form: wgmma m64nNk16 (sm_90a) for tiles of more than 16 rows, mma.sync m16n8k16
// CHECK: using cache_t = __nv_bfloat16;
// CHECK-NEXT: static constexpr int kNumQHeads = 32;
// CHECK-NEXT: static constexpr int kNumKvHeads = 8;
// CHECK-NEXT: static constexpr int kGroupSize = 4;
// CHECK-NEXT: static constexpr int kQkHeadDim = 128;
// CHECK-NEXT: static constexpr int kVHeadDim = 128;
// CHECK: static constexpr bool kCausal = true;
// CHECK-NEXT: static constexpr int kSlidingWindow = 0;
// CHECK-NEXT: static constexpr int kAttentionChunk = 0;
// CHECK-NEXT: static constexpr bool kSinks = false;
// CHECK-NEXT: static constexpr bool kFp8 = false;
// CHECK: static constexpr bool kGate = false;
// CHECK: static constexpr int kPack = 4;
// CHECK: static constexpr int kBlockM = 128;
// CHECK-NEXT: static constexpr int kBlockN = 64;
// CHECK-NEXT: static constexpr int kStages = 2;
// CHECK: static constexpr bool kWgmma = true;
// The wgmma tiles: K tiles of 64 x 128 x 2 = 16384 bytes after the Q tile
// (128 x 128 x 2 = 32768), V after two of them; the front area is theirs
// (65536 + 16384 = 81920).
// CHECK: static constexpr int kWgmmaKOffset = 32768;
// CHECK-NEXT: static constexpr int kWgmmaKBytes = 16384;
// CHECK-NEXT: static constexpr int kWgmmaVOffset = 65536;
// CHECK: static constexpr int kSlotOffset = 81920;
// CHECK: static constexpr int kSharedBytes = 82720;
// CHECK: const int *__restrict__ query_start_loc,
// CHECK-NEXT: __nv_bfloat16 *__restrict__ output,
// CHECK-NEXT: float *__restrict__ workspace,
// CHECK: attnc::paged_attention<Config>(
// CHECK-NEXT: query, k_cache, v_cache, k_cache_block_stride, k_cache_token_stride, k_cache_head_stride, v_cache_block_stride, v_cache_token_stride, v_cache_head_stride, block_tables, seq_lens, query_start_loc, nullptr, nullptr, nullptr, nullptr, output, workspace, num_tokens, num_seqs, max_blocks_per_seq, num_kv_splits);
// ABSENT-LABEL: // ===== kernel pair__attention (attention) =====
// ABSENT-NOT: __restrict__ sinks
// ABSENT-NOT: __restrict__ gate
// ABSENT-NOT: __restrict__ k_scale
// CHECK-LABEL: // ===== abi pair__attention =====
// CHECK: "name": "output",
// CHECK: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "workspace",
// CHECK-NEXT: "kind": "pointer",
// CHECK-NEXT: "dtype": "f32",
// CHECK-NEXT: "shape": [
// CHECK-NEXT: 8786184
// CHECK-NEXT: ],
// CHECK-NEXT: "writes": true
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "num_tokens",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "num_seqs",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "max_blocks_per_seq",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "num_kv_splits",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK-NEXT: "block": [
// CHECK-NEXT: 128,
// CHECK-NEXT: 1,
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 4,
// CHECK-NEXT: "divisor": 128,
// CHECK-NEXT: "plus": "num_seqs"
// CHECK-NEXT: },
// CHECK-NEXT: 8,
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_kv_splits",
// CHECK-NEXT: "multiplier": 1,
// CHECK-NEXT: "divisor": 1
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK-NEXT: "dynamic_shared_memory_bytes": 82720,
// CHECK-NEXT: "hints": {
// CHECK-NEXT: "max_kv_splits": 64,
// CHECK-NEXT: "target_ctas": 264
// CHECK-NEXT: },
// CHECK-NEXT: "programmatic_dependent_launch": true
// CHECK-NEXT: }
// ABSENT-LABEL: // ===== abi pair__attention =====
func.func @pair(%qkv: tensor<?x6144xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x8x128xbf16>, %vc: tensor<?x16x8x128xbf16>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %qw: tensor<128xbf16>, %kw: tensor<128xbf16>) -> (tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 8, qk_head_dim = 128, v_head_dim = 128} : tensor<?x6144xbf16> -> tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64} : tensor<?x32x128xbf16>, tensor<128xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64} : tensor<?x8x128xbf16>, tensor<128xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x32x128xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 128 : i64, theta = 1.0e6 : f64} : tensor<?x8x128xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64> into tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
  %o = attn.paged_attention %qr, %kc2, %vc2, %tables, %lens, %starts {softmax_scale = 0.0884 : f64} : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32x128xbf16>
  return %o, %kc2, %vc2 : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
}

// -----

// Wide V heads take the CUDA-core reference kernel: 384/384 with an fp8
// cache, sinks, a sliding window of 256 and an interleaved gate (per q head
// [q (384) | gate (384)]: fused width 4 x 768 + 2 x 384 + 2 x 384 = 4608).
// Schedule: the accumulator is 384 / 2 = 192 registers per thread > 128, so
// 8 warps; Hq 4 / Hkv 2, pack 2. v_dim_padded 384 > 256: the CUDA-core
// form (recorded as form = cuda_core, block_n 16 at 1 stage), the reference kernel, one block
// of 8 x 32 = 256 threads per (token, KV head), its dynamic shared memory 8
// warps x 2 heads x (2 + 384) x 4 = 24704 bytes, no workspace and no split
// count.
// CHECK-LABEL: // ===== kernel wide__attention (attention) =====
// CHECK: // configuration: num_q_heads=4 num_kv_heads=2 qk_head_dim=384 v_head_dim=384 group_size=2
// CHECK-NEXT: causal sliding_window=256 sinks output_gate
// CHECK-NEXT: //   activation bf16, cache fp8_e4m3 (block_size 16)
// CHECK-NEXT: // schedule: block_m=128 block_n=16 num_warps=8 pipeline_stages=1 qk_dim_padded=384 v_dim_padded=384 gqa_pack=2 split_kv_min_keys=256 max_kv_splits=64 target_ctas=264 mma=mma.sync form=cuda_core
// CHECK-NEXT: // This kernel is the reference-quality form
// CHECK: #include "attnc_attention_reference.cuh"
// CHECK: using cache_t = __nv_fp8_e4m3;
// CHECK: static constexpr int kGroupSize = 2;
// CHECK-NEXT: static constexpr int kQkHeadDim = 384;
// CHECK-NEXT: static constexpr int kVHeadDim = 384;
// CHECK-NEXT: static constexpr int kBlockSize = 16;
// CHECK: static constexpr bool kCausal = true;
// CHECK-NEXT: static constexpr int kSlidingWindow = 256;
// CHECK-NEXT: static constexpr int kAttentionChunk = 0;
// CHECK-NEXT: static constexpr bool kSinks = true;
// CHECK-NEXT: static constexpr bool kFp8 = true;
// CHECK: static constexpr bool kGate = true;
// CHECK: static constexpr int kWarps = 8;
// CHECK-NEXT: };
// CHECK: const float *__restrict__ sinks,
// CHECK-NEXT: const float *__restrict__ k_scale,
// CHECK-NEXT: const float *__restrict__ v_scale,
// CHECK-NEXT: const __nv_bfloat16 *__restrict__ gate,
// CHECK-NEXT: __nv_bfloat16 *__restrict__ output,
// CHECK-NEXT: int num_tokens,
// CHECK-NEXT: int num_seqs,
// CHECK-NEXT: int max_blocks_per_seq) {
// CHECK-NEXT: attnc::reference_attention<Config>(
// CHECK-NEXT: query, k_cache, v_cache, k_cache_block_stride, k_cache_token_stride, k_cache_head_stride, v_cache_block_stride, v_cache_token_stride, v_cache_head_stride, block_tables, seq_lens, query_start_loc, sinks, k_scale, v_scale, gate, output, num_tokens, num_seqs, max_blocks_per_seq);
// The CUDA-core form has no tiles, workspace or split count.
// ABSENT-LABEL: // ===== kernel wide__attention (attention) =====
// ABSENT-NOT: workspace
// ABSENT-NOT: num_kv_splits
// ABSENT-NOT: kBlockM
// ABSENT-NOT: kSharedBytes
// CHECK-LABEL: // ===== abi wide__attention =====
// The CUDA-core form takes the caches as views too (fp8: strides in
// one-byte elements).
// CHECK: "name": "v_cache",
// CHECK: "strides": [
// CHECK-NEXT: "v_cache_block_stride",
// CHECK-NEXT: "v_cache_token_stride",
// CHECK-NEXT: "v_cache_head_stride",
// CHECK-NEXT: 1
// CHECK-NEXT: ]
// CHECK: "name": "v_cache_head_stride",
// CHECK-NEXT: "kind": "i64"
// CHECK-NEXT: },
// CHECK-NEXT: {
// CHECK-NEXT: "name": "block_tables",
// CHECK: "name": "gate",
// CHECK: "name": "output",
// CHECK: "name": "max_blocks_per_seq",
// CHECK-NEXT: "kind": "i32"
// CHECK-NEXT: }
// CHECK-NEXT: ],
// CHECK-NEXT: "block": [
// CHECK-NEXT: 256,
// CHECK-NEXT: 1,
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// CHECK-NEXT: "grid": [
// CHECK-NEXT: {
// CHECK-NEXT: "value": "num_tokens",
// CHECK-NEXT: "multiplier": 1,
// CHECK-NEXT: "divisor": 1
// CHECK-NEXT: },
// CHECK-NEXT: 2,
// CHECK-NEXT: 1
// CHECK-NEXT: ],
// The CUDA-core reference form does not wait (griddepcontrol): the ABI ends
// without "programmatic_dependent_launch".
// CHECK-NEXT: "dynamic_shared_memory_bytes": 24704
// CHECK-NEXT: }
// ABSENT-LABEL: // ===== abi wide__attention =====
// ABSENT-NOT: "workspace"
// ABSENT-NOT: "num_kv_splits"
// ABSENT-NOT: "plus"
// ABSENT-NOT: "hints"
func.func @wide(%qkv: tensor<?x4608xbf16>, %slots: tensor<?xi64>, %kc: tensor<?x16x2x384xf8E4M3FN>, %vc: tensor<?x16x2x384xf8E4M3FN>, %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>, %sinks: tensor<4xf32>, %ks: tensor<f32>, %vs: tensor<f32>) -> (tensor<?x4x384xbf16>, tensor<?x16x2x384xf8E4M3FN>, tensor<?x16x2x384xf8E4M3FN>) {
  %q, %k, %v, %g = attn.qkv_split %qkv {num_q_heads = 4, num_kv_heads = 2, qk_head_dim = 384, v_head_dim = 384, gate_layout = #attn.gate_layout<interleaved>} : tensor<?x4608xbf16> -> tensor<?x4x384xbf16>, tensor<?x2x384xbf16>, tensor<?x2x384xbf16>, tensor<?x4x384xbf16>
  %kc2, %vc2 = attn.cache_write %k, %v, %slots into %kc, %vc scales %ks, %vs : tensor<?x2x384xbf16>, tensor<?x2x384xbf16>, tensor<?xi64> into tensor<?x16x2x384xf8E4M3FN>, tensor<?x16x2x384xf8E4M3FN> scales tensor<f32>, tensor<f32>
  %o = attn.paged_attention %q, %kc2, %vc2, %tables, %lens, %starts sinks %sinks scales %ks, %vs {softmax_scale = 0.051 : f64, sliding_window = 256 : i64} : tensor<?x4x384xbf16>, tensor<?x16x2x384xf8E4M3FN>, tensor<?x16x2x384xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> sinks tensor<4xf32> scales tensor<f32>, tensor<f32> -> tensor<?x4x384xbf16>
  %y = attn.output_gate %o, %g : tensor<?x4x384xbf16>
  return %y, %kc2, %vc2 : tensor<?x4x384xbf16>, tensor<?x16x2x384xf8E4M3FN>, tensor<?x16x2x384xf8E4M3FN>
}

// -----

// OLMo-2-like: RMSNorm over the whole projection before a neox rope (32 q
// heads, 8 KV heads, 128): weights [32 x 128 = 4096] and [8 x 128 = 1024]
// in the ABI; the Config says the scope (head, the default, is never
// printed), and there is no bias.
// CHECK-LABEL: // ===== kernel olmo__preprocess (preprocess) =====
// CHECK: //   norm: rms eps=9.9999999999999995e-07 scope=projection{{$}}
// CHECK: static constexpr auto norm_style = attnc::preprocess::NormStyle::rms;
// CHECK-NEXT: static constexpr bool norm_after_rope = false;
// CHECK-NEXT: static constexpr float norm_eps = 9.9999999999999995e-07f;
// CHECK-NEXT: static constexpr auto norm_scope = attnc::preprocess::NormScope::projection;
// CHECK-NEXT: using position_t = long long;
// CHECK: const Config::act_t *__restrict__ q_norm_weight,
// CHECK-NEXT: const Config::act_t *__restrict__ k_norm_weight,
// CHECK-NEXT: Config::act_t *__restrict__ q_out,
// CHECK-LABEL: // ===== abi olmo__preprocess =====
// CHECK: "name": "q_norm_weight",
// CHECK: "shape": [
// CHECK-NEXT: 4096
// CHECK-NEXT: ]
// CHECK: "name": "k_norm_weight",
// CHECK: "shape": [
// CHECK-NEXT: 1024
// CHECK-NEXT: ]
// CHECK-NOT: norm_bias
// CHECK: "name": "q_out",
func.func @olmo(%qkv: tensor<?x6144xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x8x128xbf16>, %vc: tensor<?x16x8x128xbf16>, %qw: tensor<4096xbf16>, %kw: tensor<1024xbf16>) -> (tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 8, qk_head_dim = 128, v_head_dim = 128} : tensor<?x6144xbf16> -> tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>
  %qn = attn.rms_norm %q, %qw {eps = 1.0e-6 : f64, scope = #attn.norm_scope<projection>} : tensor<?x32x128xbf16>, tensor<4096xbf16>
  %kn = attn.rms_norm %k, %kw {eps = 1.0e-6 : f64, scope = #attn.norm_scope<projection>} : tensor<?x8x128xbf16>, tensor<1024xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 128, theta = 5.0e5 : f64} : tensor<?x32x128xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 128, theta = 5.0e5 : f64} : tensor<?x8x128xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64> into tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
  return %qr, %kc2, %vc2 : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
}

// -----

// Phi-like: LayerNorm with a bias, one [80] row for all heads: the biases
// are ABI parameters after the weights, of the weights' shape.
// CHECK-LABEL: // ===== kernel phi__preprocess (preprocess) =====
// CHECK: //   norm: layernorm eps=1.0000000000000001e-05 with bias{{$}}
// CHECK: static constexpr auto norm_style = attnc::preprocess::NormStyle::layernorm;
// CHECK-NEXT: static constexpr bool norm_after_rope = false;
// CHECK-NEXT: static constexpr float norm_eps = 1.0000000000000001e-05f;
// CHECK-NEXT: static constexpr bool has_q_norm_bias = true;
// CHECK-NEXT: static constexpr bool has_k_norm_bias = true;
// CHECK-NEXT: using position_t = long long;
// CHECK: const Config::act_t *__restrict__ q_norm_weight,
// CHECK-NEXT: const Config::act_t *__restrict__ k_norm_weight,
// CHECK-NEXT: const Config::act_t *__restrict__ q_norm_bias,
// CHECK-NEXT: const Config::act_t *__restrict__ k_norm_bias,
// CHECK-NEXT: Config::act_t *__restrict__ q_out,
// CHECK: p.q_norm_bias = q_norm_bias;
// CHECK-LABEL: // ===== abi phi__preprocess =====
// CHECK: "name": "k_norm_bias",
// CHECK: "shape": [
// CHECK-NEXT: 80
// CHECK-NEXT: ]
func.func @phi(%qkv: tensor<?x7680xbf16>, %pos: tensor<?xi64>, %slots: tensor<?xi64>, %kc: tensor<?x16x32x80xbf16>, %vc: tensor<?x16x32x80xbf16>, %qw: tensor<80xbf16>, %kw: tensor<80xbf16>, %qb: tensor<80xbf16>, %kb: tensor<80xbf16>) -> (tensor<?x32x80xbf16>, tensor<?x16x32x80xbf16>, tensor<?x16x32x80xbf16>) {
  %q, %k, %v = attn.qkv_split %qkv {num_q_heads = 32, num_kv_heads = 32, qk_head_dim = 80, v_head_dim = 80} : tensor<?x7680xbf16> -> tensor<?x32x80xbf16>, tensor<?x32x80xbf16>, tensor<?x32x80xbf16>
  %qn = attn.rms_norm %q, %qw bias %qb {eps = 1.0e-5 : f64, style = #attn.norm_style<layernorm>} : tensor<?x32x80xbf16>, tensor<80xbf16> bias tensor<80xbf16>
  %kn = attn.rms_norm %k, %kw bias %kb {eps = 1.0e-5 : f64, style = #attn.norm_style<layernorm>} : tensor<?x32x80xbf16>, tensor<80xbf16> bias tensor<80xbf16>
  %qr = attn.rope %qn, %pos {rotary_dim = 32, theta = 1.0e4 : f64} : tensor<?x32x80xbf16>, tensor<?xi64>
  %kr = attn.rope %kn, %pos {rotary_dim = 32, theta = 1.0e4 : f64} : tensor<?x32x80xbf16>, tensor<?xi64>
  %kc2, %vc2 = attn.cache_write %kr, %v, %slots into %kc, %vc : tensor<?x32x80xbf16>, tensor<?x32x80xbf16>, tensor<?xi64> into tensor<?x16x32x80xbf16>, tensor<?x16x32x80xbf16>
  return %qr, %kc2, %vc2 : tensor<?x32x80xbf16>, tensor<?x16x32x80xbf16>, tensor<?x16x32x80xbf16>
}
