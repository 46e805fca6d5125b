#include "net/client_sasl.h"

#include "security/oauthbearer.h"
#include "security/sasl_plain.h"
#include "security/scram.h"

namespace strata::net {

namespace {

Bytes ToBytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

// PLAIN and OAUTHBEARER: one token, then the server's verdict.
class SingleTokenSteps : public SaslClientSteps {
 public:
  explicit SingleTokenSteps(Bytes token) : token_(std::move(token)) {}
  Result<std::optional<Bytes>> Next(ByteView) override {
    if (sent_) return std::optional<Bytes>();
    sent_ = true;
    return std::optional<Bytes>(token_);
  }

 private:
  Bytes token_;
  bool sent_ = false;
};

// RFC 5802: client-first, client-final, then the server's signature checked.
class ScramSteps : public SaslClientSteps {
 public:
  ScramSteps(security::ScramMechanism mechanism, const ClientSasl& sasl)
      : client_(mechanism, sasl.username, sasl.password) {}
  Result<std::optional<Bytes>> Next(ByteView server_token) override {
    const std::string server(server_token.begin(), server_token.end());
    switch (round_++) {
      case 0:
        return std::optional<Bytes>(ToBytes(client_.FirstMessage()));
      case 1: {
        STRATA_ASSIGN_OR_RETURN(std::string final_message, client_.FinalMessage(server));
        return std::optional<Bytes>(ToBytes(final_message));
      }
      default:
        STRATA_RETURN_IF_ERROR(client_.VerifyServerFinal(server));
        return std::optional<Bytes>();
    }
  }

 private:
  security::ScramClient client_;
  int round_ = 0;
};

}  // namespace

Result<std::unique_ptr<SaslClientSteps>> SaslClientSteps::Make(const ClientSasl& sasl) {
  if (sasl.mechanism == "PLAIN") {
    return std::unique_ptr<SaslClientSteps>(std::make_unique<SingleTokenSteps>(
        security::PlainClientToken(sasl.username, sasl.password)));
  }
  if (sasl.mechanism == "OAUTHBEARER") {
    return std::unique_ptr<SaslClientSteps>(
        std::make_unique<SingleTokenSteps>(security::OAuthBearerClientToken(sasl.token)));
  }
  if (auto scram = security::ScramMechanismFromName(sasl.mechanism)) {
    return std::unique_ptr<SaslClientSteps>(std::make_unique<ScramSteps>(*scram, sasl));
  }
  return MakeError(Errc::kInvalidArgument, "unsupported SASL mechanism " + sasl.mechanism);
}

}  // namespace strata::net
