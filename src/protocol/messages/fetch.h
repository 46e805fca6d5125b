#pragma once
// Fetch (key 1), versions 4-12, flexible from v12. Tagged fields (cluster id,
// diverging epoch, current leader, snapshot id) are skipped on decode and not
// emitted. Response records point into the response buffer / request buffer.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/isolation_level.h"
#include "protocol/messages/field_helpers.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct FetchRequest {
  static constexpr int16_t kApiKey = 1;
  static constexpr int16_t kMinVersion = 4;
  static constexpr int16_t kMaxVersion = 12;
  static constexpr int16_t kFirstFlexible = 12;

  struct Partition {
    int32_t partition = 0;
    int32_t current_leader_epoch = -1;  // v9+
    int64_t fetch_offset = 0;
    int32_t last_fetched_epoch = -1;  // v12+
    int64_t log_start_offset = -1;    // v5+
    int32_t partition_max_bytes = 0;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition);
      if (v >= 9) io.i32(current_leader_epoch);
      io.i64(fetch_offset);
      if (v >= 12) io.i32(last_fetched_epoch);
      if (v >= 5) io.i64(log_start_offset);
      io.i32(partition_max_bytes);
      io.tagged_fields();
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string topic;  // v0-12 (v13+ would use a topic id)
    std::vector<Partition> partitions;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(topic);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };
  struct ForgottenTopic {
    std::string topic;
    std::vector<int32_t> partitions;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(topic);
      io.array(partitions);
      io.tagged_fields();
    }
    bool operator==(const ForgottenTopic&) const = default;
  };

  int32_t replica_id = -1;  // v0-14
  int32_t max_wait_ms = 0;
  int32_t min_bytes = 0;
  int32_t max_bytes = 0x7fffffff;             // v3+
  int8_t isolation_level = kReadUncommitted;  // v4+
  int32_t session_id = 0;                     // v7+
  int32_t session_epoch = -1;                 // v7+
  std::vector<Topic> topics;
  std::vector<ForgottenTopic> forgotten_topics_data;  // v7+
  std::string rack_id;                                // v11+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(replica_id);
    io.i32(max_wait_ms);
    io.i32(min_bytes);
    if (v >= 3) io.i32(max_bytes);
    if (v >= 4) io.i8(isolation_level);
    if (v >= 7) {
      io.i32(session_id);
      io.i32(session_epoch);
    }
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    if (v >= 7) io.array(forgotten_topics_data, [&](ForgottenTopic& t) { t.Serde(io, v); });
    if (v >= 11) io.str(rack_id);
    io.tagged_fields();
  }
  bool operator==(const FetchRequest&) const = default;
};

struct FetchResponse {
  struct AbortedTransaction {
    int64_t producer_id = 0;
    int64_t first_offset = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i64(producer_id);
      io.i64(first_offset);
      io.tagged_fields();
    }
    bool operator==(const AbortedTransaction&) const = default;
  };
  // Where a follower's log diverges from the leader's (KIP-320): the
  // largest leader epoch <= the follower's last fetched epoch, and its end.
  struct EpochEndOffset {
    int32_t epoch = -1;
    int64_t end_offset = -1;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(epoch);
      io.i64(end_offset);
      io.tagged_fields();
    }
    bool operator==(const EpochEndOffset&) const = default;
  };
  using LeaderIdAndEpoch = protocol::LeaderIdAndEpoch;  // KIP-951
  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    int64_t high_watermark = 0;
    int64_t last_stable_offset = -1;                                      // v4+
    int64_t log_start_offset = -1;                                        // v5+
    std::optional<std::vector<AbortedTransaction>> aborted_transactions;  // v4+, nullable
    int32_t preferred_read_replica = -1;                                  // v11+
    RecordsField records;                                                 // nullable
    std::optional<EpochEndOffset> diverging_epoch;                        // v12+, tag 0
    std::optional<LeaderIdAndEpoch> current_leader;                       // v12+, tag 1
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition_index);
      io.i16(error_code);
      io.i64(high_watermark);
      if (v >= 4) io.i64(last_stable_offset);
      if (v >= 5) io.i64(log_start_offset);
      if (v >= 4) {
        io.nullable_array(aborted_transactions, [&](AbortedTransaction& a) { a.Serde(io, v); });
      }
      if (v >= 11) io.i32(preferred_read_replica);
      io.records(records);
      io.tagged_fields(
          0, diverging_epoch, [&](auto& sub, EpochEndOffset& e) { e.Serde(sub, v); }, 1,
          current_leader, [&](auto& sub, LeaderIdAndEpoch& l) { l.Serde(sub, v); });
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string topic;  // v0-12
    std::vector<Partition> partitions;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(topic);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;        // v7+
  int32_t session_id = 0;        // v7+
  std::vector<Topic> responses;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 1) io.i32(throttle_time_ms);
    if (v >= 7) {
      io.i16(error_code);
      io.i32(session_id);
    }
    io.array(responses, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const FetchResponse&) const = default;
};

}  // namespace strata::protocol
