#pragma once
// Creating a topic with Kafka's validation, shared by CreateTopics and
// auto-creation (Metadata).
#include <map>
#include <string>

#include "kafka/broker_context.h"
#include "protocol/error_code.h"

namespace strata::kafka {

struct TopicCreationResult {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::string message;
  int32_t partitions = 0;
  int16_t replication_factor = 0;
  cluster::TopicId id{};
};

// num_partitions / replication_factor of -1 take the broker defaults.
// validate_only checks everything but creates nothing. `manual` (Kafka's
// --replica-assignment) places the partitions instead of the rack-aware
// placement over the active brokers.
TopicCreationResult CreateTopicChecked(BrokerContext& ctx, const std::string& name,
                                       int32_t num_partitions, int16_t replication_factor,
                                       const std::map<std::string, std::string>& configs,
                                       bool validate_only,
                                       const cluster::ReplicaAssignment* manual = nullptr);

}  // namespace strata::kafka
