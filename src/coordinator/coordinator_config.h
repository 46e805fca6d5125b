#pragma once
// What the group coordinator is configured with and told of each request.
#include <cstdint>
#include <string>

namespace strata::coordinator {

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
};

// Who sent a request.
struct RequestContext {
  std::string client_id;
  std::string client_host;  // "/127.0.0.1", as Kafka shows it
  int16_t api_version = 0;
};

}  // namespace strata::coordinator
