// Base64url, JWT splitting and JWKS signature checks with keys made in the
// test: every supported alg verifies, and a forged, mismatched or malformed
// token is refused with a message that says why.
#include "security/jwt.h"

#include <gtest/gtest.h>

#include "security/base64url.h"
#include "security/jose_test_util.h"

namespace strata::security {
namespace {

using nlohmann::json;
using testing::B64;
using testing::JwksJson;
using testing::MakeEcKey;
using testing::MakeRsaKey;
using testing::SignJwt;
using testing::TestKey;
using testing::UnsignedJwt;

std::string ErrorOf(const Status& st) { return st.ok() ? "OK" : st.error().message; }

TEST(JwtBase64UrlTest, RoundTripsEveryTailLength) {
  Bytes data;
  for (int i = 0; i < 40; ++i) {
    auto decoded = Base64UrlDecode(Base64UrlEncode(data));
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(*decoded, data);
    data.push_back(uint8_t(i * 37 + 250));
  }
  EXPECT_EQ(Base64UrlEncode(Bytes{0xfb, 0xff}), "-_8");
}

TEST(JwtBase64UrlTest, RefusesNonCanonicalText) {
  EXPECT_FALSE(Base64UrlDecode("YQ==").ok());   // padding
  EXPECT_FALSE(Base64UrlDecode("a+b/").ok());   // standard alphabet
  EXPECT_FALSE(Base64UrlDecode("YWJjZ").ok());  // 4n+1 characters
  EXPECT_FALSE(Base64UrlDecode("YR").ok());     // leftover bits set
  EXPECT_TRUE(Base64UrlDecode("YQ").ok());
}

TEST(JwtTest, SplitsAndDecodesTheThreeParts) {
  std::string token = UnsignedJwt({{"alg", "RS256"}}, {{"sub", "alice"}}, "sig");
  auto jwt = ParseJwt(token);
  ASSERT_TRUE(jwt.ok()) << jwt.error().message;
  EXPECT_EQ(jwt->header["alg"], "RS256");
  EXPECT_EQ(jwt->claims["sub"], "alice");
  EXPECT_EQ(jwt->signing_input, token.substr(0, token.rfind('.')));
  EXPECT_EQ(std::string(jwt->signature.begin(), jwt->signature.end()), "sig");
}

TEST(JwtTest, RefusesMalformedTokens) {
  std::string h = B64(R"({"alg":"RS256"})"), c = B64(R"({"sub":"a"})");
  struct Case {
    std::string token, message;
  };
  std::vector<Case> cases = {
      {"", "3 dot-separated parts"},
      {h + "." + c, "3 dot-separated parts"},
      {h + "." + c + ".x.y", "3 dot-separated parts"},
      {h + "." + c + ".a.b.c", "JWE"},
      {"e30=." + c + ".", "JWT header: invalid base64url"},
      {h + ".!!!.", "JWT payload: invalid base64url"},
      {B64("{not json") + "." + c + ".", "JWT header is not valid JSON"},
      {B64("[1,2]") + "." + c + ".", "JWT header is not a JSON object"},
      {h + "." + B64("\"text\"") + ".", "JWT payload is not a JSON object"},
      {h + "." + c + ".a*b", "JWT signature: invalid base64url"},
      {std::string(kMaxJwtBytes + 1, 'a'), "more than the"},
  };
  for (const Case& c : cases) {
    auto jwt = ParseJwt(c.token);
    ASSERT_FALSE(jwt.ok()) << c.token;
    EXPECT_EQ(jwt.error().code, Errc::kInvalidArgument);
    EXPECT_NE(jwt.error().message.find(c.message), std::string::npos) << jwt.error().message;
  }
}

// One RSA key and one key on each EC curve, made once for all the tests
// (RSA generation is slow).
class JwksTest : public ::testing::Test {
 protected:
  static const TestKey& Key(const std::string& kid) {
    static const TestKey rsa = MakeRsaKey("rsa1");
    static const TestKey p256 = MakeEcKey("ec256", "P-256");
    static const TestKey p384 = MakeEcKey("ec384", "P-384");
    static const TestKey p521 = MakeEcKey("ec521", "P-521");
    return kid == "rsa1" ? rsa : kid == "ec256" ? p256 : kid == "ec384" ? p384 : p521;
  }
  void SetUp() override {
    rsa_ = &Key("rsa1");
    p256_ = &Key("ec256");
    p384_ = &Key("ec384");
    p521_ = &Key("ec521");
  }

  Jwks AllKeys() const {
    auto jwks = Jwks::Parse(JwksJson({rsa_, p256_, p384_, p521_}));
    EXPECT_TRUE(jwks.ok()) << jwks.error().message;
    return std::move(jwks).value();
  }
  static Status VerifyToken(const Jwks& jwks, const std::string& token) {
    auto jwt = ParseJwt(token);
    if (!jwt.ok()) return jwt.take_error();
    return jwks.Verify(*jwt);
  }

  const TestKey* rsa_ = nullptr;
  const TestKey* p256_ = nullptr;
  const TestKey* p384_ = nullptr;
  const TestKey* p521_ = nullptr;
};

TEST_F(JwksTest, ParsesRsaAndEcKeys) {
  Jwks jwks = AllKeys();
  ASSERT_EQ(jwks.keys().size(), 4u);
  EXPECT_EQ(jwks.keys()[0].kid, "rsa1");
  EXPECT_EQ(jwks.keys()[0].kty, "RSA");
  EXPECT_EQ(jwks.keys()[3].crv, "P-521");
}

TEST_F(JwksTest, SkipsKeysItDoesNotVerifyWith) {
  json set = json::parse(JwksJson({rsa_}));
  set["keys"].push_back({{"kty", "oct"}, {"k", "c2VjcmV0"}, {"kid", "hmac"}});
  json enc = p256_->jwk;
  enc["use"] = "enc";
  set["keys"].push_back(enc);
  auto jwks = Jwks::Parse(set.dump());
  ASSERT_TRUE(jwks.ok()) << jwks.error().message;
  EXPECT_EQ(jwks->keys().size(), 1u);
}

TEST_F(JwksTest, RefusesMalformedSets) {
  json bad_n = rsa_->jwk;
  bad_n["n"] = "not base64!";
  json off_curve = p256_->jwk;
  Bytes y = Base64UrlDecode(p256_->jwk["y"].get<std::string>()).value();
  y.back() ^= 0x01;  // (x, y') is not on P-256
  off_curve["y"] = B64(y);
  json short_x = p256_->jwk;
  short_x["x"] = B64(std::string(31, 'x'));
  json no_crv = p256_->jwk;
  no_crv.erase("crv");
  TestKey small = MakeRsaKey("small", 1024);
  for (const std::string& text :
       {std::string("not json"), std::string("[]"), std::string(R"({"keys":{}})"),
        json{{"keys", {bad_n}}}.dump(), json{{"keys", {off_curve}}}.dump(),
        json{{"keys", {short_x}}}.dump(), json{{"keys", {no_crv}}}.dump(),
        json{{"keys", {small.jwk}}}.dump(), json{{"keys", {1}}}.dump()}) {
    auto jwks = Jwks::Parse(text);
    ASSERT_FALSE(jwks.ok()) << text;
    EXPECT_EQ(jwks.error().code, Errc::kInvalidArgument);
  }
}

TEST_F(JwksTest, VerifiesEverySupportedAlg) {
  Jwks jwks = AllKeys();
  json claims = {{"sub", "alice"}};
  for (const char* alg : {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}) {
    std::string token = SignJwt(*rsa_, {{"alg", alg}, {"kid", "rsa1"}}, claims);
    EXPECT_EQ(ErrorOf(VerifyToken(jwks, token)), "OK") << alg;
  }
  EXPECT_EQ(
      ErrorOf(VerifyToken(jwks, SignJwt(*p256_, {{"alg", "ES256"}, {"kid", "ec256"}}, claims))),
      "OK");
  EXPECT_EQ(
      ErrorOf(VerifyToken(jwks, SignJwt(*p384_, {{"alg", "ES384"}, {"kid", "ec384"}}, claims))),
      "OK");
  EXPECT_EQ(
      ErrorOf(VerifyToken(jwks, SignJwt(*p521_, {{"alg", "ES512"}, {"kid", "ec521"}}, claims))),
      "OK");
}

TEST_F(JwksTest, RefusesAFlippedByte) {
  Jwks jwks = AllKeys();
  for (const auto& [key, alg] : {std::pair{rsa_, "RS256"}, std::pair{p256_, "ES256"}}) {
    std::string kid = key->jwk["kid"];
    std::string token = SignJwt(*key, {{"alg", alg}, {"kid", kid}}, {{"sub", "alice"}});
    auto jwt = ParseJwt(token);
    ASSERT_TRUE(jwt.ok());
    jwt->signature[jwt->signature.size() / 2] ^= 0x01;
    EXPECT_NE(ErrorOf(jwks.Verify(*jwt)).find("invalid signature"), std::string::npos) << alg;
    // The same signature over other claims.
    std::string forged = UnsignedJwt({{"alg", alg}, {"kid", kid}}, {{"sub", "mallory"}}) +
                         token.substr(token.rfind('.') + 1);
    EXPECT_NE(ErrorOf(VerifyToken(jwks, forged)).find("invalid signature"), std::string::npos);
  }
}

TEST_F(JwksTest, FindsTheKeyByKid) {
  Jwks jwks = AllKeys();
  json claims = {{"sub", "alice"}};
  std::string unknown = SignJwt(*rsa_, {{"alg", "RS256"}, {"kid", "rotated"}}, claims);
  EXPECT_NE(ErrorOf(VerifyToken(jwks, unknown)).find("no key with kid \"rotated\""),
            std::string::npos);
  std::string no_kid = SignJwt(*rsa_, {{"alg", "RS256"}}, claims);
  EXPECT_NE(ErrorOf(VerifyToken(jwks, no_kid)).find("no kid and the JWKS holds 4 keys"),
            std::string::npos);
  auto only = Jwks::Parse(JwksJson({rsa_}));
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(ErrorOf(VerifyToken(*only, no_kid)), "OK");
  // Signed by another key that claims rsa1's kid.
  TestKey other = MakeEcKey("x");
  std::string impostor = SignJwt(other, {{"alg", "ES256"}, {"kid", "rsa1"}}, claims);
  EXPECT_NE(ErrorOf(VerifyToken(jwks, impostor)).find("does not fit that key"), std::string::npos);
}

TEST_F(JwksTest, RefusesUnsignedAndSharedSecretAlgs) {
  Jwks jwks = AllKeys();
  json claims = {{"sub", "alice"}};
  std::string none = UnsignedJwt({{"alg", "none"}}, claims);
  EXPECT_NE(ErrorOf(VerifyToken(jwks, none)).find("alg \"none\" is not accepted"),
            std::string::npos);
  // An HS256 token "signed" with the RSA public key as the HMAC secret: the
  // classic key-confusion forgery.
  std::string hs = UnsignedJwt({{"alg", "HS256"}, {"kid", "rsa1"}}, claims, "mac");
  EXPECT_NE(ErrorOf(VerifyToken(jwks, hs)).find("HS256"), std::string::npos);
  std::string no_alg = UnsignedJwt({{"kid", "rsa1"}}, claims, "sig");
  EXPECT_NE(ErrorOf(VerifyToken(jwks, no_alg)).find("no alg"), std::string::npos);
  std::string odd = UnsignedJwt({{"alg", "EdDSA"}, {"kid", "rsa1"}}, claims, "sig");
  EXPECT_NE(ErrorOf(VerifyToken(jwks, odd)).find("unsupported alg"), std::string::npos);
  std::string empty_sig = UnsignedJwt({{"alg", "RS256"}, {"kid", "rsa1"}}, claims);
  EXPECT_NE(ErrorOf(VerifyToken(jwks, empty_sig)).find("no signature"), std::string::npos);
  std::string crit =
      SignJwt(*rsa_, {{"alg", "RS256"}, {"kid", "rsa1"}, {"crit", {"exp"}}, {"exp", 1}}, claims);
  EXPECT_NE(ErrorOf(VerifyToken(jwks, crit)).find("crit"), std::string::npos);
}

TEST_F(JwksTest, HonoursTheKeysAlgAndCurve) {
  json pinned = rsa_->jwk;
  pinned["alg"] = "RS256";
  auto jwks = Jwks::Parse(json{{"keys", {pinned, p256_->jwk}}}.dump());
  ASSERT_TRUE(jwks.ok()) << jwks.error().message;
  json claims = {{"sub", "alice"}};
  std::string ps = SignJwt(*rsa_, {{"alg", "PS256"}, {"kid", "rsa1"}}, claims);
  EXPECT_NE(ErrorOf(VerifyToken(*jwks, ps)).find("does not match the key's alg RS256"),
            std::string::npos);
  // ES384 names P-384; the kid is a P-256 key.
  std::string es = SignJwt(*p384_, {{"alg", "ES384"}, {"kid", "ec256"}}, claims);
  EXPECT_NE(ErrorOf(VerifyToken(*jwks, es)).find("does not fit that key"), std::string::npos);
  // An ES256 signature of the wrong length (DER instead of r || s, say).
  std::string bad_len = UnsignedJwt({{"alg", "ES256"}, {"kid", "ec256"}}, claims, "short");
  EXPECT_NE(ErrorOf(VerifyToken(*jwks, bad_len)).find("expected 64 (r || s)"), std::string::npos);
}

}  // namespace
}  // namespace strata::security
