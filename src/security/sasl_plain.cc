// The SASL/PLAIN server and client token.
#include "security/sasl_plain.h"

#include <openssl/crypto.h>

#include <string>
#include <utility>
#include <vector>

namespace strata::security {
namespace {

Error PlainFailure(std::string message) {
  return MakeError(Errc::kInvalidArgument, std::move(message));
}

// Constant time for equal lengths, so that the comparison does not reveal how
// much of a guess was right; a length mismatch fails at once (it reveals the
// length only).
bool PasswordsEqual(std::string_view expected, std::string_view given) {
  return expected.size() == given.size() &&
         CRYPTO_memcmp(expected.data(), given.data(), given.size()) == 0;
}

class PlainServer final : public SaslServer {
 public:
  explicit PlainServer(PlainPasswordLookup password_of) : password_of_(std::move(password_of)) {}

  Result<Bytes> Evaluate(ByteView client_token) override {
    if (done_) return PlainFailure("Unexpected SASL/PLAIN token: the exchange has ended");
    // One token per exchange, success or not.
    done_ = true;
    STRATA_RETURN_IF_ERROR(Authenticate(client_token));
    complete_ = true;
    return Bytes{};
  }
  bool complete() const override { return complete_; }
  const std::string& user() const override { return user_; }

 private:
  Status Authenticate(ByteView token);

  PlainPasswordLookup password_of_;
  std::string user_;
  bool done_ = false;
  bool complete_ = false;
};

Status PlainServer::Authenticate(ByteView token) {
  std::string_view text(reinterpret_cast<const char*>(token.data()), token.size());
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t nul = text.find('\0', start);
    parts.push_back(text.substr(start, nul == std::string_view::npos ? nul : nul - start));
    if (nul == std::string_view::npos) break;
    start = nul + 1;
  }
  if (parts.size() != 3) {
    // Kafka answers a malformed token (a SaslException) with its generic text.
    return PlainFailure(
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism PLAIN");
  }
  std::string_view authzid = parts[0], username = parts[1], password = parts[2];
  if (username.empty()) return PlainFailure("Authentication failed: username not specified");
  if (password.empty()) return PlainFailure("Authentication failed: password not specified");
  std::optional<std::string> expected = password_of_(username);
  if (!expected || !PasswordsEqual(*expected, password)) {
    return PlainFailure("Authentication failed: Invalid username or password");
  }
  // Checked after the password, as Kafka does, so that only a client holding
  // valid credentials learns anything from this message.
  if (!authzid.empty() && authzid != username) {
    return PlainFailure(
        "Authentication failed: Client requested an authorization id that is different from "
        "username");
  }
  user_ = std::string(username);
  return Status::Ok();
}

}  // namespace

std::unique_ptr<SaslServer> MakePlainServer(PlainPasswordLookup password_of) {
  return std::make_unique<PlainServer>(std::move(password_of));
}

Bytes PlainClientToken(std::string_view user, std::string_view password) {
  Bytes token;
  token.reserve(2 + user.size() + password.size());
  token.push_back(0);  // empty authzid: act as the authenticated user
  token.insert(token.end(), user.begin(), user.end());
  token.push_back(0);
  token.insert(token.end(), password.begin(), password.end());
  return token;
}

}  // namespace strata::security
