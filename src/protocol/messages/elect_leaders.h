#pragma once
// ElectLeaders (key 43), versions 0-2, flexible from v2: preferred (0) or
// unclean (1, v1+) leader elections for some partitions, or for all
// (TopicPartitions null); kafka-leader-election sends it. v1+ adds the
// top-level error code.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct ElectLeadersRequest {
  static constexpr int16_t kApiKey = 43;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 2;
  static constexpr int16_t kFirstFlexible = 2;

  struct TopicPartitions {
    std::string topic;
    std::vector<int32_t> partition_ids;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(topic);
      io.array(partition_ids);
      io.tagged_fields();
    }
    bool operator==(const TopicPartitions&) const = default;
  };

  int8_t election_type = 0;                                      // v1+; v0 is always preferred
  std::optional<std::vector<TopicPartitions>> topic_partitions;  // null: all partitions
  int32_t timeout_ms = 60000;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 1) io.i8(election_type);
    io.nullable_array(topic_partitions, [&](TopicPartitions& t) { t.Serde(io, v); });
    io.i32(timeout_ms);
    io.tagged_fields();
  }
  bool operator==(const ElectLeadersRequest&) const = default;
};

struct ElectLeadersResponse {
  struct PartitionResult {
    int32_t partition_id = 0;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_id);
      io.i16(error_code);
      io.nullable_str(error_message);
      io.tagged_fields();
    }
    bool operator==(const PartitionResult&) const = default;
  };
  struct ReplicaElectionResult {
    std::string topic;
    std::vector<PartitionResult> partition_results;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(topic);
      io.array(partition_results, [&](PartitionResult& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const ReplicaElectionResult&) const = default;
  };

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;  // v1+
  std::vector<ReplicaElectionResult> replica_election_results;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    if (v >= 1) io.i16(error_code);
    io.array(replica_election_results, [&](ReplicaElectionResult& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const ElectLeadersResponse&) const = default;
};

}  // namespace strata::protocol
