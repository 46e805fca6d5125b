#include "kafka/authorization.h"

#include <span>

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

int32_t AuthorizedOperations(const BrokerContext& ctx, const net::Request& request,
                             security::ResourceType type, std::string_view name) {
  using Op = security::AclOperation;
  using Type = security::ResourceType;
  // Kafka's AclEntry.supportedOperations.
  static constexpr Op kTopicOps[] = {Op::kRead,   Op::kWrite, Op::kCreate,          Op::kDescribe,
                                     Op::kDelete, Op::kAlter, Op::kDescribeConfigs, Op::kAlterConfigs};
  static constexpr Op kGroupOps[] = {Op::kRead, Op::kDescribe, Op::kDelete, Op::kDescribeConfigs,
                                     Op::kAlterConfigs};
  static constexpr Op kClusterOps[] = {Op::kCreate,       Op::kClusterAction,   Op::kDescribeConfigs,
                                       Op::kAlterConfigs, Op::kIdempotentWrite, Op::kAlter,
                                       Op::kDescribe};
  static constexpr Op kTransactionalIdOps[] = {Op::kDescribe, Op::kWrite};
  std::span<const Op> supported;
  switch (type) {
    case Type::kTopic:
      supported = kTopicOps;
      break;
    case Type::kGroup:
      supported = kGroupOps;
      break;
    case Type::kCluster:
      supported = kClusterOps;
      break;
    case Type::kTransactionalId:
      supported = kTransactionalIdOps;
      break;
    default:
      return 0;
  }
  int32_t bits = 0;
  for (Op op : supported) {
    if (Authorized(ctx, request, op, type, name, /*log_denial=*/false)) {
      bits |= int32_t{1} << static_cast<int>(op);
    }
  }
  return bits;
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
