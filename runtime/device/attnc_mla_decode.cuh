//===- attnc_mla_decode.cuh - MLA's absorbed decode (sm_90a) ----*- CUDA -*-===//
//
// attn.latent_attention: queries [tokens, H, R + P] (absorbed q_nope in the
// first R values, the rotated q_pe after them) against one shared KV head,
// the paged latent cache [num_blocks, block_size, R + P]; V is the first R
// values of the same rows. Output [tokens, H, R]. R = 512 (DeepSeek) or 256
// (Mistral 4; any multiple of 128 up to 512), P = 64; the numbers below are
// R 512's, R 256's in brackets.
//
// A CTA of two warpgroups (256 threads) takes 64 rows (flattened (query
// token, head) rows of one sequence: kNumHeads heads per token, so a decode
// step of 128 heads is two CTAs, of 16 heads a quarter of one, MTP rows
// fill the rest) and one split's run of 64-key tiles of that sequence:
//  - Q [64 x 576] stays in shared memory; K tiles [64 keys x 576] are
//    double-buffered there, all in 128-byte swizzled rows (9 [5] column
//    blocks of 64 values). With a 16-bit cache one thread per warpgroup
//    loads K tiles with the tensor memory accelerator (a tensor map over
//    the cache, one box per page and column block), each column block
//    completing on its own mbarrier, so S = Q K^T takes the blocks as they
//    land and the math warps issue no copies; an fp8 cache comes by
//    cp.async and is widened in place (below).
//  - Seesaw schedule (FlashMLA's idea): tiles go in pairs; warpgroup w
//    computes S = Q K^T of tile 2j + w (36 [20] wgmma m64n64k16, K buffer w)
//    and its online softmax, warpgroup 1 continuing from warpgroup 0's row
//    maxima (shared memory, named barriers between the two). Warpgroup w
//    keeps O[:, R/2 w .. R/2 (w + 1) - 1] (128 [64] fp32 accumulators a
//    thread) and applies both tiles' P: its own from registers, the other's
//    from one shared P buffer (4 wgmma m64n256k16 [m64n128k16] each, V =
//    the K tile's first R columns read as an MN-major B operand). S of tile
//    2j + 1 runs under warpgroup 0's softmax, P V of tile 2j under
//    warpgroup 1's.
//  - Each warpgroup copies its own tiles. K tile 2j + 2 loads into buffer
//    0 in two groups: the column blocks only warpgroup 0 reads (V half 0,
//    the rope part) once its own P V of tile 2j is done, V half 1 once
//    warpgroup 1's is; tile 2j + 3 into buffer 1 once both P V of tile
//    2j + 1 are done.
// An fp8 e4m3 cache (C::kFp8; rows stored divided by *cache_scale, as the
// MLA preprocess writes them) lands through the same cp.async pipeline in
// the same K buffers, 16 fp8 values per copy, half a column block's bytes
// in the other half's place; the thread that copied them widens them in
// place to the swizzled 16-bit tile the wgmma reads (widen_tile). The
// scale is folded into the softmax scale and the output scale (S and P V
// are linear in K and V), so the tiles hold the exact e4m3 values.
// Split-KV: grid z cuts a sequence's tiles into runs; the splits' states
// (unnormalised output, row maxima and sums) merge in a binary tree through
// the workspace (combine_tree: the second state to reach a node adds the
// first's into its registers; the root's CTA writes the output). The paged
// attention kernel's contract: node flags reset, NaN for counts beyond the
// workspace.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MLA_DECODE_CUH
#define ATTNC_MLA_DECODE_CUH

#include "attnc_device.cuh"

namespace attnc {

template <class T> struct MlaWgmma;

// The MMA shapes of the kernel for activation type T (PTX type PTX):
//  - scores: d[64 x 64] (+)= A[64 x 16] B[64 x 16]^T, both K-major in
//    swizzled shared memory (descriptors a, b);
//  - values: d[64 x N] += A[64 x 16] B[16 x N], N = R / 2 (256, 192, 128
//    or 64: the accumulator array's size picks the overload), B MN-major in
//    shared memory; A K-major in shared memory (descriptor) or in registers (the
//    four 32-bit registers of the mma.m16n8k16 A fragment of each warp's 16
//    rows, PTX ISA "Register fragment layout for matrix A").
#define ATTNC_MLA_D(i) "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])
#define ATTNC_MLA_D4(i) ATTNC_MLA_D(i), ATTNC_MLA_D(i + 1), ATTNC_MLA_D(i + 2), ATTNC_MLA_D(i + 3)
#define ATTNC_MLA_D16(i) ATTNC_MLA_D4(i), ATTNC_MLA_D4(i + 4), ATTNC_MLA_D4(i + 8), ATTNC_MLA_D4(i + 12)
#define ATTNC_MLA_D128                                                                                \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                            \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                                  \
  "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                                  \
  "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"                                  \
  "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"                                  \
  "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"                                  \
  "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"                      \
  "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
#define ATTNC_MLA_D64                                                                                 \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                            \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                                  \
  "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                                  \
  "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define ATTNC_MLA_D32                                                                                 \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                            \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define ATTNC_MLA_D96                                                                                 \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                            \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                                  \
  "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                                  \
  "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"                                  \
  "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"                                  \
  "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95"
#define ATTNC_MLA_WGMMA(T, PTX)                                                                       \
  template <> struct MlaWgmma<T> {                                                                    \
    static __device__ __forceinline__ void scores(float (&d)[8][4], unsigned long long a,              \
                                                  unsigned long long b, int accumulate) {             \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                       \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " "                      \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                           \
                   "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "                \
                   "%32, %33, p, 1, 1, 0, 0;\n}\n"                                                    \
                   : ATTNC_MLA_D4(0), ATTNC_MLA_D4(4)                                                \
                   : "l"(a), "l"(b), "r"(accumulate));                                               \
    }                                                                                                 \
    static __device__ __forceinline__ void values(float (&d)[32][4], unsigned long long a,             \
                                                  unsigned long long b) {                             \
      asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32." PTX "." PTX " {"                    \
                   ATTNC_MLA_D128 "}, %128, %129, 1, 1, 1, 0, 1;\n"                                   \
                   : ATTNC_MLA_D16(0), ATTNC_MLA_D16(16)                                             \
                   : "l"(a), "l"(b));                                                                \
    }                                                                                                 \
    static __device__ __forceinline__ void values(float (&d)[32][4], const unsigned (&a)[4],           \
                                                  unsigned long long b) {                             \
      asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32." PTX "." PTX " {"                    \
                   ATTNC_MLA_D128 "}, {%128, %129, %130, %131}, %132, 1, 1, 1, 1;\n"                  \
                   : ATTNC_MLA_D16(0), ATTNC_MLA_D16(16)                                             \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                            \
    }                                                                                                 \
    /* R = 256: d[64 x 128], the same operands. */                                                    \
    static __device__ __forceinline__ void values(float (&d)[16][4], unsigned long long a,             \
                                                  unsigned long long b) {                             \
      asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX "." PTX " {"                    \
                   ATTNC_MLA_D64 "}, %64, %65, 1, 1, 1, 0, 1;\n"                                      \
                   : ATTNC_MLA_D16(0)                                                                \
                   : "l"(a), "l"(b));                                                                \
    }                                                                                                 \
    static __device__ __forceinline__ void values(float (&d)[16][4], const unsigned (&a)[4],           \
                                                  unsigned long long b) {                             \
      asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX "." PTX " {"                    \
                   ATTNC_MLA_D64 "}, {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"                        \
                   : ATTNC_MLA_D16(0)                                                                \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                            \
    }                                                                                                 \
    /* R = 384: d[64 x 192], the same operands. */                                                    \
    static __device__ __forceinline__ void values(float (&d)[24][4], unsigned long long a,            \
                                                  unsigned long long b) {                             \
      asm volatile("wgmma.mma_async.sync.aligned.m64n192k16.f32." PTX "." PTX " {"                    \
                   ATTNC_MLA_D96 "}, %96, %97, 1, 1, 1, 0, 1;\n"                                      \
                   : ATTNC_MLA_D16(0), ATTNC_MLA_D4(16), ATTNC_MLA_D4(20)                             \
                   : "l"(a), "l"(b));                                                                 \
    }                                                                                                 \
    static __device__ __forceinline__ void values(float (&d)[24][4], const unsigned (&a)[4],          \
                                                  unsigned long long b) {                             \
      asm volatile("wgmma.mma_async.sync.aligned.m64n192k16.f32." PTX "." PTX " {"                    \
                   ATTNC_MLA_D96 "}, {%96, %97, %98, %99}, %100, 1, 1, 1, 1;\n"                       \
                   : ATTNC_MLA_D16(0), ATTNC_MLA_D4(16), ATTNC_MLA_D4(20)                             \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                             \
    }                                                                                                 \
    /* R = 128: d[64 x 64], the same operands. */                                                     \
    static __device__ __forceinline__ void values(float (&d)[8][4], unsigned long long a,             \
                                                  unsigned long long b) {                             \
      asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " {"                     \
                   ATTNC_MLA_D32 "}, %32, %33, 1, 1, 1, 0, 1;\n"                                      \
                   : ATTNC_MLA_D4(0), ATTNC_MLA_D4(4)                                                 \
                   : "l"(a), "l"(b));                                                                 \
    }                                                                                                 \
    static __device__ __forceinline__ void values(float (&d)[8][4], const unsigned (&a)[4],           \
                                                  unsigned long long b) {                             \
      asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " {"                     \
                   ATTNC_MLA_D32 "}, {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"                        \
                   : ATTNC_MLA_D4(0), ATTNC_MLA_D4(4)                                                 \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                             \
    }                                                                                                 \
  };

ATTNC_MLA_WGMMA(__nv_bfloat16, "bf16")
ATTNC_MLA_WGMMA(__half, "f16")

#undef ATTNC_MLA_WGMMA
#undef ATTNC_MLA_D128
#undef ATTNC_MLA_D64
#undef ATTNC_MLA_D96
#undef ATTNC_MLA_D32
#undef ATTNC_MLA_D16
#undef ATTNC_MLA_D4
#undef ATTNC_MLA_D

template <class C> struct LatentAttention {
  using act_t = typename C::act_t;
  using cache_t = typename C::cache_t;  // act_t, or __nv_fp8_e4m3 (C::kFp8)
  static constexpr int kHeads = C::kNumHeads;
  static constexpr int kLatent = C::kLatentDim;  // R: V's width and the output's
  static constexpr int kQkDim = C::kQkDim;       // R + P
  static constexpr int kBlockM = C::kBlockM;     // 64 rows
  static constexpr int kBlockN = C::kBlockN;     // 64 keys
  static constexpr int kThreads = C::kThreads;   // 256: two warpgroups
  static constexpr int kColBlocks = kQkDim / 64;
  static constexpr int kTileBytes = kBlockN * kQkDim * 2;
  // Warpgroup w keeps O columns [kHalf w, kHalf (w + 1)): kHalfBlocks
  // 64-column blocks, kONBlocks accumulator groups of 8 columns a thread.
  // (Enumerators, not static constexpr members: NVRTC emits each such
  // member as a PTX global, and these came after R 512's kernel was fixed.)
  enum : int { kHalf = kLatent / 2, kHalfBlocks = kLatent / 128, kONBlocks = kLatent / 16 };
  static_assert(kLatent % 128 == 0 && kLatent >= 128 && kLatent <= 512 && kQkDim % 64 == 0 && kQkDim > kLatent,
                "R a multiple of 128 up to 512 (wgmma n = R / 2 per warpgroup), R + P a multiple of 64");
  static_assert(kBlockM == 64 && kBlockN == 64 && kThreads == 256, "64 x 64 tiles, two warpgroups");
  static_assert(sizeof(cache_t) == (C::kFp8 ? 1 : sizeof(act_t)), "a cache of the activation type or fp8 e4m3");
  static_assert(C::kBarOffset % 8 == 0, "mbarriers are 8-byte aligned");
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

  // A 16-bit cache's K tile comes as boxes of kBoxRows rows of one page
  // (TMA; the printer's box, from plan/LatentAttention.h).
  enum : int {
    kBoxRows = C::kBoxRows,
    kBoxes = kBlockN / kBoxRows,  // per column block
  };
  static_assert(kBlockN % kBoxRows == 0 && C::kBlockSize % kBoxRows == 0, "pages tile the keys");

  struct Args {
    const attnc::TensorMap *cache_map;  // 16-bit caches: the K tiles' tensor map
    const act_t *query;
    const cache_t *cache;
    long long block_stride, token_stride;
    const int *block_tables;
    act_t *output;
    float *workspace;
    int max_blocks_per_seq;
    float score_scale;  // log2 units (times *cache_scale for fp8)
    float out_scale;    // 1, or *cache_scale for fp8
  };

  /// The first key a row at position `pos` does not see.
  static __device__ __forceinline__ int row_key_end(int pos, int kv_len) {
    if constexpr (C::kCausal)
      return min(pos + 1, kv_len);
    else
      return kv_len;
  }

  /// The pages of K tile `tile` that hold keys below kv_end (box p: keys
  /// tile * 64 + p * kBoxRows ..), as block ids and rows in the block;
  /// -1 for a box past kv_end (not loaded: its table entry may be anything).
  struct TilePages {
    int block[kBoxes];
    int row[kBoxes];
  };
  static __device__ __forceinline__ TilePages tile_pages(const int *table, int tile, int kv_end) {
    TilePages pages;
#pragma unroll
    for (int p = 0; p < kBoxes; ++p) {
      const int key = tile * kBlockN + p * kBoxRows;
      pages.block[p] = key < kv_end ? __ldg(table + key / C::kBlockSize) : -1;
      pages.row[p] = key % C::kBlockSize;
    }
    return pages;
  }
  /// Issues the boxes of a 16-bit K tile into `dst` (one thread): column
  /// block b of every loaded page, completing on bars[b] (one arrival a
  /// phase, with the bytes it expects). kPart 0: every column block; 1:
  /// blocks [0, kHalfBlocks) and [2 kHalfBlocks, ..) (warpgroup 0's V half
  /// and the rope part; 0..3 and 8.. at R 512); 2: blocks [kHalfBlocks,
  /// 2 kHalfBlocks) (warpgroup 1's V half).
  template <int kPart = 0>
  static __device__ __forceinline__ void load_tile_tma(const Args &a, const TilePages &pages, unsigned char *dst,
                                                       unsigned long long *bars) {
    int boxes = 0;
#pragma unroll
    for (int p = 0; p < kBoxes; ++p) boxes += pages.block[p] >= 0;
#pragma unroll
    for (int b = 0; b < kColBlocks; ++b)
      if (kPart == 0 || (kPart == 1) == (b < kHalfBlocks || b >= 2 * kHalfBlocks)) {
        attnc::mbarrier_arrive_expect_tx(bars + b, boxes * kBoxRows * 128);
#pragma unroll
        for (int p = 0; p < kBoxes; ++p)
          if (pages.block[p] >= 0)
            attnc::tma_load_3d(dst + b * kBlockN * 128 + p * kBoxRows * 128, a.cache_map, bars + b, b * 64,
                               pages.row[p], pages.block[p]);
      }
  }
  /// Zeroes the V rows of a 16-bit K tile at or past key kv_end (the cache
  /// there holds anything, NaN included, and P V would carry it: 0 * NaN),
  /// then makes the warpgroup's writes visible to its and the other's
  /// wgmma. Called by the warpgroup that computed the tile's S, after its
  /// waits. (The fp8 copies zero-fill those keys themselves.)
  static __device__ __forceinline__ void zero_tail(unsigned char *buf, int first_key, int kv_end, int wg) {
    const int from = kv_end - first_key;
    const int rows = kBlockN - from, u = threadIdx.x % 128;
    for (int e = u; e < rows * (kLatent / 64) * 8; e += 128) {
      const int chunk = e % 8, r = from + (e / 8) % rows, b = e / 8 / rows;
      *reinterpret_cast<uint4 *>(buf + attnc::sw128_offset<kBlockN>(r, b * 8 + chunk)) = make_uint4(0, 0, 0, 0);
    }
    attnc::fence_proxy_async();
    named_barrier_sync(kBarK0 + wg, 128);
  }

  /// load_tile of an fp8 cache (half the bytes): thread u (of 128) copies
  /// the 16 values 16 q .. 16 q + 15 (q = u % 4) of every column block of
  /// keys k = u / 4 and k + 32 into the 32 bytes where key k + 32's 16-bit
  /// chunks 2q and 2q + 1 of that block go (key k's values in chunk 2q's
  /// place, key k + 32's in 2q + 1's), so 4 consecutive threads read a
  /// key's 64 contiguous bytes of a block. The lower 32 keys' places hold
  /// nothing until widen_tile.
  template <int kPart>
  static __device__ __forceinline__ void load_tile_fp8(const Args &a, const int *table, int tile, int kv_end,
                                                       unsigned char *dst) {
    const int u = threadIdx.x % 128, q = u % 4, key0 = u / 4;
    const cache_t *src[2];
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
    for (int b = 0; b < kColBlocks; ++b)
      if (kPart == 0 || (kPart == 1) == (b < kHalfBlocks || b >= 2 * kHalfBlocks)) {
#pragma unroll
        for (int p = 0; p < 2; ++p)
          attnc::cp_async_16(dst + attnc::sw128_offset<kBlockN>(key0 + 32, b * 8 + 2 * q + p), src[p] + b * 64 + q * 16,
                             valid[p]);
      }
  }

  /// Two e4m3 values (the low byte first) as two act_t values in one
  /// register, exactly (e4m3 values are fp16 and bf16 values; NaN stays NaN).
  static __device__ __forceinline__ unsigned widen2(unsigned short bytes, const __half *) {
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(bytes, __NV_E4M3);
    return (unsigned)h.x | (unsigned)h.y << 16;
  }
  static __device__ __forceinline__ unsigned widen2(unsigned short bytes, const __nv_bfloat16 *) {
    const float2 f = __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(bytes, __NV_E4M3)));
    return attnc::pack2<__nv_bfloat16>(f.x, f.y);
  }
  /// Eight e4m3 values as one 16-byte chunk of act_t.
  static __device__ __forceinline__ uint4 widen8(unsigned lo, unsigned hi) {
    const act_t *tag = nullptr;
    return make_uint4(widen2(lo & 0xffffu, tag), widen2(lo >> 16, tag), widen2(hi & 0xffffu, tag),
                      widen2(hi >> 16, tag));
  }
  /// Widens, in place, the fp8 column blocks this thread copied with
  /// load_tile_fp8<kPart> (call after its cp.async wait; before the
  /// proxy fence and the barrier that hand the tile to the wgmma): reads
  /// its 32 landed bytes of each block, then writes the four 16-bit chunks
  /// of keys k and k + 32. Its writes cover only its own landed bytes, so
  /// no thread waits for another.
  template <int kPart>
  static __device__ __forceinline__ void widen_tile(unsigned char *dst) {
    asm volatile("" ::: "memory");  // (cp.async.wait_group does not order plain loads)
    const int u = threadIdx.x % 128, q = u % 4, key0 = u / 4;
#pragma unroll
    for (int b = 0; b < kColBlocks; ++b)
      if (kPart == 0 || (kPart == 1) == (b < kHalfBlocks || b >= 2 * kHalfBlocks)) {
        unsigned char *upper0 = dst + attnc::sw128_offset<kBlockN>(key0 + 32, b * 8 + 2 * q);
        unsigned char *upper1 = dst + attnc::sw128_offset<kBlockN>(key0 + 32, b * 8 + 2 * q + 1);
        const uint4 x = *reinterpret_cast<const uint4 *>(upper0);  // key k
        *reinterpret_cast<uint4 *>(dst + attnc::sw128_offset<kBlockN>(key0, b * 8 + 2 * q)) = widen8(x.x, x.y);
        *reinterpret_cast<uint4 *>(dst + attnc::sw128_offset<kBlockN>(key0, b * 8 + 2 * q + 1)) = widen8(x.z, x.w);
        const uint4 y = *reinterpret_cast<const uint4 *>(upper1);  // key k + 32
        *reinterpret_cast<uint4 *>(upper0) = widen8(y.x, y.y);
        *reinterpret_cast<uint4 *>(upper1) = widen8(y.z, y.w);
      }
  }

  // Named barriers (0 is __syncthreads): a producer warpgroup arrives, the
  // other one waits (256 threads), or one warpgroup waits for itself (128).
  static constexpr int kBarP0 = 1;      // warpgroup 0's P and row max are in shared memory
  static constexpr int kBarP1 = 2;      // warpgroup 1's P and row max are in shared memory
  static constexpr int kBarK0 = 3;      // warpgroup 0 alone: its fp8 K copies landed, or zero_tail
  static constexpr int kBarK1 = 4;      // warpgroup 1 alone: likewise
  static constexpr int kBarKFree1 = 5;  // warpgroup 0 is done reading K buffer 1
  /// Keeps registers that an in-flight wgmma reads (its A fragment) alive
  /// and unmoved up to this point (place after the wait that retires it).
  static __device__ __forceinline__ void fence(unsigned (&r)[4][4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(r[i][e])::"memory");
  }
  /// o *= corr per row half, skipped by a warp whose rows' maxima did not move.
  static __device__ __forceinline__ void rescale(float (&o)[kONBlocks][4], const float (&corr)[2]) {
    if (!__all_sync(0xffffffffu, corr[0] == 1.0f && corr[1] == 1.0f)) {
#pragma unroll
      for (int n = 0; n < kONBlocks; ++n) {
        o[n][0] *= corr[0];
        o[n][1] *= corr[0];
        o[n][2] *= corr[1];
        o[n][3] *= corr[1];
      }
    }
  }
  /// The softmax of the other warpgroup's tile for this one: its new row
  /// maxima from shared memory; returns the correction of o and l.
  static __device__ __forceinline__ void follow(const float *m_other, int warp, int g, float scale, float (&m)[2],
                                                float (&l)[2], float (&corr)[2]) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const float m_new = m_other[warp * 16 + g + 8 * i];
      const float m_use = m_new == -attnc::infinity() ? 0.0f : m_new;
      corr[i] = attnc::fast_exp2((m[i] - m_use) * scale);
      m[i] = m_new;
      l[i] *= corr[i];
    }
  }
  /// The online softmax of this warpgroup's own tile (scores s of keys
  /// tile_key ..): masks, new row maxima (m), correction (corr), row sums
  /// (l), P packed as the A fragments of the P V wgmma (p[kk]: keys 16 kk ..).
  static __device__ __forceinline__ void softmax(float (&s)[8][4], int tile_key, int full_end, const int (&row_end)[2],
                                                 int t, float scale, float (&m)[2], float (&l)[2], float (&corr)[2],
                                                 unsigned (&p)[4][4]) {
    if (tile_key + kBlockN > full_end) {
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = tile_key + n * 8 + 2 * t + (e & 1);
          if (key >= row_end[e / 2]) s[n][e] = -attnc::infinity();
        }
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float x = -attnc::infinity();
#pragma unroll
      for (int n = 0; n < 8; ++n) x = fmaxf(x, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
      const float m_new = fmaxf(m[i], x);
      const float m_use = m_new == -attnc::infinity() ? 0.0f : m_new;
      corr[i] = attnc::fast_exp2((m[i] - m_use) * scale);
      m[i] = m_new;
      const float base = m_use * scale;
      float sum = 0.0f;
#pragma unroll
      for (int n = 0; n < 8; ++n) {
        s[n][2 * i] = attnc::fast_exp2(fmaf(s[n][2 * i], scale, -base));
        s[n][2 * i + 1] = attnc::fast_exp2(fmaf(s[n][2 * i + 1], scale, -base));
        sum += s[n][2 * i] + s[n][2 * i + 1];
      }
      l[i] = l[i] * corr[i] + sum;
    }
    // The accumulator's (row g + 8 i, keys 8 n + 2t ..) pair is the A
    // fragment's register i + 2 (n % 2) of k step n / 2.
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      p[kk][0] = attnc::pack2<act_t>(s[2 * kk][0], s[2 * kk][1]);
      p[kk][1] = attnc::pack2<act_t>(s[2 * kk][2], s[2 * kk][3]);
      p[kk][2] = attnc::pack2<act_t>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      p[kk][3] = attnc::pack2<act_t>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
  }
  /// P (packed fragments) into shared memory for the other warpgroup: row
  /// r, key k at swizzled chunk k / 8 of row r.
  static __device__ __forceinline__ void store_p(unsigned char *p_s, const unsigned (&p)[4][4], int warp, int g,
                                                 int t) {
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int i = 0; i < 2; ++i)
        *reinterpret_cast<unsigned *>(p_s + attnc::sw128_offset<kBlockM>(warp * 16 + g + 8 * i, n) + 4 * t) =
            p[n / 2][i + 2 * (n % 2)];
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
    const int tid = threadIdx.x, warp = (tid % 128) / 32, lane = tid % 32;
    // The warpgroup, warp-uniform as far as the compiler can tell (its wgmma
    // pipelines stay unserialized across the warpgroups' branches).
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
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

    // The 16-bit K buffers' mbarriers: kbar[w * kColBlocks + b] is column
    // block b of buffer w, whose load k (tiles w, w + 2, ...) completes
    // phase k.
    unsigned long long *kbar = reinterpret_cast<unsigned long long *>(smem + C::kBarOffset);
    if constexpr (!C::kFp8) {
      if (tid < 2 * kColBlocks) attnc::mbarrier_init(kbar + tid, 1);
      __syncthreads();
    }
    const bool loader = tid % 128 == 0;  // each warpgroup's TMA thread
    // Q (rows past `rows` zero-filled) by all threads, K tile w by
    // warpgroup w into buffer w.
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
    if constexpr (C::kFp8) {
      if (wg < my_tiles)
        load_tile_fp8<0>(a, table, my_first + wg, tile_end, k_s + wg * C::kKBytes);
    }
    attnc::cp_async_commit();
    if constexpr (!C::kFp8) {
      if (loader && wg < my_tiles)
        load_tile_tma(a, tile_pages(table, my_first + wg, tile_end), k_s + wg * C::kKBytes, kbar + wg * kColBlocks);
    }
    attnc::cp_async_wait<0>();
    if constexpr (C::kFp8) {
      if (wg == 1 && 1 < my_tiles)  // (warpgroup 0 widens its tiles in the loop)
        widen_tile<0>(k_s + C::kKBytes);
    }
    attnc::fence_proxy_async();
    __syncthreads();  // Q, K tiles 0 and 1 landed

    float o[kONBlocks][4];
#pragma unroll
    for (int n = 0; n < kONBlocks; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float m[2] = {-attnc::infinity(), -attnc::infinity()}, l[2] = {0.0f, 0.0f}, corr[2];
    float s[8][4];
    unsigned p[4][4];
    const float scale = a.score_scale;
    const unsigned long long q_desc = attnc::sw128_desc(attnc::shared_address(q_s), 16, 1024);
    const unsigned long long k_desc = attnc::sw128_desc(attnc::shared_address(k_s), 16, 1024);
    const unsigned long long p_desc = attnc::sw128_desc(attnc::shared_address(p_s), 16, 1024);
    // V of warpgroup w (K buffer 0): column blocks kHalfBlocks w ..
    // kHalfBlocks (w + 1) - 1, MN-major; + kKBytes >> 4 for buffer 1.
    const unsigned long long v_desc =
        attnc::sw128_desc(attnc::shared_address(k_s + wg * kHalfBlocks * kBlockN * 128), kBlockN * 128, 1024);
    const unsigned long long v_own = v_desc + ((wg * C::kKBytes) >> 4);
    const unsigned long long v_other = v_desc + (((1 - wg) * C::kKBytes) >> 4);

    // Seesaw: tiles run in pairs; warpgroup w computes S = Q K^T of tile
    // 2j + w (all 64 keys, K buffer w) and the softmax; warpgroup 0 goes
    // first, warpgroup 1 continues from its row maxima. Each keeps O for its
    // R / 2 V columns and applies both tiles' P: its own from registers, the
    // other's from shared memory (one P buffer: a warpgroup writes P only
    // once its P V of the other's P is done, and the other reads its own P
    // from registers). So S of tile 2j + 1 runs under warpgroup 0's softmax
    // and P V of tile 2j under warpgroup 1's.
    float *m_s = max_s;  // [2 wg][64]: the new row maxima of warpgroup w's tile
    const int pairs = (my_tiles + 1) / 2;
    for (int j = 0; j < pairs; ++j) {
      const bool has1 = 2 * j + 1 < my_tiles;
      if (wg == 0) {
        const int tile_key = (my_first + 2 * j) * kBlockN;
        TilePages next{};  // (16-bit cache) tile 2j + 2's block ids, looked up early
        if constexpr (!C::kFp8) {
          if (loader && 2 * j + 2 < my_tiles) next = tile_pages(table, my_first + 2 * j + 2, tile_end);
        }
        // K tile 2j came in two parts (load <1>, then <2>: column blocks
        // 0..3 and 8.., then 4..7 at R 512): S starts on the first while the
        // second lands. 16-bit: S takes each column block as it lands
        // (mbarrier j of buffer 0); fp8: each part once copied and widened.
        // (No branch around these waits: ptxas fences the wgmma chain there.)
        if constexpr (C::kFp8) {
          attnc::cp_async_wait<1>();
          widen_tile<1>(k_s);
          attnc::fence_proxy_async();
          named_barrier_sync(kBarK0, 128);
        }
        attnc::wgmma_fence();
#pragma unroll
        for (int i = 0; i < kColBlocks; ++i) {
          const int b = i < kHalfBlocks ? i
                        : i < kColBlocks - kHalfBlocks ? i + kHalfBlocks
                                                       : i - (kColBlocks - 2 * kHalfBlocks);
          if constexpr (C::kFp8) {
            if (i == kColBlocks - kHalfBlocks) {  // the second part
              attnc::cp_async_wait<0>();
              widen_tile<2>(k_s);
              attnc::fence_proxy_async();
              named_barrier_sync(kBarK0, 128);
            }
          } else {
            attnc::mbarrier_wait(kbar + b, j & 1);
          }
#pragma unroll
          for (int ks = 0; ks < 4; ++ks)
            MlaWgmma<act_t>::scores(s, q_desc + ((b * kBlockM * 128 + ks * 32) >> 4),
                                    k_desc + ((b * kBlockN * 128 + ks * 32) >> 4), i + ks > 0);
        }
        attnc::wgmma_commit();
        attnc::wgmma_wait<0>();  // S (and every earlier P V)
        fence(s);
        fence(o);
        fence(p);
        if constexpr (!C::kFp8) {
          if (tile_key + kBlockN > tile_end) zero_tail(k_s, tile_key, tile_end, 0);
        }
        softmax(s, tile_key, full_end, row_end, t, scale, m, l, corr, p);
        store_p(p_s, p, warp, g, t);
        if (t == 0) {
          m_s[warp * 16 + g] = m[0];
          m_s[warp * 16 + g + 8] = m[1];
        }
        attnc::fence_proxy_async();
        named_barrier_arrive(kBarP0, 256);
        rescale(o, corr);
        fence(o);
        attnc::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockN / 16; ++kk)
          MlaWgmma<act_t>::values(o, p[kk], v_own + ((kk * 16 * 128) >> 4));
        attnc::wgmma_commit();
        if (has1) {
          // Once its own P V is done, the parts of K buffer 0 that only this
          // warpgroup reads (its V half, the rope part) take tile 2j + 2;
          // the other half follows warpgroup 1's P V of tile 2j.
          attnc::wgmma_wait<0>();
          fence(o);
          fence(p);
          if constexpr (C::kFp8) {
            if (2 * j + 2 < my_tiles)
              load_tile_fp8<1>(a, table, my_first + 2 * j + 2, tile_end, k_s);
            attnc::cp_async_commit();
          } else if (loader && 2 * j + 2 < my_tiles) {
            load_tile_tma<1>(a, next, k_s, kbar);
          }
          named_barrier_sync(kBarP1, 256);  // warpgroup 1's P (and its P V of tile 2j done)
          follow(m_s + 64, warp, g, scale, m, l, corr);
          if constexpr (C::kFp8) {
            if (2 * j + 2 < my_tiles)
              load_tile_fp8<2>(a, table, my_first + 2 * j + 2, tile_end, k_s);
            attnc::cp_async_commit();
          } else if (loader && 2 * j + 2 < my_tiles) {
            load_tile_tma<2>(a, next, k_s, kbar);
          }
          rescale(o, corr);
          fence(o);
          attnc::wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < kBlockN / 16; ++kk)
            MlaWgmma<act_t>::values(o, p_desc + ((kk * 32) >> 4), v_other + ((kk * 16 * 128) >> 4));
          attnc::wgmma_commit();
          attnc::wgmma_wait<0>();
          fence(o);
          if (2 * j + 3 < my_tiles)
            named_barrier_arrive(kBarKFree1, 256);
        }
      } else {
        const int tile_key = (my_first + 2 * j + 1) * kBlockN;
        TilePages next{};  // (16-bit cache) tile 2j + 3's block ids, looked up early
        if constexpr (!C::kFp8) {
          if (loader && 2 * j + 3 < my_tiles) next = tile_pages(table, my_first + 2 * j + 3, tile_end);
        }
        // S of tile 2j + 1 (buffer 1, load j); without one (an odd count's
        // last pair) it runs on the stale buffer and is dropped: a wgmma
        // issued in only one path would make the compiler serialize every
        // wgmma. 16-bit: each column block as it lands; a missing tile's
        // waits take the completed phase before (parity flipped), which
        // passes at once. fp8: the tile copied and widened first.
        if constexpr (C::kFp8) {
          if (j > 0) {
            attnc::cp_async_wait<0>();
            if (has1)  // (the stale buffer may still be warpgroup 0's V)
              widen_tile<0>(k_s + C::kKBytes);
            attnc::fence_proxy_async();
            named_barrier_sync(kBarK1, 128);  // K tile 2j + 1 landed
          }
        }
        const unsigned parity = (j & 1) ^ (has1 ? 0u : 1u);
        attnc::wgmma_fence();
#pragma unroll
        for (int b = 0; b < kColBlocks; ++b) {
          if constexpr (!C::kFp8)
            attnc::mbarrier_wait(kbar + kColBlocks + b, parity);
#pragma unroll
          for (int ks = 0; ks < 4; ++ks)
            MlaWgmma<act_t>::scores(s, q_desc + ((b * kBlockM * 128 + ks * 32) >> 4),
                                    k_desc + ((C::kKBytes + b * kBlockN * 128 + ks * 32) >> 4), b + ks > 0);
        }
        attnc::wgmma_commit();
        named_barrier_sync(kBarP0, 256);  // warpgroup 0's P of tile 2j
        follow(m_s, warp, g, scale, m, l, corr);
        // S too (issued with warpgroup 0's, so about done): o is read next,
        // and ptxas serializes every wgmma when accumulators are read under
        // a partial wait here.
        attnc::wgmma_wait<0>();
        fence(o);
        fence(p);
        rescale(o, corr);
        fence(o);
        attnc::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockN / 16; ++kk)
          MlaWgmma<act_t>::values(o, p_desc + ((kk * 32) >> 4), v_other + ((kk * 16 * 128) >> 4));
        attnc::wgmma_commit();
        if constexpr (!C::kFp8) {
          if (has1 && tile_key + kBlockN > tile_end) zero_tail(k_s + C::kKBytes, tile_key, tile_end, 1);
        }
        if (has1) {
          fence(s);  // (S is done; P V of tile 2j runs under this softmax)
          softmax(s, tile_key, full_end, row_end, t, scale, m, l, corr, p);
          attnc::wgmma_wait<0>();  // P V of tile 2j: the P buffer and K buffer 0 are free
          fence(o);
          store_p(p_s, p, warp, g, t);
          if (t == 0) {
            m_s[64 + warp * 16 + g] = m[0];
            m_s[64 + warp * 16 + g + 8] = m[1];
          }
          attnc::fence_proxy_async();
          named_barrier_arrive(kBarP1, 256);
          rescale(o, corr);
          fence(o);
          attnc::wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < kBlockN / 16; ++kk)
            MlaWgmma<act_t>::values(o, p[kk], v_own + ((kk * 16 * 128) >> 4));
          attnc::wgmma_commit();
          if (2 * j + 3 < my_tiles) {
            attnc::wgmma_wait<0>();
            fence(o);
            fence(p);
            named_barrier_sync(kBarKFree1, 256);  // warpgroup 0's P V of tile 2j + 1 done
            if constexpr (C::kFp8) {
              load_tile_fp8<0>(a, table, my_first + 2 * j + 3, tile_end, k_s + C::kKBytes);
              attnc::cp_async_commit();
            } else if (loader) {
              load_tile_tma(a, next, k_s + C::kKBytes, kbar + kColBlocks);
            }
          }
        }
      }
    }
    attnc::wgmma_wait<0>();
    fence(o);
    fence(p);
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
          for (int n = 0; n < kONBlocks; ++n)
            store_output(a, row0, q_start, r, wg * kHalf + n * 8 + 2 * t, o[n][2 * i] * inv, o[n][2 * i + 1] * inv);
        }
      }
      return;
    }

    // Split-KV: the splits' states meet in a binary tree (combine_tree).
    if (gridDim.x * gridDim.z > C::kWorkspaceTiles || gridDim.x > C::kTargetCtas || splits > C::kMaxSplits) {
      poison_rows(a, rows, row0, q_start);
      return;
    }
    float mm[2] = {m[0] * scale, m[1] * scale};  // log2 units (-inf: no keys)
    if (!combine_tree(a, smem, o, mm, l, warp, g, t, wg))
      return;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = warp * 16 + g + 8 * i;
      if (r < rows) {
        const float inv = l[i] > 0.0f ? a.out_scale / l[i] : 0.0f;
#pragma unroll
        for (int n = 0; n < kONBlocks; ++n)
          store_output(a, row0, q_start, r, wg * kHalf + n * 8 + 2 * t, o[n][2 * i] * inv, o[n][2 * i + 1] * inv);
      }
    }
  }

  /// left x w_left + right x w_right, rounded the same way whatever the
  /// caller (the right product alone, then one fma).
  static __device__ __forceinline__ float merge_pair(float left, float w_left, float right, float w_right) {
    return __fmaf_rn(left, w_left, __fmul_rn(right, w_right));
  }

  /// ld.acquire.gpu of a workspace flag word.
  static __device__ __forceinline__ unsigned load_acquire(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
  }

  /// The split-KV merge: a binary tree over the row tile's splits. The
  /// state of a run of splits (o, the rows' maxima mm in log2 units and
  /// sums l, all in this thread's registers) starts as this split's; at
  /// level k the runs [lo, lo + 2^k) and [lo + 2^k, lo + 2^(k+1)) meet at a
  /// node whose two bits (arrived, ready) are in the workspace's counter
  /// words. The first run to arrive writes its state to the slot of its
  /// first split, sets ready and exits; the second waits for ready (the
  /// first is running: it arrived, and writes and exits without waiting on
  /// anything), adds the first's state into its registers, clears both bits
  /// (the workspace is reusable launch after launch) and goes up. The root's
  /// CTA returns true, holding the row tile's whole state; every other CTA
  /// returns false. A CTA never waits on one that may not be scheduled, and
  /// the last split to finish does ceil(log2(splits)) reads of a state and
  /// no write before the output. A state's slot: o as [kONBlocks][256
  /// threads] float4 (this thread's accumulators, coalesced), the rows' mm
  /// and l as [64] floats each.
  static __device__ __forceinline__ bool combine_tree(const Args &a, unsigned char *smem, float (&o)[kONBlocks][4],
                                                      float (&mm)[2], float (&l)[2], int warp, int g, int t, int wg) {
    const int tid = threadIdx.x, splits = gridDim.z, tile_id = blockIdx.x;
    const long long first_part = (long long)tile_id * splits;
    float *ws_o = a.workspace + first_part * kBlockM * kLatent;
    float *ws_m = a.workspace + (long long)C::kWorkspaceTiles * kBlockM * kLatent + first_part * kBlockM;
    float *ws_l = ws_m + (long long)C::kWorkspaceTiles * kBlockM;
    // Node bits: node (tile, mid - 1) of the split point mid owns bits 2 b
    // and 2 b + 1 of the counter words, b = tile * splits + mid - 1 (fewer
    // than kWorkspaceTiles nodes: 2 bits each fit the kTargetCtas words).
    unsigned *words =
        reinterpret_cast<unsigned *>(a.workspace + (long long)C::kWorkspaceTiles * kBlockM * (kLatent + 2));
    unsigned &arrived_second = *reinterpret_cast<unsigned *>(smem + C::kSplitFlagOffset);
    int lo = blockIdx.z;
    for (int span = 1; span < splits; span *= 2) {
      const int parent = lo & ~(2 * span - 1), mid = parent + span;
      if (mid >= splits)
        continue;  // no right run: this run is the parent's
      const int bit = 2 * (int)((first_part + mid - 1) % 16);
      unsigned *word = words + (first_part + mid - 1) / 16;
      const unsigned arrive = 1u << bit, ready = 2u << bit;
      __syncthreads();  // (the flag's last readers are done)
      if (tid == 0) {
        unsigned state = atomicOr(word, arrive);
        arrived_second = (state & arrive) != 0u;
        if (arrived_second) {
          while ((state & ready) == 0u)
            state = load_acquire(word);
          __threadfence();  // (acquire: the other's state, for the CTA after the barrier)
          atomicAnd(word, ~(arrive | ready));  // ready for the next launch on this workspace
        }
      }
      __syncthreads();
      if (!arrived_second) {
        float *slot_o = ws_o + (long long)lo * kBlockM * kLatent;
#pragma unroll
        for (int n = 0; n < kONBlocks; ++n)
          __stcg(reinterpret_cast<float4 *>(slot_o) + n * kThreads + tid, make_float4(o[n][0], o[n][1], o[n][2], o[n][3]));
        if (t == 0 && wg == 0) {
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            const int r = warp * 16 + g + 8 * i;
            __stcg(ws_m + lo * kBlockM + r, mm[i]);
            __stcg(ws_l + lo * kBlockM + r, l[i]);
          }
        }
        __threadfence();
        __syncthreads();
        if (tid == 0)
          atomicOr(word, ready);
        return false;
      }
      // The other run's state: [parent, mid) if this one is [mid, ..), else [mid, ..).
      // Whichever CTA arrives second, a node computes left x w_left + right
      // x w_right with the same roundings (one explicit product, then one
      // fma): the output does not depend on the order the splits finish.
      const bool own_left = lo == parent;
      const int other = own_left ? mid : parent;
      const float *other_o = ws_o + (long long)other * kBlockM * kLatent;
      float w_own[2], w_other[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = warp * 16 + g + 8 * i;
        const float m_other = __ldcg(ws_m + other * kBlockM + r), l_other = __ldcg(ws_l + other * kBlockM + r);
        const float m_new = fmaxf(mm[i], m_other);
        const float mu = m_new == -attnc::infinity() ? 0.0f : m_new;
        w_own[i] = attnc::fast_exp2(mm[i] - mu);
        w_other[i] = attnc::fast_exp2(m_other - mu);
        mm[i] = m_new;
        l[i] = own_left ? merge_pair(l[i], w_own[i], l_other, w_other[i])
                        : merge_pair(l_other, w_other[i], l[i], w_own[i]);
      }
      constexpr int kChunk = kONBlocks % 16 == 0 ? 16 : 8;  // float4 loads in flight a thread
      static_assert(kONBlocks % kChunk == 0, "whole chunks of accumulator groups");
#pragma unroll
      for (int n0 = 0; n0 < kONBlocks; n0 += kChunk) {
        float4 v[kChunk];
#pragma unroll
        for (int n = 0; n < kChunk; ++n)
          v[n] = __ldcg(reinterpret_cast<const float4 *>(other_o) + (n0 + n) * kThreads + tid);
#pragma unroll
        for (int n = 0; n < kChunk; ++n) {
          const float other_v[4] = {v[n].x, v[n].y, v[n].z, v[n].w};
#pragma unroll
          for (int e = 0; e < 4; ++e)
            o[n0 + n][e] = own_left ? merge_pair(o[n0 + n][e], w_own[e / 2], other_v[e], w_other[e / 2])
                                    : merge_pair(other_v[e], w_other[e / 2], o[n0 + n][e], w_own[e / 2]);
        }
      }
      lo = parent;
    }
    return true;
  }

  /// The kernel: finds the row tile's sequence and rows, then runs the tile.
  static __device__ __forceinline__ void run(const act_t *query, const cache_t *cache,
                                             const attnc::TensorMap *cache_map, long long block_stride,
                                             long long token_stride, const int *block_tables, const int *seq_lens,
                                             const int *query_start_loc, const float *cache_scale, act_t *output,
                                             float *workspace, int num_tokens, int num_seqs, int max_blocks_per_seq,
                                             int num_kv_splits) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // Programmatic dependent launch (attnc_device.cuh): before the wait only
    // the tensor map's prefetch (a kernel parameter, not memory a
    // predecessor writes); every global access after it, in every block.
    if constexpr (!C::kFp8)
      if (threadIdx.x == 0) attnc::prefetch_tensor_map(cache_map);
    attnc::grid_dependency_wait();
    attnc::launch_dependents();
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
    a.cache_map = cache_map;
    a.block_stride = block_stride;
    a.token_stride = token_stride;
    a.block_tables = block_tables;
    a.output = output;
    a.workspace = workspace;
    a.max_blocks_per_seq = max_blocks_per_seq;
    a.score_scale = C::kScaleLog2;
    a.out_scale = 1.0f;
    if constexpr (C::kFp8) {
      // K = cache * scale and V = its first R columns: S and P V scale by it.
      const float scale = *cache_scale;
      a.score_scale *= scale;
      a.out_scale = scale;
    }
    tile(a, seq, q_start, q_len, kv_len, row0, rows, smem);
  }
};

/// The MLA absorbed decode kernel for Config C; cache_scale is null unless
/// the cache is fp8 (C::kFp8: rows stored divided by *cache_scale).
template <class C>
__device__ __forceinline__ void latent_attention(const typename C::act_t *query, const typename C::cache_t *latent_cache,
                                                 const attnc::TensorMap *latent_cache_map,
                                                 long long latent_cache_block_stride,
                                                 long long latent_cache_token_stride, const int *block_tables,
                                                 const int *seq_lens, const int *query_start_loc,
                                                 const float *cache_scale, typename C::act_t *output,
                                                 float *workspace, int num_tokens, int num_seqs,
                                                 int max_blocks_per_seq, int num_kv_splits) {
  LatentAttention<C>::run(query, latent_cache, latent_cache_map, latent_cache_block_stride, latent_cache_token_stride, block_tables,
                          seq_lens, query_start_loc, cache_scale, output, workspace, num_tokens, num_seqs,
                          max_blocks_per_seq, num_kv_splits);
}

} // namespace attnc

#endif // ATTNC_MLA_DECODE_CUH
