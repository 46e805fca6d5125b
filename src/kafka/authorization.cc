#include "kafka/authorization.h"

#include "broker/acl_authorizer.h"
#include "protocol/api_key.h"

namespace strata::kafka {

const security::KafkaPrincipal& RequestPrincipal(const net::Request& request) {
  static const security::KafkaPrincipal kAnonymous = security::KafkaPrincipal::Anonymous();
  if (request.forwarded_principal) return *request.forwarded_principal;
  if (request.auth != nullptr) return request.auth->principal();
  return kAnonymous;
}

std::string RequestHost(const net::Request& request) {
  if (!request.forwarded_host.empty()) return request.forwarded_host;
  const std::string& peer = request.peer;
  const size_t colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

bool Authorized(const BrokerContext& ctx, const net::Request& request, security::AclOperation op,
                security::ResourceType type, std::string_view name, bool log_denial) {
  if (ctx.authorizer == nullptr) return true;
  return ctx.authorizer->Authorize(RequestPrincipal(request), RequestHost(request), op, type, name,
                                   protocol::ApiKeyName(request.header.api_key), log_denial);
}

bool AuthorizedOnCluster(const BrokerContext& ctx, const net::Request& request,
                         security::AclOperation op, bool log_denial) {
  return Authorized(ctx, request, op, security::ResourceType::kCluster, "kafka-cluster",
                    log_denial);
}

bool AuthorizedAny(const BrokerContext& ctx, const net::Request& request, security::AclOperation op,
                   security::ResourceType type) {
  if (ctx.authorizer == nullptr) return true;
  return ctx.authorizer->AuthorizeAny(RequestPrincipal(request), RequestHost(request), op, type);
}

std::optional<protocol::ErrorCode> ConfigsRefused(const BrokerContext& ctx,
                                                  const net::Request& request,
                                                  security::AclOperation op, int8_t resource_type,
                                                  const std::string& name) {
  constexpr int8_t kTopic = 2;
  if (resource_type == kTopic) {
    if (Authorized(ctx, request, op, security::ResourceType::kTopic, name)) return std::nullopt;
    return protocol::ErrorCode::kTopicAuthorizationFailed;
  }
  if (AuthorizedOnCluster(ctx, request, op)) return std::nullopt;
  return protocol::ErrorCode::kClusterAuthorizationFailed;
}

}  // namespace strata::kafka
