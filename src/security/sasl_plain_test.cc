// The SASL/PLAIN server against good and bad client tokens.
#include "security/sasl_plain.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace strata::security {
namespace {

Bytes Token(std::string_view s) { return Bytes(s.begin(), s.end()); }

class SaslPlainTest : public ::testing::Test {
 protected:
  std::unique_ptr<SaslServer> Server() {
    return MakePlainServer([this](std::string_view user) -> std::optional<std::string> {
      auto it = users_.find(std::string(user));
      if (it == users_.end()) return std::nullopt;
      return it->second;
    });
  }
  // The error message of one exchange with `token`.
  std::string Failure(const Bytes& token) {
    auto server = Server();
    auto reply = server->Evaluate(token);
    EXPECT_FALSE(reply.ok());
    EXPECT_FALSE(server->complete());
    if (reply.ok()) return "";
    EXPECT_EQ(reply.error().code, Errc::kInvalidArgument);
    return reply.error().message;
  }

  std::map<std::string, std::string> users_{{"alice", "alice-secret"}, {"admin", "admin-secret"}};
};

TEST_F(SaslPlainTest, GoodCredentials) {
  auto server = Server();
  EXPECT_FALSE(server->complete());
  auto reply = server->Evaluate(PlainClientToken("alice", "alice-secret"));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_TRUE(reply->empty());
  EXPECT_TRUE(server->complete());
  EXPECT_EQ(server->user(), "alice");
  EXPECT_FALSE(server->credential_expiry_ms().has_value());
  // One token per exchange.
  EXPECT_FALSE(server->Evaluate(PlainClientToken("alice", "alice-secret")).ok());
}

TEST_F(SaslPlainTest, ClientTokenLayout) {
  EXPECT_EQ(PlainClientToken("u", "p"), Token(std::string_view("\0u\0p", 4)));
}

TEST_F(SaslPlainTest, AuthzidEqualToUserIsAccepted) {
  auto server = Server();
  auto reply = server->Evaluate(Token(std::string_view("admin\0admin\0admin-secret", 24)));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(server->user(), "admin");
}

TEST_F(SaslPlainTest, WrongPasswordAndUnknownUserLookAlike) {
  const std::string kInvalid = "Authentication failed: Invalid username or password";
  EXPECT_EQ(Failure(PlainClientToken("alice", "wrong")), kInvalid);
  EXPECT_EQ(Failure(PlainClientToken("alice", "alice-secret-longer")), kInvalid);
  EXPECT_EQ(Failure(PlainClientToken("alice", "alice-secreT")), kInvalid);
  EXPECT_EQ(Failure(PlainClientToken("mallory", "alice-secret")), kInvalid);
}

TEST_F(SaslPlainTest, AuthzidMismatch) {
  EXPECT_EQ(Failure(Token(std::string_view("admin\0alice\0alice-secret", 24))),
            "Authentication failed: Client requested an authorization id that is different "
            "from username");
}

TEST_F(SaslPlainTest, EmptyUserOrPassword) {
  EXPECT_EQ(Failure(PlainClientToken("", "x")), "Authentication failed: username not specified");
  EXPECT_EQ(Failure(PlainClientToken("alice", "")),
            "Authentication failed: password not specified");
}

TEST_F(SaslPlainTest, MalformedTokens) {
  const std::string kGeneric =
      "Authentication failed during authentication due to invalid credentials with SASL "
      "mechanism PLAIN";
  EXPECT_EQ(Failure(Token("alice alice-secret")), kGeneric);
  EXPECT_EQ(Failure(Token(std::string_view("alice\0alice-secret", 18))), kGeneric);
  EXPECT_EQ(Failure(Token(std::string_view("\0alice\0alice-secret\0", 20))), kGeneric);
  EXPECT_EQ(Failure(Bytes{}), kGeneric);
}

TEST_F(SaslPlainTest, NoSecondChanceAfterAFailure) {
  auto server = Server();
  EXPECT_FALSE(server->Evaluate(PlainClientToken("alice", "wrong")).ok());
  EXPECT_FALSE(server->Evaluate(PlainClientToken("alice", "alice-secret")).ok());
  EXPECT_FALSE(server->complete());
}

}  // namespace
}  // namespace strata::security
