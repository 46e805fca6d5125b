#pragma once
// Which broker coordinates a consumer group: the leader of the group's
// __consumer_offsets partition (Kafka's rule), so a group's coordinator is
// where its offsets are written.
#include <string>

#include "broker/broker_context.h"
#include "broker/cluster_state.h"
#include "protocol/error_code.h"

namespace strata::broker {

// The coordinator's broker, or node_id -1 while the partition has no leader.
LiveBroker GroupCoordinatorBroker(const BrokerContext& ctx, const std::string& group_id);

// kNone when this broker coordinates the group; NOT_COORDINATOR (the client
// looks the coordinator up again) otherwise.
protocol::ErrorCode GroupCoordinatorError(const BrokerContext& ctx, const std::string& group_id);

}  // namespace strata::broker
