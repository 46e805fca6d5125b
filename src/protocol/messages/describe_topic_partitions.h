#pragma once
// DescribeTopicPartitions (key 75), v0, flexible: the partitions of some or
// all topics with paging (KIP-966), which Kafka 4.x's kafka-topics --describe
// and kafka-reassign-partitions send instead of Metadata. Cursor and
// NextCursor are nullable structs (an int8 marker: -1 null, 1 present).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct TopicPartitionCursor {
  std::string topic_name;
  int32_t partition_index = 0;
  template <class IO>
  void Serde(IO& io, int16_t) {
    io.str(topic_name);
    io.i32(partition_index);
    io.tagged_fields();
  }
  bool operator==(const TopicPartitionCursor&) const = default;
};

template <class IO>
void SerdeNullableCursor(IO& io, std::optional<TopicPartitionCursor>& cursor, int16_t v) {
  int8_t marker = cursor ? 1 : -1;
  io.i8(marker);
  if (marker < 0) {
    cursor.reset();
    return;
  }
  if (!cursor) cursor.emplace();
  cursor->Serde(io, v);
}

struct DescribeTopicPartitionsRequest {
  static constexpr int16_t kApiKey = 75;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  struct Topic {
    std::string name;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };
  std::vector<Topic> topics;  // empty: every topic
  int32_t response_partition_limit = 2000;
  std::optional<TopicPartitionCursor> cursor;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.i32(response_partition_limit);
    SerdeNullableCursor(io, cursor, v);
    io.tagged_fields();
  }
  bool operator==(const DescribeTopicPartitionsRequest&) const = default;
};

struct DescribeTopicPartitionsResponse {
  struct Partition {
    int16_t error_code = 0;
    int32_t partition_index = 0;
    int32_t leader_id = -1;
    int32_t leader_epoch = -1;
    std::vector<int32_t> replica_nodes;
    std::vector<int32_t> isr_nodes;
    // Nullable in the schema, but the Java tools call .stream() on them:
    // always sent as arrays (empty: no ELR).
    std::optional<std::vector<int32_t>> eligible_leader_replicas = std::vector<int32_t>{};
    std::optional<std::vector<int32_t>> last_known_elr = std::vector<int32_t>{};
    std::vector<int32_t> offline_replicas;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i16(error_code);
      io.i32(partition_index);
      io.i32(leader_id);
      io.i32(leader_epoch);
      io.array(replica_nodes);
      io.array(isr_nodes);
      io.nullable_array(eligible_leader_replicas, [&](int32_t& id) { io.i32(id); });
      io.nullable_array(last_known_elr, [&](int32_t& id) { io.i32(id); });
      io.array(offline_replicas);
      io.tagged_fields();
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    int16_t error_code = 0;
    std::optional<std::string> name;
    Uuid topic_id{};
    bool is_internal = false;
    std::vector<Partition> partitions;
    int32_t topic_authorized_operations = INT32_MIN;  // not requested
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.nullable_str(name);
      io.uuid(topic_id);
      io.boolean(is_internal);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      io.i32(topic_authorized_operations);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<Topic> topics;
  std::optional<TopicPartitionCursor> next_cursor;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    SerdeNullableCursor(io, next_cursor, v);
    io.tagged_fields();
  }
  bool operator==(const DescribeTopicPartitionsResponse&) const = default;
};

}  // namespace strata::protocol
