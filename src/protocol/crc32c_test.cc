#include "protocol/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string_view>
#include <vector>

namespace strata::protocol {
namespace {

// Bit-at-a-time reference: the definition of CRC-32C, nothing shared with the
// library under test.
uint32_t ReferenceCrc(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(nullptr, 0), 0u);
  EXPECT_EQ(Crc32c(Bytes("123456789"), 9), 0xE3069283u);  // RFC 3720 check value
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF);
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720 B.4
  EXPECT_EQ(Crc32c(ones.data(), ones.size()), 0x62A8AB43u);
}

TEST(Crc32cTest, MatchesReferenceAtEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  std::vector<uint8_t> buf(70000);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t n = 0; n < 600; ++n) {
    for (size_t off : {0, 1, 3, 7}) {
      ASSERT_EQ(Crc32c(buf.data() + off, n), ReferenceCrc(buf.data() + off, n)) << n << "@" << off;
    }
  }
  for (size_t n : {4095, 4096, 4097, 16384, 65536, 69993}) {
    EXPECT_EQ(Crc32c(buf.data() + 5, n), ReferenceCrc(buf.data() + 5, n)) << n;
  }
}

TEST(Crc32cTest, ChainsAcrossSplits) {
  std::mt19937 rng(11);
  std::vector<uint8_t> buf(20000);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  const uint32_t whole = Crc32c(buf.data(), buf.size());
  for (size_t cut : {0, 1, 63, 64, 1000, 19999, 20000}) {
    uint32_t c = Crc32c(buf.data(), cut);
    EXPECT_EQ(Crc32c(buf.data() + cut, buf.size() - cut, c), whole) << cut;
  }
}

}  // namespace
}  // namespace strata::protocol
