//===- attnc_wgmma.cuh - warpgroup MMA wrappers (sm_90a) ---------*- CUDA -*-===//
//
// The wgmma instructions of the attention kernel's wgmma tile, for the N
// values its schedules use (attn-specialize: block_n 64, v_dim_padded 64 or
// 128), activation type T (__nv_bfloat16 or __half):
//  - WgmmaSS<T, N> (N = 64, 128): S = Q K^T, m64 x N x k16, both operands K-major in
//    128-byte swizzled shared memory (descriptors a, b), zeroing the
//    accumulators unless `accumulate`;
//  - WgmmaRS<T, N> (N = 64, 128, 256): O += P V, m64 x N x k16, P from registers in the
//    mma.sync A layout per warp, V MN-major in swizzled shared memory
//    (transposed B).
// The accumulator d is N / 8 fragments of 4 floats per thread.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_WGMMA_CUH
#define ATTNC_WGMMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace attnc {

template <class T> struct AlwaysFalse {
  static constexpr bool value = false;
};

template <class T, int N> struct WgmmaSS {
  static_assert(AlwaysFalse<T>::value,
                "WgmmaSS: no wrapper for this type and N (bf16/f16, N = 64, 80, 128, 176 or 192)");
};
template <class T, int N> struct WgmmaRS {
  static_assert(AlwaysFalse<T>::value, "WgmmaRS: no wrapper for this type and N (bf16/f16, N = 64, 128 or 256)");
};

// The accumulator fragments d[i][0..3] as read-write asm operands.
#define ATTNC_WGMMA_D(i) "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])
#define ATTNC_WGMMA_D8(i)                                                           \
  ATTNC_WGMMA_D(i), ATTNC_WGMMA_D(i + 1), ATTNC_WGMMA_D(i + 2), ATTNC_WGMMA_D(i + 3), \
      ATTNC_WGMMA_D(i + 4), ATTNC_WGMMA_D(i + 5), ATTNC_WGMMA_D(i + 6), ATTNC_WGMMA_D(i + 7)

// The three wrappers for one activation type T, whose PTX type name is PTX
// ("bf16" or "f16"); the instruction text is the same for both but for it.
#define ATTNC_WGMMA_WRAPPERS(T, PTX)                                                                \
  template <> struct WgmmaSS<T, 64> {                                                             \
    static __device__ __forceinline__ void run(float (&d)[8][4], unsigned long long a,              \
                                               unsigned long long b, int accumulate) {             \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                     \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " "                    \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21," \
                   "%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"          \
                   : ATTNC_WGMMA_D8(0)                                                            \
                   : "l"(a), "l"(b), "r"(accumulate));                                            \
    }                                                                                             \
  };                                                                                              \
  template <> struct WgmmaSS<T, 128> {                                                            \
    static __device__ __forceinline__ void run(float (&d)[16][4], unsigned long long a,             \
                                               unsigned long long b, int accumulate) {             \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                     \
                   "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX "." PTX " "                   \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21," \
                   "%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,"    \
                   "%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,"    \
                   "%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 0;\n}\n"                                  \
                   : ATTNC_WGMMA_D8(0), ATTNC_WGMMA_D8(8)                                         \
                   : "l"(a), "l"(b), "r"(accumulate));                                            \
    }                                                                                             \
  };                                                                                              \
  template <> struct WgmmaSS<T, 80> {                                                               \
    static __device__ __forceinline__ void run(float (&d)[10][4], unsigned long long a,             \
                                               unsigned long long b, int accumulate) {              \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"                                     \
                   "wgmma.mma_async.sync.aligned.m64n80k16.f32." PTX "." PTX " "                    \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21," \
                   "%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39"        \
                   "}, %40, %41, p, 1, 1, 0, 0;\n}\n"                                               \
                   : ATTNC_WGMMA_D8(0), ATTNC_WGMMA_D(8), ATTNC_WGMMA_D(9)                          \
                   : "l"(a), "l"(b), "r"(accumulate));                                              \
    }                                                                                               \
  };                                                                                                \
  template <> struct WgmmaSS<T, 176> {                                                              \
    static __device__ __forceinline__ void run(float (&d)[22][4], unsigned long long a,             \
                                               unsigned long long b, int accumulate) {              \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"                                     \
                   "wgmma.mma_async.sync.aligned.m64n176k16.f32." PTX "." PTX " "                   \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21," \
                   "%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41," \
                   "%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61," \
                   "%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81," \
                   "%82,%83,%84,%85,%86,%87"                                                        \
                   "}, %88, %89, p, 1, 1, 0, 0;\n}\n"                                               \
                   : ATTNC_WGMMA_D8(0), ATTNC_WGMMA_D8(8), ATTNC_WGMMA_D(16), ATTNC_WGMMA_D(17),    \
                     ATTNC_WGMMA_D(18), ATTNC_WGMMA_D(19), ATTNC_WGMMA_D(20), ATTNC_WGMMA_D(21)     \
                   : "l"(a), "l"(b), "r"(accumulate));                                              \
    }                                                                                               \
  };                                                                                                \
  template <> struct WgmmaSS<T, 192> {                                                              \
    static __device__ __forceinline__ void run(float (&d)[24][4], unsigned long long a,             \
                                               unsigned long long b, int accumulate) {              \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"                                     \
                   "wgmma.mma_async.sync.aligned.m64n192k16.f32." PTX "." PTX " "                   \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21," \
                   "%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41," \
                   "%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61," \
                   "%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81," \
                   "%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95"                        \
                   "}, %96, %97, p, 1, 1, 0, 0;\n}\n"                                               \
                   : ATTNC_WGMMA_D8(0), ATTNC_WGMMA_D8(8), ATTNC_WGMMA_D8(16)                       \
                   : "l"(a), "l"(b), "r"(accumulate));                                              \
    }                                                                                               \
  };                                                                                                \
  template <> struct WgmmaRS<T, 256> {                                                            \
    static __device__ __forceinline__ void run(float (&d)[32][4], const unsigned (&a)[4],           \
                                               unsigned long long b) {                            \
      asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32." PTX "." PTX " "                 \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21," \
                   "%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,"    \
                   "%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,"    \
                   "%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,"    \
                   "%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,"    \
                   "%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,"  \
                   "%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, "        \
                   "{%128,%129,%130,%131}, %132, 1, 1, 1, 1;\n"                                       \
                   : ATTNC_WGMMA_D8(0), ATTNC_WGMMA_D8(8), ATTNC_WGMMA_D8(16), ATTNC_WGMMA_D8(24)  \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                         \
    }                                                                                             \
  };                                                                                              \
  template <> struct WgmmaRS<T, 64> {                                                             \
    static __device__ __forceinline__ void run(float (&d)[8][4], const unsigned (&a)[4],            \
                                               unsigned long long b) {                            \
      asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " "                  \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21," \
                   "%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, 1, 1, 1, 1;\n"   \
                   : ATTNC_WGMMA_D8(0)                                                            \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                         \
    }                                                                                             \
  };                                                                                              \
  template <> struct WgmmaRS<T, 128> {                                                            \
    static __device__ __forceinline__ void run(float (&d)[16][4], const unsigned (&a)[4],           \
                                               unsigned long long b) {                            \
      asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX "." PTX " "                 \
                   "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21," \
                   "%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,"    \
                   "%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,"    \
                   "%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, 1, 1, 1, 1;\n"                         \
                   : ATTNC_WGMMA_D8(0), ATTNC_WGMMA_D8(8)                                         \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                         \
    }                                                                                             \
  };

ATTNC_WGMMA_WRAPPERS(__nv_bfloat16, "bf16")
ATTNC_WGMMA_WRAPPERS(__half, "f16")

#undef ATTNC_WGMMA_WRAPPERS
#undef ATTNC_WGMMA_D8
#undef ATTNC_WGMMA_D

} // namespace attnc

#endif // ATTNC_WGMMA_CUH
