//===- Sha256.h - SHA-256 (FIPS 180-4) --------------------------*- C++ -*-===//
//
// The kernel cache keys and checksums its entries with SHA-256, and bundles
// checksum their cubins. A small self-contained implementation keeps attnc
// free of OpenSSL; test/unittests/Support/Sha256Test.cpp checks it against
// the FIPS 180-2 example vectors.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_SUPPORT_SHA256_H
#define ATTNC_SUPPORT_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnc {

/// Incremental SHA-256. Not thread-safe; one object per digest. Uses the
/// x86 SHA extensions where the CPU has them (the kernel cache checks
/// megabytes of entries on every warm start), else portable code; both
/// give the same digests.
class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();

  /// Feeds `size` bytes. Must not be called after finish().
  Sha256 &update(const void *data, size_t size);
  Sha256 &update(std::string_view bytes) {
    return update(bytes.data(), bytes.size());
  }
  /// Feeds a 64-bit length, little-endian, then the bytes: use this for
  /// every field of a composite key so that ("ab","c") and ("a","bc") hash
  /// differently.
  Sha256 &updateField(std::string_view bytes);

  /// Pads, finishes and returns the digest. Call once.
  Digest finish();

  /// One-shot digest of `bytes`.
  static Digest hash(std::string_view bytes);
  /// Lower-case hex of a digest (64 characters).
  static std::string hex(const Digest &digest);
  /// Lower-case hex of the digest of `bytes`.
  static std::string hexOf(std::string_view bytes) { return hex(hash(bytes)); }

  /// Whether digests use the CPU's SHA extensions.
  static bool hardwareAccelerated();
  /// Tests only: false makes every later digest use the portable code (true
  /// restores the CPU check). Not thread-safe against running digests.
  static void allowHardwareAcceleration(bool allow);

private:
  /// Compresses `count` consecutive 64-byte blocks into the state.
  void compress(const uint8_t *blocks, size_t count);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
  bool finished_ = false;
};

} // namespace attnc

#endif // ATTNC_SUPPORT_SHA256_H
