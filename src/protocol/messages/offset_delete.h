#pragma once
// OffsetDelete (key 47), version 0 only, never flexible (kFirstFlexible is
// beyond kMaxVersion so IsFlexible<> is always false).
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct OffsetDeleteRequest {
  static constexpr int16_t kApiKey = 47;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 100;

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
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.str(group_id);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const OffsetDeleteRequest&) const = default;
};

struct OffsetDeleteResponse {
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

  int16_t error_code = 0;
  int32_t throttle_time_ms = 0;
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i16(error_code);
    io.i32(throttle_time_ms);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const OffsetDeleteResponse&) const = default;
};

}  // namespace strata::protocol
