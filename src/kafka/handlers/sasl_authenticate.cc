// SaslAuthenticate (36): one round of the connection's SASL exchange. When
// the mechanism completes, the connection is authenticated as User:<name>
// and told its session lifetime (KIP-368: connections.max.reauth.ms, cut to
// an OAUTHBEARER token's expiry). A failure answers
// SASL_AUTHENTICATION_FAILED with the reason, is counted and logged (with the
// mechanism's failure_detail(), which the client is not told), and the
// connection closes after the response, as Kafka does.
#include "protocol/messages/sasl_authenticate.h"

#include <algorithm>
#include <chrono>

#include "base/metrics.h"
#include "broker/listener_sasl.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"

namespace strata::kafka {

namespace {

void CountAuthentication(const net::Request& request, const std::string& mechanism,
                         const char* result) {
  metrics::Global()
      .GetCounter("strata_sasl_authentications_total",
                  "SASL authentications by listener, mechanism and result",
                  {{"listener", request.listener}, {"mechanism", mechanism}, {"result", result}})
      .Add();
}

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// KIP-368: the session lasts connections.max.reauth.ms, and no longer than
// the credential (an OAUTHBEARER token) is valid; 0: no limit. A token past
// its expiry but within the clock skew was accepted: its session gets a
// second, enough for the client to re-authenticate with a fresh one.
int64_t SessionLifetimeMs(const BrokerContext& ctx, const security::SaslServer& exchange) {
  constexpr int64_t kMinCredentialSessionMs = 1000;
  int64_t lifetime = ctx.sasl->max_reauth_ms();
  if (auto expiry = exchange.credential_expiry_ms()) {
    const int64_t left = std::max(*expiry - WallClockMs(), kMinCredentialSessionMs);
    lifetime = lifetime == 0 ? left : std::min(lifetime, left);
  }
  return lifetime;
}

}  // namespace

HandlerResult HandleSaslAuthenticate(BrokerContext& ctx, net::Request& request) {
  using protocol::ErrorCode;
  STRATA_ASSIGN_OR_RETURN(protocol::SaslAuthenticateRequest req,
                          DecodeRequest<protocol::SaslAuthenticateRequest>(request));
  protocol::SaslAuthenticateResponse resp;
  net::ConnectionAuth* auth = request.auth;
  if (auth == nullptr || auth->exchange() == nullptr || ctx.sasl == nullptr) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kIllegalSaslState);
    resp.error_message = "SaslAuthenticate without a SaslHandshake";
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  const std::string mechanism = auth->mechanism();
  security::SaslServer& exchange = *auth->exchange();
  auto reply = exchange.Evaluate(req.auth_bytes);
  std::optional<std::string> failure;
  if (!reply.ok()) failure = reply.error().message;
  if (!failure && exchange.complete()) {
    security::KafkaPrincipal principal{"User", exchange.user()};
    if (auth->authenticated_once() && principal != auth->principal()) {
      failure = "Authentication failed: re-authentication as " + principal.ToString() +
                " on a connection of " + auth->principal().ToString();
    } else {
      const int64_t lifetime = SessionLifetimeMs(ctx, exchange);
      resp.auth_bytes = std::move(reply).value();
      resp.session_lifetime_ms = lifetime;
      auth->Authenticated(std::move(principal), lifetime);
      CountAuthentication(request, mechanism, "success");
      Log()->debug("connection {} on listener {} authenticated as {} with {}", request.peer,
                   request.listener, auth->principal().ToString(), mechanism);
      return std::optional<Bytes>(EncodeResponse(request, resp));
    }
  }
  // What the client is not told (OAUTHBEARER answers any bad token with
  // {"status":"invalid_token"}), known from the error challenge on.
  const std::string detail = exchange.failure_detail();
  if (failure) {
    // Counted once, here: an error challenge before it is not a failure yet.
    CountAuthentication(request, mechanism, "failure");
    Log()->info("connection {} on listener {}: failed authentication with {}: {}{}", request.peer,
                request.listener, mechanism, *failure, detail.empty() ? "" : " (" + detail + ")");
    resp.error_code = static_cast<int16_t>(ErrorCode::kSaslAuthenticationFailed);
    resp.error_message = std::move(*failure);
    auth->Failed();
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  if (!detail.empty()) {
    Log()->debug("connection {} on listener {}: {} error challenge: {}", request.peer,
                 request.listener, mechanism, detail);
  }
  resp.auth_bytes = std::move(reply).value();  // the exchange goes on
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
