#pragma once
// CreateTopics (key 19), versions 0-7, flexible from v5. The response's
// topic_config_error_code (tag 0, v5+) is a tagged field and is not carried.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct CreateTopicsRequest {
  static constexpr int16_t kApiKey = 19;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 7;
  static constexpr int16_t kFirstFlexible = 5;

  struct Assignment {
    int32_t partition_index = 0;
    std::vector<int32_t> broker_ids;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.array(broker_ids);
      io.tagged_fields();
    }
    bool operator==(const Assignment&) const = default;
  };
  struct Config {
    std::string name;
    std::optional<std::string> value;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.nullable_str(value);
      io.tagged_fields();
    }
    bool operator==(const Config&) const = default;
  };
  struct Topic {
    std::string name;
    int32_t num_partitions = -1;      // -1: broker default (with assignments empty)
    int16_t replication_factor = -1;  // -1: broker default
    std::vector<Assignment> assignments;
    std::vector<Config> configs;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(name);
      io.i32(num_partitions);
      io.i16(replication_factor);
      io.array(assignments, [&](Assignment& a) { a.Serde(io, v); });
      io.array(configs, [&](Config& c) { c.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  std::vector<Topic> topics;
  int32_t timeout_ms = 60000;
  bool validate_only = false;  // v1+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.i32(timeout_ms);
    if (v >= 1) io.boolean(validate_only);
    io.tagged_fields();
  }
  bool operator==(const CreateTopicsRequest&) const = default;
};

struct CreateTopicsResponse {
  struct Config {
    std::string name;
    std::optional<std::string> value;
    bool read_only = false;
    int8_t config_source = -1;
    bool is_sensitive = false;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.nullable_str(value);
      io.boolean(read_only);
      io.i8(config_source);
      io.boolean(is_sensitive);
      io.tagged_fields();
    }
    bool operator==(const Config&) const = default;
  };
  struct Topic {
    std::string name;
    Uuid topic_id{};  // v7+
    int16_t error_code = 0;
    std::optional<std::string> error_message;    // v1+
    int32_t num_partitions = -1;                 // v5+
    int16_t replication_factor = -1;             // v5+
    std::optional<std::vector<Config>> configs;  // v5+, nullable
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(name);
      if (v >= 7) io.uuid(topic_id);
      io.i16(error_code);
      if (v >= 1) io.nullable_str(error_message);
      if (v >= 5) {
        io.i32(num_partitions);
        io.i16(replication_factor);
        io.nullable_array(configs, [&](Config& c) { c.Serde(io, v); });
      }
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
  bool operator==(const CreateTopicsResponse&) const = default;
};

}  // namespace strata::protocol
