#pragma once
// CreatePartitions (key 37), versions 0-3, flexible from v2. `count` is the
// new total partition count; assignments (nullable) give the replicas of each
// new partition.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct CreatePartitionsRequest {
  static constexpr int16_t kApiKey = 37;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 3;
  static constexpr int16_t kFirstFlexible = 2;

  struct Assignment {
    std::vector<int32_t> broker_ids;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.array(broker_ids);
      io.tagged_fields();
    }
    bool operator==(const Assignment&) const = default;
  };
  struct Topic {
    std::string name;
    int32_t count = 0;
    std::optional<std::vector<Assignment>> assignments;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(name);
      io.i32(count);
      io.nullable_array(assignments, [&](Assignment& a) { a.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  std::vector<Topic> topics;
  int32_t timeout_ms = 0;
  bool validate_only = false;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.i32(timeout_ms);
    io.boolean(validate_only);
    io.tagged_fields();
  }
  bool operator==(const CreatePartitionsRequest&) const = default;
};

struct CreatePartitionsResponse {
  struct TopicResult {
    std::string name;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.i16(error_code);
      io.nullable_str(error_message);
      io.tagged_fields();
    }
    bool operator==(const TopicResult&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<TopicResult> results;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(results, [&](TopicResult& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const CreatePartitionsResponse&) const = default;
};

}  // namespace strata::protocol
