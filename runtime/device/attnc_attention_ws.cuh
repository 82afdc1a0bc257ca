//===- attnc_attention_ws.cuh - warp-specialised prefill (sm_90a) -*- CUDA -*-===//
//
// The warp-specialised attention kernel of attn.varlen_attention (schedule
// mma "wgmma_ws", docs/attention-kernel.md): three warpgroups per block.
//  - Warpgroup 0, the producer, gives up registers (setmaxnreg) and one
//    thread issues the tensor-memory-accelerator copies of the block's K and
//    V tiles (kBlockN keys x 64-value boxes, 128-byte swizzled) into a ring
//    of kStages stages, each tile completing on its stage's "full" mbarrier;
//    it reuses a stage once both consumers released it ("empty" mbarriers).
//  - Warpgroups 1 and 2, the consumers, own 64 query rows each (kBlockM =
//    128 rows a block) and take the registers. Per key tile j a consumer
//    issues S_j = Q K_j^T (wgmma, both operands in shared memory) and
//    O += P_{j-1} V_{j-1} (P from registers), then runs the softmax of S_j
//    while that P V runs, and rescales O once it is done. The two consumers
//    take turns issuing their MMAs (two named barriers, ping-pong), so one's
//    softmax runs under the other's MMAs.
// Rows are flattened (token, head) pairs of one sequence, kPack query heads
// of a KV group per token, as in attnc_attention.cuh; blocks run the last
// row tile of the grid first (causal rows at the end see the most keys).
// One block computes all of its rows' keys (no split-KV: prefill has blocks
// enough); a launch with more splits leaves the extra blocks idle.
//
// Config members (printed by emitVarlenAttention from the schedule and
// plan/include/attnc/Plan/AttentionTiling.h's wsAttentionSharedMap):
//   act_t, kNumQHeads, kNumKvHeads, kGroupSize, kPack, kQkHeadDim,
//   kVHeadDim, kQkPad, kVPad, kBlockM (128), kBlockN, kStages, kCausal,
//   kSlidingWindow, kAttentionChunk, kHasSoftcap, kSoftcap, kSoftmaxScale,
//   kScaleLog2, kHasValueScale, kValueScale, kProducerRegisters,
//   kConsumerRegisters; offsets kWsQBytes (one consumer's Q tile),
//   kWsKOffset, kWsKStageBytes, kWsVOffset, kWsVStageBytes, kWsBarOffset,
//   kWsOwnerOffset, kSharedBytes; persistent blocks also kPersistent and
//   kWsInfoSlotBytes.
//
// Persistent blocks (a Config with `kPersistent = true`; grid x = one block
// an SM, each striding over all row tiles x KV head packs, last row tiles
// first): the producer warp looks up each of the block's row tiles (its
// sequence, rows and key tiles) and publishes it in one of two
// shared-memory slots at kWsOwnerOffset (mbarriers info_full / info_empty);
// the consumers take it from there. The K/V ring's stages and phases run on
// across the block's row tiles, so the producer loads the next tile's keys
// while the consumers finish the current one. Without the member a block
// computes its one row tile, which all its threads look up; none of the
// persistent pieces (slots, their mbarriers, the producer's extra
// registers) is there.
//
// Paged K/V (attn.paged_attention's prefill kernel, entry
// paged_attention_ws<Config>): a Config with `kPagedKv = true` (and
// kBlockSize >= 8, a 16-bit cache of the activation type) reads K/V from
// the paged caches [num_blocks, block_size, kv_heads, head_dim] through the
// block table: the producer warp's lanes look up the tile's pages in
// parallel and issue one 4-D box per page and 64-value column block (boxes
// of min(block_size, kBlockN) rows), counting only the boxes they issue
// (none past the sequence end); seq_lens gives the key counts,
// query_start_loc the query rows of a contiguous [tokens, Hq, Dqk] query.
// The epilogue adds the paged op's sinks (one logit in the denominator) and
// output gate. Configs without the member (the varlen kernel) are untouched.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_ATTENTION_WS_CUH
#define ATTNC_ATTENTION_WS_CUH

#include "attnc_attention_rules.cuh"
#include "attnc_device.cuh"
#include "attnc_wgmma.cuh"

namespace attnc {

/// Whether Config C reads a paged K/V cache through a block table (its
/// kPagedKv member; false for Configs without one, the varlen kernel).
template <class C, class = void> struct PagedKv {
  static constexpr bool value = false;
};
template <class C> struct PagedKv<C, decltype(void(C::kPagedKv))> {
  static constexpr bool value = C::kPagedKv;
};

/// Whether Config C's blocks are persistent (its kPersistent member; false
/// for Configs without one).
template <class C, class = void> constexpr bool kPersistentConfig = false;
template <class C> constexpr bool kPersistentConfig<C, decltype(void(C::kPersistent))> = C::kPersistent;

template <class C> struct WsAttention {
  using act_t = typename C::act_t;
  static constexpr int kNumQHeads = C::kNumQHeads, kGroupSize = C::kGroupSize, kPack = C::kPack;
  static constexpr int kPacksPerGroup = kGroupSize / kPack;
  static constexpr int kQkHeadDim = C::kQkHeadDim, kVHeadDim = C::kVHeadDim;
  static constexpr int kQkPad = C::kQkPad, kVPad = C::kVPad;
  static constexpr int kBlockM = C::kBlockM, kBlockN = C::kBlockN, kStages = C::kStages;
  static constexpr int kThreads = 384, kConsumerThreads = 256;
  static constexpr int kSeqLookupThreads = 4;
  // (An enumerator: a static data member would be a new global in the PTX
  // of every kernel, persistent or not.)
  enum : bool { kPersistent = kPersistentConfig<C> };
  static constexpr bool kPaged = PagedKv<C>::value;
  // Paged K/V: a tile's keys come as kBoxes boxes of kBoxRows rows of one
  // page per 64-column block, one box (and one table lookup) a lane.
  static constexpr int kBoxRows = !kPaged ? kBlockN : C::kBlockSize < kBlockN ? C::kBlockSize : kBlockN;
  static constexpr int kBoxes = kBlockN / kBoxRows;
  static_assert(!kPaged || (C::kBlockSize >= 8 && kBlockN % kBoxRows == 0 && kBoxes <= 32 && !C::kFp8),
                "paged K/V: a 16-bit cache, pages of 8+ rows (whole swizzle atoms), a box a lane");
  static_assert(kBlockM == 128, "two consumer warpgroups of one m64 row block each");
  static_assert(kQkPad % 64 == 0 && kVPad % 64 == 0 && kVPad <= 256 && kBlockN % 16 == 0 && kBlockN <= 256,
                "wgmma shapes: head dims in 64-value column blocks, N a multiple of 16");
  static_assert(C::kWsQBytes % 1024 == 0 && C::kWsKOffset % 1024 == 0 && C::kWsKStageBytes % 1024 == 0 &&
                    C::kWsVOffset % 1024 == 0 && C::kWsVStageBytes % 1024 == 0 && C::kWsBarOffset % 8 == 0,
                "swizzle atoms stay 1024-byte aligned");
  // Named barriers: the consumers' turns (ids 1, 2) and each consumer's own
  // Q tile (ids 3, 4).
  static constexpr int kTurnBarrier = 1, kQBarrier = 3;

  /// Which keys row `pos` (a query position) attends: [begin, end)
  /// (attnc_attention_rules.cuh, PagedAttention's rules).
  static __device__ __forceinline__ int row_key_begin(int pos, int kv_len) { return KeyRange<C>::begin(pos, kv_len); }
  static __device__ __forceinline__ int row_key_end(int pos, int kv_len) { return KeyRange<C>::end(pos, kv_len); }

  /// S = Q K^T for the consumer's 64 rows and one K tile: the k16 steps
  /// that reach the real head dim only (80 pads to 128 in shared memory but
  /// takes 5 steps, not 8: the padding columns are zeros in Q and K alike).
  static constexpr int kQkSteps = (kQkHeadDim + 15) / 16;
  static __device__ __forceinline__ void scores(float (&s)[kBlockN / 8][4], unsigned long long q_desc,
                                                unsigned long long k_desc) {
#pragma unroll
    for (int kc = 0; kc < kQkPad / 64; ++kc)
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
        if (kc * 4 + ks < kQkSteps)
          WgmmaSS<act_t, kBlockN>::run(s, q_desc + ((kc * 64 * 128 + ks * 32) >> 4),
                                       k_desc + ((kc * kBlockN * 128 + ks * 32) >> 4), kc + ks > 0);
  }
  /// O += P V for one V tile; p holds P as A fragments of 16 keys.
  static __device__ __forceinline__ void values(float (&o)[kVPad / 8][4], const unsigned (&p)[kBlockN / 16][4],
                                                unsigned long long v_desc) {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk)
      WgmmaRS<act_t, kVPad>::run(o, p[kk], v_desc + ((kk * 16 * 128) >> 4));
  }

  /// The online softmax of one tile's scores for the thread's two rows:
  /// masks keys outside [row_begin, row_end) when `masked`, updates m (raw
  /// score units; log2 units with soft-cap) and l, returns in s the
  /// numerators and in corr the factor O must be rescaled by.
  static __device__ __forceinline__ void softmax(float (&s)[kBlockN / 8][4], float (&m)[2], float (&l)[2],
                                                 float (&corr)[2], const int (&row_begin)[2],
                                                 const int (&row_end)[2], bool masked, int key0, float scale) {
    const int t = threadIdx.x % 4;
    if constexpr (C::kHasSoftcap) {
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[n][e] = C::kSoftcap * tanhf(s[n][e] * scale) * 1.4426950408889634f;
      scale = 1.0f;
    }
    if (masked) {
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = key0 + n * 8 + 2 * t + (e & 1);
          if (key < row_begin[e / 2] || key >= row_end[e / 2]) s[n][e] = -infinity();
        }
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float mx = m[i];
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_scaled = mx == -infinity() ? 0.0f : mx * scale;
      corr[i] = fast_exp2(m[i] * scale - m_scaled);
      m[i] = mx;
      float sum = 0.0f;
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n) {
        s[n][2 * i] = fast_exp2(fmaf(s[n][2 * i], scale, -m_scaled));
        s[n][2 * i + 1] = fast_exp2(fmaf(s[n][2 * i + 1], scale, -m_scaled));
        sum += s[n][2 * i] + s[n][2 * i + 1];
      }
      l[i] = l[i] * corr[i] + sum;
    }
  }

  /// P (the numerators in s) as A fragments of 16 keys each.
  static __device__ __forceinline__ void pack(unsigned (&p)[kBlockN / 16][4], const float (&s)[kBlockN / 8][4]) {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      p[kk][0] = pack2<act_t>(s[2 * kk][0], s[2 * kk][1]);
      p[kk][1] = pack2<act_t>(s[2 * kk][2], s[2 * kk][3]);
      p[kk][2] = pack2<act_t>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      p[kk][3] = pack2<act_t>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
  }

  /// One box per 64-value column block of K or V tile `tile_key` (keys of the
  /// sequence from its first row `kv_start`) into stage memory `dst`.
  template <int kColBlocks>
  static __device__ __forceinline__ void load_tile(const TensorMap *map, unsigned char *dst, void *bar,
                                                   int kv_head, int row) {
#pragma unroll
    for (int b = 0; b < kColBlocks; ++b) tma_load_3d(dst + b * kBlockN * 128, map, bar, b * 64, kv_head, row);
  }

  struct Batch {
    const act_t *query;
    long long q_token_stride, q_head_stride;
    const int *cu_seqlens_q, *cu_seqlens_k;
    act_t *output;
    int num_seqs, num_tokens;  // num_tokens: the query rows the ABI's grid x counts
    // Paged K/V only: cu_seqlens_k is then seq_lens (one count a sequence).
    const int *block_tables;
    int max_blocks_per_seq;
    const float *sinks;  // kSinks only
    const act_t *gate;   // kGate only
  };

  /// Paged K/V (the producer warp, every lane): the page of this lane's box
  /// of the tile at key `tile_key`, or -1 for a lane past the tile's boxes
  /// or a box past kv_len (never loaded: its table entry may be anything).
  static __device__ __forceinline__ int box_page(const int *table, int tile_key, int kv_len, int lane) {
    const int key = tile_key + lane * kBoxRows;
    return lane < kBoxes && key < kv_len ? table[key / C::kBlockSize] : -1;
  }
  /// Paged K/V (every lane of the producer warp, after the stage is free):
  /// lane 0 expects the bytes of the boxes the warp issues (`boxes` pages)
  /// on `bar`, then each lane with a page issues its box of every 64-column
  /// block at its row offset in the stage.
  template <int kColBlocks>
  static __device__ __forceinline__ void load_pages(const TensorMap *map, unsigned char *dst, void *bar,
                                                    int kv_head, int tile_key, int page, int boxes, int lane) {
    if (lane == 0) mbarrier_arrive_expect_tx(bar, boxes * kColBlocks * kBoxRows * 128);
    __syncwarp();
    if (page >= 0) {
      const int row = (tile_key + lane * kBoxRows) % C::kBlockSize;
#pragma unroll
      for (int b = 0; b < kColBlocks; ++b)
        tma_load_4d(dst + b * kBlockN * 128 + lane * kBoxRows * 128, map, bar, b * 64, kv_head, row, page);
    }
  }

  /// A row tile: its sequence (`seq`; query rows from q_start, q_len of
  /// them; keys from kv_start, kv_len of them, the queries at the last
  /// positions, from first_pos), its rows (row0 .. row0 + rows of the
  /// sequence's flattened rows; none for the sequence's spare tile, whose
  /// other fields are then meaningless), KV head and first query head, and key
  /// tiles (`tiles` from tile_first). Persistent blocks publish each in a
  /// slot of kWsInfoSlotBytes at kWsOwnerOffset, `more` 0 past the block's
  /// last.
  struct TileInfo {
    int more, seq, q_start, q_len, kv_start, kv_len, first_pos, row0, rows, kv_head, head0, tile_first, tiles;
    __device__ __forceinline__ bool valid() const { return row0 >= 0 && rows > 0; }
  };

  /// The sequence owning row tile `tile_index` of the grid x the ABI counts
  /// (a sequence's rows' tiles and a spare one, the last sequence all those
  /// after), by binary search: for batches longer than a parallel lookup
  /// covers.
  static __device__ __forceinline__ int search_owner(const Batch &batch, int tile_index) {
    int lo = 0, hi = batch.num_seqs - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if ((int)((long long)batch.cu_seqlens_q[mid] * kPack / kBlockM) + mid <= tile_index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /// Row tile `tile_index` of sequence tile.seq (query rows from
  /// tile.q_start to q_end): its rows, if any.
  static __device__ __forceinline__ void locate_rows(TileInfo &tile, int tile_index, int q_end) {
    const int q_len = tile.q_len = q_end - tile.q_start;
    tile.row0 = (tile_index - (int)((long long)tile.q_start * kPack / kBlockM) - tile.seq) * kBlockM;
    tile.rows = min(kBlockM, q_len * kPack - tile.row0);
  }
  /// A row tile's KV head and first query head (KV head pack
  /// `pack_index`) and key tiles: the union of its rows' ranges.
  static __device__ __forceinline__ void add_heads_and_keys(TileInfo &tile, int pack_index) {
    tile.kv_head = pack_index / kPacksPerGroup;
    tile.head0 = tile.kv_head * kGroupSize + pack_index % kPacksPerGroup * kPack;
    tile.first_pos = tile.kv_len - tile.q_len;  // the queries are the last q_len positions
    const int key_begin = row_key_begin(tile.first_pos + tile.row0 / kPack, tile.kv_len);
    const int key_end = row_key_end(tile.first_pos + (tile.row0 + tile.rows - 1) / kPack, tile.kv_len);
    tile.tile_first = key_begin / kBlockN;
    tile.tiles = key_end > key_begin ? (key_end + kBlockN - 1) / kBlockN - tile.tile_first : 0;
  }

  /// A block's own row tile (not kPersistent: grid x reversed, the last row
  /// tiles, which see the most keys under a causal mask, first; KV head pack
  /// blockIdx.y), by every thread of the block: the owner lookup of
  /// attnc_attention.cuh (kSeqLookupThreads sequences a thread, the owner
  /// meeting in the int4 at kWsOwnerOffset), or a binary search for long
  /// batches.
  static __device__ __forceinline__ TileInfo own_tile(const Batch &batch, unsigned char *smem, int tid) {
    const int num_seqs = batch.num_seqs;
    const int tile_index = (int)gridDim.x - 1 - (int)blockIdx.x;
    // (Declared in this order, the lookup's merged values keep the PTX
    // register numbers they had before this was a function.)
    int kv_len, kv_start, q_end, q_start, seq;
    if (num_seqs <= kSeqLookupThreads * kThreads) {
      int4 &owner = *reinterpret_cast<int4 *>(smem + C::kWsOwnerOffset);
      if (tid == 0) owner = make_int4(0, 0, 0, 0);
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kSeqLookupThreads; ++j) {
        const int s = tid + j * kThreads;
        if (s < num_seqs) {
          const int start = batch.cu_seqlens_q[s], end = batch.cu_seqlens_q[s + 1];
          const int first_tile = (int)((long long)start * kPack / kBlockM) + s;
          const int next_tile = (int)((long long)end * kPack / kBlockM) + s + 1;
          if (first_tile <= tile_index && (s == num_seqs - 1 || tile_index < next_tile)) {
            if constexpr (kPaged)
              owner = make_int4(s, start, end, batch.cu_seqlens_k[s]);
            else
              owner = make_int4(s, start, end, 0);
          }
        }
      }
      __syncthreads();
      seq = owner.x, q_start = owner.y, q_end = owner.z;
      if constexpr (kPaged) kv_len = owner.w;
    } else {
      seq = search_owner(batch, tile_index);
      q_start = batch.cu_seqlens_q[seq], q_end = batch.cu_seqlens_q[seq + 1];
    }
    if constexpr (kPaged) {
      kv_start = 0;
      if (num_seqs > kSeqLookupThreads * kThreads) kv_len = batch.cu_seqlens_k[seq];
    } else {
      kv_start = batch.cu_seqlens_k[seq];
      kv_len = batch.cu_seqlens_k[seq + 1] - kv_start;
    }
    TileInfo tile;
    tile.seq = seq, tile.q_start = q_start, tile.kv_start = kv_start, tile.kv_len = kv_len;
    locate_rows(tile, tile_index, q_end);
    return tile;
  }

  /// kPersistent: row tile `tile_index` and KV head pack `pack_index`, by
  /// the producer warp's lanes (own_tile's owner rule for 32 sequences a
  /// step, or a binary search for long batches). Every lane returns the
  /// same.
  static __device__ __forceinline__ TileInfo lookup_tile(const Batch &batch, int tile_index, int pack_index,
                                                         int lane) {
    const int num_seqs = batch.num_seqs;
    int seq = -1;
    if (num_seqs <= 256) {
      for (int base = 0; base < num_seqs && seq < 0; base += 32) {
        const int s = base + lane;
        bool hit = false;
        if (s < num_seqs) {
          const int start = batch.cu_seqlens_q[s], end = batch.cu_seqlens_q[s + 1];
          const int first_tile = (int)((long long)start * kPack / kBlockM) + s;
          const int next_tile = (int)((long long)end * kPack / kBlockM) + s + 1;
          hit = first_tile <= tile_index && (s == num_seqs - 1 || tile_index < next_tile);
        }
        const unsigned hits = __ballot_sync(0xffffffffu, hit);
        if (hits) seq = base + __ffs(hits) - 1;
      }
      if (seq < 0) seq = 0;  // (unreachable: row tile 0 is sequence 0's first)
    } else {
      seq = search_owner(batch, tile_index);
    }
    TileInfo tile;
    tile.seq = seq, tile.q_start = batch.cu_seqlens_q[seq];
    tile.kv_start = kPaged ? 0 : batch.cu_seqlens_k[seq];
    tile.kv_len = kPaged ? batch.cu_seqlens_k[seq] : batch.cu_seqlens_k[seq + 1] - tile.kv_start;
    locate_rows(tile, tile_index, batch.cu_seqlens_q[seq + 1]);
    add_heads_and_keys(tile, pack_index);  // (meaningless for a spare tile, which nobody reads)
    return tile;
  }

  /// kPersistent: the block's k-th row tile of the tiles_x x kPackTiles it
  /// strides over (the KV head packs' tiles of one row-tile index in turn,
  /// the last row tiles first). False past the block's last.
  static __device__ __forceinline__ bool nth_tile(int k, int tiles_x, int &tile_index, int &pack_index) {
    constexpr int kPackTiles = kNumQHeads / kPack;
    const int t = (int)blockIdx.x + k * (int)gridDim.x;
    if (t >= tiles_x * kPackTiles) return false;
    tile_index = tiles_x - 1 - t / kPackTiles;
    pack_index = t % kPackTiles;
    return true;
  }

  /// The mbarriers at kWsBarOffset: full and empty for K and V a stage, the
  /// tail V tile's, and with kPersistent the two tile-info slots' full and
  /// empty.
  struct Barriers {
    unsigned long long *full_k, *full_v, *empty_k, *empty_v, *v_tail, *info_full, *info_empty;
    __device__ __forceinline__ explicit Barriers(unsigned char *smem)
        : full_k(reinterpret_cast<unsigned long long *>(smem + C::kWsBarOffset)), full_v(full_k + kStages),
          empty_k(full_v + kStages), empty_v(empty_k + kStages), v_tail(empty_v + kStages), info_full(v_tail + 1),
          info_empty(info_full + 2) {}
    /// By one thread, before the block's __syncthreads.
    __device__ __forceinline__ void init() const {
      for (int s = 0; s < kStages; ++s) {
        mbarrier_init(full_k + s, 1);
        mbarrier_init(full_v + s, 1);
        mbarrier_init(empty_k + s, kConsumerThreads);
        mbarrier_init(empty_v + s, kConsumerThreads);
      }
      mbarrier_init(v_tail, 1);
      if constexpr (kPersistent) {
        for (int s = 0; s < 2; ++s) {
          mbarrier_init(info_full + s, 1);
          mbarrier_init(info_empty + s, kConsumerThreads);
        }
      }
    }
  };

  /// The producer warp, once a tail V tile has landed: zeroes its rows from
  /// `from` (the sequence's end) on, which belong to the next sequence or
  /// to nothing (0 x NaN is NaN in P V), then signals the stage's `full`.
  static __device__ __forceinline__ void zero_v_tail(unsigned char *v_dst, int from, void *full, int lane) {
    const int nrows = kBlockN - from;
    for (int e = lane; e < nrows * (kVPad / 64) * 8; e += 32) {
      const int chunk = e % 8, r = from + (e / 8) % nrows, b = e / 8 / nrows;
      *reinterpret_cast<uint4 *>(v_dst + sw128_offset<kBlockN>(r, b * 8 + chunk)) = make_uint4(0, 0, 0, 0);
    }
    fence_proxy_async();
    __syncwarp();
    if (lane == 0) mbarrier_arrive(full);
  }

  /// The ring position of a row tile's it-th K/V tile: the block's
  /// kv_done-th on. (Without kPersistent kv_done is 0 and the position `it`,
  /// spelled so: NVVM simplifies the callee before it sees the 0, and
  /// kv_done + it left another stage test in the one-tile producer.)
  static __device__ __forceinline__ int ring_index(int kv_done, int it) {
    if constexpr (kPersistent) return kv_done + it;
    else return it;
  }

  /// The producer warp (every lane): row tile `tile`'s K and V tiles into
  /// the ring, the block's kv_done-th K/V tile on (the ring's stages and
  /// phases run on across a persistent block's row tiles). A tail V tile
  /// (only ever the row tile's last) lands on v_tail in phase `tail_phase`;
  /// returns whether there was one.
  static __device__ __forceinline__ bool load_row_tile(const Batch &batch, const TileInfo &tile, const Barriers &bar,
                                                       const TensorMap *k_map, const TensorMap *v_map,
                                                       unsigned char *smem, int kv_done, int tail_phase, int lane) {
    bool had_tail = false;
    if constexpr (kPaged) {
      const int *table = batch.block_tables + (long long)tile.seq * batch.max_blocks_per_seq;
      for (int it = 0; it < tile.tiles; ++it) {
        const int n = ring_index(kv_done, it), s = n % kStages, use = n / kStages;
        const int tile_key = (tile.tile_first + it) * kBlockN;
        unsigned char *k_dst = smem + C::kWsKOffset + s * C::kWsKStageBytes;
        unsigned char *v_dst = smem + C::kWsVOffset + s * C::kWsVStageBytes;
        // The table lookups go out before the wait for the stage.
        const int page = box_page(table, tile_key, tile.kv_len, lane);
        const int boxes = __popc(__ballot_sync(0xffffffffu, page >= 0));
        if (use > 0) mbarrier_wait(bar.empty_k + s, (use - 1) & 1);
        load_pages<kQkPad / 64>(k_map, k_dst, bar.full_k + s, tile.kv_head, tile_key, page, boxes, lane);
        if (use > 0) mbarrier_wait(bar.empty_v + s, (use - 1) & 1);
        // V rows from kv_len on (the rest of a loaded page, or stale bytes
        // where no box landed) are zeroed before the consumers' P V.
        const bool tail = tile_key + kBlockN > tile.kv_len;
        load_pages<kVPad / 64>(v_map, v_dst, tail ? bar.v_tail : bar.full_v + s, tile.kv_head, tile_key, page,
                               boxes, lane);
        if (tail) {
          mbarrier_wait(bar.v_tail, tail_phase);
          zero_v_tail(v_dst, tile.kv_len - tile_key, bar.full_v + s, lane);
          had_tail = true;
        }
      }
    } else {
      for (int it = 0; it < tile.tiles; ++it) {
        const int n = ring_index(kv_done, it), s = n % kStages, use = n / kStages;
        const int tile_key = (tile.tile_first + it) * kBlockN;
        unsigned char *k_dst = smem + C::kWsKOffset + s * C::kWsKStageBytes;
        unsigned char *v_dst = smem + C::kWsVOffset + s * C::kWsVStageBytes;
        if (lane == 0) {
          if (use > 0) mbarrier_wait(bar.empty_k + s, (use - 1) & 1);
          mbarrier_arrive_expect_tx(bar.full_k + s, (kQkPad / 64) * kBlockN * 128);
          load_tile<kQkPad / 64>(k_map, k_dst, bar.full_k + s, tile.kv_head, tile.kv_start + tile_key);
          if (use > 0) mbarrier_wait(bar.empty_v + s, (use - 1) & 1);
        }
        // V rows past the sequence end belong to the next sequence (finite)
        // or to whatever follows the last one: the producer zeroes them
        // before the consumers' P V can read them (0 * NaN is NaN).
        const bool tail = tile_key + kBlockN > tile.kv_len;
        if (!tail) {
          if (lane == 0) {
            mbarrier_arrive_expect_tx(bar.full_v + s, (kVPad / 64) * kBlockN * 128);
            load_tile<kVPad / 64>(v_map, v_dst, bar.full_v + s, tile.kv_head, tile.kv_start + tile_key);
          }
        } else {
          if (lane == 0) {
            mbarrier_arrive_expect_tx(bar.v_tail, (kVPad / 64) * kBlockN * 128);
            load_tile<kVPad / 64>(v_map, v_dst, bar.v_tail, tile.kv_head, tile.kv_start + tile_key);
          }
          __syncwarp();
          mbarrier_wait(bar.v_tail, tail_phase);
          zero_v_tail(v_dst, tile.kv_len - tile_key, bar.full_v + s, lane);
          had_tail = true;
        }
      }
    }
    return had_tail;
  }

  /// kPersistent: tile-info slot `slot` (0 or 1) at kWsOwnerOffset.
  static __device__ __forceinline__ TileInfo &info_slot(unsigned char *smem, int slot) {
    static_assert(sizeof(TileInfo) <= C::kWsInfoSlotBytes, "a row tile's info fits its slot");
    return *reinterpret_cast<TileInfo *>(smem + C::kWsOwnerOffset + slot * C::kWsInfoSlotBytes);
  }

  /// kPersistent, the producer warp (every lane): the block's row tiles in
  /// turn, each published in slot k & 1 (free once the consumers are done
  /// with tile k - 2: by then they work on k - 1, whose keys this warp has
  /// issued) and its K/V tiles loaded. The loads read the tile back from
  /// its slot, so that no register holds it (the producer has
  /// kProducerRegisters). A last slot with `more` 0 ends the consumers'
  /// loop.
  static __device__ __forceinline__ void produce_tiles(const Batch &batch, const Barriers &bar,
                                                       const TensorMap *k_map, const TensorMap *v_map,
                                                       unsigned char *smem, int tiles_x, int lane) {
    // K/V tiles issued so far (the ring's stages and phases run on across
    // the block's row tiles) and tail tiles so far (v_tail's phase).
    int kv_done = 0, tail_uses = 0;
    for (int k = 0;; ++k) {
      int tile_index = 0, pack_index = 0;
      const bool more = nth_tile(k, tiles_x, tile_index, pack_index);
      const int slot = k & 1;
      if (k >= 2) mbarrier_wait(bar.info_empty + slot, ((k - 2) >> 1) & 1);
      {
        TileInfo found;
        if (more) found = lookup_tile(batch, tile_index, pack_index, lane);
        found.more = more;
        if (lane == 0) {
          info_slot(smem, slot) = found;
          mbarrier_arrive(bar.info_full + slot);  // (release: the consumers' wait acquires the slot)
        }
      }
      __syncwarp();
      const TileInfo &tile = info_slot(smem, slot);
      if (!more) break;
      if (!tile.valid()) continue;
      tail_uses += load_row_tile(batch, tile, bar, k_map, v_map, smem, kv_done, tail_uses & 1, lane);
      kv_done += tile.tiles;
    }
  }

  /// A consumer warpgroup (c 0 or 1, thread ctid of it): its 64 rows of row
  /// tile `tile`, whose K/V tiles are the block's kv_done-th on in the ring.
  static __device__ __forceinline__ void consume_row_tile(const Batch &batch, const TileInfo &tile,
                                                          const Barriers &bar, unsigned char *smem, int kv_done,
                                                          int c, int ctid) {
    const int warp = ctid / 32, g = (ctid % 32) / 4, t = ctid % 4;
    unsigned char *q_s = smem + c * C::kWsQBytes;
    // Q: the consumer's 64 rows (row0 + 64 c ..), rows past `rows` and
    // padding columns zero-filled.
    {
      const int chunk = ctid % 8, r0 = ctid / 8;
#pragma unroll
      for (int p = 0; p < 64 / 16; ++p) {
        const int r = r0 + 16 * p, f = tile.row0 + 64 * c + r;
        const bool valid = 64 * c + r < tile.rows;
        const act_t *src = batch.query + (valid ? (long long)(tile.q_start + f / kPack) * batch.q_token_stride +
                                                      (long long)(tile.head0 + f % kPack) * batch.q_head_stride
                                                : 0);
#pragma unroll
        for (int b = 0; b < kQkPad / 64; ++b) {
          const int col = b * 64 + chunk * 8;
          cp_async_16(q_s + sw128_offset<64>(r, b * 8 + chunk), src + (col < kQkHeadDim ? col : 0),
                      valid && col < kQkHeadDim);
        }
      }
      cp_async_commit();
      cp_async_wait<0>();
      fence_proxy_async();
      named_barrier_sync(kQBarrier + c, 128);
    }
    // The thread's two rows (64 c + 16 warp + g, + 8) and their key ranges;
    // the keys all of this consumer's rows attend (no mask needed).
    int row_begin[2], row_end[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = 64 * c + 16 * warp + g + 8 * i;
      const int pos = tile.first_pos + (tile.row0 + r) / kPack;
      row_begin[i] = r < tile.rows ? row_key_begin(pos, tile.kv_len) : 0;
      row_end[i] = r < tile.rows ? row_key_end(pos, tile.kv_len) : 0;
    }
    const int c_rows = max(0, min(64, tile.rows - 64 * c));
    const int c_first = tile.first_pos + (tile.row0 + 64 * c) / kPack;
    const int c_last = tile.first_pos + (tile.row0 + 64 * c + max(c_rows, 1) - 1) / kPack;
    const int full_begin = c_rows > 0 ? row_key_begin(c_last, tile.kv_len) : 0;
    const int full_end = c_rows > 0 ? row_key_end(c_first, tile.kv_len) : 0;

    constexpr float kScale = C::kHasSoftcap ? C::kSoftmaxScale / C::kSoftcap : C::kScaleLog2;
    float o[kVPad / 8][4];
#pragma unroll
    for (int d = 0; d < kVPad / 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
    float m[2] = {-infinity(), -infinity()}, l[2] = {0.0f, 0.0f};
    float s[kBlockN / 8][4];
    unsigned p[kBlockN / 16][4];
    const unsigned long long q_desc = sw128_desc(shared_address(q_s), 16, 1024);
    const unsigned long long k_desc = sw128_desc(shared_address(smem + C::kWsKOffset), 16, 1024);
    const unsigned long long v_desc = sw128_desc(shared_address(smem + C::kWsVOffset), kBlockN * 128, 1024);

    if (tile.tiles > 0) {
      // Consumer 0 goes first: consumer 1 hands it the first turn.
      if (c == 1) named_barrier_arrive(kTurnBarrier + 0, kConsumerThreads);
      float corr[2];
      // Tile 0: S alone.
      const int first = kv_done % kStages;
      mbarrier_wait(bar.full_k + first, (kv_done / kStages) & 1);
      named_barrier_sync(kTurnBarrier + c, kConsumerThreads);
      wgmma_fence();
      scores(s, q_desc, k_desc + ((first * C::kWsKStageBytes) >> 4));
      wgmma_commit();
      named_barrier_arrive(kTurnBarrier + 1 - c, kConsumerThreads);
      wgmma_wait<0>();
      fence_regs(s);
      mbarrier_arrive(bar.empty_k + first);
      softmax(s, m, l, corr, row_begin, row_end,
              tile.tile_first * kBlockN < full_begin || (tile.tile_first + 1) * kBlockN > full_end,
              tile.tile_first * kBlockN, kScale);
      pack(p, s);
      // Tile j: S_j, then P_{j-1} V_{j-1}; the softmax of S_j under that.
      for (int it = 1; it < tile.tiles; ++it) {
        const int st = (kv_done + it) % kStages, prev = (kv_done + it - 1) % kStages;
        const int tile_key = (tile.tile_first + it) * kBlockN;
        mbarrier_wait(bar.full_k + st, ((kv_done + it) / kStages) & 1);
        mbarrier_wait(bar.full_v + prev, ((kv_done + it - 1) / kStages) & 1);
        named_barrier_sync(kTurnBarrier + c, kConsumerThreads);
        wgmma_fence();
        scores(s, q_desc, k_desc + ((st * C::kWsKStageBytes) >> 4));
        wgmma_commit();
        values(o, p, v_desc + ((prev * C::kWsVStageBytes) >> 4));
        wgmma_commit();
        named_barrier_arrive(kTurnBarrier + 1 - c, kConsumerThreads);
        wgmma_wait<1>();
        fence_regs(s);
        mbarrier_arrive(bar.empty_k + st);
        softmax(s, m, l, corr, row_begin, row_end, tile_key < full_begin || tile_key + kBlockN > full_end,
                tile_key, kScale);
        wgmma_wait<0>();
        fence_regs(o);
        mbarrier_arrive(bar.empty_v + prev);
#pragma unroll
        for (int d = 0; d < kVPad / 8; ++d) {
          o[d][0] *= corr[0];
          o[d][1] *= corr[0];
          o[d][2] *= corr[1];
          o[d][3] *= corr[1];
        }
        pack(p, s);
      }
      // The last tile's P V, in turn; consumer 1's last turn hands over nothing.
      const int last = (kv_done + tile.tiles - 1) % kStages;
      mbarrier_wait(bar.full_v + last, ((kv_done + tile.tiles - 1) / kStages) & 1);
      named_barrier_sync(kTurnBarrier + c, kConsumerThreads);
      wgmma_fence();
      values(o, p, v_desc + ((last * C::kWsVStageBytes) >> 4));
      wgmma_commit();
      if (c == 0) named_barrier_arrive(kTurnBarrier + 1, kConsumerThreads);
      wgmma_wait<0>();
      fence_regs(o);
      mbarrier_arrive(bar.empty_v + last);
    }

    // ---- epilogue: normalise and store the thread's rows ----
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float li = l[i];
      li += __shfl_xor_sync(0xffffffffu, li, 1);
      li += __shfl_xor_sync(0xffffffffu, li, 2);
      const int r = 64 * c + 16 * warp + g + 8 * i;
      // A row that saw no key (m = -inf) is 0; else l >= 1 (its largest
      // logit contributes exp2(0)), and a NaN stays NaN.
      float inv;
      if constexpr (C::kSinks) {
        // The sink adds one learned logit (log2 units here) to the
        // denominator only (attnc_attention.cuh's write_output).
        const int f = tile.row0 + min(r, tile.rows - 1);
        const float sink = batch.sinks[tile.head0 + f % kPack] * 1.4426950408889634f;
        // m is in raw score units (log2 units with soft-cap): times the scale, log2.
        const float m_units = C::kHasSoftcap ? 1.0f : kScale;
        const float m_log2 = m[i] == -infinity() ? -infinity() : m[i] * m_units;
        const float m_all = fmaxf(m_log2, sink);
        const float weight = m[i] == -infinity() ? 0.0f : exp2f(m_log2 - m_all);
        inv = weight / (li * weight + exp2f(sink - m_all));
      } else {
        inv = m[i] == -infinity() ? 0.0f : 1.0f / li;
      }
      if constexpr (C::kHasValueScale) inv *= C::kValueScale;
      if (r < tile.rows) {
        const int f = tile.row0 + r;
        const long long out_row = (long long)(tile.q_start + f / kPack) * kNumQHeads + tile.head0 + f % kPack;
        act_t *out = batch.output + out_row * kVHeadDim;
        float gate_head = 1.0f;
        if constexpr (C::kGate && C::kGateHeadScalar) gate_head = sigmoid(to_float(batch.gate[out_row]));
#pragma unroll
        for (int d = 0; d < kVPad / 8; ++d) {
          const int col = d * 8 + 2 * t;
          if (col < kVHeadDim) {
            float x0 = o[d][2 * i] * inv, x1 = o[d][2 * i + 1] * inv;
            if constexpr (C::kGate) {
              if constexpr (C::kGateHeadScalar) {
                x0 *= gate_head, x1 *= gate_head;
              } else {
                const act_t *gate = batch.gate + out_row * kVHeadDim + col;
                x0 *= sigmoid(to_float(gate[0]));
                x1 *= sigmoid(to_float(gate[1]));
              }
            }
            *reinterpret_cast<unsigned *>(out + col) = pack2<act_t>(x0, x1);
          }
        }
      }
    }
  }

  /// kPersistent, a consumer warpgroup: the row tiles as the producer
  /// publishes them. A slot stays its tile's until both consumers release
  /// it at the end (the producer fills the other one meanwhile): its fields
  /// are read from shared memory where used, not held in registers.
  static __device__ __forceinline__ void consume_tiles(const Batch &batch, const Barriers &bar, unsigned char *smem,
                                                       int c, int ctid) {
    int kv_done = 0;  // K/V tiles consumed so far
    for (int k = 0;; ++k) {
      const int slot = k & 1;
      mbarrier_wait(bar.info_full + slot, (k >> 1) & 1);
      const TileInfo &tile = info_slot(smem, slot);
      if (!tile.more) break;
      if (tile.valid()) {
        consume_row_tile(batch, tile, bar, smem, kv_done, c, ctid);
        kv_done += tile.tiles;
      }
      mbarrier_arrive(bar.info_empty + slot);
    }
  }

  static __device__ __forceinline__ void run(const Batch &batch, const TensorMap *k_map, const TensorMap *v_map) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // Programmatic dependent launch (the ABI flag): every block waits for
    // the previous kernel before its first global access, then lets the
    // next kernel's blocks start (attnc_device.cuh's rule).
    grid_dependency_wait();
    launch_dependents();
    const int num_seqs = batch.num_seqs;
    if (num_seqs <= 0 || blockIdx.z != 0) return;  // malformed batch, or a split beyond the first
    const int tid = threadIdx.x;
    TileInfo tile;  // the block's own row tile (not kPersistent)
    if constexpr (!kPersistent) {
      tile = own_tile(batch, smem, tid);
      if (!tile.valid()) return;  // the sequence's spare block (uniform)
      add_heads_and_keys(tile, (int)blockIdx.y);
    }
    const Barriers bar(smem);
    if (tid == 0) bar.init();
    __syncthreads();
    const int wg = tid / 128;
    if (wg == 0) {
      // ---- producer ----
      setmaxnreg_dec<C::kProducerRegisters>();
      if (tid >= 32) return;
      if constexpr (kPersistent) {
        // Row tiles of the ABI's grid x: one spare a sequence.
        const int tiles_x = (int)(((long long)batch.num_tokens * kPack + kBlockM - 1) / kBlockM) + num_seqs;
        produce_tiles(batch, bar, k_map, v_map, smem, tiles_x, tid);
      } else {
        load_row_tile(batch, tile, bar, k_map, v_map, smem, 0, 0, tid);
      }
      return;
    }

    // ---- consumers ----
    setmaxnreg_inc<C::kConsumerRegisters>();
    const int c = wg - 1;             // consumer 0 or 1
    const int ctid = tid - 128 * wg;  // thread within the consumer
    if constexpr (kPersistent) consume_tiles(batch, bar, smem, c, ctid);
    else consume_row_tile(batch, tile, bar, smem, 0, c, ctid);
  }
};

/// The warp-specialised attention over ragged contiguous K/V
/// (attn.varlen_attention, schedule mma "wgmma_ws"): the parameters of
/// varlen_attention<Config> in attnc_attention.cuh plus the tensor maps over
/// key and value ([tokens, kv_heads, head_dim] views, boxes of kBlockN rows
/// x 64 values of one head, 128-byte swizzle). The workspace is unused (no
/// split-KV).
template <class C>
__device__ __forceinline__ void varlen_attention_ws(
    const typename C::act_t *query, const typename C::act_t *key, const typename C::act_t *value,
    long long query_token_stride, long long query_head_stride, long long key_token_stride,
    long long key_head_stride, long long value_token_stride, long long value_head_stride,
    const TensorMap *key_map, const TensorMap *value_map, const int *cu_seqlens_q, const int *cu_seqlens_k,
    typename C::act_t *output, float *workspace, int num_tokens, int num_seqs, int num_kv_splits) {
  static_assert(!C::kFp8 && !C::kSinks && !C::kGate, "varlen_attention: no fp8 cache, sinks or gate");
  (void)key, (void)value, (void)key_token_stride, (void)key_head_stride, (void)value_token_stride;
  (void)value_head_stride, (void)workspace, (void)num_kv_splits;
  typename WsAttention<C>::Batch batch;
  batch.query = query;
  batch.q_token_stride = query_token_stride;
  batch.q_head_stride = query_head_stride;
  batch.cu_seqlens_q = cu_seqlens_q;
  batch.cu_seqlens_k = cu_seqlens_k;
  batch.output = output;
  batch.num_seqs = num_seqs;
  batch.num_tokens = num_tokens;
  WsAttention<C>::run(batch, key_map, value_map);
}

/// The warp-specialised prefill kernel of attn.paged_attention (a Config
/// with kPagedKv): the parameters of paged_attention_tma<Config> in
/// attnc_attention.cuh (the caches' tensor maps over [num_blocks,
/// block_size, kv_heads, head_dim], boxes of min(block_size, kBlockN) rows x
/// 64 values of one head, 128-byte swizzle). The query is [num_tokens, Hq,
/// Dqk] contiguous, the output [num_tokens, Hq, Dv] contiguous; the cache
/// strides, k_scale/v_scale (no fp8 cache here) and the workspace (no
/// split-KV) are unread.
template <class C>
__device__ __forceinline__ void paged_attention_ws(
    const typename C::act_t *query, const typename C::cache_t *k_cache, const typename C::cache_t *v_cache,
    long long k_cache_block_stride, long long k_cache_token_stride, long long k_cache_head_stride,
    long long v_cache_block_stride, long long v_cache_token_stride, long long v_cache_head_stride,
    const TensorMap *k_cache_map, const TensorMap *v_cache_map, const int *block_tables, const int *seq_lens,
    const int *query_start_loc, const float *sinks, const float *k_scale, const float *v_scale,
    const typename C::act_t *gate, typename C::act_t *output, float *workspace, int num_tokens, int num_seqs,
    int max_blocks_per_seq, int num_kv_splits) {
  static_assert(PagedKv<C>::value && !C::kFp8, "paged_attention_ws: a Config with kPagedKv, no fp8 cache");
  (void)k_cache, (void)v_cache, (void)k_cache_block_stride, (void)k_cache_token_stride, (void)k_cache_head_stride;
  (void)v_cache_block_stride, (void)v_cache_token_stride, (void)v_cache_head_stride, (void)k_scale, (void)v_scale;
  (void)workspace, (void)num_kv_splits;
  typename WsAttention<C>::Batch batch;
  batch.query = query;
  batch.q_token_stride = (long long)C::kNumQHeads * C::kQkHeadDim;
  batch.q_head_stride = C::kQkHeadDim;
  batch.cu_seqlens_q = query_start_loc;
  batch.cu_seqlens_k = seq_lens;
  batch.output = output;
  batch.num_seqs = num_seqs;
  batch.num_tokens = num_tokens;
  batch.block_tables = block_tables;
  batch.max_blocks_per_seq = max_blocks_per_seq;
  batch.sinks = sinks;
  batch.gate = gate;
  WsAttention<C>::run(batch, k_cache_map, v_cache_map);
}

} // namespace attnc

#endif // ATTNC_ATTENTION_WS_CUH
