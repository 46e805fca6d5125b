#pragma once
// AlterPartitionReassignments (key 45), versions 0-1, flexible from v0
// (KIP-455): moves partitions to new replica sets, or cancels a pending move
// (Replicas null); kafka-reassign-partitions --execute / --cancel sends it.
// v1 (KIP-860) adds AllowReplicationFactorChange to the request, and echoes
// it in the response.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct AlterPartitionReassignmentsRequest {
  static constexpr int16_t kApiKey = 45;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 1;
  static constexpr int16_t kFirstFlexible = 0;

  struct Partition {
    int32_t partition_index = 0;
    std::optional<std::vector<int32_t>> replicas;  // null: cancel the pending reassignment
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.nullable_array(replicas, [&](int32_t& r) { io.i32(r); });
      io.tagged_fields();
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(name);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  int32_t timeout_ms = 60000;
  bool allow_replication_factor_change = true;  // v1+; v0 always allows
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(timeout_ms);
    if (v >= 1) io.boolean(allow_replication_factor_change);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const AlterPartitionReassignmentsRequest&) const = default;
};

struct AlterPartitionReassignmentsResponse {
  struct PartitionResult {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.i16(error_code);
      io.nullable_str(error_message);
      io.tagged_fields();
    }
    bool operator==(const PartitionResult&) const = default;
  };
  struct TopicResult {
    std::string name;
    std::vector<PartitionResult> partitions;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(name);
      io.array(partitions, [&](PartitionResult& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const TopicResult&) const = default;
  };

  int32_t throttle_time_ms = 0;
  bool allow_replication_factor_change = true;  // v1+: the request's option, echoed
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::vector<TopicResult> responses;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    if (v >= 1) io.boolean(allow_replication_factor_change);
    io.i16(error_code);
    io.nullable_str(error_message);
    io.array(responses, [&](TopicResult& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const AlterPartitionReassignmentsResponse&) const = default;
};

}  // namespace strata::protocol
