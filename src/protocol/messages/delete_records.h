#pragma once
// DeleteRecords (key 21), versions 0-2, flexible from v2.
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct DeleteRecordsRequest {
  static constexpr int16_t kApiKey = 21;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 2;
  static constexpr int16_t kFirstFlexible = 2;

  struct Partition {
    int32_t partition_index = 0;
    int64_t offset = 0;  // delete before this offset; -1 = high watermark
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.i64(offset);
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

  std::vector<Topic> topics;
  int32_t timeout_ms = 0;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.i32(timeout_ms);
    io.tagged_fields();
  }
  bool operator==(const DeleteRecordsRequest&) const = default;
};

struct DeleteRecordsResponse {
  struct Partition {
    int32_t partition_index = 0;
    int64_t low_watermark = 0;
    int16_t error_code = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.i64(low_watermark);
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
  bool operator==(const DeleteRecordsResponse&) const = default;
};

}  // namespace strata::protocol
