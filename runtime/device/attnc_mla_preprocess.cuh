// attnc MLA preprocess kernel: handed to NVRTC as the in-memory header
// "attnc_mla_preprocess.cuh". One launch, per token: RMSNorm of the latent
// c_kv = kv_a[t, :R] (times latent_scale when it is not 1), rope on
// k_pe = kv_a[t, R:] and on every head of q_rope[t], the row [c_kv | k_pe]
// into the latent cache (slot < 0: padding, nothing written), and the
// rows out: latent_out[t] and q_rope_out[t, h].
//
// A generated source defines a `Config` and an extern "C" entry point that
// fills `Params<Config>` from its arguments and calls `Kernel<Config>::run`.
// The Config derives from `Defaults` and has:
//  - act_t, cache_t, slot_t, position_t: the element and index types;
//  - num_heads, kv_lora_rank (R), rope_head_dim (P), block_size, norm_eps,
//    rope_style, rope_attention_factor, inv_freq(i);
//  - the features it has (rope_deinterleave, has_latent_scale with
//    latent_scale, fp8_cache);
//  - the schedule (#attn.mla_preprocess_schedule): vector_width,
//    warps_per_token, tokens_per_block, threads_per_block,
//    min_blocks_per_sm (the launch bound), token_steps (tokens each token
//    place handles in turn, the next one's loads in flight during this
//    one's math and stores), l2_prefetch (row loads with the L2 256-byte
//    prefetch hint), streaming_stores (outputs stored evict-first),
//    stage_in_shared (every step's row loads at once, cp.async into
//    shared memory instead of registers).
// Every optional feature is an `if constexpr` on the Config, so a kernel
// without it has no code for it.
//
// Work. A rope "unit" is vector_width rotation pairs: two vectors of
// vector_width elements in, two out. Unit u of a head of P elements reads
// vectors (u, u + P/2/VW) in the neox style (halves) and (2u, 2u + 1) in
// the gptj style (interleaved pairs), and writes where it read, except
// when de-interleaving: gptj pairs in, vectors (u, u + P/2/VW) out (all
// the "x1 cos - x2 sin" values of the head, then all the
// "x2 cos + x1 sin" ones). Pair k of unit u rotates by inverse frequency
// u * VW + k in every style. Each token has a latent warp (c_kv: vectors
// lane, lane + 32, ...; k_pe: its units on lanes 0..) and warps_per_token
// query warps, whose lanes share the token's H * P/(2 VW) query units.
//
// Aliasing. latent_out may be kv_a and q_rope_out may be q_rope (in
// place): their pointers are not __restrict__. Every element is read
// before it is written by the thread that writes it, except when
// de-interleaving: a unit writes vectors other units of its head read, so
// the lanes of a head (consecutive lanes of one warp: its units divide
// 32, a rule attn-prepare-emission checks) meet at a __syncwarp between
// their loads and their stores.
#pragma once

#include "attnc_device.cuh"

namespace attnc::mla_preprocess {

/// neox rotates element j with j + P/2 (halves), gptj 2i with 2i + 1.
enum class RopeStyle { neox, gptj };

/// What a Config does not say: every optional feature absent.
struct Defaults {
  // gptj pairs in, the rotated values out in halves order (Hugging Face's
  // apply_rotary_pos_emb_interleave: DeepSeek's checkpoints).
  static constexpr bool rope_deinterleave = false;
  // The normalised c_kv times latent_scale (LongCat's
  // sqrt(hidden / kv_lora_rank)).
  static constexpr bool has_latent_scale = false;
  static constexpr float latent_scale = 1.0f;
  // fp8 cache: rows stored divided by *cache_scale.
  static constexpr bool fp8_cache = false;
};

/// The kernel's arguments (cache_scale stays null without an fp8 cache).
/// Strides are in elements; the innermost dim of every tensor is contiguous.
template <class Config> struct Params {
  const typename Config::act_t *kv_a;
  const typename Config::act_t *q_rope;
  const typename Config::slot_t *slot_mapping;
  const typename Config::position_t *positions;
  const typename Config::act_t *kv_norm_weight;
  typename Config::cache_t *latent_cache;
  const float *cache_scale;
  typename Config::act_t *latent_out;
  typename Config::act_t *q_rope_out;
  long long kv_a_row_stride, latent_out_row_stride;
  long long q_rope_token_stride, q_rope_head_stride;
  long long q_rope_out_token_stride, q_rope_out_head_stride;
  long long latent_cache_block_stride, latent_cache_token_stride;
  int num_tokens;
};

template <class Config> struct Kernel {
  using act_t = typename Config::act_t;
  using cache_t = typename Config::cache_t;
  // The Config's numbers under the kernel's names, as enumerators: NVRTC
  // gives every static constexpr data member a device copy in the cubin.
  enum : int {
    kHeads = Config::num_heads,
    kRank = Config::kv_lora_rank,
    kRope = Config::rope_head_dim,
    kHalf = kRope / 2,
    kBlockSize = Config::block_size,
    kVectorWidth = Config::vector_width,
    // Rope units per head, and vectors per half head.
    kUnits = kHalf / kVectorWidth,
    // A token's threads: its latent warp, then its query warps.
    kThreadsPerToken = 32 * (Config::warps_per_token + 1),
    kQueryThreads = 32 * Config::warps_per_token,
    kTokensPerBlock = Config::tokens_per_block,
    kThreadsPerBlock = Config::threads_per_block,
    // The query's units of one token, and each thread's share of them.
    kQueryUnits = kHeads * kUnits,
    kQueryItems = (kQueryUnits + kQueryThreads - 1) / kQueryThreads,
    // Items whose loads are issued together (8 vectors, 128 bytes).
    kBatch = kQueryItems < 4 ? kQueryItems : 4,
    // Vectors of c_kv each lane of the latent warp holds.
    kLatentChunks = (kRank / kVectorWidth + 31) / 32,
    kKpeUnitsPerLane = (kUnits + 31) / 32,
  };
  enum : bool {
    kNeox = Config::rope_style == RopeStyle::neox,
    kDeinterleave = Config::rope_deinterleave,
    // A thread's units all have the same u (its cos and sin are loaded
    // once): the lanes of a token are a multiple of the units per head.
    kFixedUnit = kQueryThreads % kUnits == 0,
  };
  enum : int {
    // Tokens each token place handles in turn, the tokens of a block, and
    // the load buffers (two: the next token's loads fly during this one's
    // math and stores).
    kSteps = Config::token_steps,
    kTokensPerGroup = kTokensPerBlock * kSteps,
    kBuffers = kSteps > 1 ? 2 : 1,
  };
  static_assert(kThreadsPerBlock == kThreadsPerToken * kTokensPerBlock, "schedule");
  static_assert(kSteps >= 1, "schedule");
  static_assert(kRank % kVectorWidth == 0 && kHalf % kVectorWidth == 0, "schedule");
  static_assert(!kDeinterleave || !kNeox, "rope_deinterleave is gptj only");
  // A head's units on consecutive lanes of one warp, in one batch item.
  static_assert(!kDeinterleave || 32 % kUnits == 0, "rope_deinterleave: units divide 32");

  using Packed = attnc::Vec<act_t, kVectorWidth>;
  enum : int {
    // The packed vectors a thread holds across the barrier: a query
    // thread's batch (two a unit), or the latent warp's c_kv and k_pe. One
    // array for both roles: registers held on either path are live on both
    // (liveness does not know that a thread takes one), so separate arrays
    // would cost their sum.
    kQueryHeld = 2 * kBatch,
    kLatentHeld = kLatentChunks + 2 * kKpeUnitsPerLane,
    kHeld = kQueryHeld > kLatentHeld ? kQueryHeld : kLatentHeld,
  };
  enum : int {
    // stage_in_shared: the steps whose copies fly at once, as many as fit
    // 48 KB of static shared memory beside the angle tables, at most
    // token_steps and 8 (cp.async.wait_group's immediate).
    kStageBytes = kThreadsPerBlock * (kHeld * int(sizeof(Packed)) +
                                      int(sizeof(typename Config::slot_t))),
    kTableBytes = 2 * kTokensPerGroup * kHalf * int(sizeof(float)),
    kStageFit = (48 * 1024 - kTableBytes) / kStageBytes,
    kStages = kStageFit < kSteps ? (kStageFit < 8 ? kStageFit : 8) : (kSteps < 8 ? kSteps : 8),
  };
  static_assert(!Config::stage_in_shared || kStages >= 1,
                "stage_in_shared: one step's stage (held vectors x threads_per_block) and the "
                "angle tables must fit 48 KB of static shared memory");

  /// One vector of an input row (kv_a, q_rope): a plain load, or with
  /// l2_prefetch one that asks L2 to fetch the 256-byte block around it
  /// (the rows are read whole: longer DRAM bursts). volatile with a memory
  /// clobber: it stays where the plain load was (before the barriers that
  /// order it ahead of other lanes' in-place stores).
  static __device__ __forceinline__ Packed load_row_vec(const act_t *src) {
    if constexpr (!Config::l2_prefetch) {
      return *reinterpret_cast<const Packed *>(src);
    } else {
      Packed out;
      if constexpr (sizeof(Packed) == 16) {
        uint4 &v = *reinterpret_cast<uint4 *>(&out);
        asm volatile("ld.global.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(src)
                     : "memory");
      } else if constexpr (sizeof(Packed) == 8) {
        uint2 &v = *reinterpret_cast<uint2 *>(&out);
        asm volatile("ld.global.L2::256B.v2.u32 {%0, %1}, [%2];"
                     : "=r"(v.x), "=r"(v.y)
                     : "l"(src)
                     : "memory");
      } else if constexpr (sizeof(Packed) == 4) {
        unsigned &v = *reinterpret_cast<unsigned *>(&out);
        asm volatile("ld.global.L2::256B.u32 %0, [%1];" : "=r"(v) : "l"(src) : "memory");
      } else {
        unsigned short &v = *reinterpret_cast<unsigned short *>(&out);
        asm volatile("ld.global.L2::256B.u16 %0, [%1];" : "=h"(v) : "l"(src) : "memory");
      }
      return out;
    }
  }

  /// An output vector (latent_out, q_rope_out, the cache row): L2-only, or
  /// evict-first with streaming_stores.
  template <typename T>
  static __device__ __forceinline__ void store_out(T *dst, const float (&in)[kVectorWidth]) {
    attnc::store_vec<T, kVectorWidth,
                     Config::streaming_stores ? attnc::StoreCache::cs : attnc::StoreCache::cg>(
        dst, in);
  }

  /// The element offsets of unit u's input vectors in a head.
  static __device__ __forceinline__ int in_first(int u) {
    return kNeox ? u * kVectorWidth : 2 * u * kVectorWidth;
  }
  static __device__ __forceinline__ int in_second(int u) {
    return kNeox ? (u + kUnits) * kVectorWidth : (2 * u + 1) * kVectorWidth;
  }

  /// Unit u's two input vectors, packed in their own type, into x[0..1].
  static __device__ __forceinline__ void load_unit(const act_t *head, int u, Packed *x) {
    x[0] = load_row_vec(head + in_first(u));
    x[1] = load_row_vec(head + in_second(u));
  }

  /// Rotates one unit by its angles (cos, sin of pairs u * VW + k) into
  /// the two output vectors, in the order they are stored (store_unit).
  static __device__ __forceinline__ void rotate(const Packed *x, const float (&cs)[kVectorWidth],
                                                const float (&sn)[kVectorWidth],
                                                float (&first)[kVectorWidth],
                                                float (&second)[kVectorWidth]) {
#pragma unroll
    for (int k = 0; k < kVectorWidth; ++k) {
      // Pair k: neox (a[k], b[k]); gptj (e[2k], e[2k + 1]) of e = [a | b].
      float x1, x2;
      if constexpr (kNeox) {
        x1 = attnc::to_float(x[0].v[k]);
        x2 = attnc::to_float(x[1].v[k]);
      } else {
        const Packed &half = x[2 * k < kVectorWidth ? 0 : 1];
        x1 = attnc::to_float(half.v[(2 * k) % kVectorWidth]);
        x2 = attnc::to_float(half.v[(2 * k + 1) % kVectorWidth]);
      }
      const float r1 = x1 * cs[k] - x2 * sn[k];
      const float r2 = x2 * cs[k] + x1 * sn[k];
      if constexpr (kNeox || kDeinterleave) {
        first[k] = r1;
        second[k] = r2;
      } else {
        // Back in interleaved pairs, over the two vectors.
        float(&out)[kVectorWidth] = 2 * k < kVectorWidth ? first : second;
        out[(2 * k) % kVectorWidth] = r1;
        out[(2 * k + 1) % kVectorWidth] = r2;
      }
    }
  }

  /// Stores a rotated unit u into its head: where it was read (neox, gptj)
  /// or in halves order (de-interleaved).
  template <typename T>
  static __device__ __forceinline__ void store_unit(T *head, int u,
                                                    const float (&first)[kVectorWidth],
                                                    const float (&second)[kVectorWidth]) {
    if constexpr (kNeox || kDeinterleave) {
      store_out<T>(head + u * kVectorWidth, first);
      store_out<T>(head + (u + kUnits) * kVectorWidth, second);
    } else {
      store_out<T>(head + 2 * u * kVectorWidth, first);
      store_out<T>(head + (2 * u + 1) * kVectorWidth, second);
    }
  }

  /// The angles of unit u of the token in row `row` of the block's tables.
  static __device__ __forceinline__ void unit_angles(const float (*cos_table)[kHalf],
                                                     const float (*sin_table)[kHalf], int row,
                                                     int u, float (&cs)[kVectorWidth],
                                                     float (&sn)[kVectorWidth]) {
    attnc::load_floats<kVectorWidth>(&cos_table[row][u * kVectorWidth], cs);
    attnc::load_floats<kVectorWidth>(&sin_table[row][u * kVectorWidth], sn);
  }

  /// The head of query unit `unit` (token-relative) and its u.
  static __device__ __forceinline__ int unit_head(int unit) { return unit / kUnits; }
  static __device__ __forceinline__ int unit_index(int unit) { return unit % kUnits; }

  /// What a token place loads ahead of the token's math: the first batch
  /// of query units (query warps), or c_kv, the k_pe units and the slot
  /// (latent warp; -1 elsewhere).
  struct Loaded {
    Packed held[kHeld];
    long long slot;
  };

  /// Step 1 of a token: its loads, issued together. `put(i, src)` moves
  /// the vector at src into held vector i (a register load, or a copy into
  /// the thread's shared-memory stage); the slot is a register load.
  template <class Put>
  static __device__ __forceinline__ void load_token(
      const Params<Config> &p, int token, bool active, bool latent_warp, int jq, int lane, Put put,
      long long &slot, typename Config::slot_t *slot_by_copy = nullptr) {
    slot = -1;
    if (!latent_warp) {
      const act_t *q_in = p.q_rope + (long long)token * p.q_rope_token_stride;
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int unit = jq + b * kQueryThreads;
        if (active && unit < kQueryUnits) {
          const act_t *head = q_in + unit_head(unit) * p.q_rope_head_stride;
          put(2 * b, head + in_first(unit_index(unit)));
          put(2 * b + 1, head + in_second(unit_index(unit)));
        }
      }
    } else if (active) {
      const act_t *kv_row = p.kv_a + (long long)token * p.kv_a_row_stride;
#pragma unroll
      for (int c = 0; c < kLatentChunks; ++c) {
        const int e = (c * 32 + lane) * kVectorWidth;
        if (e < kRank)
          put(c, kv_row + e);
      }
#pragma unroll
      for (int c = 0; c < kKpeUnitsPerLane; ++c) {
        const int u = c * 32 + lane;
        if (u < kUnits) {
          put(kLatentChunks + 2 * c, kv_row + kRank + in_first(u));
          put(kLatentChunks + 2 * c + 1, kv_row + kRank + in_second(u));
        }
      }
      if (slot_by_copy)
        copy_async_index(slot_by_copy, p.slot_mapping + token);
      else
        slot = (long long)p.slot_mapping[token];
    }
  }

  /// A token's loads into registers.
  static __device__ __forceinline__ void load_token(const Params<Config> &p, int token, bool active,
                                                    bool latent_warp, int jq, int lane,
                                                    Loaded &in) {
    load_token(
        p, token, active, latent_warp, jq, lane,
        [&](int i, const act_t *src) { in.held[i] = load_row_vec(src); }, in.slot);
  }

  /// One vector copied from global into shared memory (cp.async: no
  /// register holds it in flight), with the L2 prefetch hint when
  /// l2_prefetch; .cg (L2 only) for 16 bytes, .ca for 4 and 8.
  static __device__ __forceinline__ void copy_async(Packed *dst, const act_t *src) {
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    constexpr int kBytes = int(sizeof(Packed));
    static_assert(!Config::stage_in_shared || kBytes == 4 || kBytes == 8 || kBytes == 16,
                  "stage_in_shared: cp.async moves 4, 8 or 16 bytes (vector_width >= 2)");
    if constexpr (kBytes == 16 && Config::l2_prefetch)
      asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(to), "l"(src)
                   : "memory");
    else if constexpr (kBytes == 16)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(src) : "memory");
    else if constexpr (Config::l2_prefetch)
      asm volatile("cp.async.ca.shared.global.L2::256B [%0], [%1], %2;" ::"r"(to), "l"(src),
                   "n"(kBytes)
                   : "memory");
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(to), "l"(src), "n"(kBytes)
                   : "memory");
  }

  /// A slot index (4 or 8 bytes) copied into shared memory.
  static __device__ __forceinline__ void copy_async_index(typename Config::slot_t *dst,
                                                          const typename Config::slot_t *src) {
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(to), "l"(src),
                 "n"(int(sizeof(typename Config::slot_t)))
                 : "memory");
  }

  /// Waits until at most `pending` of this thread's cp.async groups are in
  /// flight (an immediate in PTX: `pending` is a constant once the steps
  /// are unrolled, and the switch folds).
  static __device__ __forceinline__ void wait_async(int pending) {
    switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
    }
  }

  /// The angles of the block's tokens (rows of the tables), then the
  /// block's barrier.
  static __device__ __forceinline__ void fill_tables(const Params<Config> &p, int first_token,
                                                     float (*cos_table)[kHalf],
                                                     float (*sin_table)[kHalf]) {
#pragma unroll 1
    for (int i = threadIdx.x; i < kTokensPerGroup * kHalf; i += kThreadsPerBlock) {
      const int ti = i / kHalf, f = i % kHalf;
      float c = 1.0f, s = 0.0f;
      if (first_token + ti < p.num_tokens)
        attnc::rope_cos_sin((long long)p.positions[first_token + ti], Config::inv_freq(f), &c,
                            &s);
      cos_table[ti][f] = c * Config::rope_attention_factor;
      sin_table[ti][f] = s * Config::rope_attention_factor;
    }
    __syncthreads();
  }

  /// Steps 3 and 4 of a token (its loads in `in`, its angles in row `row`
  /// of the block's tables): the query units, or the latent row.
  static __device__ __forceinline__ void finish_token(const Params<Config> &p, int token,
                                                      bool active, int row, bool latent_warp,
                                                      int jq, int lane, Loaded &in,
                                                      const float (*cos_table)[kHalf],
                                                      const float (*sin_table)[kHalf]) {
    // 3. The query units, a batch of loads in flight at a time.
    if (!latent_warp) {
      const act_t *q_in = p.q_rope + (long long)token * p.q_rope_token_stride;
      act_t *q_out = p.q_rope_out + (long long)token * p.q_rope_out_token_stride;
      float cs[kVectorWidth], sn[kVectorWidth];
      if constexpr (kFixedUnit)
        unit_angles(cos_table, sin_table, row, unit_index(jq), cs, sn);
#pragma unroll 1
      for (int item0 = 0; item0 < kQueryItems; item0 += kBatch) {
        if (item0 > 0) {
#pragma unroll
          for (int b = 0; b < kBatch; ++b) {
            const int unit = jq + (item0 + b) * kQueryThreads;
            if (active && item0 + b < kQueryItems && unit < kQueryUnits)
              load_unit(q_in + unit_head(unit) * p.q_rope_head_stride, unit_index(unit),
                        in.held + 2 * b);
          }
          // In place, a de-interleaving unit writes what its head's other
          // units (lanes of this warp) read: all of them load first.
          if constexpr (kDeinterleave)
            __syncwarp();
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          const int unit = jq + (item0 + b) * kQueryThreads;
          if (active && item0 + b < kQueryItems && unit < kQueryUnits) {
            if constexpr (!kFixedUnit)
              unit_angles(cos_table, sin_table, row, unit_index(unit), cs, sn);
            float first[kVectorWidth], second[kVectorWidth];
            rotate(in.held + 2 * b, cs, sn, first, second);
            store_unit<act_t>(q_out + unit_head(unit) * p.q_rope_out_head_stride,
                              unit_index(unit), first, second);
          }
        }
      }
      return;
    }

    // 4. The latent row: RMSNorm of c_kv (float sums over the warp), k_pe
    //    rotated, both into latent_out and the cache row. The values are
    //    converted from their packed loads where used (fewer registers).
    const Packed *latent = in.held, *kpe = in.held + kLatentChunks;
    // The weights are read here, not with the row: the same for every
    // token, they come from L2, and hold no registers across the barrier.
    Packed weight[kLatentChunks];
#pragma unroll
    for (int c = 0; c < kLatentChunks; ++c) {
      const int e = (c * 32 + lane) * kVectorWidth;
      if (active && e < kRank)
        weight[c] = *reinterpret_cast<const Packed *>(p.kv_norm_weight + e);
    }
    float sum_squares = 0.0f;
#pragma unroll
    for (int c = 0; c < kLatentChunks; ++c)
      if (active && (c * 32 + lane) * kVectorWidth < kRank)
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i) {
          const float x = attnc::to_float(latent[c].v[i]);
          sum_squares += x * x;
        }
    sum_squares = attnc::warp_sum(sum_squares);
    if (!active)
      return;
    float cache_inv_scale = 1.0f;
    if constexpr (Config::fp8_cache)
      cache_inv_scale = 1.0f / *p.cache_scale;
    act_t *out_row = p.latent_out + (long long)token * p.latent_out_row_stride;
    cache_t *cache_row = nullptr;
    if (in.slot >= 0) {
      const attnc::CacheStrides strides = attnc::make_cache_strides(
          p.latent_cache_block_stride, p.latent_cache_token_stride, 0);
      cache_row = p.latent_cache +
                  attnc::cache_slot_offset<kBlockSize>(strides, (unsigned long long)in.slot);
    }
    // k_pe first (its registers free before c_kv's). A de-interleaving
    // unit writes vectors other lanes read (latent_out may be kv_a): every
    // lane's loads of this token came before a barrier (the block's, or the
    // warp's at the top of a later step).
#pragma unroll
    for (int c = 0; c < kKpeUnitsPerLane; ++c) {
      const int u = c * 32 + lane;
      if (u < kUnits) {
        float cs[kVectorWidth], sn[kVectorWidth], first[kVectorWidth], second[kVectorWidth];
        unit_angles(cos_table, sin_table, row, u, cs, sn);
        rotate(kpe + 2 * c, cs, sn, first, second);
        store_unit<act_t>(out_row + kRank, u, first, second);
        if (cache_row) {
          if constexpr (Config::fp8_cache) {
#pragma unroll
            for (int i = 0; i < kVectorWidth; ++i) {
              first[i] *= cache_inv_scale;
              second[i] *= cache_inv_scale;
            }
          }
          store_unit<cache_t>(cache_row + kRank, u, first, second);
        }
      }
    }
    float inv_rms = rsqrtf(sum_squares / kRank + Config::norm_eps);
    if constexpr (Config::has_latent_scale)
      inv_rms *= Config::latent_scale;
#pragma unroll
    for (int c = 0; c < kLatentChunks; ++c) {
      const int e = (c * 32 + lane) * kVectorWidth;
      if (e < kRank) {
        float y[kVectorWidth];
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i)
          y[i] = attnc::to_float(latent[c].v[i]) * inv_rms * attnc::to_float(weight[c].v[i]);
        store_out<act_t>(out_row + e, y);
        if (cache_row) {
          if constexpr (Config::fp8_cache) {
#pragma unroll
            for (int i = 0; i < kVectorWidth; ++i) y[i] *= cache_inv_scale;
          }
          store_out<cache_t>(cache_row + e, y);
        }
      }
    }
  }

  static __device__ __forceinline__ void run(const Params<Config> &p) {
    const int t = threadIdx.x / kThreadsPerToken; // token place in the block
    const int j = threadIdx.x % kThreadsPerToken; // thread within the token
    const int lane = j % 32;
    const bool latent_warp = j < 32;
    const int jq = j - 32; // thread within the token's query warps
    // Step s of place t is token first_token + s * kTokensPerBlock + t
    // (row s * kTokensPerBlock + t of the angle tables).
    const int first_token = blockIdx.x * kTokensPerGroup;
    // Programmatic dependent launch (attnc_device.cuh): every global access
    // (kv_a, q_rope, positions, the cache) comes after the wait; the
    // dependents (latent_attention) may launch at once, their own wait
    // still waits for this grid.
    attnc::grid_dependency_wait();
    attnc::launch_dependents();
    __shared__ __align__(16) float cos_table[kTokensPerGroup][kHalf];
    __shared__ __align__(16) float sin_table[kTokensPerGroup][kHalf];

    if constexpr (Config::stage_in_shared) {
      // 1. The first kStages steps' loads at once, each step one cp.async
      //    group, into the threads' stage slots ([stage][held vector]
      //    [thread]: a warp's 16-byte slots side by side, no bank
      //    conflicts; the latent warp's slot index beside them); a later
      //    step's go into the stage the step kStages earlier freed, as soon
      //    as its values are in registers. The steps are a loop (the stage
      //    is an address, not registers), so code and registers stay those
      //    of one step.
      using slot_t = typename Config::slot_t;
      __shared__ Packed stage[kStages][kHeld][kThreadsPerBlock];
      __shared__ slot_t stage_slot[kStages][kThreadsPerBlock];
      auto issue_step = [&](int step) {
        if (step < kSteps) {
          const int token = first_token + step * kTokensPerBlock + t;
          const bool active = token < p.num_tokens;
          Packed(*slot_of)[kThreadsPerBlock] = stage[step % kStages];
          long long slot_unused;
          load_token(
              p, token, active, latent_warp, jq, lane,
              [&](int i, const act_t *src) { copy_async(&slot_of[i][threadIdx.x], src); },
              slot_unused, /*slot_by_copy=*/&stage_slot[step % kStages][threadIdx.x]);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
      };
#pragma unroll
      for (int step = 0; step < kStages; ++step)
        issue_step(step);
      // 2. The angles, while the copies fly.
      fill_tables(p, first_token, cos_table, sin_table);
      // 3, 4 per step, once its group has landed (kStages groups issued
      // ahead of it, kStages - 1 may still fly). In place, a
      // de-interleaving lane writes what other lanes of its warp copied:
      // every lane's copies of the token first.
#pragma unroll 1
      for (int step = 0; step < kSteps; ++step) {
        wait_async(kStages - 1);
        if constexpr (kDeinterleave)
          __syncwarp();
        const int row = step * kTokensPerBlock + t;
        const int token = first_token + row;
        const int at = step % kStages;
        Loaded in;
#pragma unroll
        for (int i = 0; i < kHeld; ++i)
          in.held[i] = stage[at][i][threadIdx.x];
        in.slot = latent_warp && token < p.num_tokens ? (long long)stage_slot[at][threadIdx.x]
                                                      : -1;
        issue_step(step + kStages);
        finish_token(p, token, token < p.num_tokens, row, latent_warp, jq, lane, in, cos_table,
                     sin_table);
      }
    } else {
      // 1. The first step's loads, ahead of the rope tables so that their
      //    latency overlaps the tables' computation. (Two paths, not one
      //    thread doing both: the registers are the larger path's, not
      //    their sum.)
      Loaded loaded[kBuffers];
      load_token(p, first_token + t, first_token + t < p.num_tokens, latent_warp, jq, lane,
                 loaded[0]);
      // 2. Each token's angles, shared by its k_pe and all its query heads.
      fill_tables(p, first_token, cos_table, sin_table);
      // 3, 4 per step; with several steps, the next token's loads are
      // issued before this one's math and stores.
#pragma unroll
      for (int step = 0; step < kSteps; ++step) {
        const int row = step * kTokensPerBlock + t;
        const int token = first_token + row;
        if (step + 1 < kSteps) {
          const int next = token + kTokensPerBlock;
          load_token(p, next, next < p.num_tokens, latent_warp, jq, lane,
                     loaded[(step + 1) % kBuffers]);
        }
        // In place, de-interleaving lanes write what other lanes of their
        // warp loaded for this token during the previous step: every
        // lane's loads first. (Step 0's came before the block's barrier.)
        if constexpr (kDeinterleave)
          if (step > 0)
            __syncwarp();
        finish_token(p, token, token < p.num_tokens, row, latent_warp, jq, lane,
                     loaded[step % kBuffers], cos_table, sin_table);
      }
    }
  }
};

} // namespace attnc::mla_preprocess
