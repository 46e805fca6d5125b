#pragma once
// What the group coordinator is configured with and told of each request.
#include <cstdint>
#include <string>
#include <vector>

namespace strata::coordinator {

// Broker settings of KIP-848 consumer groups (Kafka's names).
struct ConsumerGroupConfig {
  bool enabled = true;                   // group.coordinator.rebalance.protocols lists "consumer"
  int32_t session_timeout_ms = 45000;    // group.consumer.session.timeout.ms
  int32_t heartbeat_interval_ms = 5000;  // group.consumer.heartbeat.interval.ms
  int32_t max_size = INT32_MAX;          // group.consumer.max.size
  std::vector<std::string> assignors{"uniform", "range"};  // group.consumer.assignors
};

// Broker settings the coordinator obeys (Kafka config names in comments).
struct CoordinatorConfig {
  int32_t initial_rebalance_delay_ms = 3000;      // group.initial.rebalance.delay.ms
  int32_t max_group_size = INT32_MAX;             // group.max.size
  int32_t min_session_timeout_ms = 6000;          // group.min.session.timeout.ms
  int32_t max_session_timeout_ms = 1800000;       // group.max.session.timeout.ms
  int64_t offsets_retention_ms = 7 * 86400000LL;  // offsets.retention.minutes
  int64_t retention_check_interval_ms = 600000;   // offsets.retention.check.interval.ms
  int32_t new_member_join_timeout_ms = 300000;    // Kafka's fixed 5 minutes
  int32_t max_metadata_bytes = 4096;              // offset.metadata.max.bytes
  ConsumerGroupConfig consumer;
};

// Who sent a request.
struct RequestContext {
  std::string client_id;
  std::string client_host;  // "/127.0.0.1", as Kafka shows it
  int16_t api_version = 0;
};

}  // namespace strata::coordinator
