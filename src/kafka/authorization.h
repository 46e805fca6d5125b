#pragma once
// Who sent a request and whether the broker's authorizer lets them: the
// checks every handler makes before it acts (Kafka's KafkaApis.authorize).
// Without an authorizer (authorizer.class.name unset) everything is allowed.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kafka/broker_context.h"
#include "net/server.h"
#include "protocol/error_code.h"
#include "security/acl.h"
#include "security/principal.h"

namespace strata::kafka {

// The client's principal: the connection's, or the forwarded client's.
const security::KafkaPrincipal& RequestPrincipal(const net::Request& request);
// The client's address without its port.
std::string RequestHost(const net::Request& request);

// Whether the request's principal may do `op` on the resource. Denials are
// logged (not when `log_denial` is false: list filtering).
bool Authorized(const BrokerContext& ctx, const net::Request& request, security::AclOperation op,
                security::ResourceType type, std::string_view name, bool log_denial = true);
// The cluster resource ("kafka-cluster").
bool AuthorizedOnCluster(const BrokerContext& ctx, const net::Request& request,
                         security::AclOperation op, bool log_denial = true);
// Whether `op` is allowed on any resource of `type`.
bool AuthorizedAny(const BrokerContext& ctx, const net::Request& request, security::AclOperation op,
                   security::ResourceType type);

// The operations the request's principal may do on the resource, as the
// bit field (1 << AclOperation code) that Metadata, DescribeCluster,
// DescribeGroups and DescribeTopicPartitions answer: of the operations
// Kafka supports on that resource type, each one Authorized (all of them
// without an authorizer). Denials are not logged.
int32_t AuthorizedOperations(const BrokerContext& ctx, const net::Request& request,
                             security::ResourceType type, std::string_view name);

// For DescribeConfigs / AlterConfigs: `op` (DESCRIBE_CONFIGS, ALTER_CONFIGS)
// on a topic (config resource type 2) or, for a broker (4) or broker logger
// (8), on the cluster. The error the resource gets, or nullopt.
std::optional<protocol::ErrorCode> ConfigsRefused(const BrokerContext& ctx,
                                                  const net::Request& request,
                                                  security::AclOperation op, int8_t resource_type,
                                                  const std::string& name);

}  // namespace strata::kafka
