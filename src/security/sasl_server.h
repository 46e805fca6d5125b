#pragma once
// SaslServer: the broker side of one SASL authentication exchange (Kafka's
// SaslAuthenticate / SaslHandshake v1 flow). The connection creates one per
// attempt, after the client has picked a mechanism, and feeds it the client's
// tokens in order until complete() or an error. Not thread-safe: it belongs to
// the connection that runs the exchange.
#include <cstdint>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::security {

class SaslServer {
 public:
  virtual ~SaslServer() = default;

  // Consumes the client's next token; returns the server's reply token (may be
  // empty). An error ends the exchange: every authentication failure, whether
  // a malformed token or a wrong credential, is Errc::kInvalidArgument with a
  // message that may be sent to the client as is (Kafka's wording; the
  // connection answers SASL_AUTHENTICATION_FAILED with it). Messages never say
  // whether the user exists.
  virtual Result<Bytes> Evaluate(ByteView client_token) = 0;
  virtual bool complete() const = 0;
  // The authenticated user name (the authorization id), valid once complete().
  virtual const std::string& user() const = 0;
  // When the credential stops being valid (OAUTHBEARER token expiry), ms since
  // the epoch; nullopt when it does not expire (PLAIN, SCRAM).
  virtual std::optional<int64_t> credential_expiry_ms() const { return std::nullopt; }
  // Why the exchange is failing, in more detail than the client may be told,
  // for the broker's log; empty when the error message says it all. Set once
  // the mechanism has refused the credential, which for OAUTHBEARER is before
  // the failure itself (its error challenge tells the client only
  // {"status":"invalid_token"}; this says expired, invalid signature, ...).
  virtual std::string failure_detail() const { return {}; }
};

}  // namespace strata::security
