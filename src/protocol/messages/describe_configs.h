#pragma once
// DescribeConfigs (key 32), versions 0-4, flexible from v4. v1+ adds config
// source and synonyms (v0 has is_default instead); v3+ adds type and docs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct DescribeConfigsRequest {
  static constexpr int16_t kApiKey = 32;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 4;
  static constexpr int16_t kFirstFlexible = 4;

  struct Resource {
    int8_t resource_type = 0;
    std::string resource_name;
    std::optional<std::vector<std::string>> configuration_keys;  // null = all
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i8(resource_type);
      io.str(resource_name);
      io.nullable_array(configuration_keys, [&](std::string& k) { io.str(k); });
      io.tagged_fields();
    }
    bool operator==(const Resource&) const = default;
  };

  std::vector<Resource> resources;
  bool include_synonyms = false;       // v1+
  bool include_documentation = false;  // v3+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(resources, [&](Resource& r) { r.Serde(io, v); });
    if (v >= 1) io.boolean(include_synonyms);
    if (v >= 3) io.boolean(include_documentation);
    io.tagged_fields();
  }
  bool operator==(const DescribeConfigsRequest&) const = default;
};

struct DescribeConfigsResponse {
  struct Synonym {
    std::string name;
    std::optional<std::string> value;
    int8_t source = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.nullable_str(value);
      io.i8(source);
      io.tagged_fields();
    }
    bool operator==(const Synonym&) const = default;
  };
  struct Config {
    std::string name;
    std::optional<std::string> value;
    bool read_only = false;
    bool is_default = false;    // v0 only
    int8_t config_source = -1;  // v1+
    bool is_sensitive = false;
    std::vector<Synonym> synonyms;             // v1+
    int8_t config_type = 0;                    // v3+
    std::optional<std::string> documentation;  // v3+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(name);
      io.nullable_str(value);
      io.boolean(read_only);
      if (v == 0) io.boolean(is_default);
      if (v >= 1) io.i8(config_source);
      io.boolean(is_sensitive);
      if (v >= 1) io.array(synonyms, [&](Synonym& s) { s.Serde(io, v); });
      if (v >= 3) {
        io.i8(config_type);
        io.nullable_str(documentation);
      }
      io.tagged_fields();
    }
    bool operator==(const Config&) const = default;
  };
  struct ResourceResult {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    int8_t resource_type = 0;
    std::string resource_name;
    std::vector<Config> configs;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.nullable_str(error_message);
      io.i8(resource_type);
      io.str(resource_name);
      io.array(configs, [&](Config& c) { c.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const ResourceResult&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<ResourceResult> results;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(results, [&](ResourceResult& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeConfigsResponse&) const = default;
};

}  // namespace strata::protocol
