#pragma once
// OffsetCommit (key 8), versions 0-9, flexible from v8 (v9 is v8's layout:
// its generation is a KIP-848 member epoch, answered STALE_MEMBER_EPOCH). v1 carries a commit
// timestamp per partition, v2-4 a group-wide retention time; both are gone
// from v5 on.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct OffsetCommitRequest {
  static constexpr int16_t kApiKey = 8;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 9;
  static constexpr int16_t kFirstFlexible = 8;

  struct Partition {
    int32_t partition_index = 0;
    int64_t committed_offset = 0;
    int32_t committed_leader_epoch = -1;  // v6+
    int64_t commit_timestamp = -1;        // v1 only
    std::optional<std::string> committed_metadata;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition_index);
      io.i64(committed_offset);
      if (v >= 6) io.i32(committed_leader_epoch);
      if (v == 1) io.i64(commit_timestamp);
      io.nullable_str(committed_metadata);
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

  std::string group_id;
  int32_t generation_id = -1;                    // v1+
  std::string member_id;                         // v1+
  std::optional<std::string> group_instance_id;  // v7+
  int64_t retention_time_ms = -1;                // v2-4
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.str(group_id);
    if (v >= 1) {
      io.i32(generation_id);
      io.str(member_id);
    }
    if (v >= 7) io.nullable_str(group_instance_id);
    if (v >= 2 && v <= 4) io.i64(retention_time_ms);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const OffsetCommitRequest&) const = default;
};

struct OffsetCommitResponse {
  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.i16(error_code);
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

  int32_t throttle_time_ms = 0;  // v3+
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 3) io.i32(throttle_time_ms);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const OffsetCommitResponse&) const = default;
};

}  // namespace strata::protocol
