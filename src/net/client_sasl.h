#pragma once
// The client's side of a SASL exchange, for brokers authenticating to each
// other's SASL listener (sasl.mechanism.inter.broker.protocol) and for the
// operator's CLI: the tokens to send, round by round, for PLAIN, SCRAM and
// OAUTHBEARER. net::Client runs them in SaslHandshake v1 and SaslAuthenticate
// v2 requests on each new connection.
#include <memory>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::net {

// What a client authenticates with.
struct ClientSasl {
  std::string mechanism;  // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
  std::string username;
  std::string password;
  std::string token;  // OAUTHBEARER: the JWT
};

class SaslClientSteps {
 public:
  virtual ~SaslClientSteps() = default;
  // The next token to send, given the server's last one (empty at the
  // start); nullopt when the exchange is complete. An error when the
  // server's token is wrong (a SCRAM server that cannot prove it knows the
  // credential).
  virtual Result<std::optional<Bytes>> Next(ByteView server_token) = 0;

  // kInvalidArgument for an unknown mechanism.
  static Result<std::unique_ptr<SaslClientSteps>> Make(const ClientSasl& sasl);
};

}  // namespace strata::net
