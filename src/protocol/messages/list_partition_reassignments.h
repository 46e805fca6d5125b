#pragma once
// ListPartitionReassignments (key 46), version 0, flexible (KIP-455): the
// reassignments in progress, for some partitions or for all (Topics null);
// kafka-reassign-partitions --verify / --list sends it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct ListPartitionReassignmentsRequest {
  static constexpr int16_t kApiKey = 46;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  struct Topic {
    std::string name;
    std::vector<int32_t> partition_indexes;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.array(partition_indexes);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  int32_t timeout_ms = 60000;
  std::optional<std::vector<Topic>> topics;  // null: every reassignment in progress

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(timeout_ms);
    io.nullable_array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const ListPartitionReassignmentsRequest&) const = default;
};

struct ListPartitionReassignmentsResponse {
  struct Partition {
    int32_t partition_index = 0;
    std::vector<int32_t> replicas;           // the current replica set
    std::vector<int32_t> adding_replicas;    // being added
    std::vector<int32_t> removing_replicas;  // being removed
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.array(replicas);
      io.array(adding_replicas);
      io.array(removing_replicas);
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

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.nullable_str(error_message);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const ListPartitionReassignmentsResponse&) const = default;
};

}  // namespace strata::protocol
