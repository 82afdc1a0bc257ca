// attnc device helpers: handed to NVRTC as the in-memory header
// "attnc_device.cuh" for every generated kernel. Small, self-contained
// (only CUDA's own fp16/bf16/fp8 headers), and shared by all kernel families
// so that the generated sources stay short and readable.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace attnc {

// ---- element conversion ---------------------------------------------------

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ __forceinline__ float to_float(__nv_fp8_e4m3 x) {
  return static_cast<float>(x);
}

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <> __device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
// Saturating conversion (__NV_SATFINITE): finite values beyond e4m3's range
// (+-448) clamp instead of becoming NaN, as engines' fp8 caches do, while a
// NaN stays NaN.
template <>
__device__ __forceinline__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float x) {
  __nv_fp8_e4m3 out;
  out.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  return out;
}

// ---- vector access ----------------------------------------------------------

/// N elements of T moved as one access of sizeof(T) * N bytes (N a power of
/// two, sizeof(T) * N <= 16); the address must be aligned to that size.
template <typename T, int N> struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <typename T, int N>
__device__ __forceinline__ void load_vec(const T *src, float (&out)[N]) {
  Vec<T, N> packed = *reinterpret_cast<const Vec<T, N> *>(src);
#pragma unroll
  for (int i = 0; i < N; ++i)
    out[i] = to_float(packed.v[i]);
}

/// The bit pattern of one element, in the low bits.
__device__ __forceinline__ unsigned raw_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned raw_bits(__half x) { return __half_as_ushort(x); }
__device__ __forceinline__ unsigned raw_bits(__nv_bfloat16 x) {
  return __bfloat16_as_ushort(x);
}
__device__ __forceinline__ unsigned raw_bits(__nv_fp8_e4m3 x) { return x.__x; }

/// How store_vec's vector stores treat the caches: `cg` keeps the line in
/// L2 only (the default), `cs` marks it evict-first (write-once streams).
enum class StoreCache { cg, cs };

template <typename T, int N, StoreCache kCache = StoreCache::cg>
__device__ __forceinline__ void store_vec(T *dst, const float (&in)[N]) {
  constexpr int kBytes = int(sizeof(T)) * N;
  if constexpr (kBytes >= 4) {
    // Packed into 32-bit words and stored as one access of the vector's
    // size: element-wise (or struct) stores are split into narrow ones.
    constexpr int kWords = kBytes / 4, kPerWord = 4 / int(sizeof(T));
    unsigned words[kWords];
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      words[k] = 0;
#pragma unroll
      for (int e = 0; e < kPerWord; ++e)
        words[k] |= raw_bits(from_float<T>(in[k * kPerWord + e]))
                    << (8 * int(sizeof(T)) * e);
    }
    // __stcg is one vector instruction by construction (a plain store may
    // be split when the compiler cannot prove the alignment) and keeps the
    // line in L2 only, where the next kernel reads it; __stcs likewise.
    if constexpr (kCache == StoreCache::cs) {
      if constexpr (kWords == 4)
        __stcs(reinterpret_cast<uint4 *>(dst), make_uint4(words[0], words[1], words[2], words[3]));
      else if constexpr (kWords == 2)
        __stcs(reinterpret_cast<uint2 *>(dst), make_uint2(words[0], words[1]));
      else
        __stcs(reinterpret_cast<unsigned *>(dst), words[0]);
    } else if constexpr (kWords == 4)
      __stcg(reinterpret_cast<uint4 *>(dst), make_uint4(words[0], words[1], words[2], words[3]));
    else if constexpr (kWords == 2)
      __stcg(reinterpret_cast<uint2 *>(dst), make_uint2(words[0], words[1]));
    else
      __stcg(reinterpret_cast<unsigned *>(dst), words[0]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      dst[i] = from_float<T>(in[i]);
  }
}

/// N consecutive floats (N a power of two) as 16-, 8- or 4-byte accesses;
/// `src` is aligned to min(N, 4) floats. For shared-memory tables: one wide
/// access per lane instead of N strided (bank-conflicting) scalar ones.
template <int N>
__device__ __forceinline__ void load_floats(const float *src, float (&out)[N]) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int k = 0; k < N / 4; ++k) {
      const float4 v = reinterpret_cast<const float4 *>(src)[k];
      out[4 * k] = v.x;
      out[4 * k + 1] = v.y;
      out[4 * k + 2] = v.z;
      out[4 * k + 3] = v.w;
    }
  } else if constexpr (N == 2) {
    const float2 v = *reinterpret_cast<const float2 *>(src);
    out[0] = v.x;
    out[1] = v.y;
  } else {
    out[0] = src[0];
  }
}

// ---- exchanges and reductions within a lane group ---------------------------

/// Element `i` of vector `src_chunk` as held by lane `src_lane` of this
/// thread's group of `ThreadsPerHead` lanes (chunk c of a lane holds vector
/// c * ThreadsPerHead + lane of the row). Every lane of the group
/// (`group_mask`) must call it; conflict-free, unlike a shared-memory
/// exchange of strided elements.
template <int Chunks, int ThreadsPerHead, int VectorWidth>
__device__ __forceinline__ float group_fetch(const float (&x)[Chunks][VectorWidth],
                                             int src_chunk, int src_lane, int i,
                                             unsigned group_mask) {
  float value = 0.0f;
#pragma unroll
  for (int c = 0; c < Chunks; ++c) {
    const float got = __shfl_sync(group_mask, x[c][i], src_lane, ThreadsPerHead);
    if (c == src_chunk)
      value = got;
  }
  return value;
}

/// The lanes of this thread's group of `Width` consecutive lanes.
template <int Width> __device__ __forceinline__ unsigned group_lane_mask() {
  if constexpr (Width >= 32)
    return 0xffffffffu;
  else
    return ((1u << Width) - 1u) << ((threadIdx.x % 32) / Width * Width);
}

/// Sum over groups of `Width` consecutive lanes (Width a power of two <= 32);
/// every lane of the group (`mask`) must call it.
template <int Width>
__device__ __forceinline__ float group_sum(float x, unsigned mask = 0xffffffffu) {
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2)
    x += __shfl_xor_sync(mask, x, offset);
  return x;
}

__device__ __forceinline__ float warp_sum(float x) { return group_sum<32>(x); }

/// RMSNorm of one head spread over a group of `ThreadsPerHead` lanes (in any
/// vector-to-lane layout: the sum covers every held element), over `dim`
/// elements: x * rsqrt(mean(x^2) + eps) * w, or * (1 + w) when Gemma. The
/// weights, in the same layout as x, stay
/// packed in their own type (half the registers of floats) until used.
/// Every lane of the group calls it.
template <bool Gemma, int Chunks, int ThreadsPerHead, int VectorWidth, typename W>
__device__ __forceinline__ void
rms_norm_head(float (&x)[Chunks][VectorWidth], const Vec<W, VectorWidth> (&w)[Chunks],
              int dim, float eps, unsigned group_mask) {
  float sum_squares = 0.0f;
#pragma unroll
  for (int c = 0; c < Chunks; ++c)
#pragma unroll
    for (int i = 0; i < VectorWidth; ++i)
      sum_squares += x[c][i] * x[c][i];
  sum_squares = group_sum<ThreadsPerHead>(sum_squares, group_mask);
  const float inv_rms = rsqrtf(sum_squares / dim + eps);
#pragma unroll
  for (int c = 0; c < Chunks; ++c)
#pragma unroll
    for (int i = 0; i < VectorWidth; ++i) {
      const float weight = to_float(w[c].v[i]);
      x[c][i] *= inv_rms * (Gemma ? 1.0f + weight : weight);
    }
}

/// The statistics of one head spread over a group of `ThreadsPerHead` lanes
/// (any vector-to-lane layout; the elements past `dim` are zeros): its mean
/// when `Centered` (LayerNorm; 0 otherwise) and 1 / sqrt(var + eps), var the
/// mean of (x - mean)^2 over the `dim` elements (for RMSNorm, of x^2). The
/// variance is taken about the mean in a second sum, not as E[x^2] - mean^2.
/// Every lane of the group calls it.
template <bool Centered, int Chunks, int ThreadsPerHead, int VectorWidth>
__device__ __forceinline__ void
head_norm_statistics(const float (&x)[Chunks][VectorWidth], int dim, float eps,
                     unsigned group_mask, float &mean, float &inv_std) {
  mean = 0.0f;
  if constexpr (Centered) {
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < Chunks; ++c)
#pragma unroll
      for (int i = 0; i < VectorWidth; ++i) sum += x[c][i];
    mean = group_sum<ThreadsPerHead>(sum, group_mask) / dim;
  }
  float sum_squares = 0.0f;
#pragma unroll
  for (int c = 0; c < Chunks; ++c)
#pragma unroll
    for (int i = 0; i < VectorWidth; ++i) {
      const float d = x[c][i] - mean;
      sum_squares += d * d;
    }
  sum_squares = group_sum<ThreadsPerHead>(sum_squares, group_mask);
  if constexpr (Centered) // the zeros past dim each added mean^2
    sum_squares -= float(Chunks * VectorWidth * ThreadsPerHead - dim) * mean * mean;
  inv_std = rsqrtf(fmaxf(sum_squares, 0.0f) / dim + eps);
}

// ---- math -------------------------------------------------------------------

/// +infinity (NVRTC has no <math.h>, so no INFINITY macro).
__device__ __forceinline__ float infinity() { return __int_as_float(0x7f800000); }

/// 2^x by the SFU's ex2.approx (relative error about 2^-22; exp2(-inf) = 0),
/// without exp2f's denormal handling.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + __expf(-x));
}

/// cos and sin of `position * inv_freq`, the angle reduced to [-pi, pi] in
/// double precision first: float32 `pos * inv_freq` loses up to pos * 6e-8
/// rad, which at positions near 100k is a visible error. On [-pi, pi] the
/// fast __sincosf is accurate to about 2^-21 (and needs no local memory,
/// unlike sincosf's large-argument path).
__device__ __forceinline__ void rope_cos_sin(long long position,
                                             double inv_freq, float *cos_out,
                                             float *sin_out) {
  const double two_pi = 6.283185307179586476925286766559;
  double angle = static_cast<double>(position) * inv_freq;
  angle -= two_pi * rint(angle / two_pi);
  __sincosf(static_cast<float>(angle), sin_out, cos_out);
}

// ---- tensor-core tiles (mma.sync m16n8k16) and asynchronous copies ----------
// The fragment layouts are those of the PTX ISA ("Matrix fragments for
// mma.m16n8k16"): lane = 4 * g + t holds rows g and g + 8, columns 2t, 2t + 1
// (and 2t + 8, 2t + 9) of each 16x16 A / 16x8 C tile.

/// Two floats as one 32-bit register of two 16-bit elements (the low half
/// first), in the MMA's input type T (__half or __nv_bfloat16).
template <typename T> __device__ __forceinline__ unsigned pack2(float lo, float hi);
template <> __device__ __forceinline__ unsigned pack2<__half>(float lo, float hi) {
  const __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const unsigned *>(&v);
}
template <>
__device__ __forceinline__ unsigned pack2<__nv_bfloat16>(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const unsigned *>(&v);
}

/// d += a * b for a 16x16 A (row), a 16x8 B (col), float accumulators; T is
/// the input type (__half or __nv_bfloat16).
/// (One definition for both types: the asm text needs the PTX type name
/// as a literal, so the specialisations come from one macro.)
template <typename T> struct Mma;
#define ATTNC_MMA_16816(T, PTX)                                                   \
  template <> struct Mma<T> {                                                    \
    static __device__ __forceinline__ void run(float (&d)[4], const unsigned (&a)[4], \
                                               unsigned b0, unsigned b1) {       \
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." PTX "." PTX ".f32 "  \
                   "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"    \
                   : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])              \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1)); \
    }                                                                            \
  };
ATTNC_MMA_16816(__half, "f16")
ATTNC_MMA_16816(__nv_bfloat16, "bf16")
#undef ATTNC_MMA_16816
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4],
                                          unsigned b0, unsigned b1) {
  Mma<T>::run(d, a, b0, b1);
}

__device__ __forceinline__ unsigned shared_address(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Four 8x8 16-bit matrices; lane l gives the address of row l % 8 of
/// matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row)));
}
/// As ldmatrix_x4, each matrix transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row)));
}

/// 16 bytes global -> shared without registers; when `valid` is false the
/// destination is zero-filled and nothing is read.
__device__ __forceinline__ void cp_async_16(void *dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n"
               :: "r"(shared_address(dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
/// Waits until at most N of this thread's committed groups are in flight.
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ---- mbarriers and the tensor memory accelerator (sm_90) ---------------------
// A shared-memory mbarrier's phase completes once its arrivals (the count
// given at init) have happened and the bytes it expects have landed; bulk
// tensor copies (TMA) complete bytes on one. Consumers wait for a phase by
// its parity.

/// A CUtensorMap (cuda.h's CUtensorMap_st, which NVRTC does not see): 128
/// opaque bytes the runtime encodes (a `tensor_map` ABI parameter), passed
/// as a `const __grid_constant__` kernel parameter and used by address.
struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

/// Initialises the mbarrier at `bar` (8-byte aligned shared memory) for
/// `count` arrivals a phase; a __syncthreads makes it visible before use.
template <int Unused = 0> __device__ __forceinline__ void mbarrier_init(void *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
/// One arrival on `bar` that also expects `bytes` more to land in this phase.
template <int Unused = 0> __device__ __forceinline__ void mbarrier_arrive_expect_tx(void *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}
/// Waits until the phase of `bar` with parity `parity` has completed. The
/// phase before the current one counts as completed (parity = the current
/// phase's complement returns at once): that is how a wait for a copy that
/// was never issued passes.
template <int Unused = 0> __device__ __forceinline__ void mbarrier_wait(void *bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}
/// One plain arrival on `bar` (no bytes expected).
template <int Unused = 0> __device__ __forceinline__ void mbarrier_arrive(void *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}
/// Named barriers (ids 1..15; 0 is __syncthreads): `threads` of the block
/// take part, those that sync waiting for the count, those that arrive not.
template <int Unused = 0> __device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
template <int Unused = 0> __device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
/// Register reallocation between warpgroups (sm_90a; every thread of the
/// warpgroup executes it). An increase waits until the block's other
/// warpgroups have released enough: it never goes beyond the registers the
/// block was launched with.
template <int N> __device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
/// A 3-D box of `map` at coordinates (c0 innermost, c1, c2) into shared
/// memory at `dst` (in the map's swizzle; 128-byte aligned, 1024 for the
/// 128-byte swizzle), its bytes completing on `bar`.
template <int Unused = 0>
__device__ __forceinline__ void tma_load_3d(void *dst, const TensorMap *map, void *bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
/// Brings `map` (a `const __grid_constant__` kernel parameter) into the
/// tensor-map cache ahead of its first copy. Reads no memory another kernel
/// writes, so it may come before grid_dependency_wait().
template <int Unused = 0> __device__ __forceinline__ void prefetch_tensor_map(const TensorMap *map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(map))
               : "memory");
}

/// A 4-D box of `map` at coordinates (c0 innermost, .. c3) into shared
/// memory at `dst` (as tma_load_3d), its bytes completing on `bar`.
template <int Unused = 0>
__device__ __forceinline__ void tma_load_4d(void *dst, const TensorMap *map, void *bar, int c0, int c1, int c2,
                                            int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// ---- paged cache views ------------------------------------------------------
/// Element strides of one paged cache view [num_blocks, block_size, heads,
/// head_dim] whose head dim is contiguous. Engines hand views of their own
/// allocations (vLLM's [num_blocks, 2, block_size, heads, dim], K|V packed
/// per token, FlashInfer's HND pages), so the kernels address a row as
/// block * block + offset * token + head * head. The launcher checks that
/// each stride is a multiple of the 16-byte copy granule and below 2^31, so
/// the strides are 32-bit and each product is one 32 x 32 -> 64-bit
/// multiply-add (64-bit strides cost decode at small batch ~16 %: the row
/// offset is computed for every key of every tile).
struct CacheStrides {
  int block, token, head;
};

/// CacheStrides from the kernel's i64 stride parameters (checked < 2^31).
__device__ __forceinline__ CacheStrides make_cache_strides(long long block, long long token,
                                                           long long head) {
  return {int(block), int(token), int(head)};
}

/// The element offset of cache slot `slot` (block * kBlockSize + offset,
/// not negative) at head 0: kBlockSize is a compile-time constant, so the
/// split is a shift for powers of two (a multiply otherwise).
template <int kBlockSize, typename Slot>
__device__ __forceinline__ long long cache_slot_offset(const CacheStrides &s, Slot slot) {
  static_assert(Slot(-1) > Slot(0), "an unsigned slot: the division is a shift");
  return (long long)int(slot / kBlockSize) * s.block + (long long)int(slot % kBlockSize) * s.token;
}

/// The element offset of kv head `head` in a cache row.
__device__ __forceinline__ long long cache_head_offset(const CacheStrides &s, int head) {
  return (long long)head * s.head;
}

// ---- warpgroup MMA (wgmma.mma_async, sm_90a only) ----------------------------
// Shared-memory operands use the 128-byte swizzle of the PTX ISA
// ("asynchronous warpgroup level matrix shared memory layout"): a tile of R
// rows x 64 16-bit elements is R rows of 128 bytes in 1024-byte-aligned
// atoms of 8 rows, 16-byte chunk c of row r stored at chunk c ^ (r % 8); a
// longer row is split into column blocks of 64 elements, each its own
// R x 128-byte tile. Accumulators (m64 x N, fp32) are per warp w of the
// warpgroup the mma.sync C layout of rows 16 w .. 16 w + 15: d[n][e] is row
// 16 w + lane / 4 + 8 (e / 2), column 8 n + 2 (lane % 4) + e % 2. The
// wrappers of the instruction itself are printed into each kernel for the
// shapes it uses. (These helpers are only ever called from sm_90a kernels.)

/// Byte offset of 16-byte chunk `chunk` (elements 8 chunk ..) of row `row`
/// of a swizzled tile of Rows rows.
template <int Rows> __device__ __forceinline__ int sw128_offset(int row, int chunk) {
  return chunk / 8 * (Rows * 128) + row * 128 + ((chunk % 8) ^ (row % 8)) * 16;
}

/// Matrix descriptor of a 128B-swizzled operand at shared address `addr`:
/// bits 0-13 addr >> 4, 16-29 leading byte offset >> 4, 32-45 stride byte
/// offset >> 4, base offset 0 (atoms 1024-byte aligned), bits 62-63 = 1
/// (128-byte swizzle). K-major operands: stride = 1024 (between 8-row
/// groups); the leading offset is unused (a k16 step stays inside a
/// 128-byte row: advance the start by 32 bytes per step). MN-major operands:
/// leading = distance between 64-element column blocks, stride = 1024.
/// Adding bytes >> 4 to a descriptor moves its start address.
__device__ __forceinline__ unsigned long long sw128_desc(unsigned addr, unsigned lbo,
                                                         unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         (unsigned long long)((lbo >> 4) & 0x3FFF) << 16 |
         (unsigned long long)((sbo >> 4) & 0x3FFF) << 32 | 1ull << 62;
}

template <int Unused = 0> __device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
template <int Unused = 0> __device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/// Waits until at most N of the warpgroup's committed wgmma groups are pending.
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/// Makes this thread's generic-proxy shared-memory writes (cp.async
/// included) visible to the async proxy that wgmma reads operands through.
template <int Unused = 0> __device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
/// Keeps the compiler from moving accesses of these accumulator registers
/// across a wgmma fence or wait (those asm statements do not name them).
template <int B> __device__ __forceinline__ void fence_regs(float (&r)[B][4]) {
#pragma unroll
  for (int j = 0; j < B; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(r[j][e])::"memory");
}
template <int A, int B> __device__ __forceinline__ void fence_regs(float (&r)[A][B][4]) {
#pragma unroll
  for (int i = 0; i < A; ++i)
#pragma unroll
    for (int j = 0; j < B; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(r[i][j][e])::"memory");
}

// ---- programmatic dependent launch (sm_90) ----------------------------------
// A kernel launched with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
// (its ABI says "programmatic_dependent_launch") may start while the kernel
// before it on the stream is still running. attnc cannot know which of its
// inputs that kernel writes, so such a kernel follows one rule: before
// grid_dependency_wait() it reads and writes no global memory (shared-memory
// and mbarrier set-up, index math from blockIdx and parameters, and
// prefetch.tensormap of a __grid_constant__ map are fine); every global
// access comes after. launch_dependents() is called only after the wait, so
// a kernel's dependents never start before its own predecessor finished.
// Both are no-ops before sm_90 and harmless in a plain launch (the wait then
// returns at once; the trigger does nothing).

/// Waits until the grids this one depends on programmatically have finished
/// and their memory operations are visible (griddepcontrol.wait).
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

/// Lets the next kernel on the stream, if launched programmatically, start
/// its prologue now (griddepcontrol.launch_dependents; once every CTA of
/// this grid has called it or exited). It only starts the launch: the
/// dependent's own grid_dependency_wait still waits for this grid to finish.
__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

} // namespace attnc
