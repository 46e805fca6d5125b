// The client side of a SCRAM exchange (RFC 5802 section 5), the mirror of
// scram_server.cc: it proves the password without sending it and checks that
// the server holds the matching credential.
#include <openssl/crypto.h>

#include <string>
#include <utility>

#include "security/scram.h"
#include "security/scram_internal.h"

namespace strata::security {
namespace {

Error ScramClientError(std::string message) {
  return MakeError(Errc::kInvalidArgument, std::move(message));
}

// The gs2 header this client sends: no channel binding, no authorization id.
constexpr std::string_view kClientGs2Header = "n,,";

}  // namespace

ScramClient::ScramClient(ScramMechanism mechanism, std::string user, std::string password,
                         std::optional<std::string> fixed_nonce)
    : mechanism_(mechanism),
      user_(std::move(user)),
      password_(std::move(password)),
      nonce_(fixed_nonce ? std::move(*fixed_nonce) : Base64Encode(RandomBytes(24))) {}

std::string ScramClient::FirstMessage() {
  client_first_bare_ = "n=" + scram::EncodeSaslName(user_) + ",r=" + nonce_;
  return std::string(kClientGs2Header) + client_first_bare_;
}

Result<std::string> ScramClient::FinalMessage(std::string_view server_first) {
  if (client_first_bare_.empty()) return ScramClientError("SCRAM: FirstMessage was not sent");
  STRATA_ASSIGN_OR_RETURN(scram::ServerFirst first, scram::ParseServerFirst(server_first));
  // The server must extend our nonce, else this is a replay or another
  // exchange's message.
  if (first.nonce.size() <= nonce_.size() || !first.nonce.starts_with(nonce_)) {
    return ScramClientError("SCRAM: the server nonce does not extend the client nonce");
  }
  if (first.iterations < kScramMinIterations || first.iterations > kScramMaxIterations) {
    return ScramClientError("SCRAM: the server asks for " + std::to_string(first.iterations) +
                            " iterations, outside [" + std::to_string(kScramMinIterations) + ", " +
                            std::to_string(kScramMaxIterations) + "]");
  }
  Bytes salted = ScramSaltedPassword(mechanism_, password_, first.salt, first.iterations);
  Bytes client_key = scram::Hmac(mechanism_, salted, scram::AsBytes("Client Key"));
  Bytes stored_key = scram::Hash(mechanism_, client_key);
  Bytes server_key = scram::Hmac(mechanism_, salted, scram::AsBytes("Server Key"));

  std::string without_proof =
      "c=" + Base64Encode(scram::AsBytes(kClientGs2Header)) + ",r=" + first.nonce;
  std::string auth_message =
      client_first_bare_ + "," + std::string(server_first) + "," + without_proof;
  Bytes client_signature = scram::Hmac(mechanism_, stored_key, scram::AsBytes(auth_message));
  Bytes proof = scram::Xor(client_key, client_signature);
  server_signature_ = scram::Hmac(mechanism_, server_key, scram::AsBytes(auth_message));
  return without_proof + ",p=" + Base64Encode(proof);
}

Status ScramClient::VerifyServerFinal(std::string_view server_final) {
  if (server_signature_.empty()) return ScramClientError("SCRAM: FinalMessage was not sent");
  STRATA_ASSIGN_OR_RETURN(scram::ServerFinal final_msg, scram::ParseServerFinal(server_final));
  if (final_msg.error) return ScramClientError("SCRAM: the server refused: " + *final_msg.error);
  if (final_msg.signature.size() != server_signature_.size() ||
      CRYPTO_memcmp(final_msg.signature.data(), server_signature_.data(),
                    server_signature_.size()) != 0) {
    return ScramClientError("SCRAM: invalid server signature");
  }
  return Status::Ok();
}

}  // namespace strata::security
