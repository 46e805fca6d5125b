// SaslHandshake (17): a client on a SASL listener names its mechanism. The
// connection then accepts only SaslAuthenticate until the exchange ends. A
// client re-authenticating (KIP-368) sends it again on its authenticated
// connection and must keep its mechanism. Elsewhere: ILLEGAL_SASL_STATE.
#include "protocol/messages/sasl_handshake.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "broker/listener_sasl.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"

namespace strata::kafka {

HandlerResult HandleSaslHandshake(BrokerContext& ctx, net::Request& request) {
  using protocol::ErrorCode;
  STRATA_ASSIGN_OR_RETURN(protocol::SaslHandshakeRequest req,
                          DecodeRequest<protocol::SaslHandshakeRequest>(request));
  protocol::SaslHandshakeResponse resp;
  net::ConnectionAuth* auth = request.auth;
  const bool sasl_listener = auth != nullptr && auth->sasl() && ctx.sasl != nullptr;
  if (sasl_listener) resp.mechanisms = ctx.sasl->Enabled(request.listener);
  const bool reauthenticating =
      sasl_listener && auth->state() == net::ConnectionAuth::State::kAuthenticated;
  if (!sasl_listener ||
      (auth->state() != net::ConnectionAuth::State::kAwaitingHandshake && !reauthenticating)) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kIllegalSaslState);
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  if (reauthenticating && req.mechanism != auth->mechanism()) {
    // KIP-368: a session is renewed with the mechanism that opened it.
    Log()->info("connection {}: re-authentication with {} refused (authenticated with {})",
                request.peer, req.mechanism, auth->mechanism());
    resp.error_code = static_cast<int16_t>(ErrorCode::kUnsupportedSaslMechanism);
    auth->Failed();
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  auto exchange = ctx.sasl->Start(request.listener, req.mechanism);
  if (!exchange.ok()) {
    Log()->info("connection {} on listener {}: client asked for SASL mechanism {}, enabled: {}",
                request.peer, request.listener, req.mechanism, fmt::join(resp.mechanisms, ","));
    resp.error_code = static_cast<int16_t>(ErrorCode::kUnsupportedSaslMechanism);
    auth->Failed();
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  // Version 0 (still offered: older librdkafka, such as Debian 12's 2.0.2,
  // authenticates only with a broker that does) is followed by bare tokens,
  // as Kafka serves it.
  auth->BeginExchange(req.mechanism, std::move(exchange).value(),
                      /*raw_tokens=*/request.header.api_version == 0);
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
