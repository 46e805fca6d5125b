#pragma once
// IncrementalAlterConfigs (key 44), versions 0-1, flexible from v1. Each
// config carries an operation: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages/alter_configs.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct IncrementalAlterConfigsRequest {
  static constexpr int16_t kApiKey = 44;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 1;
  static constexpr int16_t kFirstFlexible = 1;

  struct Config {
    std::string name;
    int8_t config_operation = 0;
    std::optional<std::string> value;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.i8(config_operation);
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
  bool operator==(const IncrementalAlterConfigsRequest&) const = default;
};

struct IncrementalAlterConfigsResponse {
  int32_t throttle_time_ms = 0;
  std::vector<AlterConfigsResourceResponse> responses;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(responses, [&](AlterConfigsResourceResponse& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const IncrementalAlterConfigsResponse&) const = default;
};

}  // namespace strata::protocol
