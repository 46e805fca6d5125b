#pragma once
// SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), as Kafka's
// ScramSaslServer and ScramSaslClient:
//   client-first  n,,n=<user>,r=<client nonce>
//   server-first  r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
//   client-final  c=<base64 gs2 header>,r=<nonce>,p=<base64 proof>
//   server-final  v=<base64 server signature>
// The broker stores per user and mechanism only a ScramCredential (salt,
// StoredKey, ServerKey, iterations), never the password: StoredKey lets it
// check the client's proof, ServerKey lets it prove itself to the client.
// Channel binding (SCRAM-*-PLUS) and delegation tokens are not supported.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "security/base64.h"
#include "security/sasl_server.h"

namespace strata::security {

// Kafka's mechanism ids in AlterUserScramCredentials/DescribeUserScramCredentials.
enum class ScramMechanism : int8_t { kSha256 = 1, kSha512 = 2 };

std::optional<ScramMechanism> ScramMechanismFromName(std::string_view name);  // "SCRAM-SHA-256"
std::string_view ScramMechanismName(ScramMechanism mechanism);
std::optional<ScramMechanism> ScramMechanismFromId(int8_t id);

// Kafka's bounds on a credential's iteration count (both mechanisms).
inline constexpr int32_t kScramMinIterations = 4096;
inline constexpr int32_t kScramMaxIterations = 16384;

struct ScramCredential {
  Bytes salt;
  Bytes stored_key;  // H(HMAC(SaltedPassword, "Client Key"))
  Bytes server_key;  // HMAC(SaltedPassword, "Server Key")
  int32_t iterations = 0;
  bool operator==(const ScramCredential&) const = default;
};

// Hi(password, salt, i) of RFC 5802: PBKDF2 with the mechanism's HMAC, one
// hash-length block. `iterations` must be positive.
Bytes ScramSaltedPassword(ScramMechanism mechanism, std::string_view password, ByteView salt,
                          int32_t iterations);
// The credential from a salted password (what AlterUserScramCredentials
// sends), and from a password.
ScramCredential ScramCredentialFromSaltedPassword(ScramMechanism mechanism,
                                                  ByteView salted_password, ByteView salt,
                                                  int32_t iterations);
ScramCredential MakeScramCredential(ScramMechanism mechanism, std::string_view password,
                                    ByteView salt, int32_t iterations);

// `n` bytes from OpenSSL's CSPRNG (aborts if it cannot be seeded).
Bytes RandomBytes(size_t n);

// The user's credential for the server's mechanism, or nullopt for an unknown
// user. Called once per exchange on the connection's thread.
using ScramCredentialLookup = std::function<std::optional<ScramCredential>(std::string_view user)>;

// A server for one exchange. An unknown user, a credential below
// kScramMinIterations, a wrong proof and a malformed message all fail with
// Kafka's generic "Authentication failed during authentication due to invalid
// credentials with SASL mechanism SCRAM-SHA-256". An unknown user is not
// refused at the first message (Kafka does that) but answered with a made-up
// salt (the same one each time for that name) and kScramMinIterations, and
// refused at the final message like a wrong password (RFC 5802 section 9), so
// that neither the answers nor their timing reveal which users exist.
// `fixed_server_nonce` replaces the random server nonce, for test vectors.
std::unique_ptr<SaslServer> MakeScramServer(
    ScramMechanism mechanism, ScramCredentialLookup lookup,
    std::optional<std::string> fixed_server_nonce = std::nullopt);

// The client side of one exchange, used by brokers and tools that connect to
// a SCRAM listener. Call FirstMessage, FinalMessage with the server's first
// reply, then VerifyServerFinal: only after that has the server proven it
// knows the credential. Not thread-safe.
class ScramClient {
 public:
  // `fixed_nonce` replaces the random client nonce, for test vectors.
  ScramClient(ScramMechanism mechanism, std::string user, std::string password,
              std::optional<std::string> fixed_nonce = std::nullopt);

  std::string FirstMessage();
  // The client-final message; kInvalidArgument when the server-first message
  // is malformed, does not extend our nonce, or asks for iterations outside
  // [kScramMinIterations, kScramMaxIterations] (more would let a server make
  // the client burn CPU).
  Result<std::string> FinalMessage(std::string_view server_first);
  // Ok when the server's signature is right; kInvalidArgument otherwise,
  // including a server error (e=...).
  Status VerifyServerFinal(std::string_view server_final);

 private:
  ScramMechanism mechanism_;
  std::string user_;
  std::string password_;
  std::string nonce_;
  std::string client_first_bare_;
  Bytes server_signature_;  // expected in server-final; empty until FinalMessage
};

}  // namespace strata::security
