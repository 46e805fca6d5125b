// OAUTHBEARER on the broker: token claims checked as Kafka's
// BrokerJwtValidator checks them, the RFC 7628 client initial response, and
// the SASL server's success and failure (a bad token's error challenge, then
// the failure once the client has answered it). JwksSource is tested in
// jwks_source_test.cc.
#include "security/oauthbearer.h"

#include <gtest/gtest.h>

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

constexpr int64_t kNowMs = 1'700'000'000'000;  // 2023-11-14
constexpr int64_t kNowS = kNowMs / 1000;

ByteView View(const std::string& s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// `token` with one character of its signature changed.
std::string Flip(std::string token) {
  char& c = token[token.size() - 10];
  c = c == 'A' ? 'B' : 'A';
  return token;
}

const TestKey& Rsa() {
  static const TestKey key = MakeRsaKey("rsa1");
  return key;
}
const TestKey& Ec() {
  static const TestKey key = MakeEcKey("ec1");
  return key;
}

class OAuthBearerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto jwks = Jwks::Parse(JwksJson({&Rsa(), &Ec()}));
    ASSERT_TRUE(jwks.ok()) << jwks.error().message;
    jwks_ = std::make_shared<const Jwks>(std::move(jwks).value());
    validation_.expected_audience = {"kafka"};
    validation_.expected_issuer = "https://idp.example";
  }

  static json Claims() {
    return {{"sub", "alice"},    {"iss", "https://idp.example"}, {"aud", "kafka"},
            {"iat", kNowS - 10}, {"exp", kNowS + 3600},          {"scope", "read write"}};
  }
  static std::string Rs256(const json& claims) {
    return SignJwt(Rsa(), {{"alg", "RS256"}, {"kid", "rsa1"}, {"typ", "JWT"}}, claims);
  }
  // The error ValidateToken gives `token`, or "OK".
  std::string Refusal(const std::string& token) const {
    auto result = ValidateToken(token, *jwks_, validation_, kNowMs);
    if (result.ok()) return "OK";
    // kNotFound only for a kid the keys lack (see RefusesForgedAndMalformedTokens).
    if (result.error().code != Errc::kNotFound) {
      EXPECT_EQ(result.error().code, Errc::kInvalidArgument) << result.error().message;
    }
    return result.error().message;
  }
  std::string RefusalOfClaims(const json& claims) const { return Refusal(Rs256(claims)); }

  std::shared_ptr<const Jwks> jwks_;
  OAuthBearerValidation validation_;
};

#define EXPECT_REFUSED(message, fragment) \
  EXPECT_NE((message).find(fragment), std::string::npos) << (message)

TEST_F(OAuthBearerTest, AcceptsValidRs256AndEs256Tokens) {
  auto rs = ValidateToken(Rs256(Claims()), *jwks_, validation_, kNowMs);
  ASSERT_TRUE(rs.ok()) << rs.error().message;
  EXPECT_EQ(rs->principal, "alice");
  EXPECT_EQ(rs->expiry_ms, (kNowS + 3600) * 1000);
  EXPECT_EQ(rs->issued_at_ms, (kNowS - 10) * 1000);
  EXPECT_EQ(rs->scopes, (std::vector<std::string>{"read", "write"}));

  json claims = Claims();
  claims["sub"] = "bob";
  claims["aud"] = {"other", "kafka"};
  claims["scope"] = {"admin"};
  claims.erase("iat");
  auto es = ValidateToken(SignJwt(Ec(), {{"alg", "ES256"}, {"kid", "ec1"}}, claims), *jwks_,
                          validation_, kNowMs);
  ASSERT_TRUE(es.ok()) << es.error().message;
  EXPECT_EQ(es->principal, "bob");
  EXPECT_EQ(es->issued_at_ms, std::nullopt);
  EXPECT_EQ(es->scopes, std::vector<std::string>{"admin"});
}

TEST_F(OAuthBearerTest, ChecksTimesWithClockSkew) {
  json claims = Claims();
  claims["exp"] = kNowS - 31;
  EXPECT_REFUSED(RefusalOfClaims(claims), "the token expired at");
  claims["exp"] = kNowS - 29;  // within the 30 s skew
  EXPECT_EQ(RefusalOfClaims(claims), "OK");
  claims["exp"] = kNowS + 60.5;  // NumericDate may be fractional
  EXPECT_EQ(RefusalOfClaims(claims), "OK");
  claims.erase("exp");
  EXPECT_REFUSED(RefusalOfClaims(claims), "no exp claim");
  claims["exp"] = "tomorrow";
  EXPECT_REFUSED(RefusalOfClaims(claims), "exp claim is not a non-negative NumericDate");
  claims["exp"] = 1e300;
  EXPECT_REFUSED(RefusalOfClaims(claims), "exp claim is not a non-negative NumericDate");

  claims = Claims();
  claims["nbf"] = kNowS + 31;
  EXPECT_REFUSED(RefusalOfClaims(claims), "not valid before");
  claims["nbf"] = kNowS + 29;
  EXPECT_EQ(RefusalOfClaims(claims), "OK");
  claims = Claims();
  claims["iat"] = kNowS + 600;
  EXPECT_REFUSED(RefusalOfClaims(claims), "issued in the future");
}

TEST_F(OAuthBearerTest, ChecksAudienceAndIssuer) {
  json claims = Claims();
  claims["aud"] = "billing";
  EXPECT_REFUSED(RefusalOfClaims(claims), "audience [\"billing\"] includes none of");
  claims["aud"] = {"billing", "ledger"};
  EXPECT_REFUSED(RefusalOfClaims(claims), "audience");
  claims.erase("aud");
  EXPECT_REFUSED(RefusalOfClaims(claims), "no aud claim");
  validation_.expected_audience.clear();  // not configured: any audience
  EXPECT_EQ(RefusalOfClaims(claims), "OK");

  claims = Claims();
  claims["iss"] = "https://evil.example";
  EXPECT_REFUSED(RefusalOfClaims(claims), "is not the expected issuer");
  claims.erase("iss");
  EXPECT_REFUSED(RefusalOfClaims(claims), "no iss claim");
  validation_.expected_issuer.reset();
  EXPECT_EQ(RefusalOfClaims(claims), "OK");
}

TEST_F(OAuthBearerTest, ChecksSubjectAndScopes) {
  json claims = Claims();
  claims.erase("sub");
  EXPECT_REFUSED(RefusalOfClaims(claims), "no sub claim");
  claims["sub"] = "   ";
  EXPECT_REFUSED(RefusalOfClaims(claims), "sub claim must be a non-empty");
  claims["sub"] = 42;
  EXPECT_REFUSED(RefusalOfClaims(claims), "sub claim must be a non-empty");
  claims["email"] = "carol@example.com";
  validation_.sub_claim_name = "email";
  auto token = ValidateToken(Rs256(claims), *jwks_, validation_, kNowMs);
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_EQ(token->principal, "carol@example.com");

  validation_.sub_claim_name = "sub";
  claims = Claims();
  claims["scope"] = "read read";
  EXPECT_REFUSED(RefusalOfClaims(claims), "holds \"read\" twice");
  claims["scope"] = {"read", ""};
  EXPECT_REFUSED(RefusalOfClaims(claims), "empty or non-string scope");
  claims["scope"] = 7;
  EXPECT_REFUSED(RefusalOfClaims(claims), "neither a string nor an array");
}

TEST_F(OAuthBearerTest, RefusesForgedAndMalformedTokens) {
  EXPECT_REFUSED(Refusal(Flip(Rs256(Claims()))), "invalid signature");
  std::string unknown_kid = SignJwt(Rsa(), {{"alg", "RS256"}, {"kid", "old"}}, Claims());
  EXPECT_REFUSED(Refusal(unknown_kid), "no key with kid \"old\"");
  // Told apart from the other refusals: the keys may be stale.
  EXPECT_EQ(ValidateToken(unknown_kid, *jwks_, validation_, kNowMs).error().code, Errc::kNotFound);
  EXPECT_EQ(ValidateToken(Flip(Rs256(Claims())), *jwks_, validation_, kNowMs).error().code,
            Errc::kInvalidArgument);
  EXPECT_REFUSED(Refusal(UnsignedJwt({{"alg", "none"}}, Claims())), "alg \"none\"");
  EXPECT_REFUSED(Refusal(UnsignedJwt({{"alg", "HS256"}, {"kid", "rsa1"}}, Claims(), "mac")),
                 "HS256");
  EXPECT_REFUSED(Refusal("not-a-jwt"), "3 dot-separated parts");
  EXPECT_REFUSED(Refusal("e30.%%%.sig"), "invalid base64url");
  EXPECT_REFUSED(Refusal(B64("{\"alg\":") + "." + B64("{}") + ".c2ln"), "not valid JSON");
}

TEST_F(OAuthBearerTest, RefusesEveryTruncationWithoutCrashing) {
  std::string token = SignJwt(Ec(), {{"alg", "ES256"}, {"kid", "ec1"}}, Claims());
  ASSERT_EQ(Refusal(token), "OK");
  for (size_t len = 0; len < token.size(); ++len) {
    EXPECT_NE(Refusal(token.substr(0, len)), "OK") << len;
  }
}

TEST(OAuthBearerMessageTest, ParsesTheClientInitialResponse) {
  Bytes message = OAuthBearerClientToken("a.b.c", "al=ice,x");
  EXPECT_EQ(std::string(message.begin(), message.end()),
            "n,a=al=3Dice=2Cx,\x01"
            "auth=Bearer a.b.c\x01\x01");
  auto parsed = ParseOAuthBearerInitialResponse(message);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->authzid, "al=ice,x");
  EXPECT_EQ(parsed->token, "a.b.c");

  std::string with_ext =
      "n,,\x01"
      "traceId=42 x\x01"
      "auth=bearer   t-1_2.3\x01"
      "logicalCluster=lc\x01\x01";
  parsed = ParseOAuthBearerInitialResponse(View(with_ext));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->authzid, "");
  EXPECT_EQ(parsed->token, "t-1_2.3");
  EXPECT_EQ(parsed->extensions,
            (std::map<std::string, std::string>{{"logicalCluster", "lc"}, {"traceId", "42 x"}}));
}

TEST(OAuthBearerMessageTest, RefusesMalformedInitialResponses) {
  struct Case {
    std::string message, fragment;
  };
  std::vector<Case> cases = {
      {"", "GS2 header"},
      {"\x01", "GS2 header"},  // a client's answer to an error challenge, out of turn
      {"p=tls-unique,,\x01"
       "auth=Bearer t\x01\x01",
       "GS2 header"},
      {"n,a=bob", "does not end with ','"},
      {"n,x=1,\x01"
       "auth=Bearer t\x01\x01",
       "unknown field"},
      {"n,a=b=ob,\x01"
       "auth=Bearer t\x01\x01",
       "bare '='"},
      {"n,,auth=Bearer t\x01\x01", "no 0x01 follows"},
      {"n,,\x01"
       "auth=Bearer t\x01",
       "does not end with 0x01 0x01"},
      {"n,,\x01"
       "auth=Bearer t",
       "does not end with 0x01 0x01"},
      {"n,,\x01"
       "auth=Bearer t\x01\x01"
       "extra",
       "data follows"},
      {"n,,\x01\x01", "'auth' not specified"},
      {"n,,\x01"
       "auth=Basic dXNlcg\x01\x01",
       "invalid scheme"},
      {"n,,\x01"
       "auth=Bearer\x01\x01",
       "invalid 'auth' format"},
      {"n,,\x01"
       "auth=Bearer a/b\x01\x01",
       "invalid 'auth' format"},
      {"n,,\x01"
       "auth=Bearer t\x01"
       "auth=Bearer u\x01\x01",
       "appears twice"},
      {"n,,\x01"
       "k1=v\x01"
       "auth=Bearer t\x01\x01",
       "invalid key"},
      {"n,,\x01"
       "k=\x01"
       "auth=Bearer t\x01\x01",
       "invalid value"},
      {"n,,\x01"
       "novalue\x01"
       "auth=Bearer t\x01\x01",
       "no '='"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseOAuthBearerInitialResponse(View(c.message));
    ASSERT_FALSE(parsed.ok()) << c.message;
    EXPECT_REFUSED(parsed.error().message, "Invalid OAUTHBEARER client first message");
    EXPECT_REFUSED(parsed.error().message, c.fragment);
  }
}

class OAuthBearerServerTest : public OAuthBearerTest {
 protected:
  std::unique_ptr<SaslServer> NewServer() {
    return MakeOAuthBearerServer(
        [this] { return keys_; }, validation_, [] { return kNowMs; },
        [this](std::string_view kid) { unknown_kids_.emplace_back(kid); });
  }
  static std::string Text(const Bytes& b) { return std::string(b.begin(), b.end()); }

  std::shared_ptr<const Jwks> keys_;
  std::vector<std::string> unknown_kids_;
};

// What the client is told of any bad token: Kafka's jsonErrorResponse for
// callback.error("invalid_token", null, null).
constexpr char kInvalidToken[] = R"({"status":"invalid_token"})";

TEST_F(OAuthBearerServerTest, CompletesWithAValidToken) {
  keys_ = jwks_;
  auto server = NewServer();
  auto reply = server->Evaluate(OAuthBearerClientToken(Rs256(Claims())));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_TRUE(reply->empty());
  EXPECT_TRUE(server->complete());
  EXPECT_EQ(server->user(), "alice");
  EXPECT_EQ(server->credential_expiry_ms(), (kNowS + 3600) * 1000);
  EXPECT_EQ(server->failure_detail(), "");
  auto again = server->Evaluate(OAuthBearerClientToken(Rs256(Claims())));
  ASSERT_FALSE(again.ok());
  EXPECT_REFUSED(again.error().message, "already complete");

  auto with_authzid = NewServer();
  EXPECT_TRUE(with_authzid->Evaluate(OAuthBearerClientToken(Rs256(Claims()), "alice")).ok());
  EXPECT_EQ(with_authzid->user(), "alice");
  EXPECT_TRUE(unknown_kids_.empty());
}

// RFC 7628 section 3.2.2, as Kafka's OAuthBearerSaslServer: the error
// challenge, the client's 0x01, then the failure, the JSON as its message;
// the reason only in failure_detail().
TEST_F(OAuthBearerServerTest, AnswersABadTokenWithAnErrorChallenge) {
  keys_ = jwks_;
  json expired = Claims();
  expired["exp"] = kNowS - 3600;
  json elsewhere = Claims();
  elsewhere["aud"] = "billing";
  struct Case {
    std::string token, detail;
  };
  std::vector<Case> cases = {
      {Rs256(expired), "the token expired at"},
      {Flip(Rs256(Claims())), "invalid signature"},
      {Rs256(elsewhere), "includes none of the expected audience"},
      {SignJwt(Rsa(), {{"alg", "RS256"}, {"kid", "rotated"}}, Claims()),
       "no key with kid \"rotated\""},
      {"not-a-jwt", "3 dot-separated parts"},
  };
  for (const Case& c : cases) {
    auto server = NewServer();
    auto challenge = server->Evaluate(OAuthBearerClientToken(c.token));
    ASSERT_TRUE(challenge.ok()) << c.detail << ": " << challenge.error().message;
    EXPECT_EQ(Text(*challenge), kInvalidToken);
    EXPECT_FALSE(server->complete());
    EXPECT_REFUSED(server->failure_detail(), c.detail);

    auto failure = server->Evaluate(Bytes{0x01});
    ASSERT_FALSE(failure.ok()) << c.detail;
    EXPECT_EQ(failure.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(failure.error().message, kInvalidToken);
    EXPECT_FALSE(server->complete());
    EXPECT_EQ(server->credential_expiry_ms(), std::nullopt);
    EXPECT_REFUSED(server->failure_detail(), c.detail);
    auto after = server->Evaluate(Bytes{0x01});
    ASSERT_FALSE(after.ok());
    EXPECT_REFUSED(after.error().message, "already failed");
  }
}

TEST_F(OAuthBearerServerTest, FailsAnAnswerToTheChallengeOtherThan0x01) {
  keys_ = jwks_;
  const Bytes good_token = OAuthBearerClientToken(Rs256(Claims()));
  for (const Bytes& answer : {Bytes{}, Bytes{0x01, 0x01}, good_token}) {
    auto server = NewServer();
    ASSERT_TRUE(server->Evaluate(OAuthBearerClientToken(Flip(Rs256(Claims())))).ok());
    auto failure = server->Evaluate(answer);
    ASSERT_FALSE(failure.ok());
    EXPECT_EQ(failure.error().code, Errc::kInvalidArgument);
    EXPECT_REFUSED(failure.error().message, "other than 0x01");
    EXPECT_FALSE(server->complete());  // a good token after the challenge gets no second chance
    EXPECT_REFUSED(server->failure_detail(), "invalid signature");
  }
}

// As Kafka: a malformed initial response or an authzid other than the
// principal fails at once, with the reason, and no challenge.
TEST_F(OAuthBearerServerTest, FailsAMalformedResponseOrAForeignAuthzidAtOnce) {
  keys_ = jwks_;
  struct Case {
    Bytes message;
    std::string fragment;
  };
  std::vector<Case> cases = {
      {Bytes{'n', ',', 'x'}, "Invalid OAUTHBEARER client first message"},
      {Bytes{0x01}, "GS2 header"},
      {Bytes{'n', ',', ',', 0x01, 0x01}, "'auth' not specified"},
      {OAuthBearerClientToken(Rs256(Claims()), "bob"),
       "Client requested an authorization id (bob) that is different from the token's principal "
       "name (alice)"},
  };
  for (const Case& c : cases) {
    auto server = NewServer();
    auto reply = server->Evaluate(c.message);
    ASSERT_FALSE(reply.ok()) << c.fragment;
    EXPECT_EQ(reply.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(reply.error().message.rfind("Authentication failed: ", 0), 0u)
        << reply.error().message;
    EXPECT_REFUSED(reply.error().message, c.fragment);
    EXPECT_FALSE(server->complete());
    EXPECT_EQ(server->credential_expiry_ms(), std::nullopt);
    EXPECT_EQ(server->failure_detail(), "");  // the message says it all
    auto dummy = server->Evaluate(Bytes{0x01});
    ASSERT_FALSE(dummy.ok());
    EXPECT_REFUSED(dummy.error().message, "already failed");
  }
}

TEST_F(OAuthBearerServerTest, ChallengesEveryTokenWithoutKeys) {
  auto server = NewServer();  // keys_ is null: nothing loaded
  auto challenge = server->Evaluate(OAuthBearerClientToken(Rs256(Claims())));
  ASSERT_TRUE(challenge.ok()) << challenge.error().message;
  EXPECT_EQ(Text(*challenge), kInvalidToken);
  EXPECT_REFUSED(server->failure_detail(), "no JWKS is loaded");
  auto failure = server->Evaluate(Bytes{0x01});
  ASSERT_FALSE(failure.ok());
  EXPECT_EQ(failure.error().message, kInvalidToken);
}

// Kafka's RefreshingHttpsJwksVerificationKeyResolver: a kid the keys lack
// asks the source for an early refresh; other refusals do not.
TEST_F(OAuthBearerServerTest, ReportsAKidTheKeysLack) {
  keys_ = jwks_;
  json no_kid_header = {{"alg", "RS256"}};  // ambiguous with two keys, but no kid to look for
  for (const std::string& token :
       {Flip(Rs256(Claims())), SignJwt(Rsa(), no_kid_header, Claims()),
        SignJwt(Rsa(), {{"alg", "RS256"}, {"kid", "rotated"}}, Claims())}) {
    auto server = NewServer();
    ASSERT_TRUE(server->Evaluate(OAuthBearerClientToken(token)).ok());
    EXPECT_FALSE(server->complete());
  }
  EXPECT_EQ(unknown_kids_, std::vector<std::string>{"rotated"});
}

}  // namespace
}  // namespace strata::security
