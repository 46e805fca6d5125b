#pragma once
// One function per Kafka API (handlers/<api>.cc; the table that dispatch reads
// is handlers/api_table.h); each decodes its request, does the work, and
// returns the encoded response (nullopt = no response). A decode failure is
// returned as an error, which closes the connection with a log line (Kafka's
// behaviour for malformed requests).
#include <asio.hpp>
#include <functional>

#include "kafka/broker_context.h"
#include "kafka/codec.h"
#include "net/server.h"
#include "protocol/error_code.h"

namespace strata::coordinator {
struct RequestContext;
}

namespace strata::kafka {

HandlerResult HandleApiVersions(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleProduce(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleFetch(BrokerContext& ctx, net::Request& request);
HandlerResult HandleMetadata(BrokerContext& ctx, net::Request& request);
HandlerResult HandleListOffsets(BrokerContext& ctx, net::Request& request);
HandlerResult HandleCreateTopics(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDeleteTopics(BrokerContext& ctx, net::Request& request);
HandlerResult HandleCreatePartitions(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDescribeConfigs(BrokerContext& ctx, net::Request& request);
HandlerResult HandleAlterConfigs(BrokerContext& ctx, net::Request& request);
HandlerResult HandleIncrementalAlterConfigs(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDescribeCluster(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDescribeQuorum(BrokerContext& ctx, net::Request& request);
HandlerResult HandleUnregisterBroker(BrokerContext& ctx, net::Request& request);
HandlerResult HandleGetTelemetrySubscriptions(BrokerContext& ctx, net::Request& request);
HandlerResult HandlePushTelemetry(BrokerContext& ctx, net::Request& request);
HandlerResult HandleAlterPartitionReassignments(BrokerContext& ctx, net::Request& request);
HandlerResult HandleListPartitionReassignments(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDescribeLogDirs(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDescribeTopicPartitions(BrokerContext& ctx, net::Request& request);
HandlerResult HandleElectLeaders(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDeleteRecords(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleWriteTxnMarkers(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDescribeProducers(BrokerContext& ctx, net::Request& request);
HandlerResult HandleOffsetForLeaderEpoch(BrokerContext& ctx, net::Request& request);

// Authentication (handlers/sasl_*.cc) and SCRAM users (user_scram_credentials.cc).
HandlerResult HandleSaslHandshake(BrokerContext& ctx, net::Request& request);
HandlerResult HandleSaslAuthenticate(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDescribeUserScramCredentials(BrokerContext& ctx, net::Request& request);
HandlerResult HandleAlterUserScramCredentials(BrokerContext& ctx, net::Request& request);
// ACLs (handlers/acls.cc).
HandlerResult HandleDescribeAcls(BrokerContext& ctx, net::Request& request);
HandlerResult HandleCreateAcls(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDeleteAcls(BrokerContext& ctx, net::Request& request);
// Client quotas (handlers/client_quotas.cc).
HandlerResult HandleDescribeClientQuotas(BrokerContext& ctx, net::Request& request);
HandlerResult HandleAlterClientQuotas(BrokerContext& ctx, net::Request& request);

// Transactions (handlers/init_producer_id.cc, *_txn.cc, *_transactions.cc),
// served by ctx.txn_coordinator.
asio::awaitable<HandlerResult> HandleInitProducerId(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleAddPartitionsToTxn(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleAddOffsetsToTxn(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleEndTxn(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleTxnOffsetCommit(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDescribeTransactions(BrokerContext& ctx, net::Request& request);
HandlerResult HandleListTransactions(BrokerContext& ctx, net::Request& request);

// The controller-bound APIs' answers when no controller takes the request:
// every topic (partition) failed with `code`.
HandlerResult CreateTopicsControllerUnavailable(net::Request& request, protocol::ErrorCode code,
                                                const std::string& message);
HandlerResult DeleteTopicsControllerUnavailable(net::Request& request, protocol::ErrorCode code,
                                                const std::string& message);
HandlerResult CreatePartitionsControllerUnavailable(net::Request& request, protocol::ErrorCode code,
                                                    const std::string& message);
HandlerResult ElectLeadersControllerUnavailable(net::Request& request, protocol::ErrorCode code,
                                                const std::string& message);
HandlerResult AlterPartitionReassignmentsControllerUnavailable(net::Request& request,
                                                               protocol::ErrorCode code,
                                                               const std::string& message);

// Envelope: runs the forwarded request through `dispatch`, which must not
// forward it again.
using InnerDispatch = std::function<asio::awaitable<HandlerResult>(net::Request&)>;
asio::awaitable<HandlerResult> HandleEnvelope(BrokerContext& ctx, net::Request& request,
                                              bool active_controller,
                                              const InnerDispatch& dispatch);

// Consumer groups (handlers/group_*.cc), served by ctx.group_coordinator.
HandlerResult HandleFindCoordinator(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleJoinGroup(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleSyncGroup(BrokerContext& ctx, net::Request& request);
HandlerResult HandleHeartbeat(BrokerContext& ctx, net::Request& request);
// KIP-848 consumer groups (handlers/consumer_group_*.cc).
asio::awaitable<HandlerResult> HandleConsumerGroupHeartbeat(BrokerContext& ctx,
                                                            net::Request& request);
HandlerResult HandleConsumerGroupDescribe(BrokerContext& ctx, net::Request& request);
HandlerResult HandleLeaveGroup(BrokerContext& ctx, net::Request& request);
asio::awaitable<HandlerResult> HandleOffsetCommit(BrokerContext& ctx, net::Request& request);
HandlerResult HandleOffsetFetch(BrokerContext& ctx, net::Request& request);
HandlerResult HandleOffsetDelete(BrokerContext& ctx, net::Request& request);
HandlerResult HandleListGroups(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDescribeGroups(BrokerContext& ctx, net::Request& request);
HandlerResult HandleDeleteGroups(BrokerContext& ctx, net::Request& request);
// Client id, "/<ip>" host and API version of a group request.
coordinator::RequestContext GroupRequestContext(const net::Request& request);

}  // namespace strata::kafka
