// Base64 (RFC 4648 section 4): the RFC's vectors, round trips, refusals.
#include "security/base64.h"

#include <gtest/gtest.h>

#include <random>

namespace strata::security {
namespace {

Bytes B(std::string_view s) { return Bytes(s.begin(), s.end()); }

TEST(Base64Test, Rfc4648Vectors) {
  const std::pair<const char*, const char*> kVectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (auto [plain, encoded] : kVectors) {
    EXPECT_EQ(Base64Encode(B(plain)), encoded);
    auto decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded.has_value()) << encoded;
    EXPECT_EQ(*decoded, B(plain));
  }
  EXPECT_EQ(Base64Encode(Bytes{0xfb, 0xff}), "+/8=");
}

TEST(Base64Test, RoundTripsEveryLengthAndByte) {
  std::mt19937 rng(7);
  for (size_t len = 0; len < 70; ++len) {
    Bytes data(len);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    auto decoded = Base64Decode(Base64Encode(data));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, data);
  }
}

TEST(Base64Test, RefusesInvalidInput) {
  for (const char* bad : {"Zg", "Zg=", "Zm9", "Z===", "====", "=Zg=", "Zg==Zg==", "Zm9v!A==",
                          "Zm 9v", "Zm9v\n", "Zm-_", "Zm9vY", "A=BC"}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace strata::security
