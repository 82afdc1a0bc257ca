//===- Sha256.cpp - SHA-256 (FIPS 180-4) ----------------------------------===//

#include "attnc/Support/Sha256.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace attnc {

namespace {

constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void compressPortable(std::array<uint32_t, 8> &state, const uint8_t *block) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = (uint32_t(block[4 * i]) << 24) | (uint32_t(block[4 * i + 1]) << 16) |
           (uint32_t(block[4 * i + 2]) << 8) | uint32_t(block[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t choose = (e & f) ^ (~e & g);
    uint32_t t1 = h + s1 + choose + kRoundConstants[i] + w[i];
    uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = s0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

#if defined(__x86_64__)
/// The same compression with the SHA extensions (sha256rnds2 does two
/// rounds, sha256msg1/2 the message schedule). The instructions keep the
/// state as two vectors, ABEF and CDGH (lane 3 first), so it is shuffled in
/// once per call and back at the end.
__attribute__((target("sha,sse4.1,ssse3"))) void
compressHardware(std::array<uint32_t, 8> &state, const uint8_t *blocks,
                 size_t count) {
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&state[0]));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&state[4]));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  // Big-endian words to lanes.
  const __m128i byteSwap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  for (size_t block = 0; block < count; ++block, blocks += 64) {
    const __m128i savedAbef = abef, savedCdgh = cdgh;
    __m128i words[4];
    for (int i = 0; i < 4; ++i)
      words[i] = _mm_shuffle_epi8(
          _mm_loadu_si128(reinterpret_cast<const __m128i *>(blocks + 16 * i)),
          byteSwap);
    // Group g holds W[4g .. 4g+3]; words[g % 4] is replaced by it.
    for (int g = 0; g < 16; ++g) {
      if (g >= 4) {
        __m128i w16 = words[g & 3], w12 = words[(g + 1) & 3];
        __m128i w8 = words[(g + 2) & 3], w4 = words[(g + 3) & 3];
        // W[t-16] + s0(W[t-15]) + W[t-7], then + s1(W[t-2]).
        __m128i partial = _mm_add_epi32(_mm_sha256msg1_epu32(w16, w12),
                                        _mm_alignr_epi8(w4, w8, 4));
        words[g & 3] = _mm_sha256msg2_epu32(partial, w4);
      }
      __m128i scheduled = _mm_add_epi32(
          words[g & 3], _mm_loadu_si128(reinterpret_cast<const __m128i *>(
                            &kRoundConstants[4 * g])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, scheduled);
      abef = _mm_sha256rnds2_epu32(abef, cdgh,
                                   _mm_shuffle_epi32(scheduled, 0x0E));
    }
    abef = _mm_add_epi32(abef, savedAbef);
    cdgh = _mm_add_epi32(cdgh, savedCdgh);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(&state[0]), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(&state[4]), hgfe);
}

bool cpuHasShaExtensions() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
    return false;
  const bool ssse3 = ecx & (1u << 9), sse41 = ecx & (1u << 19);
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return false;
  return ssse3 && sse41 && (ebx & (1u << 29));
}
#else
void compressHardware(std::array<uint32_t, 8> &, const uint8_t *, size_t) {}
bool cpuHasShaExtensions() { return false; }
#endif

std::atomic<bool> hardwareAllowed{true};

} // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

bool Sha256::hardwareAccelerated() {
  static const bool hasExtensions = cpuHasShaExtensions();
  return hasExtensions && hardwareAllowed.load(std::memory_order_relaxed);
}

void Sha256::allowHardwareAcceleration(bool allow) {
  hardwareAllowed.store(allow, std::memory_order_relaxed);
}

void Sha256::compress(const uint8_t *blocks, size_t count) {
  if (hardwareAccelerated()) {
    compressHardware(state_, blocks, count);
    return;
  }
  for (size_t i = 0; i < count; ++i)
    compressPortable(state_, blocks + 64 * i);
}

Sha256 &Sha256::update(const void *data, size_t size) {
  assert(!finished_ && "Sha256::update after finish");
  const auto *bytes = static_cast<const uint8_t *>(data);
  total_bytes_ += size;
  if (buffered_ > 0) {
    size_t take = std::min(size, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, bytes, take);
    buffered_ += take;
    bytes += take;
    size -= take;
    if (buffered_ < buffer_.size())
      return *this;
    compress(buffer_.data(), 1);
    buffered_ = 0;
  }
  if (size >= 64) {
    compress(bytes, size / 64);
    bytes += size / 64 * 64;
    size %= 64;
  }
  if (size > 0) {
    std::memcpy(buffer_.data(), bytes, size);
    buffered_ = size;
  }
  return *this;
}

Sha256 &Sha256::updateField(std::string_view bytes) {
  uint8_t length[8];
  uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i)
    length[i] = uint8_t(n >> (8 * i));
  update(length, sizeof(length));
  return update(bytes);
}

Sha256::Digest Sha256::finish() {
  assert(!finished_ && "Sha256::finish called twice");
  uint64_t bit_length = total_bytes_ * 8;
  uint8_t pad[72] = {0x80};
  // Pad with 0x80 then zeros up to 56 mod 64, then the 64-bit length.
  size_t pad_length = (buffered_ < 56 ? 56 : 120) - buffered_;
  for (int i = 0; i < 8; ++i)
    pad[pad_length + i] = uint8_t(bit_length >> (56 - 8 * i));
  update(pad, pad_length + 8);
  assert(buffered_ == 0);
  finished_ = true;
  Digest digest;
  for (int i = 0; i < 8; ++i) {
    digest[4 * i] = uint8_t(state_[i] >> 24);
    digest[4 * i + 1] = uint8_t(state_[i] >> 16);
    digest[4 * i + 2] = uint8_t(state_[i] >> 8);
    digest[4 * i + 3] = uint8_t(state_[i]);
  }
  return digest;
}

Sha256::Digest Sha256::hash(std::string_view bytes) {
  return Sha256().update(bytes).finish();
}

std::string Sha256::hex(const Digest &digest) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint8_t byte : digest) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 15]);
  }
  return out;
}

} // namespace attnc
