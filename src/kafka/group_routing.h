#pragma once
// Which broker coordinates a consumer group: the leader of the group's
// __consumer_offsets partition (Kafka's rule), so a group's coordinator is
// where its offsets are written.
#include <asio.hpp>
#include <string>

#include "kafka/broker_context.h"
#include "kafka/cluster_state.h"
#include "net/server.h"
#include "protocol/error_code.h"
#include "security/acl.h"

namespace strata::kafka {

// Creates __consumer_offsets when it does not exist yet, as Kafka does at the
// first FindCoordinator (so it is placed over the brokers live by then):
// offsets.topic.num.partitions partitions, offsets.topic.replication.factor
// replicas (at most one per active broker), compacted. kNone, or
// COORDINATOR_NOT_AVAILABLE (metadata store unreachable).
protocol::ErrorCode EnsureOffsetsTopic(BrokerContext& ctx);

// The coordinator's broker, or node_id -1 while the partition has no leader.
LiveBroker GroupCoordinatorBroker(const BrokerContext& ctx, const std::string& group_id,
                                  std::string_view listener);

// kNone when this broker coordinates the group; COORDINATOR_LOAD_IN_PROGRESS
// while it leads the group's partition but has not loaded its groups yet (the
// client retries here); NOT_COORDINATOR (the client looks the coordinator up
// again) otherwise.
protocol::ErrorCode GroupCoordinatorError(const BrokerContext& ctx, const std::string& group_id);
// The error a request on `group_id` gets before the coordinator sees it:
// GROUP_AUTHORIZATION_FAILED when the client may not do `op` on the group,
// else GroupCoordinatorError's.
protocol::ErrorCode GroupRequestError(const BrokerContext& ctx, const net::Request& request,
                                      security::AclOperation op, const std::string& group_id);

// Waits until the coordinator's writes so far to the group's partition are
// committed (every ISR member has them), up to offsets.commit.timeout.ms:
// Kafka's coordinator writes with acks=all and answers a commit only then.
// kNone; NOT_COORDINATOR when the leadership moved first (the new leader may
// not have them); COORDINATOR_NOT_AVAILABLE when the ISR did not confirm in
// time (both retriable: the client commits again).
asio::awaitable<protocol::ErrorCode> AwaitGroupWrites(BrokerContext& ctx,
                                                      const std::string& group_id);

}  // namespace strata::kafka
