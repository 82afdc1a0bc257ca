//===- attnc_mla_decode.cuh - MLA's absorbed decode (sm_90a) ----*- CUDA -*-===//
//
// attn.latent_attention: queries [tokens, H, R + P] (absorbed q_nope in the
// first R values, the rotated q_pe after them) against one shared KV head,
// the paged latent cache [num_blocks, block_size, R + P]; V is the first R
// values of the same rows. Output [tokens, H, R]. R = 512, P = 64.
//
// A CTA of two warpgroups (256 threads) takes 64 rows (flattened (query
// token, head) rows of one sequence: kNumHeads heads per token, so a decode
// step of 128 heads is two CTAs, of 16 heads a quarter of one, MTP rows
// fill the rest) and one split's run of 64-key tiles of that sequence:
//  - Q [64 x 576] stays in shared memory; K tiles [64 keys x 576] are
//    double-buffered there (cp.async through the block table, 16 bytes per
//    copy), all in 128-byte swizzled rows (9 column blocks of 64 values).
//  - S = Q K^T: warpgroup w computes the scores of keys 32 w .. 32 w + 31
//    (36 wgmma m64n32k16, both operands in shared memory); the two halves'
//    row maxima meet in shared memory, so both keep the same running max.
//  - P (bf16/f16) of both halves goes to shared memory; warpgroup w then
//    computes O[:, 256 w .. 256 w + 255] += P V with V = the K tile's first
//    512 columns read as an MN-major (transposed) B operand (4 wgmma
//    m64n256k16): 128 fp32 accumulators per thread.
//  - K tile j + 1 loads from the moment P V of tile j - 1 is done (its
//    buffer is free) while S, the softmax and P V of tile j run; P V of
//    tile j - 1 runs under S of tile j.
// Split-KV: grid z cuts a sequence's tiles into runs; each split writes its
// unnormalised output and softmax state to the workspace and the last one
// of a row tile to finish merges them (the paged attention kernel's
// contract: counters reset, NaN for counts beyond the workspace).
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MLA_DECODE_CUH
#define ATTNC_MLA_DECODE_CUH

#include "attnc_device.cuh"

namespace attnc {

template <class T> struct MlaWgmma;

// The two MMA shapes of the kernel for activation type T (PTX type PTX):
//  - scores: d[64 x 32] (+)= A[64 x 16] B[32 x 16]^T, both K-major in
//    swizzled shared memory (descriptors a, b);
//  - values: d[64 x 256] += A[64 x 16] B[16 x 256], A K-major, B MN-major.
#define ATTNC_MLA_D(i) "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])
#define ATTNC_MLA_D4(i) ATTNC_MLA_D(i), ATTNC_MLA_D(i + 1), ATTNC_MLA_D(i + 2), ATTNC_MLA_D(i + 3)
#define ATTNC_MLA_D16(i) ATTNC_MLA_D4(i), ATTNC_MLA_D4(i + 4), ATTNC_MLA_D4(i + 8), ATTNC_MLA_D4(i + 12)
#define ATTNC_MLA_WGMMA(T, PTX)                                                                       \
  template <> struct MlaWgmma<T> {                                                                    \
    static __device__ __forceinline__ void scores(float (&d)[4][4], unsigned long long a,              \
                                                  unsigned long long b, int accumulate) {             \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                       \
                   "wgmma.mma_async.sync.aligned.m64n32k16.f32." PTX "." PTX " "                      \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, 0, 0;\n}\n" \
                   : ATTNC_MLA_D4(0)                                                                 \
                   : "l"(a), "l"(b), "r"(accumulate));                                               \
    }                                                                                                 \
    static __device__ __forceinline__ void values(float (&d)[32][4], unsigned long long a,             \
                                                  unsigned long long b) {                             \
      asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32." PTX "." PTX " {"                    \
                   "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                             \
                   "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                   \
                   "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                   \
                   "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"                   \
                   "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"                   \
                   "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"                   \
                   "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"       \
                   "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"    \
                   "}, %128, %129, 1, 1, 1, 0, 1;\n"                                                  \
                   : ATTNC_MLA_D16(0), ATTNC_MLA_D16(16)                                             \
                   : "l"(a), "l"(b));                                                                \
    }                                                                                                 \
  };

ATTNC_MLA_WGMMA(__nv_bfloat16, "bf16")
ATTNC_MLA_WGMMA(__half, "f16")

#undef ATTNC_MLA_WGMMA
#undef ATTNC_MLA_D16
#undef ATTNC_MLA_D4
#undef ATTNC_MLA_D

template <class C> struct LatentAttention {
  using act_t = typename C::act_t;
  static constexpr int kHeads = C::kNumHeads;
  static constexpr int kLatent = C::kLatentDim;  // R: V's width and the output's
  static constexpr int kQkDim = C::kQkDim;       // R + P
  static constexpr int kBlockM = C::kBlockM;     // 64 rows
  static constexpr int kBlockN = C::kBlockN;     // 64 keys
  static constexpr int kThreads = C::kThreads;   // 256: two warpgroups
  static constexpr int kColBlocks = kQkDim / 64;
  static constexpr int kTileBytes = kBlockN * kQkDim * 2;
  static_assert(kLatent == 512 && kQkDim % 64 == 0 && kQkDim > kLatent, "R = 512, R + P a multiple of 64");
  static_assert(kBlockM == 64 && kBlockN == 64 && kThreads == 256, "64 x 64 tiles, two warpgroups");
  static_assert(C::kQOffset % 1024 == 0 && C::kKOffset % 1024 == 0 && C::kKBytes % 1024 == 0 &&
                    C::kPOffset % 1024 == 0 && C::kKBytes == kTileBytes,
                "swizzle atoms stay aligned");

  /// Keeps the compiler from moving accesses of these accumulators across
  /// a wgmma fence or wait.
  template <int N> static __device__ __forceinline__ void fence(float (&r)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(r[i][e])::"memory");
  }

  struct Args {
    const act_t *query;
    const act_t *cache;
    long long block_stride, token_stride;
    const int *block_tables;
    act_t *output;
    float *workspace;
    int max_blocks_per_seq;
    float score_scale;  // log2 units
    float out_scale;
  };

  /// The first key a row at position `pos` does not see.
  static __device__ __forceinline__ int row_key_end(int pos, int kv_len) {
    if constexpr (C::kCausal)
      return min(pos + 1, kv_len);
    else
      return kv_len;
  }

  /// Issues the copies of K tile `tile` (64 keys from key tile * 64) into
  /// `dst`: thread t copies 16-byte chunk t % 8 of every column block of keys
  /// t / 8 and t / 8 + 32, so 8 consecutive threads read 128 contiguous
  /// bytes. Keys at or past kv_end are zero-filled and read nothing.
  static __device__ __forceinline__ void load_tile(const Args &a, const int *table, int tile, int kv_end,
                                                   unsigned char *dst) {
    const int c = threadIdx.x % 8, key0 = threadIdx.x / 8;
    const act_t *src[2];
    bool valid[2];
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const int key = tile * kBlockN + key0 + 32 * p;
      valid[p] = key < kv_end;
      const int k = valid[p] ? key : 0;
      const int block = __ldg(table + k / C::kBlockSize);
      src[p] = a.cache + (long long)block * a.block_stride + (long long)(k % C::kBlockSize) * a.token_stride;
    }
#pragma unroll
    for (int p = 0; p < 2; ++p)
#pragma unroll
      for (int b = 0; b < kColBlocks; ++b)
        attnc::cp_async_16(dst + attnc::sw128_offset<kBlockN>(key0 + 32 * p, b * 8 + c), src[p] + b * 64 + c * 8,
                           valid[p]);
  }

  /// NaN in every output element of the tile's rows (written by split 0).
  static __device__ __forceinline__ void poison_rows(const Args &a, int rows, int row0, int q_start) {
    if (blockIdx.z != 0)
      return;
    for (int e = threadIdx.x; e < rows * kLatent; e += kThreads) {
      const int r = e / kLatent, d = e % kLatent, f = row0 + r;
      a.output[((long long)(q_start + f / kHeads) * kHeads + f % kHeads) * kLatent + d] =
          attnc::from_float<act_t>(__int_as_float(0x7fc00000));
    }
  }

  static __device__ __forceinline__ void store_output(const Args &a, int row0, int q_start, int r, int col, float x0,
                                                      float x1) {
    const int f = row0 + r;
    act_t *dst = a.output + ((long long)(q_start + f / kHeads) * kHeads + f % kHeads) * kLatent + col;
    *reinterpret_cast<unsigned *>(dst) = attnc::pack2<act_t>(x0, x1);
  }

  /// One row tile: rows row0 .. row0 + rows - 1 of the sequence (queries at
  /// positions first_pos + row / kHeads), this split's key tiles.
  static __device__ __forceinline__ void tile(const Args &a, int seq, int q_start, int q_len, int kv_len, int row0,
                                              int rows, unsigned char *smem) {
    const int tid = threadIdx.x, wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;
    const int first_pos = kv_len - q_len;
    if ((attnc::shared_address(smem) & 1023u) != 0) {
      poison_rows(a, rows, row0, q_start);
      return;
    }
    unsigned char *q_s = smem + C::kQOffset;
    unsigned char *k_s = smem + C::kKOffset;  // [2] K tiles
    unsigned char *p_s = smem + C::kPOffset;  // P [64 rows x 64 keys]
    float *max_s = reinterpret_cast<float *>(smem + C::kMaxOffset);  // [2 parity][2 wg][64]
    const int *table = a.block_tables + (long long)seq * a.max_blocks_per_seq;

    // The keys: rows see [0, row_key_end(pos)); every row of the tile sees
    // [0, full_end), the last row [0, tile_end).
    const int full_end = row_key_end(first_pos + row0 / kHeads, kv_len);
    const int tile_end = row_key_end(first_pos + (row0 + rows - 1) / kHeads, kv_len);
    const int tiles_all = (tile_end + kBlockN - 1) / kBlockN;
    const int splits = gridDim.z, split = blockIdx.z;
    const int my_tiles = tiles_all / splits + (split < tiles_all % splits ? 1 : 0);
    const int my_first = split * (tiles_all / splits) + min(split, tiles_all % splits);

    // This thread's rows (r = 0, 1: rows 16 warp + g and + 8) and their ends.
    int row_end[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = warp * 16 + g + 8 * i;
      row_end[i] = r < rows ? row_key_end(first_pos + (row0 + r) / kHeads, kv_len) : kv_len;
    }

    // Q (rows past `rows` zero-filled), then K tiles 0 and 1: groups 0, 1.
    {
      const int c = tid % 8, r0 = tid / 8;
#pragma unroll
      for (int p = 0; p < kBlockM / 32; ++p) {
        const int r = r0 + 32 * p, f = row0 + r;
        const bool valid = r < rows;
        const act_t *src = a.query + (valid ? ((long long)(q_start + f / kHeads) * kHeads + f % kHeads) * kQkDim : 0);
#pragma unroll
        for (int b = 0; b < kColBlocks; ++b)
          attnc::cp_async_16(q_s + attnc::sw128_offset<kBlockM>(r, b * 8 + c), src + b * 64 + c * 8, valid);
      }
    }
    if (my_tiles > 0)
      load_tile(a, table, my_first, tile_end, k_s);
    attnc::cp_async_commit();
    if (my_tiles > 1)
      load_tile(a, table, my_first + 1, tile_end, k_s + C::kKBytes);
    attnc::cp_async_commit();

    float o[32][4];
#pragma unroll
    for (int n = 0; n < 32; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float m[2] = {-attnc::infinity(), -attnc::infinity()}, l[2] = {0.0f, 0.0f};
    float s[4][4];
    const float scale = a.score_scale;
    const unsigned long long q_desc = attnc::sw128_desc(attnc::shared_address(q_s), 16, 1024);
    const unsigned long long k_desc = attnc::sw128_desc(attnc::shared_address(k_s), 16, 1024);
    const unsigned long long p_desc = attnc::sw128_desc(attnc::shared_address(p_s), 16, 1024);
    // V of warpgroup w: column blocks 4 w .. 4 w + 3 of the K tile, MN-major.
    const unsigned long long v_desc =
        attnc::sw128_desc(attnc::shared_address(k_s + wg * 4 * kBlockN * 128), kBlockN * 128, 1024);

    for (int it = 0; it < my_tiles; ++it) {
      const int tile_key = (my_first + it) * kBlockN;
      const int buf = it % 2;
      if (it == 0)
        attnc::cp_async_wait<1>();
      else
        attnc::cp_async_wait<0>();
      attnc::fence_proxy_async();
      __syncthreads();  // K_it (and Q) landed

      // S = Q K^T for this warpgroup's 32 keys.
      attnc::wgmma_fence();
#pragma unroll
      for (int b = 0; b < kColBlocks; ++b)
#pragma unroll
        for (int ks = 0; ks < 4; ++ks)
          MlaWgmma<act_t>::scores(s, q_desc + ((b * kBlockM * 128 + ks * 32) >> 4),
                                  k_desc + ((buf * C::kKBytes + b * kBlockN * 128 + wg * 32 * 128 + ks * 32) >> 4),
                                  b + ks > 0);
      attnc::wgmma_commit();
      if (it >= 1) {
        // Once both warpgroups' P V of tile it - 1 is done (S_it may run
        // on), its K buffer takes K_{it+1} (tile 1 is in flight already).
        attnc::wgmma_wait<1>();
        __syncthreads();
        if (it + 1 < my_tiles)
          load_tile(a, table, my_first + it + 1, tile_end, k_s + (it + 1) % 2 * C::kKBytes);
        attnc::cp_async_commit();
      }
      attnc::wgmma_wait<0>();  // S_it
      fence(s);
      fence(o);

      // Masks (keys at or past a row's end), then the rows' maxima over
      // this warpgroup's keys.
      if (tile_key + kBlockN > full_end) {
#pragma unroll
        for (int n = 0; n < 4; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = tile_key + wg * 32 + n * 8 + 2 * t + (e & 1);
            if (key >= row_end[e / 2]) s[n][e] = -attnc::infinity();
          }
      }
      float tmax[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float x = -attnc::infinity();
#pragma unroll
        for (int n = 0; n < 4; ++n) x = fmaxf(x, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
        x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
        x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
        tmax[i] = x;
        if (t == 0) max_s[(buf * 2 + wg) * 64 + warp * 16 + g + 8 * i] = x;
      }
      __syncthreads();  // both halves' maxima

      // Online softmax in log2 units: m is the running max of the raw scores.
      float corr[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const float other = max_s[(buf * 2 + (1 - wg)) * 64 + warp * 16 + g + 8 * i];
        const float m_new = fmaxf(m[i], fmaxf(tmax[i], other));
        const float m_use = m_new == -attnc::infinity() ? 0.0f : m_new;
        corr[i] = attnc::fast_exp2((m[i] - m_use) * scale);
        m[i] = m_new;
        const float base = m_use * scale;
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          s[n][2 * i] = attnc::fast_exp2(fmaf(s[n][2 * i], scale, -base));
          s[n][2 * i + 1] = attnc::fast_exp2(fmaf(s[n][2 * i + 1], scale, -base));
          sum += s[n][2 * i] + s[n][2 * i + 1];
        }
        l[i] = l[i] * corr[i] + sum;
      }
      // P into shared memory (row r, key k at swizzled chunk k / 8 of row r).
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int r = warp * 16 + g + 8 * i, k = wg * 32 + n * 8 + 2 * t;
          *reinterpret_cast<unsigned *>(p_s + attnc::sw128_offset<kBlockM>(r, k / 8) + (k % 8) * 2) =
              attnc::pack2<act_t>(s[n][2 * i], s[n][2 * i + 1]);
        }
      if (!__all_sync(0xffffffffu, corr[0] == 1.0f && corr[1] == 1.0f)) {
#pragma unroll
        for (int n = 0; n < 32; ++n) {
          o[n][0] *= corr[0];
          o[n][1] *= corr[0];
          o[n][2] *= corr[1];
          o[n][3] *= corr[1];
        }
      }
      attnc::fence_proxy_async();
      __syncthreads();  // P of both halves written

      // O[:, 256 wg ..] += P V_it.
      fence(o);
      attnc::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk)
        MlaWgmma<act_t>::values(o, p_desc + ((kk * 32) >> 4),
                                v_desc + ((buf * C::kKBytes + kk * 16 * 128) >> 4));
      attnc::wgmma_commit();
    }
    attnc::wgmma_wait<0>();
    fence(o);
    attnc::cp_async_wait<0>();

    // The row sums: each warpgroup holds its keys' share.
    float *l_s = reinterpret_cast<float *>(smem + C::kLOffset);  // [2 wg][64]
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float x = l[i];
      x += __shfl_xor_sync(0xffffffffu, x, 1);
      x += __shfl_xor_sync(0xffffffffu, x, 2);
      l[i] = x;
      if (t == 0) l_s[wg * 64 + warp * 16 + g + 8 * i] = x;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 2; ++i) l[i] += l_s[(1 - wg) * 64 + warp * 16 + g + 8 * i];

    if (splits == 1) {
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = warp * 16 + g + 8 * i;
        if (r < rows) {
          const float inv = l[i] > 0.0f ? a.out_scale / l[i] : 0.0f;
#pragma unroll
          for (int n = 0; n < 32; ++n)
            store_output(a, row0, q_start, r, wg * 256 + n * 8 + 2 * t, o[n][2 * i] * inv, o[n][2 * i + 1] * inv);
        }
      }
      return;
    }

    // Split-KV: this split's partial state goes to the workspace.
    const int tile_id = blockIdx.x;
    if (gridDim.x * gridDim.z > C::kWorkspaceTiles || gridDim.x > C::kTargetCtas || splits > C::kMaxSplits) {
      poison_rows(a, rows, row0, q_start);
      return;
    }
    const int part = tile_id * splits + split;
    float *ws_o = a.workspace + (long long)part * kBlockM * kLatent;
    float *ws_m = a.workspace + (long long)C::kWorkspaceTiles * kBlockM * kLatent + (long long)part * kBlockM;
    float *ws_l = ws_m + (long long)C::kWorkspaceTiles * kBlockM;
    unsigned *counters =
        reinterpret_cast<unsigned *>(a.workspace + (long long)C::kWorkspaceTiles * kBlockM * (kLatent + 2));
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = warp * 16 + g + 8 * i;
      if (r < rows) {
#pragma unroll
        for (int n = 0; n < 32; ++n)
          __stcg(reinterpret_cast<float2 *>(ws_o + r * kLatent + wg * 256 + n * 8 + 2 * t),
                 make_float2(o[n][2 * i], o[n][2 * i + 1]));
        if (t == 0 && wg == 0) {
          __stcg(ws_m + r, m[i] * scale);  // log2 units (-inf: no keys)
          __stcg(ws_l + r, l[i]);
        }
      }
    }
    __threadfence();
    __syncthreads();
    unsigned &last_split = *reinterpret_cast<unsigned *>(smem + C::kSplitFlagOffset);
    if (tid == 0)
      last_split = atomicAdd(counters + tile_id, 1u) == unsigned(splits - 1);
    __syncthreads();
    if (!last_split)
      return;
    __threadfence();
    merge(a, smem, rows, row0, q_start, tile_id, counters);
  }

  /// The last split merges all splits' partials of the row tile: weights per
  /// (split, row) in shared memory first, then every output with several
  /// splits' loads in flight.
  static __device__ __forceinline__ void merge(const Args &a, unsigned char *smem, int rows, int row0, int q_start,
                                               int tile_id, unsigned *counters) {
    const int tid = threadIdx.x, splits = gridDim.z;
    float *w_s = reinterpret_cast<float *>(smem);                   // [kMaxSplits][64]: m, then weights
    float *l_s = reinterpret_cast<float *>(smem + C::kMergeLOffset);  // [kMaxSplits][64]
    float *inv_s = reinterpret_cast<float *>(smem + C::kMergeInvOffset);  // [64]
    const float *all_m = a.workspace + (long long)C::kWorkspaceTiles * kBlockM * kLatent +
                         (long long)tile_id * splits * kBlockM;
    const float *all_l = all_m + (long long)C::kWorkspaceTiles * kBlockM;
    for (int i = tid; i < splits * rows; i += kThreads) {
      const int z = i / rows, r = i % rows;
      w_s[z * kBlockM + r] = __ldcg(all_m + z * kBlockM + r);
      l_s[z * kBlockM + r] = __ldcg(all_l + z * kBlockM + r);
    }
    __syncthreads();
    for (int r = tid; r < rows; r += kThreads) {
      float mm = -attnc::infinity();
      for (int z = 0; z < splits; ++z) mm = fmaxf(mm, w_s[z * kBlockM + r]);
      const float mu = mm == -attnc::infinity() ? 0.0f : mm;
      float ll = 0.0f;
      for (int z = 0; z < splits; ++z) {
        const float w = attnc::fast_exp2(w_s[z * kBlockM + r] - mu);
        w_s[z * kBlockM + r] = w;
        ll += l_s[z * kBlockM + r] * w;
      }
      inv_s[r] = ll > 0.0f ? a.out_scale / ll : 0.0f;
    }
    __syncthreads();
    const float *all_o = a.workspace + (long long)tile_id * splits * kBlockM * kLatent;
    // Items of 4 outputs: rows * 128 of them, 8 per thread per pass.
    constexpr int kItems = 8, kUnroll = 4;
    const int total = rows * (kLatent / 4);
    for (int base = 0; base < total; base += kItems * kThreads) {
      float4 acc[kItems];
#pragma unroll
      for (int i = 0; i < kItems; ++i) acc[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int z0 = 0; z0 < splits; z0 += kUnroll) {
        float4 v[kUnroll][kItems];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int i = 0; i < kItems; ++i) {
            const int e = base + i * kThreads + tid, z = z0 + u;
            v[u][i] = z < splits && e < total
                          ? __ldcg(reinterpret_cast<const float4 *>(all_o + ((long long)z * kBlockM + e / 128) * kLatent +
                                                                    e % 128 * 4))
                          : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int i = 0; i < kItems; ++i) {
            const int e = base + i * kThreads + tid, r = min(e / 128, rows - 1);
            const float w = z0 + u < splits ? w_s[(z0 + u) * kBlockM + r] : 0.0f;
            acc[i].x += v[u][i].x * w;
            acc[i].y += v[u][i].y * w;
            acc[i].z += v[u][i].z * w;
            acc[i].w += v[u][i].w * w;
          }
      }
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int e = base + i * kThreads + tid;
        if (e < total) {
          const int r = e / 128, col = e % 128 * 4;
          const float inv = inv_s[r];
          store_output(a, row0, q_start, r, col, acc[i].x * inv, acc[i].y * inv);
          store_output(a, row0, q_start, r, col + 2, acc[i].z * inv, acc[i].w * inv);
        }
      }
    }
    if (tid == 0)
      counters[tile_id] = 0u;  // ready for the next launch on this workspace
  }

  /// The kernel: finds the row tile's sequence and rows, then runs the tile.
  static __device__ __forceinline__ void run(const act_t *query, const act_t *cache, long long block_stride,
                                             long long token_stride, const int *block_tables, const int *seq_lens,
                                             const int *query_start_loc, const float *cache_scale, act_t *output,
                                             float *workspace, int num_tokens, int num_seqs, int max_blocks_per_seq,
                                             int num_kv_splits) {
    extern __shared__ __align__(1024) unsigned char smem[];
    if (num_seqs <= 0) return;
    // Sequence s owns the tile range starting at query_start_loc[s] * H /
    // 64 + s (a spare tile per sequence exits); tiles run last first.
    const int tile_index = (int)gridDim.x - 1 - (int)blockIdx.x;
    int seq, q_start, q_end, kv_len;
    constexpr int kLookup = 4;
    if (num_seqs <= kLookup * kThreads) {
      int4 &owner = *reinterpret_cast<int4 *>(smem + C::kOwnerOffset);
      if (threadIdx.x == 0) owner = make_int4(0, 0, 0, 0);
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kLookup; ++j) {
        const int s = (int)threadIdx.x + j * kThreads;
        if (s < num_seqs) {
          const int start = query_start_loc[s], end = query_start_loc[s + 1];
          const int first_tile = (int)((long long)start * kHeads / kBlockM) + s;
          const int next_tile = (int)((long long)end * kHeads / kBlockM) + s + 1;
          if (first_tile <= tile_index && (s == num_seqs - 1 || tile_index < next_tile))
            owner = make_int4(s, start, end, seq_lens[s]);
        }
      }
      __syncthreads();
      seq = owner.x, q_start = owner.y, q_end = owner.z, kv_len = owner.w;
    } else {
      int lo = 0, hi = num_seqs - 1;
      while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if ((int)((long long)query_start_loc[mid] * kHeads / kBlockM) + mid <= tile_index) lo = mid;
        else hi = mid - 1;
      }
      seq = lo, q_start = query_start_loc[seq], q_end = query_start_loc[seq + 1];
      kv_len = seq_lens[seq];
    }
    const int q_len = q_end - q_start;
    const int row0 = (tile_index - (int)((long long)q_start * kHeads / kBlockM) - seq) * kBlockM;
    const int rows = min(kBlockM, q_len * kHeads - row0);
    if (row0 < 0 || rows <= 0) return;
    __syncthreads();  // the owner slot is read by all before the tile reuses shared memory
    Args a;
    a.query = query;
    a.cache = cache;
    a.block_stride = block_stride;
    a.token_stride = token_stride;
    a.block_tables = block_tables;
    a.output = output;
    a.workspace = workspace;
    a.max_blocks_per_seq = max_blocks_per_seq;
    a.score_scale = C::kScaleLog2;
    a.out_scale = 1.0f;
    tile(a, seq, q_start, q_len, kv_len, row0, rows, smem);
  }
};

/// The MLA absorbed decode kernel for Config C; cache_scale is null (fp8
/// latent caches are not taken yet: attn-prepare-emission refuses them).
template <class C>
__device__ __forceinline__ void latent_attention(const typename C::act_t *query, const typename C::act_t *latent_cache,
                                                 long long latent_cache_block_stride,
                                                 long long latent_cache_token_stride, const int *block_tables,
                                                 const int *seq_lens, const int *query_start_loc,
                                                 const float *cache_scale, typename C::act_t *output,
                                                 float *workspace, int num_tokens, int num_seqs,
                                                 int max_blocks_per_seq, int num_kv_splits) {
  LatentAttention<C>::run(query, latent_cache, latent_cache_block_stride, latent_cache_token_stride, block_tables,
                          seq_lens, query_start_loc, cache_scale, output, workspace, num_tokens, num_seqs,
                          max_blocks_per_seq, num_kv_splits);
}

} // namespace attnc

#endif // ATTNC_MLA_DECODE_CUH
