#pragma once
// TxnOffsetCommit (key 28), versions 0-5, flexible from v3: a transactional
// producer commits consumer offsets to the group coordinator as part of its
// transaction (they become visible when the transaction commits). v2 adds
// each partition's committed leader epoch, v3 the consumer's generation,
// member id and group instance id (KIP-447). v4 adds TRANSACTION_ABORTABLE as
// a possible error; v5 has v4's bytes but means transaction version 2: the
// coordinator adds the offsets partition to the transaction itself (no
// AddOffsetsToTxn).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct TxnOffsetCommitRequest {
  static constexpr int16_t kApiKey = 28;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 5;
  static constexpr int16_t kFirstFlexible = 3;

  struct Partition {
    int32_t partition_index = 0;
    int64_t committed_offset = 0;
    int32_t committed_leader_epoch = -1;  // v2+
    std::optional<std::string> committed_metadata;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition_index);
      io.i64(committed_offset);
      if (v >= 2) io.i32(committed_leader_epoch);
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

  std::string transactional_id;
  std::string group_id;
  int64_t producer_id = 0;
  int16_t producer_epoch = 0;
  int32_t generation_id = -1;                    // v3+
  std::string member_id;                         // v3+
  std::optional<std::string> group_instance_id;  // v3+
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.str(transactional_id);
    io.str(group_id);
    io.i64(producer_id);
    io.i16(producer_epoch);
    if (v >= 3) {
      io.i32(generation_id);
      io.str(member_id);
      io.nullable_str(group_instance_id);
    }
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const TxnOffsetCommitRequest&) const = default;
};

struct TxnOffsetCommitResponse {
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

  int32_t throttle_time_ms = 0;
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const TxnOffsetCommitResponse&) const = default;
};

}  // namespace strata::protocol
