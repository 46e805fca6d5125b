#pragma once
// AlterConfigs (key 33), versions 0-2, flexible from v2. Replaces the whole
// config of each resource (see IncrementalAlterConfigs for per-key edits).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct AlterConfigsRequest {
  static constexpr int16_t kApiKey = 33;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 2;
  static constexpr int16_t kFirstFlexible = 2;

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
  struct Resource {
    int8_t resource_type = 0;
    std::string resource_name;
    std::vector<Config> configs;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i8(resource_type);
      io.str(resource_name);
      io.array(configs, [&](Config& c) { c.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Resource&) const = default;
  };

  std::vector<Resource> resources;
  bool validate_only = false;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(resources, [&](Resource& r) { r.Serde(io, v); });
    io.boolean(validate_only);
    io.tagged_fields();
  }
  bool operator==(const AlterConfigsRequest&) const = default;
};

// Per-resource outcome; shared with IncrementalAlterConfigsResponse, whose
// layout is identical.
struct AlterConfigsResourceResponse {
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  int8_t resource_type = 0;
  std::string resource_name;
  template <class IO>
  void Serde(IO& io, int16_t) {
    io.i16(error_code);
    io.nullable_str(error_message);
    io.i8(resource_type);
    io.str(resource_name);
    io.tagged_fields();
  }
  bool operator==(const AlterConfigsResourceResponse&) const = default;
};

struct AlterConfigsResponse {
  int32_t throttle_time_ms = 0;
  std::vector<AlterConfigsResourceResponse> responses;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(responses, [&](AlterConfigsResourceResponse& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const AlterConfigsResponse&) const = default;
};

}  // namespace strata::protocol
