#pragma once
// DescribeQuorum (key 55): the metadata quorum's health, which
// kafka-metadata-quorum prints. Flexible in every version; v1 adds the
// replicas' fetch timestamps (KIP-836).
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct DescribeQuorumRequest {
  static constexpr int16_t kApiKey = 55;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 1;
  static constexpr int16_t kFirstFlexible = 0;

  struct Partition {
    int32_t partition_index = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.tagged_fields();
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string topic_name;
    std::vector<Partition> partitions;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(topic_name);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeQuorumRequest&) const = default;
};

struct DescribeQuorumResponse {
  struct ReplicaState {
    int32_t replica_id = 0;
    int64_t log_end_offset = -1;
    int64_t last_fetch_timestamp = -1;      // v1+
    int64_t last_caught_up_timestamp = -1;  // v1+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(replica_id);
      io.i64(log_end_offset);
      if (v >= 1) {
        io.i64(last_fetch_timestamp);
        io.i64(last_caught_up_timestamp);
      }
      io.tagged_fields();
    }
    bool operator==(const ReplicaState&) const = default;
  };
  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    int32_t leader_id = -1;
    int32_t leader_epoch = -1;
    int64_t high_watermark = -1;
    std::vector<ReplicaState> current_voters;
    std::vector<ReplicaState> observers;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition_index);
      io.i16(error_code);
      io.i32(leader_id);
      io.i32(leader_epoch);
      io.i64(high_watermark);
      io.array(current_voters, [&](ReplicaState& r) { r.Serde(io, v); });
      io.array(observers, [&](ReplicaState& r) { r.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string topic_name;
    std::vector<Partition> partitions;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(topic_name);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };
  int16_t error_code = 0;
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i16(error_code);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeQuorumResponse&) const = default;
};

}  // namespace strata::protocol
