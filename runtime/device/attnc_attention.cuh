//===- attnc_attention.cuh - tensor-core paged attention ---------*- CUDA -*-===//
//
// The tensor-core form of the paged attention kernel (docs/attention-kernel.md):
// mma.sync m16n8k16 tiles, and the wgmma tile (sm_90a) for tiles of more than
// 16 rows where the schedule's mma is "wgmma"; fp32 accumulators. A block owns
// one tile of query rows: `kBlockM` flattened (query token, head) rows of one
// sequence, `kPack` heads of one KV group per token, so the heads of a group
// share every K/V tile read. K/V tiles of `kBlockN` keys stream through a
// cp.async pipeline, gathered page by page through the block table. Split-KV:
// grid z splits a tile's keys, over as many splits as give each at least
// kSplitKvMinKeys keys (the others exit at once; one split writes the output
// itself); each split writes its unnormalised output and softmax state to the
// workspace, and the last split to finish (an atomic count per tile) merges
// them.
//
// The generated source defines `struct Config` and an extern "C" entry point
// that calls paged_attention<Config>. Config's members (all constexpr):
//   act_t, cache_t                       element types (16-bit act, cache act or fp8)
//   kNumQHeads, kNumKvHeads, kGroupSize, kPack
//   kQkHeadDim, kVHeadDim, kQkPad, kVPad, kBlockSize
//   kWarps, kBlockM, kBlockN, kStages, kMaxSplits, kSplitKvMinKeys, kTargetCtas,
//   kWorkspaceTiles
//   kScaleLog2, kSoftmaxScale, kSoftcap, kValueScale    scores and output
//   kCausal, kSlidingWindow (0: none), kAttentionChunk (0: none), kSinks, kFp8, kGate, kGateHeadScalar,
//   kHasSoftcap, kHasValueScale, kWgmma                 features
//   kQVector, kKVector, kVVector        rows copied as whole 16-byte chunks
//   the shared-memory map (attnc::attn::AttentionSharedMap of the plan
//   library): row strides kQStride, kKStride, kVStride (16-bit elements),
//   kOStride (floats), kKLandStride, kVLandStride (bytes), and the byte
//   offsets of every area (see the uses below).
// Absent features are `if constexpr`: they leave no instruction.
//
// Contiguous K/V (attn.varlen_attention, entry varlen_attention<Config>): a
// Config with `kContiguousKv = true` (and kBlockSize 1) reads keys and values
// from ragged [tokens_k, Hkv, D] views instead of pages: key j of sequence s
// is row cu_seqlens_k[s] + j (its "slot"; a one-token block whose block
// stride is the token stride), the sequence's length the difference of two
// cu_seqlens_k entries, and the query rows come from a strided view. Configs
// without the member (the paged kernels) are untouched by it.
//
// TMA K/V (the wgmma form over a 16-bit paged cache of pages of 8 or more
// tokens, entry paged_attention_tma<Config>): a Config with `kTmaKv = true`
// takes tensor maps over the k_cache and v_cache views and loads each K/V
// tile as boxes of one page's rows x 64 head-dim values of one KV head
// (128-byte swizzled, the layout wgmma reads), issued by one thread and
// completing on an mbarrier per buffer. Configs without the member keep the
// cp.async gather.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_ATTENTION_CUH
#define ATTNC_ATTENTION_CUH

#include "attnc_device.cuh"
#include "attnc_attention_rules.cuh"
#include "attnc_wgmma.cuh"

namespace attnc {

/// Whether Config C reads contiguous K/V (its kContiguousKv member; false
/// for Configs without one, the paged kernels).
template <class C, class = void> struct ContiguousKv {
  static constexpr bool value = false;
};
template <class C> struct ContiguousKv<C, decltype(void(C::kContiguousKv))> {
  static constexpr bool value = C::kContiguousKv;
};

/// Whether Config C loads its K/V tiles by tensor maps (its kTmaKv member;
/// false for Configs without one).
template <class C, class = void> struct TmaKv {
  static constexpr bool value = false;
};
template <class C> struct TmaKv<C, decltype(void(C::kTmaKv))> {
  static constexpr bool value = C::kTmaKv;
};

/// The key rows of one sequence in contiguous K/V: key j is row start + j.
struct ContiguousKeys {
  int start;
};

/// The kernel arguments only contiguous K/V has: the sequence's first key
/// row and the query view's strides (elements). Empty otherwise, so that
/// the paged kernels' arguments (and code) stay as they were.
template <bool kContiguous> struct ContiguousArgs {};
template <> struct ContiguousArgs<true> {
  int kv_start;
  int q_token_stride, q_head_stride;
};

/// The kernel arguments only TMA K/V has: the caches' tensor maps (kernel
/// parameters, by address). Empty otherwise.
template <bool kTma> struct TmaArgs {};
template <> struct TmaArgs<true> {
  const attnc::TensorMap *k_map, *v_map;
};

template <class C> struct PagedAttention {
  using act_t = typename C::act_t;
  using cache_t = typename C::cache_t;
  static constexpr int kNumQHeads = C::kNumQHeads, kNumKvHeads = C::kNumKvHeads;
  static constexpr int kGroupSize = C::kGroupSize;
  static constexpr int kPack = C::kPack;  // query heads of one KV group per tile row group
  static constexpr int kPacksPerGroup = kGroupSize / kPack;
  static constexpr int kQkHeadDim = C::kQkHeadDim, kVHeadDim = C::kVHeadDim;
  static constexpr int kQkPad = C::kQkPad, kVPad = C::kVPad;
  static constexpr int kBlockSize = C::kBlockSize;
  static constexpr int kWarps = C::kWarps;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBlockM = C::kBlockM, kBlockN = C::kBlockN, kStages = C::kStages;
  static constexpr int kMaxSplits = C::kMaxSplits, kTargetCtas = C::kTargetCtas;
  static constexpr int kWorkspaceTiles = C::kWorkspaceTiles;
  // Batches of up to kSeqLookupThreads * kThreads sequences find a tile's
  // owner with one parallel pass (else a binary search).
  static constexpr int kSeqLookupThreads = 4;
  static constexpr int kQStride = C::kQStride, kKStride = C::kKStride;
  static constexpr int kVStride = C::kVStride, kOStride = C::kOStride;
  static constexpr bool kWiden = C::kFp8;  // fp8 tiles land raw, then widen to act_t
  static constexpr bool kQVector = C::kQVector, kKVector = C::kKVector, kVVector = C::kVVector;
  static constexpr int kCacheChunk = 16 / int(sizeof(cache_t));  // elements per chunk
  static constexpr bool kContiguous = ContiguousKv<C>::value;
  static_assert(!kContiguous || kBlockSize == 1, "contiguous K/V: one-token blocks");
  static constexpr bool kTma = TmaKv<C>::value;
  static_assert(!kTma || (C::kWgmma && !kContiguous && !C::kFp8 && kBlockSize >= 8 && kQkHeadDim % 8 == 0 &&
                          kVHeadDim % 8 == 0),
                "TMA K/V: the wgmma form of a 16-bit paged cache, pages of 8+ keys, rows of whole 16-byte chunks");
  // A TMA K/V tile's keys come as kBoxes boxes of kBoxRows rows of one page
  // (x 64 head-dim values) per 64-column block.
  static constexpr int kBoxRows = kBlockSize < kBlockN ? kBlockSize : kBlockN;
  static constexpr int kBoxes = kBlockN / kBoxRows;

  struct Args : ContiguousArgs<kContiguous>, TmaArgs<kTma> {
    const act_t *__restrict__ query;
    const cache_t *__restrict__ k_cache;
    const cache_t *__restrict__ v_cache;
    attnc::CacheStrides k_strides, v_strides;  // in elements (engine-owned views)
    const int *__restrict__ block_tables;
    const float *__restrict__ sinks;  // kSinks only
    const act_t *__restrict__ gate;   // kGate only
    act_t *__restrict__ output;
    float *__restrict__ workspace;
    int max_blocks_per_seq;
    float score_scale;  // log2 units per raw q.k (times k_scale for fp8)
    float out_scale;    // value_scale (times v_scale for fp8)
  };

  /// Contiguous K/V: the element offset of the query row of flattened tile
  /// row f (token q_start + f / kPack, head head0 + f % kPack) in the query
  /// view. (The paged form writes its expression out at each use: this
  /// helper in its path, even inlined, moved its register allocation.)
  static __device__ __forceinline__ long long query_view_offset(const Args &a, int q_start, int f, int head0) {
    return (long long)(q_start + f / kPack) * a.q_token_stride + (long long)(head0 + f % kPack) * a.q_head_stride;
  }

  /// Where sequence `seq`'s keys are: its block-table row, or with
  /// contiguous K/V its first key row.
  static __device__ __forceinline__ auto key_rows(const Args &a, int seq) {
    if constexpr (kContiguous)
      return ContiguousKeys{a.kv_start};
    else
      return a.block_tables + (long long)seq * a.max_blocks_per_seq;
  }

  /// Which keys row `pos` (a query position) attends: [begin, end)
  /// (attnc_attention_rules.cuh, shared with the warp-specialised form).
  static __device__ __forceinline__ int row_key_begin(int pos, int kv_len) { return KeyRange<C>::begin(pos, kv_len); }
  static __device__ __forceinline__ int row_key_end(int pos, int kv_len) { return KeyRange<C>::end(pos, kv_len); }

  /// Copies the rows of one K or V tile whose 16-byte chunks tile the row
  /// (kDim * sizeof(cache_t) a multiple of 16). Each thread keeps one chunk
  /// column and walks the keys kThreads / kChunks apart, so the per-copy work
  /// is a slot read, the row's offset (a shift and two multiply-adds) and the
  /// copy (keys whose slot is -1 are zero-filled and read nothing).
  template <int kDim, int kRowBytes>
  static __device__ __forceinline__ void copy_rows(const cache_t *cache, const attnc::CacheStrides &strides,
                                                   int kv_head, const int *slots, unsigned char *dst) {
    if (is_canonical<kDim>(strides))
      copy_rows_impl<kDim, kRowBytes, true>(cache, strides, kv_head, slots, dst);
    else
      copy_rows_strided<kDim, kRowBytes>(cache, strides, kv_head, slots, dst);
  }
  /// The engine-view form, out of line: inlined beside the dense form it
  /// cost the dense form ~15 % of decode at B8 (H200), the two unrolled copy
  /// loops competing in the pipelined tile loop.
  template <int kDim, int kRowBytes>
  static __device__ __noinline__ void copy_rows_strided(const cache_t *cache, attnc::CacheStrides strides,
                                                        int kv_head, const int *slots, unsigned char *dst) {
    copy_rows_impl<kDim, kRowBytes, false>(cache, strides, kv_head, slots, dst);
  }

  /// Whether a cache view is the dense [num_blocks, kBlockSize, kNumKvHeads,
  /// kDim] layout. The copy loops have a form for it whose row offsets are
  /// compile-time multiples (the runtime strides' multiply-adds per key cost
  /// decode at small batch ~16 %, measured on the H200); the test is
  /// uniform across the CTA, made once per tile.
  template <int kDim>
  static __device__ __forceinline__ bool is_canonical(const attnc::CacheStrides &s) {
    return s.head == kDim && s.token == kNumKvHeads * kDim && s.block == kBlockSize * kNumKvHeads * kDim;
  }
  /// The element offsets of kv head `kv_head` and of cache slot `slot`.
  template <int kDim, bool kCanonical>
  static __device__ __forceinline__ long long head_offset(const attnc::CacheStrides &s, int kv_head) {
    if constexpr (kCanonical) return (long long)kv_head * kDim;
    else return attnc::cache_head_offset(s, kv_head);
  }
  template <int kDim, bool kCanonical>
  static __device__ __forceinline__ long long slot_offset(const attnc::CacheStrides &s, unsigned slot) {
    if constexpr (kCanonical) return (long long)slot * (kNumKvHeads * kDim);
    else return attnc::cache_slot_offset<kBlockSize>(s, slot);
  }

  template <int kDim, int kRowBytes, bool kCanonical>
  static __device__ __forceinline__ void copy_rows_impl(const cache_t *cache, const attnc::CacheStrides &strides,
                                                        int kv_head, const int *slots, unsigned char *dst) {
    constexpr int kChunks = kDim >= kCacheChunk ? kDim / kCacheChunk : 1;  // (checked even when unused)
    constexpr int kKeysPerPass = kThreads / kChunks;
    constexpr int kPasses = (kBlockN + kKeysPerPass - 1) / kKeysPerPass;
    const int chunk = threadIdx.x % kChunks, key0 = threadIdx.x / kChunks;
    if (key0 >= kKeysPerPass) return;  // the kThreads % kChunks spare threads
    const cache_t *src = cache + head_offset<kDim, kCanonical>(strides, kv_head) + chunk * kCacheChunk;
    unsigned char *out = dst + key0 * kRowBytes + chunk * 16;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const int key = key0 + p * kKeysPerPass;
      if (kBlockN % kKeysPerPass != 0 && key >= kBlockN) break;
      const int slot = slots[key];
      attnc::cp_async_16(out + p * kKeysPerPass * kRowBytes,
                         src + slot_offset<kDim, kCanonical>(strides, (unsigned)max(slot, 0)), slot >= 0);
    }
  }

  /// Issue the copies of one K (V) tile into rows of its landing layout (keys
  /// whose slot is -1 are zero-filled).
  static __device__ __forceinline__ void load_k_tile(const Args &a, int kv_head, const int *slots,
                                                     unsigned char *dst) {
    constexpr int kRowBytes = C::kKLandStride;
    if constexpr (kKVector) {
      copy_rows<kQkHeadDim, kRowBytes>(a.k_cache, a.k_strides, kv_head, slots, dst);
    } else {
      for (int c = threadIdx.x; c < kBlockN * kQkHeadDim; c += kThreads) {
        const int key = c / kQkHeadDim, col = c % kQkHeadDim;
        const int slot = slots[key];
        reinterpret_cast<cache_t *>(dst + key * kRowBytes)[col] =
            slot >= 0 ? a.k_cache[attnc::cache_slot_offset<kBlockSize>(a.k_strides, (unsigned)slot) +
                                  attnc::cache_head_offset(a.k_strides, kv_head) + col]
                      : attnc::from_float<cache_t>(0.0f);
      }
    }
  }
  static __device__ __forceinline__ void load_v_tile(const Args &a, int kv_head, const int *slots,
                                                     unsigned char *dst) {
    constexpr int kRowBytes = C::kVLandStride;
    if constexpr (kVVector) {
      copy_rows<kVHeadDim, kRowBytes>(a.v_cache, a.v_strides, kv_head, slots, dst);
    } else {
      for (int c = threadIdx.x; c < kBlockN * kVHeadDim; c += kThreads) {
        const int key = c / kVHeadDim, col = c % kVHeadDim;
        const int slot = slots[key];
        reinterpret_cast<cache_t *>(dst + key * kRowBytes)[col] =
            slot >= 0 ? a.v_cache[attnc::cache_slot_offset<kBlockSize>(a.v_strides, (unsigned)slot) +
                                  attnc::cache_head_offset(a.v_strides, kv_head) + col]
                      : attnc::from_float<cache_t>(0.0f);
      }
    }
  }

  /// Widens a raw fp8 tile (rows of `raw_stride` bytes) into act_t rows of
  /// `stride` elements, `cols` (a multiple of 8) columns; exact for e4m3.
  static __device__ __forceinline__ void widen_tile(const unsigned char *raw, int raw_stride,
                                                    act_t *dst, int stride, int cols) {
    const int chunks = cols / 8;
    for (int c = threadIdx.x; c < kBlockN * chunks; c += kThreads) {
      const int key = c / chunks, col = c % chunks * 8;
      const uint2 bytes = *reinterpret_cast<const uint2 *>(raw + key * raw_stride + col);
      const __nv_fp8_e4m3 *e = reinterpret_cast<const __nv_fp8_e4m3 *>(&bytes);
      uint4 out;
      out.x = attnc::pack2<act_t>(float(e[0]), float(e[1]));
      out.y = attnc::pack2<act_t>(float(e[2]), float(e[3]));
      out.z = attnc::pack2<act_t>(float(e[4]), float(e[5]));
      out.w = attnc::pack2<act_t>(float(e[6]), float(e[7]));
      *reinterpret_cast<uint4 *>(dst + key * stride + col) = out;
    }
  }

  /// The slot of key `key` of a sequence, or -1 past its end.
  static __device__ __forceinline__ int key_slot(const int *table, int key, int kv_len) {
    return key < kv_len ? table[key / kBlockSize] * kBlockSize + key % kBlockSize : -1;
  }
  /// Contiguous K/V: the key's row, or -1 past the sequence end.
  static __device__ __forceinline__ int key_slot(ContiguousKeys rows, int key, int kv_len) {
    return key < kv_len ? rows.start + key : -1;
  }

  /// The finished value of output element (row, d) from its unnormalised
  /// accumulator `acc` and the row's softmax max `m` (log2 units) and sum `l`.
  static __device__ __forceinline__ void write_output(const Args &a, float acc, float m, float l,
                                                      int token, int head, int d) {
    float result;
    if constexpr (C::kSinks) {
      // The sink adds one learned logit to the denominator only.
      const float sink = a.sinks[head] * 1.4426950408889634f;
      const float m_all = fmaxf(m, sink);
      const float weight = m == -attnc::infinity() ? 0.0f : exp2f(m - m_all);
      result = acc * weight / (l * weight + exp2f(sink - m_all));
    } else {
      // A row that saw no key (m = -inf) is 0; the largest logit contributes
      // exp2(0) = 1, so l >= 1 otherwise, and a NaN anywhere stays NaN.
      result = m == -attnc::infinity() ? 0.0f : acc / l;
    }
    if constexpr (C::kHasValueScale || C::kFp8)
      result *= a.out_scale;
    const long long out = ((long long)token * kNumQHeads + head) * kVHeadDim + d;
    if constexpr (C::kGate)
      result *= attnc::sigmoid(attnc::to_float(
          a.gate[C::kGateHeadScalar ? (long long)token * kNumQHeads + head : out]));
    a.output[out] = attnc::from_float<act_t>(result);
  }

  /// S += Q K^T for the warp's MT x 16 rows and kNPerWarp keys of the K tile
  /// k_t (rows of kKStride), Q from registers (qf) or shared memory (q_s).
  template <int MT, int kNPerWarp, bool kQInRegisters, int kQf>
  static __device__ __forceinline__ void scores(float (&s)[MT][kNPerWarp / 8][4], const unsigned (&qf)[kQf][4],
                                                const act_t *q_s, const act_t *k_t, int q_row0, int key0) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int n = 0; n < kNPerWarp / 8; ++n)
        s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < kQkPad / 16; ++ks) {
      unsigned qa[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        if constexpr (kQInRegisters) {
#pragma unroll
          for (int j = 0; j < 4; ++j) qa[mt][j] = qf[ks][j];
        } else {
          attnc::ldmatrix_x4(qa[mt], q_s + (q_row0 + mt * 16 + lane % 8 + (lane / 8) % 2 * 8) * kQStride + ks * 16 + lane / 16 * 8);
        }
      }
#pragma unroll
      for (int np = 0; np < kNPerWarp / 16; ++np) {
        unsigned kb[4];
        attnc::ldmatrix_x4(kb, k_t + (key0 + np * 16 + lane % 8 + lane / 16 * 8) * kKStride + ks * 16 + (lane / 8) % 2 * 8);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          attnc::mma_16816<act_t>(s[mt][2 * np], qa[mt], kb[0], kb[1]);
          attnc::mma_16816<act_t>(s[mt][2 * np + 1], qa[mt], kb[2], kb[3]);
        }
      }
    }
  }

  /// O += P V for the warp's rows; the score accumulators are P's A fragments.
  template <int MT, int kNPerWarp>
  static __device__ __forceinline__ void accumulate(float (&o)[MT][kVPad / 8][4], const float (&s)[MT][kNPerWarp / 8][4],
                                                    const act_t *v_t, int key0) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int kk = 0; kk < kNPerWarp / 16; ++kk) {
      unsigned pa[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        pa[mt][0] = attnc::pack2<act_t>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        pa[mt][1] = attnc::pack2<act_t>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        pa[mt][2] = attnc::pack2<act_t>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        pa[mt][3] = attnc::pack2<act_t>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < kVPad / 16; ++dp) {
        unsigned vb[4];
        attnc::ldmatrix_x4_trans(vb, v_t + (key0 + kk * 16 + lane % 8 + (lane / 8) % 2 * 8) * kVStride + dp * 16 + lane / 16 * 8);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          attnc::mma_16816<act_t>(o[mt][2 * dp], pa[mt], vb[0], vb[1]);
          attnc::mma_16816<act_t>(o[mt][2 * dp + 1], pa[mt], vb[2], vb[3]);
        }
      }
    }
  }

  /// Masks and exponentiates one tile's scores (online softmax): on return s
  /// holds P, m the running max (in the scores' units) and l the thread's
  /// partial sums; O is rescaled to the new max.
  template <int MT, int kNTiles>
  static __device__ __forceinline__ void softmax_step(float (&s)[MT][kNTiles][4], float (&m)[MT][2], float (&l)[MT][2],
                                                      float (&o)[MT][kVPad / 8][4], const Args &a,
                                                      const int (&row_begin)[MT][2], const int (&row_end)[MT][2],
                                                      bool masked, int key0) {
    const int t = threadIdx.x % 4;
    float scale;
    if constexpr (C::kHasSoftcap) {
      // Soft-capped scores are put in log2 units first (tanh does not commute
      // with the scale), so the exponent's scale is 1.
      scale = 1.0f;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < kNTiles; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            s[mt][n][e] = C::kSoftcap * tanhf(s[mt][n][e] * a.score_scale) * 1.4426950408889634f;
    } else {
      // The scores stay raw: the softmax scale (log2 units) folds into the
      // exponent's multiply-add.
      scale = a.score_scale;
    }
    if (masked) {  // keys outside a row's range are -inf
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < kNTiles; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = key0 + n * 8 + 2 * t + (e & 1);
            if (key < row_begin[mt][e / 2] || key >= row_end[mt][e / 2]) s[mt][n][e] = -attnc::infinity();
          }
    }
    float correction[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        // Pairwise (tree) reductions: short dependency chains.
        float mxs[kNTiles];
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) mxs[n] = fmaxf(s[mt][n][2 * i], s[mt][n][2 * i + 1]);
#pragma unroll
        for (int w = 1; w < kNTiles; w *= 2)
#pragma unroll
          for (int n = 0; n + w < kNTiles; n += 2 * w) mxs[n] = fmaxf(mxs[n], mxs[n + w]);
        float mx = mxs[0];
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(m[mt][i], mx);
        const float m_scaled = m_new == -attnc::infinity() ? 0.0f : m_new * scale;
        correction[mt][i] = attnc::fast_exp2(m[mt][i] * scale - m_scaled);
        m[mt][i] = m_new;
        float sums[kNTiles];
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) {
          s[mt][n][2 * i] = attnc::fast_exp2(fmaf(s[mt][n][2 * i], scale, -m_scaled));
          s[mt][n][2 * i + 1] = attnc::fast_exp2(fmaf(s[mt][n][2 * i + 1], scale, -m_scaled));
          sums[n] = s[mt][n][2 * i] + s[mt][n][2 * i + 1];
        }
#pragma unroll
        for (int w = 1; w < kNTiles; w *= 2)
#pragma unroll
          for (int n = 0; n + w < kNTiles; n += 2 * w) sums[n] += sums[n + w];
        l[mt][i] = l[mt][i] * correction[mt][i] + sums[0];
      }
    // Unconditional rescale: straight-line code from the exponentials into
    // the P V products lets the compiler interleave them.
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int d = 0; d < kVPad / 8; ++d) {
        o[mt][d][0] *= correction[mt][0];
        o[mt][d][1] *= correction[mt][0];
        o[mt][d][2] *= correction[mt][1];
        o[mt][d][3] *= correction[mt][1];
      }
  }

  /// The factor that puts a row's running max m in log2 units (soft-capped
  /// scores are in those units already).
  static __device__ __forceinline__ float m_scale(const Args &a) {
    if constexpr (C::kHasSoftcap)
      return 1.0f;
    else
      return a.score_scale;
  }

  /// NaN in every output element of the tile's rows (written by split 0): what
  /// a launch the kernel cannot serve produces instead of a wrong result.
  static __device__ __forceinline__ void poison_rows(const Args &a, int rows, int row0, int q_start, int head0) {
    if (blockIdx.z != 0)
      return;
    for (int e = threadIdx.x; e < rows * kVHeadDim; e += kThreads) {
      const int r = e / kVHeadDim, d = e % kVHeadDim, f = row0 + r;
      a.output[((long long)(q_start + f / kPack) * kNumQHeads + head0 + f % kPack) * kVHeadDim + d] =
          attnc::from_float<act_t>(__int_as_float(0x7fc00000));
    }
  }

  /// The key tiles of this block's split of a tile of `rows` rows from row0
  /// (queries at positions first_pos + row / kPack), and the keys every row of
  /// the tile attends, [full_begin, full_end), where no mask is needed.
  /// `active`: the splits that take tiles, at most gridDim.z and no more
  /// than give each split_kv_min_keys (kSplitMinTiles tiles): a short
  /// sequence in a launch planned for long ones runs on fewer splits (one:
  /// no merge at all), and the blocks of the other splits exit at once.
  /// Tiles start at a multiple of kBlockN (first_tile, for the tile paths
  /// that address whole pages), or with `from_first_key` at the first key
  /// any row attends (the decode ring, which looks up every key's slot): a
  /// sliding window then reads no key, and no page, before the window.
  /// first_key is the first key of the split's first tile either way.
  struct SplitKeys {
    int full_begin, full_end, first_tile, first_key, tiles, active;
  };
  static constexpr int kSplitMinTiles = C::kSplitKvMinKeys > kBlockN ? C::kSplitKvMinKeys / kBlockN : 1;
  static __device__ __forceinline__ SplitKeys split_keys(int row0, int rows, int first_pos, int kv_len,
                                                         bool from_first_key) {
    const int pos_first = first_pos + row0 / kPack;
    const int pos_last = first_pos + (row0 + rows - 1) / kPack;
    const int key_begin = row_key_begin(pos_first, kv_len);
    const int key_end = row_key_end(pos_last, kv_len);
    const int tile_first = key_begin / kBlockN;
    const int base = from_first_key ? key_begin : tile_first * kBlockN;
    const int tiles = key_end > key_begin ? (key_end - base + kBlockN - 1) / kBlockN : 0;
    // Balanced over the active splits: the first tiles % splits take one
    // tile more; the inactive ones none.
    const int splits = max(1, min((int)gridDim.z, (tiles + kSplitMinTiles - 1) / kSplitMinTiles));
    const int split = blockIdx.z;
    SplitKeys keys;
    keys.active = splits;
    keys.full_begin = row_key_begin(pos_last, kv_len);
    keys.full_end = row_key_end(pos_first, kv_len);
    keys.tiles = split < splits ? tiles / splits + (split < tiles % splits ? 1 : 0) : 0;
    const int skipped = split * (tiles / splits) + min(split, tiles % splits);
    keys.first_tile = tile_first + skipped;
    keys.first_key = base + skipped * kBlockN;
    return keys;
  }

  /// Stores a warp's softmax state after the key loop into the merge area:
  /// o [WN][kTileRows][kOStride], then m (times m_scale: log2 units) and l
  /// per (WN, row); the thread's rows are row_base + mt * row_step + lane / 4
  /// (+ 8).
  template <int MT, int kTileRows>
  static __device__ __forceinline__ void store_state(const float (&o)[MT][kVPad / 8][4], const float (&m)[MT][2],
                                                     const float (&l)[MT][2], unsigned char *smem, int wn,
                                                     int row_base, int row_step, float m_scale) {
    float *o_s = reinterpret_cast<float *>(smem);
    float *m_s = reinterpret_cast<float *>(smem + C::kMergeMOffset);
    float *l_s = reinterpret_cast<float *>(smem + C::kMergeLOffset);
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const float mi = m[mt][i] * m_scale;
        float li = l[mt][i];
        li += __shfl_xor_sync(0xffffffffu, li, 1);
        li += __shfl_xor_sync(0xffffffffu, li, 2);
        const int r = row_base + mt * row_step + g + 8 * i;
#pragma unroll
        for (int d = 0; d < kVPad / 8; ++d)
          *reinterpret_cast<float2 *>(o_s + (wn * kTileRows + r) * kOStride + d * 8 + 2 * t) =
              make_float2(o[mt][d][2 * i], o[mt][d][2 * i + 1]);
        if (t == 0) {
          m_s[wn * kTileRows + r] = mi;
          l_s[wn * kTileRows + r] = li;
        }
      }
  }

  /// One tile of `rows` query rows (flattened (token, head) rows row0.. of the
  /// sequence): WM warps along the rows with MT m16 tiles each, kWarps / WM
  /// warps along the keys of every K/V tile.
  ///  - WM = 1 (at most 16 rows, decode): each warp takes a quarter of every
  ///    K/V tile; whole K/V tiles are double-buffered (kStages), the next
  ///    one loading while this one is used.
  ///  - WM = kWarps, MT = 2 (up to kBlockM rows): one K and one V buffer,
  ///    staggered as in FlashAttention-2: V_j loads while S_j = Q K_j^T and
  ///    its softmax run, K_{j+1} while O += P_j V_j runs.
  template <int WM, int MT>
  static __device__ __forceinline__ void attention_tile(const Args &a, int seq, int q_start, int q_len,
                                                        int kv_len, int row0, int rows, const SplitKeys &keys,
                                                        unsigned char *smem) {
    constexpr int WN = kWarps / WM;
    constexpr int kTileRows = 16 * MT * WM;
    constexpr int kNPerWarp = kBlockN / WN;
    constexpr int kNTiles = kNPerWarp / 8;
    constexpr bool kStaggered = WM > 1;
    static_assert(kTileRows <= kBlockM, "tile rows");
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp % WM, wn = warp / WM;
    const int g = lane / 4;
    const int kv_head = blockIdx.y / kPacksPerGroup;
    const int head0 = kv_head * kGroupSize + blockIdx.y % kPacksPerGroup * kPack;
    const int first_pos = kv_len - q_len;  // the queries are the last q_len positions

    act_t *q_s = reinterpret_cast<act_t *>(smem);
    int *slot_s = reinterpret_cast<int *>(smem + C::kSlotOffset);  // [2][kBlockN]

    // Padded q/k head-dim columns must be 0 (they enter every dot product);
    // rows past `rows` and V's padding only reach output rows and columns
    // that are never written, and keys past the end are zero-filled per tile.
    if constexpr (kQkHeadDim != kQkPad || !kQVector || !kKVector) {
      for (int i = tid; i < C::kSlotOffset / 16; i += kThreads)
        reinterpret_cast<uint4 *>(smem)[i] = make_uint4(0, 0, 0, 0);
      __syncthreads();
    }

    // Q rows of this tile (committed with the first K/V copies).
    if constexpr (kQVector) {
      constexpr int kChunks = kQkHeadDim >= 8 ? kQkHeadDim / 8 : 1;
      for (int c = tid; c < rows * kChunks; c += kThreads) {
        const int r = c / kChunks, col = c % kChunks * 8;
        const int f = row0 + r;
        const act_t *src;
        if constexpr (kContiguous)
          src = a.query + query_view_offset(a, q_start, f, head0) + col;
        else
          src = a.query + ((long long)(q_start + f / kPack) * kNumQHeads + head0 + f % kPack) * kQkHeadDim + col;
        attnc::cp_async_16(q_s + r * kQStride + col, src, true);
      }
    } else {
      for (int c = tid; c < rows * kQkHeadDim; c += kThreads) {
        const int r = c / kQkHeadDim, col = c % kQkHeadDim;
        const int f = row0 + r;
        if constexpr (kContiguous)
          q_s[r * kQStride + col] = a.query[query_view_offset(a, q_start, f, head0) + col];
        else
          q_s[r * kQStride + col] = a.query[((long long)(q_start + f / kPack) * kNumQHeads + head0 + f % kPack) * kQkHeadDim + col];
      }
    }

    // This split's key tiles, and the keys every row attends (no mask).
    const int full_begin = keys.full_begin, full_end = keys.full_end;
    const int my_first = keys.first_tile, my_tiles = keys.tiles;

    // The rows this thread holds in the MMA layout, and their key ranges.
    const int q_row0 = wm * 16 * MT;
    int row_begin[MT][2], row_end[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = q_row0 + mt * 16 + g + 8 * i;
        const int pos = first_pos + (row0 + r) / kPack;
        row_begin[mt][i] = r < rows ? row_key_begin(pos, kv_len) : 0;
        row_end[mt][i] = r < rows ? row_key_end(pos, kv_len) : 0;
      }

    float o[MT][kVPad / 8][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int d = 0; d < kVPad / 8; ++d)
        o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.0f;
    float m[MT][2], l[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
      m[mt][0] = m[mt][1] = -attnc::infinity(), l[mt][0] = l[mt][1] = 0.0f;
    const int key0 = wn * kNPerWarp;  // this warp's keys within a tile
    const auto table = key_rows(a, seq);
    float s[MT][kNTiles][4];

    if constexpr (kStaggered) {
      // The Q tile, then one K and one V buffer, then the fp8 landing buffers.
      act_t *k_t = reinterpret_cast<act_t *>(smem + C::kStaggeredKOffset);
      act_t *v_t = reinterpret_cast<act_t *>(smem + C::kStaggeredVOffset);
      unsigned char *k_land = smem + C::kStaggeredKLandOffset;
      unsigned char *v_land = smem + C::kStaggeredVLandOffset;
      const unsigned qf[1][4] = {{0u, 0u, 0u, 0u}};  // Q stays in shared memory
      if (tid < kBlockN)
        slot_s[tid] = my_tiles > 0 ? key_slot(table, my_first * kBlockN + tid, kv_len) : -1;
      __syncthreads();
      if (my_tiles > 0)
        load_k_tile(a, kv_head, slot_s, k_land);
      attnc::cp_async_commit();
      for (int it = 0; it < my_tiles; ++it) {
        const int *slots = slot_s + it % 2 * kBlockN;
        attnc::cp_async_wait<0>();
        __syncthreads();  // K_it (and Q) landed; every warp is done with V_{it-1}
        load_v_tile(a, kv_head, slots, v_land);
        attnc::cp_async_commit();
        if (tid < kBlockN)
          slot_s[(it + 1) % 2 * kBlockN + tid] =
              it + 1 < my_tiles ? key_slot(table, (my_first + it + 1) * kBlockN + tid, kv_len) : -1;
        if constexpr (kWiden) {
          widen_tile(k_land, C::kKLandStride, k_t, kKStride, kQkPad);
          __syncthreads();
        }
        const int tile_key = (my_first + it) * kBlockN;
        scores<MT, kNPerWarp, false, 1>(s, qf, q_s, k_t, q_row0, key0);
        softmax_step<MT, kNTiles>(s, m, l, o, a, row_begin, row_end,
                                  tile_key < full_begin || tile_key + kBlockN > full_end, tile_key + key0);
        attnc::cp_async_wait<0>();
        __syncthreads();  // V_it landed; every warp is done with K_it
        if (it + 1 < my_tiles)
          load_k_tile(a, kv_head, slot_s + (it + 1) % 2 * kBlockN, k_land);
        attnc::cp_async_commit();
        if constexpr (kWiden) {
          widen_tile(v_land, C::kVLandStride, v_t, kVStride, kVPad);
          __syncthreads();
        }
        accumulate<MT, kNPerWarp>(o, s, v_t, key0);
      }
    } else {
      // A 16-row Q tile, then kStages K/V tiles as landed, then the widened pair.
      unsigned char *kv = smem + C::kRingOffset;
      const int my_key0 = keys.first_key;
      if (tid < kBlockN) {
#pragma unroll
        for (int st = 0; st < kStages; ++st)
          slot_s[st * kBlockN + tid] =
              st < my_tiles ? key_slot(table, my_key0 + st * kBlockN + tid, kv_len) : -1;
      }
      __syncthreads();
      attnc::cp_async_commit();  // the Q group
      // Every stage is filled before the loop, and a stage is refilled as soon
      // as its tile is used: while the block waits for tile it, the tiles up
      // to it + kStages - 1 are in flight (kStages tiles, not kStages - 1).
#pragma unroll
      for (int st = 0; st < kStages; ++st) {
        if (st < my_tiles) {
          unsigned char *stage = kv + st * C::kRingStageBytes;
          load_k_tile(a, kv_head, slot_s + st * kBlockN, stage);
          load_v_tile(a, kv_head, slot_s + st * kBlockN, stage + C::kRingVOffset);
        }
        attnc::cp_async_commit();
      }
      // The warp's Q rows as A fragments, held for the whole key loop.
      attnc::cp_async_wait<kStages>();
      __syncthreads();
      unsigned qf[kQkPad / 16][4];
#pragma unroll
      for (int ks = 0; ks < kQkPad / 16; ++ks)
        attnc::ldmatrix_x4(qf[ks], q_s + (lane % 8 + (lane / 8) % 2 * 8) * kQStride + ks * 16 + lane / 16 * 8);
      for (int it = 0; it < my_tiles; ++it) {
        attnc::cp_async_wait<kStages - 1>();
        __syncthreads();  // tile it landed
        // The slots of tile it + kStages: loaded now, stored after this tile's
        // math, so the block-table read overlaps it.
        int refill_slot = -1;
        if (tid < kBlockN && it + kStages < my_tiles)
          refill_slot = key_slot(table, my_key0 + (it + kStages) * kBlockN + tid, kv_len);
        unsigned char *stage = kv + it % kStages * C::kRingStageBytes;
        const act_t *k_t = reinterpret_cast<const act_t *>(stage);
        const act_t *v_t = reinterpret_cast<const act_t *>(stage + C::kRingVOffset);
        if constexpr (kWiden) {
          act_t *k_w = reinterpret_cast<act_t *>(smem + C::kRingWidenKOffset);
          act_t *v_w = reinterpret_cast<act_t *>(smem + C::kRingWidenVOffset);
          widen_tile(stage, C::kKLandStride, k_w, kKStride, kQkPad);
          widen_tile(stage + C::kRingVOffset, C::kVLandStride, v_w, kVStride, kVPad);
          __syncthreads();
          k_t = k_w;
          v_t = v_w;
        }
        const int tile_key = my_key0 + it * kBlockN;
        scores<MT, kNPerWarp, true, kQkPad / 16>(s, qf, q_s, k_t, 0, key0);
        softmax_step<MT, kNTiles>(s, m, l, o, a, row_begin, row_end,
                                  tile_key < full_begin || tile_key + kBlockN > full_end, tile_key + key0);
        accumulate<MT, kNPerWarp>(o, s, v_t, key0);
        if (tid < kBlockN)
          slot_s[it % kStages * kBlockN + tid] = refill_slot;
        __syncthreads();  // every warp is done with tile it's stage
        if (it + kStages < my_tiles) {
          load_k_tile(a, kv_head, slot_s + it % kStages * kBlockN, stage);
          load_v_tile(a, kv_head, slot_s + it % kStages * kBlockN, stage + C::kRingVOffset);
        }
        attnc::cp_async_commit();
      }
    }
    attnc::cp_async_wait<0>();
    __syncthreads();  // Q and the K/V buffers become the merge area
    store_state<MT, kTileRows>(o, m, l, smem, wn, q_row0, 16, m_scale(a));
    tile_epilogue<WN, kTileRows>(a, smem, rows, row0, q_start, head0, keys.active);
  }

  /// After the key loop: merges the warps' states (WN of them along the keys)
  /// into rows, then writes the output, or with split-KV this split's partial
  /// state, the last split merging them all.
  template <int WN, int kTileRows>
  static __device__ __forceinline__ void tile_epilogue(const Args &a, unsigned char *smem, int rows, int row0,
                                                       int q_start, int head0, int active) {
    const int tid = threadIdx.x;
    float *o_s = reinterpret_cast<float *>(smem);
    float *m_s = reinterpret_cast<float *>(smem + C::kMergeMOffset);
    float *l_s = reinterpret_cast<float *>(smem + C::kMergeLOffset);
    float *w_s = reinterpret_cast<float *>(smem + C::kMergeWeightOffset);  // [WN][kTileRows]
    float *row_m = reinterpret_cast<float *>(smem + C::kMergeRowMOffset);   // [kTileRows]
    float *row_l = reinterpret_cast<float *>(smem + C::kMergeRowLOffset);
    __syncthreads();
    for (int r = tid; r < kTileRows; r += kThreads) {
      float mm = -attnc::infinity();
#pragma unroll
      for (int w = 0; w < WN; ++w) mm = fmaxf(mm, m_s[w * kTileRows + r]);
      const float mu = mm == -attnc::infinity() ? 0.0f : mm;
      float ll = 0.0f;
#pragma unroll
      for (int w = 0; w < WN; ++w) {
        const float weight = exp2f(m_s[w * kTileRows + r] - mu);
        w_s[w * kTileRows + r] = weight;
        ll += l_s[w * kTileRows + r] * weight;
      }
      row_m[r] = mm;
      row_l[r] = ll;
    }
    __syncthreads();

    // One active split holds every key: it writes the output itself.
    const int splits_total = gridDim.z;
    if (active == 1) {
      for (int e = tid; e < rows * kVHeadDim; e += kThreads) {
        const int r = e / kVHeadDim, d = e % kVHeadDim;
        float acc = 0.0f;
#pragma unroll
        for (int w = 0; w < WN; ++w) acc += o_s[(w * kTileRows + r) * kOStride + d] * w_s[w * kTileRows + r];
        const int f = row0 + r;
        write_output(a, acc, row_m[r], row_l[r], q_start + f / kPack, head0 + f % kPack, d);
      }
      return;
    }

    // Split-KV: this split's partial state goes to the workspace.
    const int tile_id = blockIdx.y * gridDim.x + blockIdx.x;
    if (gridDim.x * gridDim.y * gridDim.z > kWorkspaceTiles || gridDim.x * gridDim.y > kTargetCtas ||
        splits_total > kMaxSplits) {
      // More splits than the workspace holds: a loud result, not a wrong one.
      poison_rows(a, rows, row0, q_start, head0);
      return;
    }
    const int part = tile_id * splits_total + blockIdx.z;
    float *ws_o = a.workspace + (long long)part * kBlockM * kVPad;
    float *ws_m = a.workspace + (long long)kWorkspaceTiles * kBlockM * kVPad + (long long)part * kBlockM;
    float *ws_l = ws_m + (long long)kWorkspaceTiles * kBlockM;
    unsigned *counters = reinterpret_cast<unsigned *>(a.workspace + (long long)kWorkspaceTiles * kBlockM * (kVPad + 2));
    for (int e = tid; e < rows * kVHeadDim; e += kThreads) {
      const int r = e / kVHeadDim, d = e % kVHeadDim;
      float acc = 0.0f;
#pragma unroll
      for (int w = 0; w < WN; ++w) acc += o_s[(w * kTileRows + r) * kOStride + d] * w_s[w * kTileRows + r];
      __stcg(ws_o + r * kVPad + d, acc);
    }
    for (int r = tid; r < rows; r += kThreads) {
      __stcg(ws_m + r, row_m[r]);
      __stcg(ws_l + r, row_l[r]);
    }
    __threadfence();
    __syncthreads();
    unsigned &last_split = *reinterpret_cast<unsigned *>(smem + C::kSplitFlagOffset);
    if (tid == 0)
      last_split = atomicAdd(counters + tile_id, 1u) == unsigned(active - 1);
    __syncthreads();
    if (!last_split)
      return;
    __threadfence();
    split_merge<kTileRows>(a, smem, rows, row0, q_start, head0, tile_id, active, counters);
  }

  /// The last split merges the tile's active splits. Every load below is issued in
  /// parallel (a serial chain of L2 round trips per split would cost more
  /// than the splits saved): (split, row) statistics into shared memory
  /// first, then the outputs with several splits' loads in flight per item.
  template <int kTileRows>
  static __device__ __forceinline__ void split_merge(const Args &a, unsigned char *smem, int rows, int row0,
                                                     int q_start, int head0, int tile_id, int active,
                                                     unsigned *counters) {
    const int tid = threadIdx.x;
    const int splits_total = gridDim.z;  // the workspace layout's split stride
    float *split_w = reinterpret_cast<float *>(smem);  // [kMaxSplits][kBlockM]: m, then weights
    float *split_l = reinterpret_cast<float *>(smem + C::kSplitLOffset);  // [kMaxSplits][kBlockM]
    float *merged_m = reinterpret_cast<float *>(smem + C::kSplitMergedMOffset);
    float *merged_l = reinterpret_cast<float *>(smem + C::kSplitMergedLOffset);
    const float *all_m = a.workspace + (long long)kWorkspaceTiles * kBlockM * kVPad + (long long)tile_id * splits_total * kBlockM;
    const float *all_l = all_m + (long long)kWorkspaceTiles * kBlockM;
    for (int i = tid; i < active * rows; i += kThreads) {
      const int z = i / rows, r = i % rows;
      split_w[z * kBlockM + r] = __ldcg(all_m + z * kBlockM + r);
      split_l[z * kBlockM + r] = __ldcg(all_l + z * kBlockM + r);
    }
    __syncthreads();
    for (int r = tid; r < rows; r += kThreads) {
      float mm = -attnc::infinity();
      for (int z = 0; z < active; ++z) mm = fmaxf(mm, split_w[z * kBlockM + r]);
      const float mu = mm == -attnc::infinity() ? 0.0f : mm;
      float ll = 0.0f;
      for (int z = 0; z < active; ++z) {
        const float weight = attnc::fast_exp2(split_w[z * kBlockM + r] - mu);
        split_w[z * kBlockM + r] = weight;
        ll += split_l[z * kBlockM + r] * weight;
      }
      merged_m[r] = mm;
      merged_l[r] = ll;
    }
    __syncthreads();
    const float *all_o = a.workspace + (long long)tile_id * splits_total * kBlockM * kVPad;
    if constexpr (kVHeadDim % 4 == 0) {
      constexpr int kQuads = kVHeadDim >= 4 ? kVHeadDim / 4 : 1;  // (checked even when discarded)
      // Items (4 outputs each) per pass: at most 8, so that the accumulators
      // and the loads in flight fit in registers; 32 float4 loads in flight
      // (items of rows past `rows` load nothing).
      constexpr int kAllItems = (kTileRows * kQuads + kThreads - 1) / kThreads;
      constexpr int kItems = kAllItems < 8 ? kAllItems : 8;
      constexpr int kUnroll = 32 / kItems;
      for (int pass = 0; pass < kAllItems; pass += kItems) {
        float4 acc[kItems];
#pragma unroll
        for (int i = 0; i < kItems; ++i) acc[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int z0 = 0; z0 < active; z0 += kUnroll) {
          float4 v[kUnroll][kItems];
#pragma unroll
          for (int u = 0; u < kUnroll; ++u)
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
              // Past the last split or row: nothing loaded (weight 0 below).
              const int z = z0 + u;
              const int e = tid + (pass + i) * kThreads, r = e / kQuads, d = e % kQuads * 4;
              v[u][i] = z < active && r < rows
                            ? __ldcg(reinterpret_cast<const float4 *>(all_o + ((long long)z * kBlockM + r) * kVPad + d))
                            : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
#pragma unroll
          for (int u = 0; u < kUnroll; ++u)
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
              const int e = tid + (pass + i) * kThreads, r = min(e / kQuads, rows - 1);
              const float w = z0 + u < active ? split_w[(z0 + u) * kBlockM + r] : 0.0f;
              acc[i].x += v[u][i].x * w;
              acc[i].y += v[u][i].y * w;
              acc[i].z += v[u][i].z * w;
              acc[i].w += v[u][i].w * w;
            }
        }
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const int e = tid + (pass + i) * kThreads, r = e / kQuads, d = e % kQuads * 4;
          if (pass + i < kAllItems && r < rows) {
            const int f = row0 + r, token = q_start + f / kPack, head = head0 + f % kPack;
            write_output(a, acc[i].x, merged_m[r], merged_l[r], token, head, d);
            write_output(a, acc[i].y, merged_m[r], merged_l[r], token, head, d + 1);
            write_output(a, acc[i].z, merged_m[r], merged_l[r], token, head, d + 2);
            write_output(a, acc[i].w, merged_m[r], merged_l[r], token, head, d + 3);
          }
        }
      }
    } else {
      for (int e = tid; e < rows * kVHeadDim; e += kThreads) {
        const int r = e / kVHeadDim, d = e % kVHeadDim;
        float acc = 0.0f;
        for (int z = 0; z < active; ++z)
          acc += __ldcg(all_o + ((long long)z * kBlockM + r) * kVPad + d) * split_w[z * kBlockM + r];
        const int f = row0 + r;
        write_output(a, acc, merged_m[r], merged_l[r], q_start + f / kPack, head0 + f % kPack, d);
      }
    }
    if (tid == 0)
      counters[tile_id] = 0u;  // ready for the next launch on this workspace
  }

  // ---- tiles of more than 16 rows: warpgroup MMA (sm_90a) ----

  /// S = Q K^T for row block h (rows 64 h ..) of the Q tile and the kBlockN
  /// keys of one K tile, both from swizzled shared memory.
  static __device__ __forceinline__ void wg_scores(float (&s)[kBlockN / 8][4], int h, unsigned long long q_desc,
                                                   unsigned long long k_desc) {
#pragma unroll
    for (int kc = 0; kc < kQkPad / 64; ++kc)
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
        WgmmaSS<act_t, kBlockN>::run(s, q_desc + ((kc * kBlockM * 128 + h * 64 * 128 + ks * 32) >> 4),
                                     k_desc + ((kc * kBlockN * 128 + ks * 32) >> 4), kc + ks > 0);
  }

  /// O += P V for one row block and the V tile; p holds P as A fragments.
  static __device__ __forceinline__ void wg_values(float (&o)[kVPad / 8][4], const unsigned (&p)[kBlockN / 16][4],
                                                   unsigned long long v_desc) {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk)
      WgmmaRS<act_t, kVPad>::run(o, p[kk], v_desc + ((kk * 16 * 128) >> 4));
  }

  /// P (the softmax numerators in s) as A fragments of 16 keys each.
  static __device__ __forceinline__ void wg_pack(unsigned (&p)[kBlockN / 16][4], const float (&s)[kBlockN / 8][4]) {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      p[kk][0] = attnc::pack2<act_t>(s[2 * kk][0], s[2 * kk][1]);
      p[kk][1] = attnc::pack2<act_t>(s[2 * kk][2], s[2 * kk][3]);
      p[kk][2] = attnc::pack2<act_t>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      p[kk][3] = attnc::pack2<act_t>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
  }

  /// Issues the copies of one K (kDim = kQkHeadDim) or V tile of kBlockN keys
  /// into the swizzled layout: thread t copies chunk t % 8 of each 64-element
  /// column block of keys t / 8 + 16 i, so that one slot read serves the row
  /// and 8 consecutive threads read 128 contiguous bytes. Keys whose slot is -1
  /// and the padding columns are zero-filled (and read nothing).
  template <int kDim, int kPadDim>
  static __device__ __forceinline__ void wg_copy_rows(const cache_t *cache, const attnc::CacheStrides &strides,
                                                      int kv_head, const int *slots, unsigned char *dst) {
    if (is_canonical<kDim>(strides))
      wg_copy_rows_impl<kDim, kPadDim, true>(cache, strides, kv_head, slots, dst);
    else
      wg_copy_rows_strided<kDim, kPadDim>(cache, strides, kv_head, slots, dst);
  }
  /// The engine-view form, out of line (see copy_rows_strided).
  template <int kDim, int kPadDim>
  static __device__ __noinline__ void wg_copy_rows_strided(const cache_t *cache, attnc::CacheStrides strides,
                                                           int kv_head, const int *slots, unsigned char *dst) {
    wg_copy_rows_impl<kDim, kPadDim, false>(cache, strides, kv_head, slots, dst);
  }
  template <int kDim, int kPadDim, bool kCanonical>
  static __device__ __forceinline__ void wg_copy_rows_impl(const cache_t *cache, const attnc::CacheStrides &strides,
                                                           int kv_head, const int *slots, unsigned char *dst) {
    constexpr int kKeysPerPass = kThreads / 8;
    static_assert(kBlockN % kKeysPerPass == 0, "whole passes");
    const int c = threadIdx.x % 8, key0 = threadIdx.x / 8;
    const cache_t *head = cache + head_offset<kDim, kCanonical>(strides, kv_head);
#pragma unroll
    for (int p = 0; p < kBlockN / kKeysPerPass; ++p) {
      const int key = key0 + p * kKeysPerPass;
      const int slot = slots[key];
      const cache_t *src = head + slot_offset<kDim, kCanonical>(strides, (unsigned)max(slot, 0));
#pragma unroll
      for (int b = 0; b < kPadDim / 64; ++b) {
        const int col = b * 64 + c * 8;
        attnc::cp_async_16(dst + attnc::sw128_offset<kBlockN>(key, b * 8 + c), src + (col < kDim ? col : 0),
                           slot >= 0 && col < kDim);
      }
    }
  }

  /// TMA K/V: the page of box p of K/V tile `tile` (keys tile * kBlockN +
  /// p * kBoxRows ..), or -1 for a box past kv_len (never loaded: its table
  /// entry may be anything).
  static __device__ __forceinline__ int box_block(const int *table, int tile, int p, int kv_len) {
    const int key = tile * kBlockN + p * kBoxRows;
    return key < kv_len ? table[key / kBlockSize] : -1;
  }
  /// TMA K/V (one thread): the boxes of K/V tile `tile` of KV head `kv_head`
  /// (kColBlocks 64-column blocks of every loaded page, `blocks` its pages)
  /// into `dst` in the swizzled layout, completing on `bar` (one arrival and
  /// the bytes it expects; columns past the head dim land as zeros).
  template <int kColBlocks>
  static __device__ __forceinline__ void load_tile_tma(const attnc::TensorMap *map, const int *blocks, int tile,
                                                       int kv_head, unsigned char *dst, unsigned long long *bar) {
    int boxes = 0;
#pragma unroll
    for (int p = 0; p < kBoxes; ++p) boxes += blocks[p] >= 0;
    attnc::mbarrier_arrive_expect_tx(bar, boxes * kColBlocks * kBoxRows * 128);
#pragma unroll
    for (int p = 0; p < kBoxes; ++p) {
      const int block = blocks[p];
      if (block < 0) continue;
      const int row = (tile * kBlockN + p * kBoxRows) % kBlockSize;
#pragma unroll
      for (int b = 0; b < kColBlocks; ++b)
        attnc::tma_load_4d(dst + b * kBlockN * 128 + p * kBoxRows * 128, map, bar, b * 64, kv_head, row, block);
    }
  }
  /// TMA K/V: zeroes the rows `from`.. of the landed V tile (keys past the
  /// sequence end: a loaded page holds anything there, NaN included, and
  /// P V would carry it as 0 * NaN; a box never loaded holds stale bytes),
  /// then makes the writes visible to every warp's wgmma.
  static __device__ __forceinline__ void zero_v_tail(unsigned char *v_s, int from) {
    const int rows = kBlockN - from;
    for (int e = threadIdx.x; e < rows * (kVPad / 64) * 8; e += kThreads) {
      const int chunk = e % 8, r = from + (e / 8) % rows, b = e / 8 / rows;
      *reinterpret_cast<uint4 *>(v_s + attnc::sw128_offset<kBlockN>(r, b * 8 + chunk)) = make_uint4(0, 0, 0, 0);
    }
    attnc::fence_proxy_async();
    __syncthreads();
  }

  /// One tile of `rows` (17..kBlockM) query rows by wgmma, computing what
  /// attention_tile<kWarps, 2> computes (same masks, key ranges, split share,
  /// softmax and epilogue): warp w of the warpgroup holds rows
  /// 64 h + 16 w + lane / 4 (+ 8) of row block h = 0, 1. Per K/V tile j: S_0
  /// and S_1 (the row blocks) are issued together; block 0's softmax runs
  /// while S_1 computes; O_0 += P_0 V_j is issued once V_j has landed and
  /// block 1's softmax runs while it computes. V_j loads from the start of
  /// iteration j (one V buffer), K_{j+1} during all of iteration j (two K
  /// buffers); the slots of tile j + 2 are looked up during iteration j.
  static __device__ __forceinline__ void wgmma_tile(const Args &a, int seq, int q_start, int q_len, int kv_len,
                                                    int row0, int rows, const SplitKeys &keys, unsigned char *smem) {
    // The Q tile, two K tiles and one V tile in 128-byte swizzled rows
    // (1024-byte-aligned atoms).
    static_assert(C::kWgmmaKOffset % 1024 == 0 && C::kWgmmaKBytes % 1024 == 0, "swizzle atoms stay aligned");
    static_assert(kThreads == 128 && kBlockM == 128, "one warpgroup, two m64 row blocks");
    static_assert(kQkPad % 64 == 0 && kVPad % 64 == 0 && kVPad <= 256 && kBlockN % 16 == 0 && kBlockN <= 256,
                  "wgmma shapes");
    const int tid = threadIdx.x, warp = tid / 32;
    const int g = (tid % 32) / 4;
    const int kv_head = blockIdx.y / kPacksPerGroup;
    const int head0 = kv_head * kGroupSize + blockIdx.y % kPacksPerGroup * kPack;
    const int first_pos = kv_len - q_len;  // the queries are the last q_len positions

    if ((attnc::shared_address(smem) & 1023u) != 0) {
      // The swizzled tiles need 1024-byte alignment (the kernel declares it
      // and has no static shared memory): a loud result, not a wrong one.
      poison_rows(a, rows, row0, q_start, head0);
      return;
    }
    unsigned char *q_s = smem;
    unsigned char *k_s = smem + C::kWgmmaKOffset;  // [2] K tiles
    unsigned char *v_s = smem + C::kWgmmaVOffset;
    int *slot_s = reinterpret_cast<int *>(smem + C::kSlotOffset);  // [3][kBlockN], a ring

    // Q rows of this tile (committed with the first K tile); rows past `rows`
    // and padding columns are zero-filled.
    {
      const int c = tid % 8, r0 = tid / 8;
#pragma unroll
      for (int p = 0; p < kBlockM / 16; ++p) {
        const int r = r0 + 16 * p, f = row0 + r;
        const bool valid = r < rows;
        const act_t *src;
        if constexpr (kContiguous)
          src = a.query + (valid ? query_view_offset(a, q_start, f, head0) : 0);
        else
          src = a.query + (valid ? ((long long)(q_start + f / kPack) * kNumQHeads + head0 + f % kPack) * kQkHeadDim : 0);
#pragma unroll
        for (int b = 0; b < kQkPad / 64; ++b) {
          const int col = b * 64 + c * 8;
          attnc::cp_async_16(q_s + attnc::sw128_offset<kBlockM>(r, b * 8 + c), src + (col < kQkHeadDim ? col : 0),
                             valid && col < kQkHeadDim);
        }
      }
    }

    // This split's key tiles, and the keys every row attends (no mask).
    const int full_begin = keys.full_begin, full_end = keys.full_end;
    const int my_first = keys.first_tile, my_tiles = keys.tiles;

    // The rows this thread holds ([row block][i]), and their key ranges.
    int row_begin[2][1][2], row_end[2][1][2];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = h * 64 + warp * 16 + g + 8 * i;
        const int pos = first_pos + (row0 + r) / kPack;
        row_begin[h][0][i] = r < rows ? row_key_begin(pos, kv_len) : 0;
        row_end[h][0][i] = r < rows ? row_key_end(pos, kv_len) : 0;
      }

    // Per row block h: O, m, l, S and P in attention_tile's shapes with MT = 1.
    float o[2][1][kVPad / 8][4];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int d = 0; d < kVPad / 8; ++d)
        o[h][0][d][0] = o[h][0][d][1] = o[h][0][d][2] = o[h][0][d][3] = 0.0f;
    float m[2][1][2], l[2][1][2];
#pragma unroll
    for (int h = 0; h < 2; ++h)
      m[h][0][0] = m[h][0][1] = -attnc::infinity(), l[h][0][0] = l[h][0][1] = 0.0f;
    float s[2][1][kBlockN / 8][4];
    unsigned p[2][kBlockN / 16][4];
    const auto table = key_rows(a, seq);
    const unsigned long long q_desc = attnc::sw128_desc(attnc::shared_address(q_s), 16, 1024);
    const unsigned long long k_desc = attnc::sw128_desc(attnc::shared_address(k_s), 16, 1024);
    const unsigned long long v_desc = attnc::sw128_desc(attnc::shared_address(v_s), kBlockN * 128, 1024);

    // TMA K/V: the pages of three tiles ([3][kBoxes], a ring, in the slot
    // area) and the mbarriers of the two K buffers and the V buffer (at the
    // slot area's end; the merge area does not reach it).
    [[maybe_unused]] unsigned long long *bars =
        reinterpret_cast<unsigned long long *>(smem + C::kSlotOffset + 3 * kBlockN * 4) - 3;
    if constexpr (kTma) {
      static_assert(C::kSlotOffset % 8 == 0 && 3 * kBoxes * 4 <= 3 * kBlockN * 4 - 24, "the ring and the mbarriers fit");
      static_assert(C::kWgmmaVOffset % 1024 == 0 && kBoxRows % 8 == 0, "boxes land on whole 1024-byte swizzle atoms");
      if (tid == 0)
        for (int i = 0; i < 3; ++i) attnc::mbarrier_init(bars + i, 1);
      for (int k = tid; k < kBoxes; k += kThreads) {
        slot_s[k] = my_tiles > 0 ? box_block(table, my_first, k, kv_len) : -1;
        slot_s[kBoxes + k] = my_tiles > 1 ? box_block(table, my_first + 1, k, kv_len) : -1;
      }
      __syncthreads();
      if (tid == 0 && my_tiles > 0)
        load_tile_tma<kQkPad / 64>(a.k_map, slot_s, my_first, kv_head, k_s, bars);
    } else {
      for (int k = tid; k < kBlockN; k += kThreads) {
        slot_s[k] = my_tiles > 0 ? key_slot(table, my_first * kBlockN + k, kv_len) : -1;
        slot_s[kBlockN + k] = my_tiles > 1 ? key_slot(table, (my_first + 1) * kBlockN + k, kv_len) : -1;
      }
      __syncthreads();
      if (my_tiles > 0)
        wg_copy_rows<kQkHeadDim, kQkPad>(a.k_cache, a.k_strides, kv_head, slot_s, k_s);
    }
    attnc::cp_async_commit();
    for (int it = 0; it < my_tiles; ++it) {
      const int tile_key = (my_first + it) * kBlockN;
      attnc::cp_async_wait<0>();
      attnc::fence_proxy_async();
      __syncthreads();  // K_it (and Q) landed; every warp is done with V_{it-1} and K_{it-1}
      if constexpr (kTma) {
        // V_it, then K_{it+1}, then the pages of tile it + 2; then K_it.
        if (tid == 0) {
          load_tile_tma<kVPad / 64>(a.v_map, slot_s + it % 3 * kBoxes, my_first + it, kv_head, v_s, bars + 2);
          if (it + 1 < my_tiles)
            load_tile_tma<kQkPad / 64>(a.k_map, slot_s + (it + 1) % 3 * kBoxes, my_first + it + 1, kv_head,
                                       k_s + (it + 1) % 2 * C::kWgmmaKBytes, bars + (it + 1) % 2);
        }
        for (int k = tid; k < kBoxes; k += kThreads)
          slot_s[(it + 2) % 3 * kBoxes + k] = it + 2 < my_tiles ? box_block(table, my_first + it + 2, k, kv_len) : -1;
        attnc::mbarrier_wait(bars + it % 2, (it / 2) & 1);  // K_it (its buffer's (it / 2)-th load)
      } else {
      // V_it, then K_{it+1} (two groups), then the slots of tile it + 2.
      wg_copy_rows<kVHeadDim, kVPad>(a.v_cache, a.v_strides, kv_head, slot_s + it % 3 * kBlockN, v_s);
      attnc::cp_async_commit();
      if (it + 1 < my_tiles)
        wg_copy_rows<kQkHeadDim, kQkPad>(a.k_cache, a.k_strides, kv_head, slot_s + (it + 1) % 3 * kBlockN,
                                         k_s + (it + 1) % 2 * C::kWgmmaKBytes);
      attnc::cp_async_commit();
      for (int k = tid; k < kBlockN; k += kThreads)
        slot_s[(it + 2) % 3 * kBlockN + k] =
            it + 2 < my_tiles ? key_slot(table, (my_first + it + 2) * kBlockN + k, kv_len) : -1;
      }
      const unsigned long long k_cur = k_desc + ((it % 2 * C::kWgmmaKBytes) >> 4);
      const bool masked = tile_key < full_begin || tile_key + kBlockN > full_end;
      attnc::wgmma_fence();
      wg_scores(s[0][0], 0, q_desc, k_cur);
      attnc::wgmma_commit();
      wg_scores(s[1][0], 1, q_desc, k_cur);
      attnc::wgmma_commit();
      attnc::wgmma_wait<1>();  // S_0 done
      attnc::fence_regs(s[0]);
      softmax_step<1, kBlockN / 8>(s[0], m[0], l[0], o[0], a, row_begin[0], row_end[0], masked, tile_key);
      wg_pack(p[0], s[0][0]);
      if constexpr (kTma) {
        attnc::mbarrier_wait(bars + 2, it & 1);  // V_it
        if (tile_key + kBlockN > kv_len) zero_v_tail(v_s, kv_len - tile_key);
      } else {
        attnc::cp_async_wait<1>();  // V_it (K_{it+1} may still be in flight)
        attnc::fence_proxy_async();
        __syncthreads();  // V_it landed
      }
      attnc::fence_regs(o[0]);
      attnc::wgmma_fence();
      wg_values(o[0][0], p[0], v_desc);
      attnc::wgmma_commit();
      attnc::wgmma_wait<1>();  // S_1 done (O_0 += P_0 V_it may run on)
      attnc::fence_regs(s[1]);
      softmax_step<1, kBlockN / 8>(s[1], m[1], l[1], o[1], a, row_begin[1], row_end[1], masked, tile_key);
      wg_pack(p[1], s[1][0]);
      attnc::fence_regs(o[1]);
      attnc::wgmma_fence();
      wg_values(o[1][0], p[1], v_desc);
      attnc::wgmma_commit();
      attnc::wgmma_wait<0>();
      attnc::fence_regs(o[0]);
      attnc::fence_regs(o[1]);
    }
    attnc::cp_async_wait<0>();
    __syncthreads();  // Q and the K/V buffers become the merge area
#pragma unroll
    for (int h = 0; h < 2; ++h)
      store_state<1, kBlockM>(o[h], m[h], l[h], smem, 0, h * 64 + warp * 16, 16, m_scale(a));
    tile_epilogue<1, kBlockM>(a, smem, rows, row0, q_start, head0, keys.active);
  }

  /// The kernel: finds the tile's sequence and rows, then runs the tile.
  /// With contiguous K/V, k_cache/v_cache are the [tokens_k, Hkv, D] views
  /// (block stride = token stride), seq_lens is cu_seqlens_k, block_tables
  /// is unused and q_token_stride / q_head_stride give the query view. (The
  /// key counts below are written out at each use: a helper for them, even
  /// inlined, changed the paged kernels' register allocation, as did
  /// members of Args the paged form does not use: scripts/kernel-snapshot.py.)
  static __device__ __forceinline__ void run(const act_t *query, const cache_t *k_cache, const cache_t *v_cache,
                                             attnc::CacheStrides k_strides, attnc::CacheStrides v_strides,
                                             const int *block_tables, const int *seq_lens,
                                             const int *query_start_loc, const float *sinks,
                                             const float *k_scale, const float *v_scale, const act_t *gate,
                                             act_t *output, float *workspace, int num_tokens, int num_seqs,
                                             int max_blocks_per_seq, int num_kv_splits,
                                             int q_token_stride = 0, int q_head_stride = 0,
                                             const attnc::TensorMap *k_map = nullptr,
                                             const attnc::TensorMap *v_map = nullptr) {
    extern __shared__ __align__(C::kWgmma ? 1024 : 16) unsigned char smem[];
    // Programmatic dependent launch (attnc_device.cuh): no global access
    // before the wait, and every block waits (a grid that finished without
    // waiting would not imply its predecessor finished). The next kernel may
    // launch once every block is resident.
    attnc::grid_dependency_wait();
    attnc::launch_dependents();
    if (num_seqs <= 0) return;  // malformed batch: nothing owns a row
    // The sequence of this tile: sequence s owns the tile range starting at
    // query_start_loc[s] * kPack / kBlockM + s (at least as many tiles as its
    // rows need; a sequence's spare block exits). Tiles run last first: the
    // last rows of a sequence see the most keys, and start early.
    const int tile_index = (int)gridDim.x - 1 - (int)blockIdx.x;
    // The owner is the last sequence whose range starts at or before the tile.
    int seq, q_start, q_end, kv_len;
    if (num_seqs <= kSeqLookupThreads * kThreads) {
      // Every thread tests up to kSeqLookupThreads sequences at once: one
      // round trip to memory for the lookup and the owner's lengths, where a
      // binary search would chain log2(num_seqs) of them before the first
      // K/V copy.
      int4 &owner = *reinterpret_cast<int4 *>(smem + C::kOwnerOffset);
      if (threadIdx.x == 0) owner = make_int4(0, 0, 0, 0);
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kSeqLookupThreads; ++j) {
        const int s = (int)threadIdx.x + j * kThreads;
        if (s < num_seqs) {
          const int start = query_start_loc[s], end = query_start_loc[s + 1];
          int len;
          if constexpr (kContiguous)
            len = seq_lens[s + 1] - seq_lens[s];
          else
            len = seq_lens[s];
          const int first_tile = (int)((long long)start * kPack / kBlockM) + s;
          const int next_tile = (int)((long long)end * kPack / kBlockM) + s + 1;
          if (first_tile <= tile_index && (s == num_seqs - 1 || tile_index < next_tile))
            owner = make_int4(s, start, end, len);
        }
      }
      __syncthreads();
      seq = owner.x, q_start = owner.y, q_end = owner.z, kv_len = owner.w;
    } else {
      int lo = 0, hi = num_seqs - 1;
      while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if ((int)((long long)query_start_loc[mid] * kPack / kBlockM) + mid <= tile_index) lo = mid;
        else hi = mid - 1;
      }
      seq = lo, q_start = query_start_loc[seq], q_end = query_start_loc[seq + 1];
      if constexpr (kContiguous)
        kv_len = seq_lens[seq + 1] - seq_lens[seq];
      else
        kv_len = seq_lens[seq];
    }
    const int q_len = q_end - q_start;
    const int row0 = (tile_index - (int)((long long)q_start * kPack / kBlockM) - seq) * kBlockM;
    const int rows = min(kBlockM, q_len * kPack - row0);
    if (row0 < 0 || rows <= 0) return;
    Args a;
    a.query = query;
    a.k_cache = k_cache;
    a.v_cache = v_cache;
    a.k_strides = k_strides;
    a.v_strides = v_strides;
    a.block_tables = block_tables;
    if constexpr (C::kSinks)
      a.sinks = sinks;
    if constexpr (C::kGate)
      a.gate = gate;
    a.output = output;
    a.workspace = workspace;
    a.max_blocks_per_seq = max_blocks_per_seq;
    if constexpr (kContiguous) {
      a.kv_start = seq_lens[seq];  // cu_seqlens_k (the lookup read it: a cache hit)
      a.q_token_stride = q_token_stride;
      a.q_head_stride = q_head_stride;
    }
    if constexpr (kTma) {
      a.k_map = k_map;
      a.v_map = v_map;
    }
    constexpr float kScoreScale = C::kHasSoftcap ? C::kSoftmaxScale / C::kSoftcap : C::kScaleLog2;
    constexpr float kOutScale = C::kHasValueScale ? C::kValueScale : 1.0f;
    if constexpr (C::kFp8) {
      a.score_scale = kScoreScale * *k_scale;
      a.out_scale = kOutScale * *v_scale;
    } else {
      a.score_scale = kScoreScale;
      a.out_scale = kOutScale;
    }
    const SplitKeys keys = split_keys(row0, rows, kv_len - q_len, kv_len, /*from_first_key=*/rows <= 16);
    if ((int)blockIdx.z >= keys.active)
      return;  // a split this tile's keys do not need
    if (rows <= 16)
      attention_tile<1, 1>(a, seq, q_start, q_len, kv_len, row0, rows, keys, smem);
    else if constexpr (C::kWgmma)
      wgmma_tile(a, seq, q_start, q_len, kv_len, row0, rows, keys, smem);
    else
      attention_tile<kWarps, 2>(a, seq, q_start, q_len, kv_len, row0, rows, keys, smem);
  }
};

/// The tensor-core paged attention kernel for Config C; parameters absent
/// from the layer (sinks, k_scale/v_scale, gate) are null and never read.
template <class C>
__device__ __forceinline__ void paged_attention(
    const typename C::act_t *query, const typename C::cache_t *k_cache,
    const typename C::cache_t *v_cache, long long k_cache_block_stride,
    long long k_cache_token_stride, long long k_cache_head_stride, long long v_cache_block_stride,
    long long v_cache_token_stride, long long v_cache_head_stride, const int *block_tables,
    const int *seq_lens, const int *query_start_loc, const float *sinks, const float *k_scale,
    const float *v_scale, const typename C::act_t *gate, typename C::act_t *output,
    float *workspace, int num_tokens, int num_seqs, int max_blocks_per_seq, int num_kv_splits) {
  PagedAttention<C>::run(query, k_cache, v_cache,
                         attnc::make_cache_strides(k_cache_block_stride, k_cache_token_stride, k_cache_head_stride),
                         attnc::make_cache_strides(v_cache_block_stride, v_cache_token_stride, v_cache_head_stride), block_tables, seq_lens, query_start_loc, sinks,
                         k_scale, v_scale, gate, output, workspace, num_tokens, num_seqs,
                         max_blocks_per_seq, num_kv_splits);
}

/// paged_attention for a Config with kTmaKv: the same kernel, its wgmma
/// tiles' K/V loaded through the tensor maps over k_cache and v_cache
/// ([num_blocks, block_size, kv_heads, head_dim], boxes of one page's rows x
/// 64 values of one head, 128-byte swizzle). A Config without it (the tiered
/// JIT's mma.sync baseline of such a kernel, which takes its parameters)
/// leaves the maps unread.
template <class C>
__device__ __forceinline__ void paged_attention_tma(
    const typename C::act_t *query, const typename C::cache_t *k_cache,
    const typename C::cache_t *v_cache, long long k_cache_block_stride,
    long long k_cache_token_stride, long long k_cache_head_stride, long long v_cache_block_stride,
    long long v_cache_token_stride, long long v_cache_head_stride, const attnc::TensorMap *k_cache_map,
    const attnc::TensorMap *v_cache_map, const int *block_tables,
    const int *seq_lens, const int *query_start_loc, const float *sinks, const float *k_scale,
    const float *v_scale, const typename C::act_t *gate, typename C::act_t *output,
    float *workspace, int num_tokens, int num_seqs, int max_blocks_per_seq, int num_kv_splits) {
  PagedAttention<C>::run(query, k_cache, v_cache,
                         attnc::make_cache_strides(k_cache_block_stride, k_cache_token_stride, k_cache_head_stride),
                         attnc::make_cache_strides(v_cache_block_stride, v_cache_token_stride, v_cache_head_stride),
                         block_tables, seq_lens, query_start_loc, sinks, k_scale, v_scale, gate, output, workspace,
                         num_tokens, num_seqs, max_blocks_per_seq, num_kv_splits, 0, 0, k_cache_map, v_cache_map);
}

/// The tensor-core attention over ragged contiguous K/V
/// (attn.varlen_attention) for a Config with kContiguousKv: sequence s owns
/// query rows [cu_seqlens_q[s], cu_seqlens_q[s+1]) and key/value rows
/// [cu_seqlens_k[s], cu_seqlens_k[s+1]); query, key and value are views with
/// any token and head strides (elements, the head dim contiguous); the
/// output is [num_tokens, Hq, Dv] contiguous.
template <class C>
__device__ __forceinline__ void varlen_attention(
    const typename C::act_t *query, const typename C::act_t *key, const typename C::act_t *value,
    long long query_token_stride, long long query_head_stride, long long key_token_stride,
    long long key_head_stride, long long value_token_stride, long long value_head_stride,
    const int *cu_seqlens_q, const int *cu_seqlens_k, typename C::act_t *output, float *workspace,
    int num_tokens, int num_seqs, int num_kv_splits) {
  static_assert(ContiguousKv<C>::value && !C::kFp8 && !C::kSinks && !C::kGate,
                "varlen_attention: contiguous K/V of the activation type, no sinks or gate");
  // A key row is a block of one token: its block stride is the token stride.
  PagedAttention<C>::run(query, key, value,
                         attnc::make_cache_strides(key_token_stride, key_token_stride, key_head_stride),
                         attnc::make_cache_strides(value_token_stride, value_token_stride, value_head_stride),
                         nullptr, cu_seqlens_k, cu_seqlens_q, nullptr, nullptr, nullptr, nullptr, output,
                         workspace, num_tokens, num_seqs, 0, num_kv_splits, int(query_token_stride),
                         int(query_head_stride));
}

/// varlen_attention with the warp-specialised kernel's parameters (tensor
/// maps over key and value after the strides, unread): the tiered JIT's
/// baseline of a "wgmma_ws" schedule, which must take its parameters.
template <class C>
__device__ __forceinline__ void varlen_attention_maps(
    const typename C::act_t *query, const typename C::act_t *key, const typename C::act_t *value,
    long long query_token_stride, long long query_head_stride, long long key_token_stride,
    long long key_head_stride, long long value_token_stride, long long value_head_stride,
    const attnc::TensorMap *, const attnc::TensorMap *, const int *cu_seqlens_q, const int *cu_seqlens_k,
    typename C::act_t *output, float *workspace, int num_tokens, int num_seqs, int num_kv_splits) {
  varlen_attention<C>(query, key, value, query_token_stride, query_head_stride, key_token_stride, key_head_stride,
                      value_token_stride, value_head_stride, cu_seqlens_q, cu_seqlens_k, output, workspace,
                      num_tokens, num_seqs, num_kv_splits);
}

} // namespace attnc

#endif // ATTNC_ATTENTION_CUH
