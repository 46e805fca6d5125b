#pragma once
// OffsetFetch (key 9), versions 0-9, flexible from v6. v0-7 ask for one group
// (topics null = all, v2+); v8 batches several groups (KIP-709); v9 names the
// KIP-848 member asking, with its epoch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages/field_helpers.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct OffsetFetchRequest {
  static constexpr int16_t kApiKey = 9;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 9;
  static constexpr int16_t kFirstFlexible = 6;

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
  struct Group {
    std::string group_id;
    std::optional<std::string> member_id;      // v9+: a KIP-848 member's own fetch
    int32_t member_epoch = -1;                 // v9+
    std::optional<std::vector<Topic>> topics;  // null = all
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(group_id);
      if (v >= 9) {
        io.nullable_str(member_id);
        io.i32(member_epoch);
      }
      io.nullable_array(topics, [&](Topic& t) { t.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Group&) const = default;
  };

  std::string group_id;                      // v0-7
  std::optional<std::vector<Topic>> topics;  // v0-7, nullable v2-7
  std::vector<Group> groups;                 // v8+
  bool require_stable = false;               // v7+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v <= 7) {
      io.str(group_id);
      ArrayNullableIf(io, topics, v >= 2, [&](Topic& t) { t.Serde(io, v); });
    }
    if (v >= 8) io.array(groups, [&](Group& g) { g.Serde(io, v); });
    if (v >= 7) io.boolean(require_stable);
    io.tagged_fields();
  }
  bool operator==(const OffsetFetchRequest&) const = default;
};

struct OffsetFetchResponse {
  struct Partition {
    int32_t partition_index = 0;
    int64_t committed_offset = -1;
    int32_t committed_leader_epoch = -1;  // v5+
    std::optional<std::string> metadata;
    int16_t error_code = 0;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition_index);
      io.i64(committed_offset);
      if (v >= 5) io.i32(committed_leader_epoch);
      io.nullable_str(metadata);
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
  struct Group {
    std::string group_id;
    std::vector<Topic> topics;
    int16_t error_code = 0;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(group_id);
      io.array(topics, [&](Topic& t) { t.Serde(io, v); });
      io.i16(error_code);
      io.tagged_fields();
    }
    bool operator==(const Group&) const = default;
  };

  int32_t throttle_time_ms = 0;  // v3+
  std::vector<Topic> topics;     // v0-7
  int16_t error_code = 0;        // v2-7
  std::vector<Group> groups;     // v8+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 3) io.i32(throttle_time_ms);
    if (v <= 7) {
      io.array(topics, [&](Topic& t) { t.Serde(io, v); });
      if (v >= 2) io.i16(error_code);
    }
    if (v >= 8) io.array(groups, [&](Group& g) { g.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const OffsetFetchResponse&) const = default;
};

}  // namespace strata::protocol
