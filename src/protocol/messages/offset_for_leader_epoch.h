#pragma once
// OffsetForLeaderEpoch (key 23), versions 0-4, flexible from v4. Used by
// consumers (replica_id -1) and followers to find where an epoch ended.
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct OffsetForLeaderEpochRequest {
  static constexpr int16_t kApiKey = 23;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 4;
  static constexpr int16_t kFirstFlexible = 4;

  struct Partition {
    int32_t partition = 0;
    int32_t current_leader_epoch = -1;  // v2+
    int32_t leader_epoch = 0;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition);
      if (v >= 2) io.i32(current_leader_epoch);
      io.i32(leader_epoch);
      io.tagged_fields();
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string topic;
    std::vector<Partition> partitions;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(topic);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  int32_t replica_id = -2;  // v3+; -1 consumer, -2 debug
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 3) io.i32(replica_id);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const OffsetForLeaderEpochRequest&) const = default;
};

struct OffsetForLeaderEpochResponse {
  struct Partition {
    int16_t error_code = 0;
    int32_t partition = 0;
    int32_t leader_epoch = -1;  // v1+
    int64_t end_offset = -1;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.i32(partition);
      if (v >= 1) io.i32(leader_epoch);
      io.i64(end_offset);
      io.tagged_fields();
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string topic;
    std::vector<Partition> partitions;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(topic);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  int32_t throttle_time_ms = 0;  // v2+
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 2) io.i32(throttle_time_ms);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const OffsetForLeaderEpochResponse&) const = default;
};

}  // namespace strata::protocol
