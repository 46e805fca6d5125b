#pragma once
// ConsumerGroupHeartbeat (key 68, versions 0-1, flexible): the one request of
// KIP-848's consumer group protocol. A member joins (epoch 0), heartbeats at
// its epoch, leaves (-1) or, static, steps out to rejoin (-2); fields left
// null did not change since its last heartbeat. The answer carries its
// epoch and, when it changed, the partitions it may use now. Version 1 adds
// the regular-expression subscription, and the member makes its own id.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

// The partitions of one topic, by id (KIP-848 names topics by id only).
struct ConsumerGroupTopicPartitions {
  Uuid topic_id{};
  std::vector<int32_t> partitions;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.uuid(topic_id);
    io.array(partitions);
    io.tagged_fields();
  }
  bool operator==(const ConsumerGroupTopicPartitions&) const = default;
};

struct ConsumerGroupHeartbeatRequest {
  static constexpr int16_t kApiKey = 68;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 1;
  static constexpr int16_t kFirstFlexible = 0;

  std::string group_id;
  std::string member_id;
  int32_t member_epoch = 0;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  int32_t rebalance_timeout_ms = -1;
  std::optional<std::vector<std::string>> subscribed_topic_names;
  std::optional<std::string> subscribed_topic_regex;  // v1+
  std::optional<std::string> server_assignor;
  std::optional<std::vector<ConsumerGroupTopicPartitions>> topic_partitions;

  template <class IO>
  void Serde(IO& io, int16_t version) {
    io.str(group_id);
    io.str(member_id);
    io.i32(member_epoch);
    io.nullable_str(instance_id);
    io.nullable_str(rack_id);
    io.i32(rebalance_timeout_ms);
    io.nullable_array(subscribed_topic_names, [&](std::string& t) { io.str(t); });
    if (version >= 1) io.nullable_str(subscribed_topic_regex);
    io.nullable_str(server_assignor);
    io.nullable_array(topic_partitions,
                      [&](ConsumerGroupTopicPartitions& t) { t.Serde(io, version); });
    io.tagged_fields();
  }
  bool operator==(const ConsumerGroupHeartbeatRequest&) const = default;
};

struct ConsumerGroupHeartbeatResponse {
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::optional<std::string> member_id;
  int32_t member_epoch = 0;
  int32_t heartbeat_interval_ms = 0;
  // nullopt: the assignment did not change since the last answer.
  std::optional<std::vector<ConsumerGroupTopicPartitions>> assignment;

  template <class IO>
  void Serde(IO& io, int16_t version) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.nullable_str(error_message);
    io.nullable_str(member_id);
    io.i32(member_epoch);
    io.i32(heartbeat_interval_ms);
    // A nullable struct: -1 for null, 1 before its fields.
    int8_t present = assignment ? 1 : -1;
    io.i8(present);
    if (present >= 0) {
      if (!assignment) assignment.emplace();
      io.array(*assignment, [&](ConsumerGroupTopicPartitions& t) { t.Serde(io, version); });
      io.tagged_fields();
    }
    io.tagged_fields();
  }
  bool operator==(const ConsumerGroupHeartbeatResponse&) const = default;
};

}  // namespace strata::protocol
