// SCRAM: RFC 7677's SCRAM-SHA-256 exchange pins the math on both sides; then
// client against server for both mechanisms, and every way an exchange can go
// wrong failing cleanly.
#include "security/scram.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "security/scram_internal.h"

namespace strata::security {
namespace {

// RFC 7677 section 3. (The proof is the RFC's; "dHzbZapWIGqNhRio..." seen
// elsewhere is a mis-copy that no implementation reproduces.)
constexpr std::string_view kRfcClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr std::string_view kRfcServerFirst =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr std::string_view kRfcClientFinal =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr std::string_view kRfcServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

Bytes B(std::string_view s) { return Bytes(s.begin(), s.end()); }
std::string S(const Bytes& b) { return std::string(b.begin(), b.end()); }

std::string Generic(ScramMechanism m) {
  return "Authentication failed during authentication due to invalid credentials with SASL "
         "mechanism " +
         std::string(ScramMechanismName(m));
}

class ScramTest : public ::testing::Test {
 protected:
  void AddUser(ScramMechanism m, const std::string& user, const std::string& password,
               int32_t iterations = kScramMinIterations) {
    credentials_[user] = MakeScramCredential(m, password, RandomBytes(16), iterations);
  }
  std::unique_ptr<SaslServer> Server(ScramMechanism m,
                                     std::optional<std::string> nonce = std::nullopt) {
    return MakeScramServer(
        m,
        [this](std::string_view user) -> std::optional<ScramCredential> {
          looked_up_.emplace_back(user);
          auto it = credentials_.find(std::string(user));
          if (it == credentials_.end()) return std::nullopt;
          return it->second;
        },
        std::move(nonce));
  }
  // Runs the server's first step; returns its reply text.
  std::string First(SaslServer& server, std::string_view client_first) {
    auto reply = server.Evaluate(B(client_first));
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    return reply.ok() ? S(*reply) : "";
  }
  // The server's error message for `token` (which must fail).
  std::string Fails(SaslServer& server, std::string_view token) {
    auto reply = server.Evaluate(B(token));
    EXPECT_FALSE(reply.ok()) << token;
    EXPECT_FALSE(server.complete());
    if (reply.ok()) return "";
    EXPECT_EQ(reply.error().code, Errc::kInvalidArgument);
    return reply.error().message;
  }

  std::map<std::string, ScramCredential> credentials_;
  std::vector<std::string> looked_up_;
};

// A client-final message computed from the parts, for exchanges ScramClient
// does not produce (an authzid, extensions).
std::string ClientFinalFor(ScramMechanism m, std::string_view password, std::string_view gs2,
                           std::string_view bare, std::string_view server_first) {
  auto first = scram::ParseServerFirst(server_first);
  EXPECT_TRUE(first.ok());
  Bytes salted = ScramSaltedPassword(m, password, first->salt, first->iterations);
  Bytes client_key = scram::Hmac(m, salted, scram::AsBytes("Client Key"));
  std::string without_proof = "c=" + Base64Encode(scram::AsBytes(gs2)) + ",r=" + first->nonce;
  std::string auth = std::string(bare) + "," + std::string(server_first) + "," + without_proof;
  Bytes signature = scram::Hmac(m, scram::Hash(m, client_key), scram::AsBytes(auth));
  return without_proof + ",p=" + Base64Encode(scram::Xor(client_key, signature));
}

TEST(ScramMechanismTest, NamesAndIds) {
  EXPECT_EQ(ScramMechanismFromName("SCRAM-SHA-256"), ScramMechanism::kSha256);
  EXPECT_EQ(ScramMechanismFromName("SCRAM-SHA-512"), ScramMechanism::kSha512);
  EXPECT_EQ(ScramMechanismFromName("SCRAM-SHA-1"), std::nullopt);
  EXPECT_EQ(ScramMechanismFromName("scram-sha-256"), std::nullopt);
  EXPECT_EQ(ScramMechanismName(ScramMechanism::kSha256), "SCRAM-SHA-256");
  EXPECT_EQ(ScramMechanismName(ScramMechanism::kSha512), "SCRAM-SHA-512");
  EXPECT_EQ(ScramMechanismFromId(1), ScramMechanism::kSha256);
  EXPECT_EQ(ScramMechanismFromId(2), ScramMechanism::kSha512);
  EXPECT_EQ(ScramMechanismFromId(0), std::nullopt);
  EXPECT_EQ(ScramMechanismFromId(3), std::nullopt);
}

TEST(ScramCredentialTest, FromSaltedPasswordMatchesFromPassword) {
  for (ScramMechanism m : {ScramMechanism::kSha256, ScramMechanism::kSha512}) {
    Bytes salt = RandomBytes(20);
    Bytes salted = ScramSaltedPassword(m, "secret", salt, 4096);
    EXPECT_EQ(salted.size(), scram::HashSize(m));
    ScramCredential a = ScramCredentialFromSaltedPassword(m, salted, salt, 4096);
    ScramCredential b = MakeScramCredential(m, "secret", salt, 4096);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.salt, salt);
    EXPECT_EQ(a.iterations, 4096);
    EXPECT_EQ(a.stored_key.size(), scram::HashSize(m));
    EXPECT_EQ(a.server_key.size(), scram::HashSize(m));
    EXPECT_NE(a, MakeScramCredential(m, "secreT", salt, 4096));
  }
}

TEST(ScramCredentialTest, RandomBytes) {
  EXPECT_EQ(RandomBytes(24).size(), 24u);
  EXPECT_NE(RandomBytes(24), RandomBytes(24));
  EXPECT_TRUE(RandomBytes(0).empty());
}

TEST_F(ScramTest, Rfc7677ClientVector) {
  ScramClient client(ScramMechanism::kSha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
  EXPECT_EQ(client.FirstMessage(), kRfcClientFirst);
  auto final_msg = client.FinalMessage(kRfcServerFirst);
  ASSERT_TRUE(final_msg.ok()) << final_msg.error().message;
  EXPECT_EQ(*final_msg, kRfcClientFinal);
  EXPECT_TRUE(client.VerifyServerFinal(kRfcServerFinal).ok());
}

TEST_F(ScramTest, Rfc7677ServerVector) {
  auto salt = Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ==");
  ASSERT_TRUE(salt.has_value());
  credentials_["user"] = MakeScramCredential(ScramMechanism::kSha256, "pencil", *salt, 4096);
  auto server = Server(ScramMechanism::kSha256, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
  EXPECT_EQ(First(*server, kRfcClientFirst), kRfcServerFirst);
  EXPECT_FALSE(server->complete());
  auto reply = server->Evaluate(B(kRfcClientFinal));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(S(*reply), kRfcServerFinal);
  EXPECT_TRUE(server->complete());
  EXPECT_EQ(server->user(), "user");
  EXPECT_FALSE(server->credential_expiry_ms().has_value());
  EXPECT_EQ(looked_up_, std::vector<std::string>{"user"});
  // The exchange is over.
  EXPECT_FALSE(server->Evaluate(B(kRfcClientFinal)).ok());
}

TEST_F(ScramTest, ClientAgainstServerBothMechanisms) {
  for (ScramMechanism m : {ScramMechanism::kSha256, ScramMechanism::kSha512}) {
    AddUser(m, "alice", "alice-secret", 8192);
    auto server = Server(m);
    ScramClient client(m, "alice", "alice-secret");
    std::string server_first = First(*server, client.FirstMessage());
    auto client_final = client.FinalMessage(server_first);
    ASSERT_TRUE(client_final.ok()) << client_final.error().message;
    auto server_final = server->Evaluate(B(*client_final));
    ASSERT_TRUE(server_final.ok()) << server_final.error().message;
    EXPECT_TRUE(server->complete());
    EXPECT_EQ(server->user(), "alice");
    EXPECT_TRUE(client.VerifyServerFinal(S(*server_final)).ok());
  }
}

// librdkafka before 2.6.1 puts its own nonce once more in front of the
// server's (librdkafka issue 4895) and computes its proof over that message:
// accepted, while any other nonce is refused.
TEST_F(ScramTest, LibrdkafkasRepeatedClientNonceIsAcceptedAndOthersRefused) {
  const ScramMechanism m = ScramMechanism::kSha512;
  AddUser(m, "alice", "alice-secret", 4096);
  auto final_with_nonce =
      [&](SaslServer& server,
          const std::function<std::string(const std::string&, const std::string&)>& nonce_of) {
        const std::string client_nonce = "rOprNGfwEbeRWgbNEkqO";
        const std::string bare = "n=alice,r=" + client_nonce;
        std::string server_first = First(server, "n,," + bare);
        auto first = scram::ParseServerFirst(server_first);
        EXPECT_TRUE(first.ok());
        Bytes salted = ScramSaltedPassword(m, "alice-secret", first->salt, first->iterations);
        Bytes client_key = scram::Hmac(m, salted, scram::AsBytes("Client Key"));
        std::string without_proof = "c=biws,r=" + nonce_of(client_nonce, first->nonce);
        std::string auth = bare + "," + server_first + "," + without_proof;
        Bytes signature = scram::Hmac(m, scram::Hash(m, client_key), scram::AsBytes(auth));
        return without_proof + ",p=" + Base64Encode(scram::Xor(client_key, signature));
      };
  auto buggy = Server(m);
  auto reply = buggy->Evaluate(B(final_with_nonce(
      *buggy, [](const std::string& c, const std::string& full) { return c + full; })));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_TRUE(buggy->complete());
  for (auto other : std::vector<std::function<std::string(const std::string&, const std::string&)>>{
           [](const std::string&c, const std::string&) { return c; },
           [](const std::string&c, const std::string&full) { return c + c + full; },
           [](const std::string&, const std::string&full) { return "x" + full; },
           [](const std::string&c, const std::string&full) { return full + c; }}) {
    auto server = Server(m);
    Fails(*server, final_with_nonce(*server, other));
  }
}

TEST_F(ScramTest, UserNamesWithCommasAndEquals) {
  AddUser(ScramMechanism::kSha512, "a,b=c", "pw");
  auto server = Server(ScramMechanism::kSha512);
  ScramClient client(ScramMechanism::kSha512, "a,b=c", "pw");
  std::string first = client.FirstMessage();
  EXPECT_NE(first.find("n=a=2Cb=3Dc,"), std::string::npos);
  auto client_final = client.FinalMessage(First(*server, first));
  ASSERT_TRUE(client_final.ok());
  ASSERT_TRUE(server->Evaluate(B(*client_final)).ok());
  EXPECT_EQ(server->user(), "a,b=c");
  EXPECT_EQ(looked_up_, std::vector<std::string>{"a,b=c"});
}

TEST_F(ScramTest, WrongPasswordFailsAtTheFinalMessage) {
  AddUser(ScramMechanism::kSha256, "alice", "alice-secret");
  auto server = Server(ScramMechanism::kSha256);
  ScramClient client(ScramMechanism::kSha256, "alice", "wrong");
  auto client_final = client.FinalMessage(First(*server, client.FirstMessage()));
  ASSERT_TRUE(client_final.ok());
  EXPECT_EQ(Fails(*server, *client_final), Generic(ScramMechanism::kSha256));
  EXPECT_EQ(server->user(), "");
  // No second try on the same exchange.
  EXPECT_FALSE(server->Evaluate(B(*client_final)).ok());
}

TEST_F(ScramTest, UnknownUserLooksLikeAWrongPassword) {
  for (ScramMechanism m : {ScramMechanism::kSha256, ScramMechanism::kSha512}) {
    auto first_try = Server(m);
    ScramClient client(m, "mallory", "guess");
    std::string server_first = First(*first_try, client.FirstMessage());
    auto parsed = scram::ParseServerFirst(server_first);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->iterations, kScramMinIterations);
    EXPECT_FALSE(parsed->salt.empty());
    auto client_final = client.FinalMessage(server_first);
    ASSERT_TRUE(client_final.ok());
    EXPECT_EQ(Fails(*first_try, *client_final), Generic(m));

    // Asking again gives the same salt, as it would for a real user.
    auto second_try = Server(m);
    ScramClient again(m, "mallory", "guess");
    auto reparsed = scram::ParseServerFirst(First(*second_try, again.FirstMessage()));
    ASSERT_TRUE(reparsed.ok());
    EXPECT_EQ(reparsed->salt, parsed->salt);
  }
}

TEST_F(ScramTest, CredentialBelowMinimumIterationsIsRefused) {
  credentials_["weak"] =
      MakeScramCredential(ScramMechanism::kSha256, "pw", RandomBytes(16), kScramMinIterations - 1);
  auto server = Server(ScramMechanism::kSha256);
  ScramClient client(ScramMechanism::kSha256, "weak", "pw");
  auto client_final = client.FinalMessage(First(*server, client.FirstMessage()));
  ASSERT_TRUE(client_final.ok());
  EXPECT_EQ(Fails(*server, *client_final), Generic(ScramMechanism::kSha256));
}

TEST_F(ScramTest, TamperedClientFinalFails) {
  AddUser(ScramMechanism::kSha256, "alice", "alice-secret");
  auto tamper = [&](auto edit) {
    auto server = Server(ScramMechanism::kSha256);
    ScramClient client(ScramMechanism::kSha256, "alice", "alice-secret");
    auto client_final = client.FinalMessage(First(*server, client.FirstMessage()));
    EXPECT_TRUE(client_final.ok());
    std::string msg = *client_final;
    edit(msg);
    return Fails(*server, msg);
  };
  const std::string kGeneric = Generic(ScramMechanism::kSha256);
  // The nonce: one character changed, and truncated to the client's part.
  EXPECT_EQ(tamper([](std::string& m) { m[m.find(",r=") + 5] ^= 1; }), kGeneric);
  EXPECT_EQ(tamper([](std::string& m) {
              size_t r = m.find(",r="), p = m.find(",p=");
              m.erase(r + 3 + 32, p - (r + 3 + 32));
            }),
            kGeneric);
  // Channel binding: "y,," instead of the "n,," that was sent.
  EXPECT_EQ(tamper([](std::string& m) { m.replace(0, 6, "c=eSws"); }), kGeneric);
  // The proof: one bit, and a proof of the wrong length.
  EXPECT_EQ(tamper([](std::string& m) { m[m.find(",p=") + 3] ^= 1; }), kGeneric);
  EXPECT_EQ(tamper([](std::string& m) { m = m.substr(0, m.find(",p=")) + ",p=AAAA"; }), kGeneric);
}

TEST_F(ScramTest, MalformedClientFirstFailsCleanly) {
  AddUser(ScramMechanism::kSha256, "user", "pw");
  const std::string kBad[] = {
      "",
      "n",
      "n,,",
      "n,,n=user",
      "n,,r=abc,n=user",
      "x,,n=user,r=abc",
      "p=tls-unique,,n=user,r=abc",
      "n,,n=us=er,r=abc",
      "n,,n=user=2,r=abc",
      "n,,n=,r=abc",
      "n,,n=user,r=",
      "n,,n=user,r=ab c",
      "n,,n=user,r=abc,",
      "n,,n=user,r=abc,=x",
      "n,,n=user,r=abc,1x=y",
      "n,,m=ext,n=user,r=abc",
      "n,x=user,n=user,r=abc",
      std::string("n,,n=us\0er,r=abc", 16),
      std::string("\xff\xfe\0\0,,,", 7),
  };
  for (const std::string& bad : kBad) {
    auto server = Server(ScramMechanism::kSha256);
    EXPECT_EQ(Fails(*server, bad), Generic(ScramMechanism::kSha256)) << bad;
  }
}

TEST_F(ScramTest, MalformedClientFinalFailsCleanly) {
  AddUser(ScramMechanism::kSha256, "user", "pw");
  const std::string kBad[] = {
      "",
      "c=biws",
      "c=biws,r=abc",
      "c=biws,p=AAAA",
      "c=!!!!,r=abc,p=AAAA",
      "c=biws,r=abc,p=",
      "c=biws,r=abc,p=AA",
      "p=AAAA,r=abc,c=biws",
      "c=biws,r=abc,p=AAAA,x=y",
      std::string("c=biws,r=\0,p=AAAA", 17),
  };
  for (const std::string& bad : kBad) {
    auto server = Server(ScramMechanism::kSha256);
    First(*server, "n,,n=user,r=abc");
    EXPECT_EQ(Fails(*server, bad), Generic(ScramMechanism::kSha256)) << bad;
  }
}

TEST_F(ScramTest, AuthorizationId) {
  AddUser(ScramMechanism::kSha256, "alice", "pw");
  {  // equal to the user: accepted
    auto server = Server(ScramMechanism::kSha256);
    std::string gs2 = "n,a=alice,", bare = "n=alice,r=nonce1";
    std::string server_first = First(*server, gs2 + bare);
    auto reply =
        server->Evaluate(B(ClientFinalFor(ScramMechanism::kSha256, "pw", gs2, bare, server_first)));
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    EXPECT_EQ(server->user(), "alice");
  }
  {  // different: refused with Kafka's message
    auto server = Server(ScramMechanism::kSha256);
    EXPECT_EQ(Fails(*server, "n,a=admin,n=alice,r=nonce1"),
              "Authentication failed: Client requested an authorization id that is different "
              "from username");
  }
}

TEST_F(ScramTest, ExtensionsAndGs2FlagY) {
  AddUser(ScramMechanism::kSha256, "alice", "pw");
  {  // unknown extensions are ignored but stay part of the signed message
    auto server = Server(ScramMechanism::kSha256);
    std::string gs2 = "y,,", bare = "n=alice,r=nonce2,foo=bar,tokenauth=false";
    std::string server_first = First(*server, gs2 + bare);
    auto reply =
        server->Evaluate(B(ClientFinalFor(ScramMechanism::kSha256, "pw", gs2, bare, server_first)));
    ASSERT_TRUE(reply.ok()) << reply.error().message;
  }
  {  // delegation tokens are not supported
    auto server = Server(ScramMechanism::kSha256);
    EXPECT_EQ(Fails(*server, "n,,n=alice,r=nonce3,tokenauth=TRUE"),
              "Authentication failed: delegation token authentication is not supported");
  }
}

TEST(ScramClientTest, RefusesBadServerMessages) {
  auto final_for = [](std::string_view server_first) {
    ScramClient client(ScramMechanism::kSha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
    client.FirstMessage();
    return client.FinalMessage(server_first);
  };
  for (std::string_view bad : {
           "",
           "r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",  // nonce not extended
           "r=somebodyelse123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
           "r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095",
           "r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=16385",
           "r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1",
           "r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=99999999999",
           "r=rOprNGfwEbeRWgbNEkqOxyz,s=not base64,i=4096",
           "m=x,r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
           "s=W22ZaJ0SNY7soEsUEjb6gQ==,r=rOprNGfwEbeRWgbNEkqOxyz,i=4096",
       }) {
    auto result = final_for(bad);
    EXPECT_FALSE(result.ok()) << bad;
  }
  ScramClient early(ScramMechanism::kSha256, "user", "pencil");
  EXPECT_FALSE(early.FinalMessage(kRfcServerFirst).ok());  // FirstMessage not sent
  EXPECT_FALSE(early.VerifyServerFinal(kRfcServerFinal).ok());
}

TEST(ScramClientTest, RefusesBadServerFinal) {
  auto verify = [](std::string_view server_final) {
    ScramClient client(ScramMechanism::kSha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
    client.FirstMessage();
    EXPECT_TRUE(client.FinalMessage(kRfcServerFirst).ok());
    return client.VerifyServerFinal(server_final);
  };
  EXPECT_TRUE(verify(kRfcServerFinal).ok());
  EXPECT_FALSE(verify("v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=").ok());
  EXPECT_FALSE(verify("v=AAAA").ok());
  EXPECT_FALSE(verify("v=").ok());
  EXPECT_FALSE(verify("").ok());
  Status error = verify("e=invalid-proof");
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.error().message.find("invalid-proof"), std::string::npos);
}

TEST(ScramMessagesTest, SaslNameEscapes) {
  EXPECT_EQ(scram::EncodeSaslName("a,b=c"), "a=2Cb=3Dc");
  EXPECT_EQ(scram::DecodeSaslName("a=2Cb=3Dc"), "a,b=c");
  EXPECT_EQ(scram::DecodeSaslName("a=2c"), std::nullopt);
  EXPECT_EQ(scram::DecodeSaslName("a="), std::nullopt);
  EXPECT_EQ(scram::DecodeSaslName(""), std::nullopt);
}

}  // namespace
}  // namespace strata::security
