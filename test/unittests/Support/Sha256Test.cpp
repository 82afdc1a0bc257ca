//===- Sha256Test.cpp - SHA-256 against the FIPS 180-2 vectors ------------===//
//
// The three FIPS 180-2 (appendix B) examples ("abc", the 448-bit two-block
// message, one million 'a'), the empty message, and messages whose lengths
// straddle the padding boundaries (55/56 bytes leave room or not for the
// length in the last block; 64 and 120 fill blocks exactly); the boundary
// digests were computed with an independent implementation (Python's
// hashlib).
//
//===----------------------------------------------------------------------===//

#include "attnc/Support/Sha256.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using attnc::Sha256;

TEST(Sha256, FipsOneBlockMessage) {
  EXPECT_EQ(Sha256::hexOf("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, FipsTwoBlockMessage) {
  EXPECT_EQ(
      Sha256::hexOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, FipsOneMillionA) {
  EXPECT_EQ(Sha256::hexOf(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, EmptyMessage) {
  EXPECT_EQ(Sha256::hexOf(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, PaddingBoundaries) {
  const std::pair<size_t, const char *> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  for (const auto &[length, digest] : cases)
    EXPECT_EQ(Sha256::hexOf(std::string(length, 'a')), digest)
        << length << " bytes";
}

TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  // Odd chunk sizes cross the 64-byte block boundary at every offset.
  std::string message(1000000, 'a');
  Sha256 hasher;
  size_t offset = 0;
  for (size_t chunk = 1; offset < message.size(); chunk = chunk % 131 + 1) {
    size_t take = std::min(chunk, message.size() - offset);
    hasher.update(message.data() + offset, take);
    offset += take;
  }
  EXPECT_EQ(Sha256::hex(hasher.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FieldsKeepTheirBoundaries) {
  // Plain concatenation cannot tell ("ab","c") from ("a","bc"); length-
  // prefixed fields must.
  Sha256 a, b;
  a.updateField("ab").updateField("c");
  b.updateField("a").updateField("bc");
  EXPECT_NE(Sha256::hex(a.finish()), Sha256::hex(b.finish()));
  Sha256 c, d;
  c.update("ab").update("c");
  d.update("a").update("bc");
  EXPECT_EQ(Sha256::hex(c.finish()), Sha256::hex(d.finish()));
}

// The portable code and the SHA extensions (where this CPU has them) give
// the FIPS digests, and the same digest for every length around the block
// and padding boundaries, in one update and in odd chunks.
TEST(Sha256, PortableAndHardwarePathsAgree) {
  const bool hardware = Sha256::hardwareAccelerated();
  std::string bytes(1000, '\0');
  uint32_t seed = 12345;
  for (char &byte : bytes) {
    seed = seed * 1664525u + 1013904223u;
    byte = char(seed >> 24);
  }
  std::vector<std::string> portable;
  for (bool allow : {false, true}) {
    Sha256::allowHardwareAcceleration(allow);
    EXPECT_EQ(Sha256::hardwareAccelerated(), allow && hardware);
    EXPECT_EQ(Sha256::hexOf("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(Sha256::hexOf(std::string(1000000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    for (size_t length = 0; length <= bytes.size(); length += 7) {
      std::string digest = Sha256::hexOf(std::string_view(bytes).substr(0, length));
      Sha256 chunked;
      for (size_t offset = 0; offset < length; offset += 37)
        chunked.update(bytes.data() + offset, std::min<size_t>(37, length - offset));
      EXPECT_EQ(Sha256::hex(chunked.finish()), digest) << length;
      if (!allow)
        portable.push_back(digest);
      else
        EXPECT_EQ(digest, portable[length / 7]) << length;
    }
  }
  Sha256::allowHardwareAcceleration(true);
}
