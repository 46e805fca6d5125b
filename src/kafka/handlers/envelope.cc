// Envelope (58), on the controller: unwraps a request another broker
// forwarded, runs it as if its client had sent it here, and wraps the
// response. Only controller-bound requests are accepted, only by the active
// controller (NOT_CONTROLLER otherwise, so the forwarder retries elsewhere).
#include "protocol/messages/envelope.h"

#include <fmt/format.h>

#include "kafka/authorization.h"
#include "kafka/controller_forwarding.h"
#include "kafka/handlers/api_table.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"
#include "protocol/api_key.h"
#include "protocol/error_code.h"
#include "protocol/request_registry.h"

namespace strata::kafka {

using protocol::EnvelopeRequest;
using protocol::EnvelopeResponse;
using protocol::ErrorCode;

namespace {

// The client address an Envelope carries (4 or 16 bytes) as text.
std::string AddressText(const Bytes& address) {
  asio::error_code ec;
  if (address.size() == 4) {
    asio::ip::address_v4::bytes_type b;
    std::copy(address.begin(), address.end(), b.begin());
    return asio::ip::make_address_v4(b).to_string(ec);
  }
  if (address.size() == 16) {
    asio::ip::address_v6::bytes_type b;
    std::copy(address.begin(), address.end(), b.begin());
    return asio::ip::make_address_v6(b).to_string(ec);
  }
  return "unknown";
}

}  // namespace

asio::awaitable<HandlerResult> HandleEnvelope(BrokerContext& ctx, net::Request& request,
                                              bool active_controller,
                                              const InnerDispatch& dispatch) {
  auto decoded = DecodeRequest<EnvelopeRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  EnvelopeRequest& envelope = *decoded;
  EnvelopeResponse response;
  auto answer = [&](ErrorCode code) {
    response.error_code = Code(code);
    return HandlerResult(std::optional<Bytes>(EncodeResponse(request, response)));
  };
  request.quota_exempt = true;
  // Brokers forward on the inter-broker listener only (Kafka: the
  // privileged listener); anywhere else the connection is closed.
  if (request.listener != ctx.config.inter_broker_listener()) {
    co_return MakeError(Errc::kInvalidArgument,
                        "Envelope on listener " + request.listener +
                            ", not the inter-broker listener " +
                            ctx.config.inter_broker_listener());
  }
  // Only brokers forward (CLUSTER_ACTION), and they say whose request it is.
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kClusterAction)) {
    co_return answer(ErrorCode::kClusterAuthorizationFailed);
  }
  if (!active_controller) co_return answer(ErrorCode::kNotController);
  std::optional<security::KafkaPrincipal> principal;
  if (envelope.request_principal) {
    const Bytes& p = *envelope.request_principal;
    auto parsed = security::ParsePrincipal(std::string(p.begin(), p.end()));
    if (!parsed.ok()) co_return answer(ErrorCode::kPrincipalDeserializationFailure);
    principal = std::move(parsed).value();
  } else if (ctx.authorizer != nullptr) {
    co_return answer(ErrorCode::kPrincipalDeserializationFailure);
  }

  // The inner frame as the server would have read it off a socket.
  const Bytes& data = envelope.request_data;
  if (data.size() < 8) co_return answer(ErrorCode::kInvalidRequest);
  net::Request inner;
  inner.frame_size = data.size();
  inner.frame = std::make_unique_for_overwrite<uint8_t[]>(inner.frame_size);
  std::copy(data.begin(), data.end(), inner.frame.get());
  Status parsed = net::ParseRequestFrame(inner, protocol::RequestIsFlexible);
  if (!parsed.ok()) {
    Log()->warn("refusing an Envelope from {}: {}", request.peer, parsed.error().message);
    co_return answer(ErrorCode::kInvalidRequest);
  }
  const int16_t key = inner.header.api_key;
  const int16_t version = inner.header.api_version;
  const ApiHandler* api = FindServedApi(key);
  if (api == nullptr || !api->controller_bound()) {
    Log()->warn("refusing an Envelope from {} carrying {} (not controller-bound)", request.peer,
                protocol::ApiKeyName(key));
    co_return answer(ErrorCode::kInvalidRequest);
  }
  inner.peer =
      fmt::format("{} (forwarded by {})", request.peer, request.header.client_id.value_or("?"));
  inner.listener = request.listener;
  inner.forwarded_principal = std::move(principal);
  inner.forwarded_host = AddressText(envelope.client_host_address);

  auto result = co_await dispatch(inner);
  if (!result.ok()) {
    Log()->warn("forwarded {} v{} from {}: {}", protocol::ApiKeyName(key), version, inner.peer,
                result.error().message);
    co_return answer(result.error().code == Errc::kUnsupported ? ErrorCode::kUnsupportedVersion
                                                               : ErrorCode::kInvalidRequest);
  }
  if (!result.value().has_value()) co_return answer(ErrorCode::kUnknownServerError);
  response.response_data = std::move(*result.value());
  co_return answer(ErrorCode::kNone);
}

}  // namespace strata::kafka
