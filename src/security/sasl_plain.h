#pragma once
// SASL/PLAIN (RFC 4616), as Kafka's PlainSaslServer: the client sends
// authzid NUL authcid NUL password in one token and the server answers with an
// empty token or fails. The password travels in the clear, so listeners use it
// over TLS. The password source is injected: the JAAS user_<name> options
// (PlainUsers) in Kafka's default setup.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "security/sasl_server.h"

namespace strata::security {

inline constexpr std::string_view kPlainMechanism = "PLAIN";

// The user's password, or nullopt for an unknown user. Called on the
// connection's thread during Evaluate().
using PlainPasswordLookup = std::function<std::optional<std::string>(std::string_view user)>;

// A server for one exchange. Failures use Kafka's messages: "Authentication
// failed: Invalid username or password" for an unknown user and a wrong
// password alike.
std::unique_ptr<SaslServer> MakePlainServer(PlainPasswordLookup password_of);

// The client's token: empty authzid, `user`, `password`.
Bytes PlainClientToken(std::string_view user, std::string_view password);

}  // namespace strata::security
