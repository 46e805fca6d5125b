#pragma once
// DescribeLogDirs (key 35), versions 0-4, flexible from v2 (KIP-113): the
// broker's log directories and the replicas in each, with their sizes;
// kafka-log-dirs --describe sends it to every broker. v3 adds the top-level
// ErrorCode, v4 each directory's volume TotalBytes and UsableBytes (KIP-827).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct DescribeLogDirsRequest {
  static constexpr int16_t kApiKey = 35;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 4;
  static constexpr int16_t kFirstFlexible = 2;

  struct Topic {
    std::string topic;
    std::vector<int32_t> partitions;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(topic);
      io.array(partitions);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  std::optional<std::vector<Topic>> topics;  // null: every topic

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.nullable_array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeLogDirsRequest&) const = default;
};

struct DescribeLogDirsResponse {
  struct Partition {
    int32_t partition_index = 0;
    int64_t partition_size = 0;  // bytes of the log's segments
    int64_t offset_lag = 0;      // behind the high watermark (or, future logs, the current log)
    bool is_future_key = false;  // a log AlterReplicaLogDirs is moving here
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.i64(partition_size);
      io.i64(offset_lag);
      io.boolean(is_future_key);
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
  struct Result {
    int16_t error_code = 0;
    std::string log_dir;  // absolute path
    std::vector<Topic> topics;
    int64_t total_bytes = -1;   // v4+: the volume's size, -1 unknown
    int64_t usable_bytes = -1;  // v4+: what is free for the broker, -1 unknown
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.str(log_dir);
      io.array(topics, [&](Topic& t) { t.Serde(io, v); });
      if (v >= 4) {
        io.i64(total_bytes);
        io.i64(usable_bytes);
      }
      io.tagged_fields();
    }
    bool operator==(const Result&) const = default;
  };

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;  // v3+
  std::vector<Result> results;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    if (v >= 3) io.i16(error_code);
    io.array(results, [&](Result& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeLogDirsResponse&) const = default;
};

}  // namespace strata::protocol
