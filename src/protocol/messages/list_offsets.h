#pragma once
// ListOffsets (key 2), versions 0-9, flexible from v6. v0 asks for up to
// max_num_offsets offsets and answers with old_style_offsets; v1+ carries a
// single timestamp/offset pair.
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/isolation_level.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct ListOffsetsRequest {
  static constexpr int16_t kApiKey = 2;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 9;
  static constexpr int16_t kFirstFlexible = 6;

  struct Partition {
    int32_t partition_index = 0;
    int32_t current_leader_epoch = -1;  // v4+
    int64_t timestamp = 0;
    int32_t max_num_offsets = 1;  // v0 only
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition_index);
      if (v >= 4) io.i32(current_leader_epoch);
      io.i64(timestamp);
      if (v == 0) io.i32(max_num_offsets);
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

  int32_t replica_id = -1;
  int8_t isolation_level = kReadUncommitted;  // v2+
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(replica_id);
    if (v >= 2) io.i8(isolation_level);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const ListOffsetsRequest&) const = default;
};

struct ListOffsetsResponse {
  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    std::vector<int64_t> old_style_offsets;  // v0 only
    int64_t timestamp = -1;                  // v1+
    int64_t offset = -1;                     // v1+
    int32_t leader_epoch = -1;               // v4+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition_index);
      io.i16(error_code);
      if (v == 0) io.array(old_style_offsets);
      if (v >= 1) {
        io.i64(timestamp);
        io.i64(offset);
      }
      if (v >= 4) io.i32(leader_epoch);
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

  int32_t throttle_time_ms = 0;  // v2+
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 2) io.i32(throttle_time_ms);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const ListOffsetsResponse&) const = default;
};

}  // namespace strata::protocol
