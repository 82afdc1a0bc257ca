// attnc fused preprocess kernel: handed to NVRTC as the in-memory header
// "attnc_preprocess.cuh". One launch splits the fused QKV(G) projection
// into heads, applies the q/k norm and the rotary embedding its stages
// call for, writes k and v into the paged cache and q (and the gate) out.
//
// A generated source defines a `Config` and an extern "C" entry point that
// fills `Params<Config>` from its arguments and calls `Kernel<Config>::run`.
// The Config derives from `Defaults` and has:
//  - act_t, cache_t, slot_t: the activation, cache and slot_mapping types;
//  - block_size: tokens per cache block (slot = block * block_size + offset;
//    the caches are addressed through their block, token and head strides);
//  - num_q_heads, num_kv_heads, qk_head_dim, v_head_dim, and the fused row's
//    layout: fused_width, q_offset, q_head_stride, k_offset, v_offset;
//  - the flags has_q_norm, has_k_norm, has_rope, has_gate, fp8_cache, and
//    the members of `Defaults` that belong to each feature it has;
//  - the schedule (#attn.preprocess_schedule): vector_width,
//    threads_per_head, threads_per_block, heads_per_block, tokens_per_block,
//    min_blocks_per_sm (the launch bound), pair_layout, prefetch.
// Every optional feature is an `if constexpr` on the Config, so a kernel
// without it has no code for it.
#pragma once

#include "attnc_device.cuh"

namespace attnc::preprocess {

/// neox pairs rotary element j with j + rotary_dim / 2 (halves), gptj pairs
/// 2i with 2i + 1.
enum class RopeStyle { neox, gptj };
/// The q/k norm's formula: RMSNorm x * w, Gemma's x * (1 + w), without a
/// weight (Llama 4's L2Norm), or LayerNorm (x - mean) * w [+ b]; each times
/// rsqrt(var + eps).
enum class NormStyle { rms, gemma, unweighted, layernorm };
/// What the norm's statistics are taken over: each head (one weight row for
/// all heads, or a row per head), or a token's whole q (k) projection (its
/// weight sliced per head).
enum class NormScope { head, head_weights, projection };

/// What a Config does not say: every optional feature absent. A Config
/// derives from it and sets what its kernel has.
struct Defaults {
  // Gate output: the gate segment's offset and head stride in the fused row.
  static constexpr bool has_gate = false;
  static constexpr long long gate_offset = 0;
  static constexpr long long gate_head_stride = 0;
  // One gate value per query head (gate_layout head_scalar) instead of Dv.
  static constexpr bool gate_head_scalar = false;
  // q/k norm; applied after the rotation when the stages list it after
  // rope. Projection scope is before rope only (attn-prepare-emission).
  static constexpr bool has_q_norm = false;
  static constexpr bool has_k_norm = false;
  static constexpr NormStyle norm_style = NormStyle::rms;
  static constexpr NormScope norm_scope = NormScope::head;
  static constexpr bool has_q_norm_bias = false; // layernorm only
  static constexpr bool has_k_norm_bias = false;
  static constexpr bool norm_after_rope = false;
  static constexpr float norm_eps = 0.0f;
  // Rotary embedding over [rotary_offset, rotary_offset + rotary_dim) of
  // each q/k head; `inv_freq(i)` is the i-th inverse frequency (scaling
  // applied), rope_attention_factor multiplies cos and sin (yarn).
  static constexpr bool has_rope = false;
  using position_t = void;
  static constexpr RopeStyle rope_style = RopeStyle::neox;
  static constexpr int rotary_dim = 0;
  static constexpr int rotary_offset = 0;
  static constexpr float rope_attention_factor = 1.0f;
  static __device__ __forceinline__ double inv_freq(int) { return 0.0; }
  // longrope: positions from rope_long_from on rotate with inv_freq_long
  // (0: one table).
  static constexpr long long rope_long_from = 0;
  static __device__ __forceinline__ double inv_freq_long(int) { return 0.0; }
  // Llama 4's attention temperature: q times
  // log(floor((pos + 1) / temperature_floor_scale) + 1) * temperature_scale + 1.
  static constexpr bool has_q_temperature = false;
  static constexpr double temperature_floor_scale = 1.0;
  static constexpr float temperature_scale = 0.0f;
  // fp8 cache: k and v are stored divided by *k_scale / *v_scale.
  static constexpr bool fp8_cache = false;
};

/// The kernel's arguments; those of absent features stay null, unread.
template <class Config> struct Params {
  const typename Config::act_t *qkv;
  const typename Config::slot_t *slot_mapping;
  typename Config::cache_t *k_cache, *v_cache;
  // The caches' block, token and head strides, in elements (engine-owned
  // views; the head dim is contiguous).
  long long k_cache_block_stride, k_cache_token_stride, k_cache_head_stride;
  long long v_cache_block_stride, v_cache_token_stride, v_cache_head_stride;
  const typename Config::position_t *positions;
  const typename Config::act_t *q_norm_weight, *k_norm_weight;
  const typename Config::act_t *q_norm_bias, *k_norm_bias;
  const float *k_scale, *v_scale;
  typename Config::act_t *q_out, *gate_out;
  int num_tokens;
};

/// One (token, head) of the block's work.
struct WorkItem {
  int t, token, head;
  bool active;
};

/// The kernel for one Config. Each (token, head) of q, k, v (and the gate)
/// is a work item of a group of threads_per_head lanes; a lane holds kChunks
/// vectors of vector_width elements of the head (see head_vector). A block
/// has heads_per_block groups and tokens_per_block tokens; it runs the
/// kinds one after another, with the loads of `prefetch` items in flight.
template <class Config> struct Kernel {
  using act_t = typename Config::act_t;
  using cache_t = typename Config::cache_t;
  // The Config's numbers under the kernel's names, as enumerators: NVRTC
  // gives every static constexpr data member a device copy in the cubin.
  enum : int {
    kNumQHeads = Config::num_q_heads,
    kNumKvHeads = Config::num_kv_heads,
    kQkHeadDim = Config::qk_head_dim,
    kVHeadDim = Config::v_head_dim,
    kBlockSize = Config::block_size,
    kMaxHeadDim = kQkHeadDim > kVHeadDim ? kQkHeadDim : kVHeadDim,
    kVectorWidth = Config::vector_width,
    kThreadsPerHead = Config::threads_per_head,
    kThreadsPerBlock = Config::threads_per_block,
    kHeadsPerBlock = Config::heads_per_block,
    kTokensPerBlock = Config::tokens_per_block,
    kPrefetch = Config::prefetch,
    // Vectors each thread holds of one head.
    kChunks = (kMaxHeadDim + kThreadsPerHead * kVectorWidth - 1) / (kThreadsPerHead * kVectorWidth),
    // The rotation tables' row length (1 without rope: no empty arrays).
    kRotaryDim = Config::has_rope ? Config::rotary_dim : 1,
    kRotaryHalf = Config::rotary_dim / 2,
    kRotaryOffset = Config::rotary_offset,
    // q/k chunks per rotation half (pair layout).
    kPairChunks = Config::pair_layout ? kQkHeadDim / 2 / kVectorWidth / kThreadsPerHead : 0,
    kWarps = kThreadsPerBlock / 32,
  };
  // The norm's variants, as compile-time facts (enumerators, as above).
  enum : bool {
    kProjectionNorm =
        Config::norm_scope == NormScope::projection && (Config::has_q_norm || Config::has_k_norm),
    kWeightedNorm = Config::norm_style != NormStyle::unweighted,
    kCenteredNorm = Config::norm_style == NormStyle::layernorm,
    // Norm weights (and biases) with a row per head: read per work item.
    kPerHeadNormWeights = Config::norm_scope != NormScope::head && Config::norm_style != NormStyle::unweighted,
  };
  /// Whether kind kKind (0 q, 1 k) has a norm stage, and a bias.
  template <int kKind> static constexpr __host__ __device__ bool has_norm() {
    return kKind == 0 ? Config::has_q_norm : kKind == 1 ? Config::has_k_norm : false;
  }
  template <int kKind> static constexpr __host__ __device__ bool has_norm_bias() {
    return kKind == 0 ? Config::has_q_norm_bias : kKind == 1 ? Config::has_k_norm_bias : false;
  }
  enum : long long {
    kFusedWidth = Config::fused_width,
    kQOffset = Config::q_offset,
    kQHeadStride = Config::q_head_stride,
    kKOffset = Config::k_offset,
    kVOffset = Config::v_offset,
    kGateOffset = Config::gate_offset,
    kGateHeadStride = Config::gate_head_stride,
  };

  using Row = float[kChunks][kVectorWidth];
  /// A row of norm weights, packed in their own type.
  using Weights = attnc::Vec<act_t, kVectorWidth>[kChunks];

  /// The vector of a head that chunk c of a lane holds.
  template <int kKind> static __device__ __forceinline__ int head_vector(int c, int lane) {
    if constexpr (Config::pair_layout && kKind <= 1) // halves of one rotation pair
      return c < kPairChunks ? c * kThreadsPerHead + lane
                             : kRotaryHalf / kVectorWidth + (c - kPairChunks) * kThreadsPerHead + lane;
    return c * kThreadsPerHead + lane;
  }

  /// One head row into registers (zeros past its dim or when inactive).
  template <int kKind, typename T, int kDim>
  static __device__ __forceinline__ void load_row(const T *src, int lane, bool active, Row &x) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int e = head_vector<kKind>(c, lane) * kVectorWidth;
      if (active && e < kDim)
        attnc::load_vec<T, kVectorWidth>(src + e, x[c]);
      else
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i) x[c][i] = 0.0f;
    }
  }

  /// The same row packed in its own type (norm weights).
  template <int kKind, typename T, int kDim>
  static __device__ __forceinline__ void load_row_raw(const T *src, int lane,
                                                      attnc::Vec<T, kVectorWidth> (&x)[kChunks]) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int e = head_vector<kKind>(c, lane) * kVectorWidth;
      if (e < kDim)
        x[c] = *reinterpret_cast<const attnc::Vec<T, kVectorWidth> *>(src + e);
      else
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i) x[c].v[i] = attnc::from_float<T>(0.0f);
    }
  }

  /// One head row from registers to memory.
  template <int kKind, typename T, int kDim>
  static __device__ __forceinline__ void store_row(T *dst, int lane, const Row &x) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int e = head_vector<kKind>(c, lane) * kVectorWidth;
      if (e < kDim)
        attnc::store_vec<T, kVectorWidth>(dst + e, x[c]);
    }
  }

  /// What every work item's stages read besides its own data.
  struct BlockState {
    int lane;            // lane within the head's group
    unsigned group_mask; // the group's lanes
    const long long *token_slot;
    act_t *q_out;
    cache_t *k_cache, *v_cache;
    attnc::CacheStrides k_strides, v_strides;
    act_t *gate_out;
    const float (*rope_cos)[kRotaryDim], (*rope_sin)[kRotaryDim];
    const float *q_temperature; // per token of the block, has_q_temperature only
    float k_inv_scale, v_inv_scale;
    // Projection scope: per kind (q, k) and token of the block, the mean (0
    // unless layernorm) and 1 / sqrt(var + eps) of the token's whole segment.
    const float (*norm_stats)[kTokensPerBlock][2];
  };

  /// The norm of a q or k head, when its stage exists. `weight` and `bias`
  /// are the head's rows (the kind's one row in head scope).
  template <int kKind>
  static __device__ __forceinline__ void normalize(Row &x, const Weights &weight,
                                                   const Weights &bias, const WorkItem &w,
                                                   const BlockState &s) {
    if constexpr (has_norm<kKind>()) {
      constexpr bool kGemma = Config::norm_style == NormStyle::gemma; // x * (1 + w)
      if constexpr (Config::norm_scope == NormScope::head && !kCenteredNorm && kWeightedNorm) {
        attnc::rms_norm_head<kGemma, kChunks, kThreadsPerHead, kVectorWidth>(
            x, weight, kQkHeadDim, Config::norm_eps, s.group_mask);
      } else {
        float mean, inv_std;
        if constexpr (Config::norm_scope == NormScope::projection) {
          mean = s.norm_stats[kKind][w.t][0];
          inv_std = s.norm_stats[kKind][w.t][1];
        } else {
          attnc::head_norm_statistics<kCenteredNorm, kChunks, kThreadsPerHead, kVectorWidth>(
              x, kQkHeadDim, Config::norm_eps, s.group_mask, mean, inv_std);
        }
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
          for (int i = 0; i < kVectorWidth; ++i) {
            float y = (kCenteredNorm ? x[c][i] - mean : x[c][i]) * inv_std;
            if constexpr (kWeightedNorm) {
              const float wi = attnc::to_float(weight[c].v[i]);
              y *= kGemma ? 1.0f + wi : wi;
            }
            if constexpr (has_norm_bias<kKind>())
              y += attnc::to_float(bias[c].v[i]);
            x[c][i] = y;
          }
      }
    }
  }

  /// Projection scope: each token's statistics over its whole q and k
  /// segments (all heads), by every thread of the block before any head is
  /// normalised, into `stats` (published by the caller's barrier). The sums
  /// are per thread, then per warp into `partial`, then per token in warp
  /// order: the same order every run.
  template <int kPass>
  static __device__ __forceinline__ void accumulate_segments(
      const act_t *__restrict__ qkv, int first_token, int num_tokens,
      float (&partial)[2][kTokensPerBlock][kWarps], const float (&stats)[2][kTokensPerBlock][2]) {
    // kPass 0: sum of x (layernorm's mean); 1: sum of (x - mean)^2 (mean 0
    // for the RMS styles).
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    constexpr int kHeadVectors = kQkHeadDim / kVectorWidth;
#pragma unroll
    for (int kind = 0; kind < 2; ++kind) {
      if ((kind == 0 && !Config::has_q_norm) || (kind == 1 && !Config::has_k_norm))
        continue;
      const int vectors = (kind == 0 ? kNumQHeads : kNumKvHeads) * kHeadVectors;
      const long long offset = kind == 0 ? kQOffset : kKOffset;
      const long long head_stride = kind == 0 ? kQHeadStride : kQkHeadDim;
      for (int t = 0; t < kTokensPerBlock; ++t) {
        float acc = 0.0f;
        if (first_token + t < num_tokens) {
          const act_t *row = qkv + (long long)(first_token + t) * kFusedWidth + offset;
          const float mean = kPass == 1 && kCenteredNorm ? stats[kind][t][0] : 0.0f;
#pragma unroll 4
          for (int v = threadIdx.x; v < vectors; v += kThreadsPerBlock) {
            float x[kVectorWidth];
            attnc::load_vec<act_t, kVectorWidth>(
                row + (v / kHeadVectors) * head_stride + (v % kHeadVectors) * kVectorWidth, x);
#pragma unroll
            for (int i = 0; i < kVectorWidth; ++i) {
              const float d = x[i] - mean;
              acc += kPass == 0 ? x[i] : d * d;
            }
          }
        }
        acc = attnc::warp_sum(acc);
        if (lane == 0) partial[kind][t][warp] = acc;
      }
    }
  }

  static __device__ __forceinline__ void projection_statistics(
      const act_t *__restrict__ qkv, int first_token, int num_tokens,
      float (&partial)[2][kTokensPerBlock][kWarps], float (&stats)[2][kTokensPerBlock][2]) {
    static_assert(kThreadsPerBlock % 32 == 0, "whole warps");
    // Thread i < 2 * tokens finishes kind i / tokens, token i % tokens.
    auto finish = [&](bool mean_pass) {
      if (threadIdx.x < 2 * kTokensPerBlock) {
        const int kind = threadIdx.x / kTokensPerBlock, t = threadIdx.x % kTokensPerBlock;
        float sum = 0.0f;
        for (int w = 0; w < kWarps; ++w) sum += partial[kind][t][w];
        const float count = float((kind == 0 ? kNumQHeads : kNumKvHeads) * kQkHeadDim);
        if (mean_pass) {
          stats[kind][t][0] = sum / count;
        } else {
          if constexpr (!kCenteredNorm) stats[kind][t][0] = 0.0f;
          stats[kind][t][1] = rsqrtf(sum / count + Config::norm_eps);
        }
      }
    };
    if constexpr (kCenteredNorm) {
      accumulate_segments<0>(qkv, first_token, num_tokens, partial, stats);
      __syncthreads();
      finish(true);
      __syncthreads();
    }
    accumulate_segments<1>(qkv, first_token, num_tokens, partial, stats);
    __syncthreads();
    finish(false);
  }

  /// The rotation of a q or k head: in the pair layout both elements of
  /// each pair are this lane's, chunk c (first half) and chunk c +
  /// kPairChunks (second half), and the tables hold cos and -sin at the
  /// first-half element index.
  static __device__ __forceinline__ void rotate_pairs(Row &x, const WorkItem &w,
                                                      const BlockState &s) {
    const int lane = s.lane, t = w.t;
    if (w.active) {
#pragma unroll
      for (int c = 0; c < kPairChunks; ++c) {
        const int j0 = (c * kThreadsPerHead + lane) * kVectorWidth;
        float cs[kVectorWidth], sn[kVectorWidth];
        attnc::load_floats<kVectorWidth>(&s.rope_cos[t][j0], cs);
        attnc::load_floats<kVectorWidth>(&s.rope_sin[t][j0], sn);
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i) {
          const float a = x[c][i], b = x[c + kPairChunks][i];
          x[c][i] = a * cs[i] + b * sn[i];
          x[c + kPairChunks][i] = b * cs[i] - a * sn[i];
        }
      }
    }
  }

  /// The rotation in the plain layout: partners inside the thread's own
  /// vector need no exchange (gptj with vectors of 2 or more); otherwise
  /// shuffles fetch them, all before any element is rotated.
  static __device__ __forceinline__ void rotate(Row &x, const WorkItem &w, const BlockState &s) {
    const int lane = s.lane, t = w.t;
    constexpr bool kNeox = Config::rope_style == RopeStyle::neox;
    float partner[kChunks][kVectorWidth];
    if constexpr (!kNeox && kVectorWidth >= 2) {
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i) partner[c][i] = x[c][i ^ 1];
    } else {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const int v = c * kThreadsPerHead + lane; // this thread's vector
        int pv;
        if constexpr (kNeox) {
          const int j = v * kVectorWidth - kRotaryOffset;
          pv = j < kRotaryHalf ? v + kRotaryHalf / kVectorWidth : v - kRotaryHalf / kVectorWidth;
        } else {
          pv = v ^ 1; // vector width 1: the pair spans two lanes
        }
        pv = pv < 0 ? 0 : pv; // partners of unrotated elements go unused
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i)
          partner[c][i] = attnc::group_fetch<kChunks, kThreadsPerHead, kVectorWidth>(
              x, pv / kThreadsPerHead, pv % kThreadsPerHead, i, s.group_mask);
      }
    }
    // The vector width divides the rotary offset and dim (the schedule's
    // rule), so a vector is wholly inside or outside the rotated range, and
    // its angles are consecutive table entries: one wide shared-memory read.
    if (w.active) {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const int d0 = (c * kThreadsPerHead + lane) * kVectorWidth;
        const int j0 = d0 - kRotaryOffset;
        if (d0 < kQkHeadDim && j0 >= 0 && j0 < kRotaryDim) {
          float cs[kVectorWidth], sn[kVectorWidth];
          attnc::load_floats<kVectorWidth>(&s.rope_cos[t][j0], cs);
          attnc::load_floats<kVectorWidth>(&s.rope_sin[t][j0], sn);
#pragma unroll
          for (int i = 0; i < kVectorWidth; ++i)
            x[c][i] = x[c][i] * cs[i] + partner[c][i] * sn[i];
        }
      }
    }
  }

  /// One work item's stages, specialised per kind at compile time (0: q
  /// head, 1: k head, 2: v head, 3: gate head): q and k heads get the norm
  /// and the rotation their stages call for, v and gate heads are only
  /// stored. Shuffles use the group's lanes only: the groups of a warp may
  /// hold different kinds.
  template <int kKind>
  static __device__ __forceinline__ void process(Row &x, const WorkItem &w, const BlockState &s,
                                                 const Weights &weight, const Weights &bias) {
    const int lane = s.lane, t = w.t;
    if constexpr (!Config::norm_after_rope)
      normalize<kKind>(x, weight, bias, w, s);
    if constexpr (Config::has_rope && kKind <= 1) {
      if constexpr (Config::pair_layout)
        rotate_pairs(x, w, s);
      else
        rotate(x, w, s);
    }
    if constexpr (Config::norm_after_rope)
      normalize<kKind>(x, weight, bias, w, s);
    if (!w.active) return;
    if constexpr (kKind == 0 && Config::has_q_temperature) {
      const float factor = s.q_temperature[t];
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int i = 0; i < kVectorWidth; ++i) x[c][i] *= factor;
    }
    if constexpr (kKind == 0) {
      store_row<0, act_t, kQkHeadDim>(
          s.q_out + ((long long)w.token * kNumQHeads + w.head) * kQkHeadDim, lane, x);
    } else if constexpr (kKind == 3) {
      store_row<3, act_t, kVHeadDim>(
          s.gate_out + ((long long)w.token * kNumQHeads + w.head) * kVHeadDim, lane, x);
    } else {
      // k or v into the paged cache; a negative slot is padding.
      constexpr int kDim = kKind == 1 ? kQkHeadDim : kVHeadDim;
      const long long slot = s.token_slot[t];
      if (slot < 0) return;
      const attnc::CacheStrides &strides = kKind == 1 ? s.k_strides : s.v_strides;
      cache_t *dst = (kKind == 1 ? s.k_cache : s.v_cache) +
                     attnc::cache_slot_offset<kBlockSize>(strides, (unsigned long long)slot) +
                     attnc::cache_head_offset(strides, w.head);
      if constexpr (Config::fp8_cache) {
        // The cache stores x / scale, as x * (1 / scale): within one float
        // rounding of the quotient, far below e4m3's resolution, at a tenth
        // of a division's cost.
        const float inv_scale = kKind == 1 ? s.k_inv_scale : s.v_inv_scale;
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
          for (int i = 0; i < kVectorWidth; ++i) x[c][i] *= inv_scale;
      }
      store_row<kKind, cache_t, kDim>(dst, lane, x);
    }
  }

  /// The block's items of one kind: item i is head i % heads of token i /
  /// heads, so the kind, the head dim and the column are compile-time
  /// constants here.
  template <int kKind>
  static __device__ __forceinline__ void run_kind(const act_t *__restrict__ qkv, int group,
                                                  int first_token, int num_tokens,
                                                  const BlockState &s,
                                                  const act_t *__restrict__ q_norm_weight,
                                                  const act_t *__restrict__ k_norm_weight,
                                                  const act_t *__restrict__ q_norm_bias,
                                                  const act_t *__restrict__ k_norm_bias) {
    constexpr int kHeads = kKind == 0 || kKind == 3 ? kNumQHeads : kNumKvHeads;
    constexpr int kDim = kKind >= 2 ? kVHeadDim : kQkHeadDim;
    constexpr long long kOffset =
        kKind == 0 ? kQOffset : kKind == 1 ? kKOffset : kKind == 2 ? kVOffset : kGateOffset;
    constexpr long long kStride =
        kKind == 0 ? kQHeadStride : kKind == 1 ? kQkHeadDim : kKind == 2 ? kVHeadDim : kGateHeadStride;
    // This kind's norm weights (only q and k have any): in head scope one
    // row, loaded once; otherwise a row per head, loaded with each item.
    constexpr bool kHeadRows = has_norm<kKind>() && kPerHeadNormWeights;
    const act_t *norm_weight = kKind == 0 ? q_norm_weight : k_norm_weight;
    const act_t *norm_bias = kKind == 0 ? q_norm_bias : k_norm_bias;
    Weights weight, bias;
    if constexpr (has_norm<kKind>() && kWeightedNorm && !kHeadRows)
      load_row_raw<kKind, act_t, kQkHeadDim>(norm_weight, s.lane, weight);
    if constexpr (has_norm_bias<kKind>() && !kHeadRows)
      load_row_raw<kKind, act_t, kQkHeadDim>(norm_bias, s.lane, bias);
    constexpr int kItems = kHeads * kTokensPerBlock;
    constexpr int kIterations = (kItems + kHeadsPerBlock - 1) / kHeadsPerBlock;
    // The kinds run one after another; each starts at the thread group after
    // the previous kind's last item, so that the groups share the block's
    // items evenly (q heads on groups 0.., then k, v, gate on the next ones)
    // instead of the first groups loading one item of every kind in turn.
    constexpr int kItemsBefore = ((kKind >= 1 ? kNumQHeads : 0) + (kKind >= 2 ? kNumKvHeads : 0) +
                                  (kKind >= 3 ? kNumKvHeads : 0)) * kTokensPerBlock;
    const int slot = (group + kHeadsPerBlock - kItemsBefore % kHeadsPerBlock) % kHeadsPerBlock;
    // A kind with fewer items than one prefetch batch does not pay for it.
    constexpr int kBatch = kIterations < kPrefetch ? kIterations : kPrefetch;
    // Each batch issues all its loads before using any, so that several
    // 16-byte loads per thread are in flight.
    for (int batch = 0; batch < kIterations; batch += kBatch) {
      float xs[kBatch][kChunks][kVectorWidth];
      WorkItem items[kBatch];
      Weights head_weight[kHeadRows ? kBatch : 1], head_bias[kHeadRows ? kBatch : 1];
#pragma unroll
      for (int p = 0; p < kBatch; ++p) {
        const int item = (batch + p) * kHeadsPerBlock + slot;
        WorkItem &w = items[p];
        w.t = item / kHeads;
        w.head = item % kHeads;
        w.token = first_token + w.t;
        w.active = item < kItems && w.token < num_tokens;
        load_row<kKind, act_t, kDim>(
            qkv + (long long)w.token * kFusedWidth + kOffset + w.head * kStride, s.lane,
            w.active, xs[p]);
        if constexpr (kHeadRows) {
          // Row w.head of [H, Dqk] (head_weights) or the head's slice of
          // [H * Dqk] (projection): the same offset.
          load_row_raw<kKind, act_t, kQkHeadDim>(norm_weight + (long long)w.head * kQkHeadDim,
                                                  s.lane, head_weight[p]);
          if constexpr (has_norm_bias<kKind>())
            load_row_raw<kKind, act_t, kQkHeadDim>(norm_bias + (long long)w.head * kQkHeadDim,
                                                    s.lane, head_bias[p]);
        }
      }
      // An item is inactive for all the lanes of its group at once, so
      // skipping it keeps the group's shuffles together.
#pragma unroll
      for (int p = 0; p < kBatch; ++p)
        if (items[p].active) {
          if constexpr (kHeadRows)
            process<kKind>(xs[p], items[p], s, head_weight[p], head_bias[p]);
          else
            process<kKind>(xs[p], items[p], s, weight, bias);
        }
    }
  }

  /// The kernel body: per-token values once per block, then every kind.
  static __device__ __forceinline__ void run(const Params<Config> &p) {
    const int group = threadIdx.x / kThreadsPerHead;
    const int lane = threadIdx.x % kThreadsPerHead;
    const int first_token = blockIdx.x * kTokensPerBlock;
    const int num_tokens = p.num_tokens;
    // Programmatic dependent launch (attnc_device.cuh): every global access
    // comes after the wait, in every block. The dependents (attention reads
    // q_out and the cache) may launch at once: their own wait still waits
    // for this grid, and the trigger fires only when every block of this
    // grid has reached it, so they take no room this grid still needs.
    attnc::grid_dependency_wait();
    attnc::launch_dependents();
    // Loaded once per block, ahead of the head data, so that their latency
    // overlaps it: each token's cache slot.
    __shared__ long long token_slot[kTokensPerBlock];
    if (threadIdx.x < kTokensPerBlock)
      token_slot[threadIdx.x] = first_token + (int)threadIdx.x < num_tokens
                                    ? (long long)p.slot_mapping[first_token + threadIdx.x] : -1;
    // Each token's rotation, shared by all its q and k heads, indexed by the
    // rotary element j: out[j] = x[j] * rope_cos[j] + partner(j) * rope_sin[j],
    // the sign of the sine folded into the table.
    const float (*rope_cos)[kRotaryDim] = nullptr, (*rope_sin)[kRotaryDim] = nullptr;
    if constexpr (Config::has_rope) {
      __shared__ __align__(16) float cos_table[kTokensPerBlock][kRotaryDim];
      __shared__ __align__(16) float sin_table[kTokensPerBlock][kRotaryDim];
      for (int i = threadIdx.x; i < kTokensPerBlock * kRotaryHalf; i += kThreadsPerBlock) {
        const int t = i / kRotaryHalf, f = i % kRotaryHalf;
        float s = 0.0f, c = 1.0f;
        if (first_token + t < num_tokens) {
          const auto position = p.positions[first_token + t];
          double frequency = Config::inv_freq(f);
          if constexpr (Config::rope_long_from > 0)
            if (position >= Config::rope_long_from) frequency = Config::inv_freq_long(f);
          attnc::rope_cos_sin(position, frequency, &c, &s);
        }
        c *= Config::rope_attention_factor;
        s *= Config::rope_attention_factor;
        if constexpr (Config::rope_style == RopeStyle::neox) {
          // neox: element f pairs with f + half.
          cos_table[t][f] = c;
          sin_table[t][f] = -s;
          cos_table[t][f + kRotaryHalf] = c;
          sin_table[t][f + kRotaryHalf] = s;
        } else {
          // gptj: element 2f pairs with 2f + 1.
          cos_table[t][2 * f] = c;
          sin_table[t][2 * f] = -s;
          cos_table[t][2 * f + 1] = c;
          sin_table[t][2 * f + 1] = s;
        }
      }
      rope_cos = cos_table;
      rope_sin = sin_table;
    }
    const float(*norm_stats)[kTokensPerBlock][2] = nullptr;
    if constexpr (kProjectionNorm) {
      __shared__ float norm_partial[2][kTokensPerBlock][kWarps];
      __shared__ float projection_stats[2][kTokensPerBlock][2];
      projection_statistics(p.qkv, first_token, num_tokens, norm_partial, projection_stats);
      norm_stats = projection_stats;
    }
    const float *q_temperature = nullptr;
    if constexpr (Config::has_q_temperature) {
      __shared__ float temperature[kTokensPerBlock];
      if (threadIdx.x < kTokensPerBlock) {
        float factor = 1.0f;
        if (first_token + (int)threadIdx.x < num_tokens) {
          const double position = (double)p.positions[first_token + threadIdx.x];
          factor = log1pf((float)floor((position + 1.0) / Config::temperature_floor_scale)) *
                       Config::temperature_scale + 1.0f;
        }
        temperature[threadIdx.x] = factor;
      }
      q_temperature = temperature;
    }
    __syncthreads();
    BlockState state;
    state.q_temperature = q_temperature;
    if constexpr (Config::fp8_cache) {
      state.k_inv_scale = 1.0f / *p.k_scale;
      state.v_inv_scale = 1.0f / *p.v_scale;
    }
    state.rope_cos = rope_cos;
    state.rope_sin = rope_sin;
    state.lane = lane;
    state.group_mask = attnc::group_lane_mask<kThreadsPerHead>();
    state.token_slot = token_slot;
    state.q_out = p.q_out;
    state.k_cache = p.k_cache;
    state.v_cache = p.v_cache;
    state.k_strides = attnc::make_cache_strides(p.k_cache_block_stride, p.k_cache_token_stride, p.k_cache_head_stride);
    state.v_strides = attnc::make_cache_strides(p.v_cache_block_stride, p.v_cache_token_stride, p.v_cache_head_stride);
    state.gate_out = p.gate_out;
    state.norm_stats = norm_stats;
    run_kind<0>(p.qkv, group, first_token, num_tokens, state, p.q_norm_weight, p.k_norm_weight,
                p.q_norm_bias, p.k_norm_bias);
    run_kind<1>(p.qkv, group, first_token, num_tokens, state, p.q_norm_weight, p.k_norm_weight,
                p.q_norm_bias, p.k_norm_bias);
    run_kind<2>(p.qkv, group, first_token, num_tokens, state, p.q_norm_weight, p.k_norm_weight,
                p.q_norm_bias, p.k_norm_bias);
    if constexpr (Config::has_gate && Config::gate_head_scalar)
      copy_head_scalar_gates(p.qkv, p.gate_out, first_token, num_tokens);
    else if constexpr (Config::has_gate)
      run_kind<3>(p.qkv, group, first_token, num_tokens, state, p.q_norm_weight, p.k_norm_weight,
                  p.q_norm_bias, p.k_norm_bias);
  }

  /// One gate value per query head: the block's tokens' values, a thread
  /// each, [token, head] out of the fused row.
  static __device__ __forceinline__ void copy_head_scalar_gates(const act_t *__restrict__ qkv,
                                                                act_t *__restrict__ gate_out,
                                                                int first_token, int num_tokens) {
    for (int i = threadIdx.x; i < kTokensPerBlock * kNumQHeads; i += kThreadsPerBlock) {
      const int token = first_token + i / kNumQHeads, head = i % kNumQHeads;
      if (token < num_tokens)
        gate_out[(long long)token * kNumQHeads + head] =
            qkv[(long long)token * kFusedWidth + kGateOffset + head * kGateHeadStride];
    }
  }
};

} // namespace attnc::preprocess
