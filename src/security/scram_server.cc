// The broker side of a SCRAM exchange (RFC 5802 section 5): two client
// messages, two replies, the proof checked against the stored credential.
#include <openssl/crypto.h>

#include <cctype>
#include <string>
#include <utility>

#include "security/scram.h"
#include "security/scram_internal.h"

namespace strata::security {
namespace {

// Salts for unknown users: HMAC of the name under a key made once per process,
// so that asking twice for the same name gives the same salt, as it would for
// a real user, while no two processes agree.
Bytes MockSalt(ScramMechanism mechanism, std::string_view user) {
  static const Bytes key = RandomBytes(32);
  std::string input = std::string(ScramMechanismName(mechanism)) + '\0' + std::string(user);
  return scram::Hmac(ScramMechanism::kSha256, key, scram::AsBytes(input));
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

class ScramServer final : public SaslServer {
 public:
  ScramServer(ScramMechanism mechanism, ScramCredentialLookup lookup,
              std::optional<std::string> fixed_server_nonce)
      : mechanism_(mechanism),
        lookup_(std::move(lookup)),
        fixed_server_nonce_(std::move(fixed_server_nonce)) {}

  Result<Bytes> Evaluate(ByteView client_token) override;
  bool complete() const override { return state_ == State::kComplete; }
  const std::string& user() const override { return user_; }

 private:
  enum class State { kClientFirst, kClientFinal, kComplete, kFailed };

  Result<std::string> OnClientFirst(std::string_view text);
  Result<std::string> OnClientFinal(std::string_view text);
  bool IsOurNonce(std::string_view nonce) const;
  ScramCredential CredentialFor(const std::string& user) const;
  // Kafka's answer to every failure it does not explain (a SaslException).
  Error Failure() const {
    return MakeError(Errc::kInvalidArgument,
                     "Authentication failed during authentication due to invalid credentials "
                     "with SASL mechanism " +
                         std::string(ScramMechanismName(mechanism_)));
  }

  const ScramMechanism mechanism_;
  const ScramCredentialLookup lookup_;
  const std::optional<std::string> fixed_server_nonce_;
  State state_ = State::kClientFirst;
  std::string user_;  // set once complete
  // Between the two messages:
  std::string claimed_user_;
  std::string gs2_header_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string client_nonce_;
  std::string nonce_;
  ScramCredential credential_;
};

Result<Bytes> ScramServer::Evaluate(ByteView client_token) {
  if (state_ == State::kComplete || state_ == State::kFailed) {
    return MakeError(Errc::kInvalidArgument, "Unexpected SASL/SCRAM token: the exchange has ended");
  }
  std::string_view text(reinterpret_cast<const char*>(client_token.data()), client_token.size());
  Result<std::string> reply =
      state_ == State::kClientFirst ? OnClientFirst(text) : OnClientFinal(text);
  if (!reply.ok()) {
    state_ = State::kFailed;
    credential_ = ScramCredential{};
    return reply.take_error();
  }
  return Bytes(reply->begin(), reply->end());
}

// The stored credential when it is usable, else a made-up one whose StoredKey
// no proof can match: the exchange then fails only at the final message, the
// same way and after the same work as a wrong password.
ScramCredential ScramServer::CredentialFor(const std::string& user) const {
  std::optional<ScramCredential> found = lookup_(user);
  size_t hash_size = scram::HashSize(mechanism_);
  // Kafka refuses credentials below the minimum iteration count.
  if (found && found->iterations >= kScramMinIterations && !found->salt.empty() &&
      found->stored_key.size() == hash_size && found->server_key.size() == hash_size) {
    return std::move(*found);
  }
  ScramCredential mock;
  mock.salt = MockSalt(mechanism_, user);
  mock.stored_key = RandomBytes(hash_size);
  mock.server_key = RandomBytes(hash_size);
  mock.iterations = kScramMinIterations;
  return mock;
}

Result<std::string> ScramServer::OnClientFirst(std::string_view text) {
  Result<scram::ClientFirst> parsed = scram::ParseClientFirst(text);
  if (!parsed.ok()) return Failure();
  scram::ClientFirst& first = *parsed;
  // Kafka's ScramLoginModule sends tokenauth=true to log in with a delegation
  // token (matched case-insensitively); other extensions are ignored.
  auto token_auth = first.extensions.find("tokenauth");
  if (token_auth != first.extensions.end() && EqualsIgnoreCase(token_auth->second, "true")) {
    return MakeError(Errc::kInvalidArgument,
                     "Authentication failed: delegation token authentication is not supported");
  }
  // Checked before the lookup: the answer does not depend on the user existing.
  if (!first.authzid.empty() && first.authzid != first.user) {
    return MakeError(Errc::kInvalidArgument,
                     "Authentication failed: Client requested an authorization id that is "
                     "different from username");
  }
  credential_ = CredentialFor(first.user);
  std::string server_nonce =
      fixed_server_nonce_ ? *fixed_server_nonce_ : Base64Encode(RandomBytes(24));
  client_nonce_ = first.nonce;
  nonce_ = first.nonce + server_nonce;
  server_first_ = "r=" + nonce_ + ",s=" + Base64Encode(credential_.salt) +
                  ",i=" + std::to_string(credential_.iterations);
  claimed_user_ = std::move(first.user);
  gs2_header_ = std::move(first.gs2_header);
  client_first_bare_ = std::move(first.bare);
  state_ = State::kClientFinal;
  return server_first_;
}

// The client-final nonce must be the whole nonce of server-first (RFC
// 5802), so that the proof answers this exchange. librdkafka before 2.6.1
// (still in Debian and Ubuntu) sends its own nonce once more in front of it
// (librdkafka issue 4895); that form still carries the server's fresh part
// and is accepted too, as Kafka 3.8.1 and Confluent Platform accept it.
bool ScramServer::IsOurNonce(std::string_view nonce) const {
  return nonce == nonce_ || (nonce.size() == client_nonce_.size() + nonce_.size() &&
                             nonce.starts_with(client_nonce_) && nonce.ends_with(nonce_));
}

Result<std::string> ScramServer::OnClientFinal(std::string_view text) {
  Result<scram::ClientFinal> parsed = scram::ParseClientFinal(text);
  if (!parsed.ok()) return Failure();
  const scram::ClientFinal& final_msg = *parsed;
  // c= must repeat the gs2 header, so that a man in the middle cannot have
  // downgraded the client's channel binding choice ("y" to "n").
  if (final_msg.channel_binding != Bytes(gs2_header_.begin(), gs2_header_.end()) ||
      !IsOurNonce(final_msg.nonce) || final_msg.proof.size() != scram::HashSize(mechanism_)) {
    return Failure();
  }
  std::string auth_message =
      client_first_bare_ + "," + server_first_ + "," + final_msg.without_proof;
  Bytes client_signature =
      scram::Hmac(mechanism_, credential_.stored_key, scram::AsBytes(auth_message));
  Bytes client_key = scram::Xor(final_msg.proof, client_signature);
  Bytes stored_key = scram::Hash(mechanism_, client_key);
  if (CRYPTO_memcmp(stored_key.data(), credential_.stored_key.data(), stored_key.size()) != 0) {
    return Failure();
  }
  Bytes server_signature =
      scram::Hmac(mechanism_, credential_.server_key, scram::AsBytes(auth_message));
  user_ = std::move(claimed_user_);
  credential_ = ScramCredential{};
  state_ = State::kComplete;
  return "v=" + Base64Encode(server_signature);
}

}  // namespace

std::unique_ptr<SaslServer> MakeScramServer(ScramMechanism mechanism, ScramCredentialLookup lookup,
                                            std::optional<std::string> fixed_server_nonce) {
  return std::make_unique<ScramServer>(mechanism, std::move(lookup), std::move(fixed_server_nonce));
}

}  // namespace strata::security
