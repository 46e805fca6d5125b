#pragma once
// DescribeCluster (key 60), versions 0-1, flexible from v0 (KIP-700).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct DescribeClusterRequest {
  static constexpr int16_t kApiKey = 60;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 2;
  static constexpr int16_t kFirstFlexible = 0;

  bool include_cluster_authorized_operations = false;
  int8_t endpoint_type = 1;  // v1+; 1 brokers, 2 controllers
  bool include_fenced_brokers = false;  // v2+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.boolean(include_cluster_authorized_operations);
    if (v >= 1) io.i8(endpoint_type);
    if (v >= 2) io.boolean(include_fenced_brokers);
    io.tagged_fields();
  }
  bool operator==(const DescribeClusterRequest&) const = default;
};

struct DescribeClusterResponse {
  struct Broker {
    int32_t broker_id = 0;
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;
    bool is_fenced = false;  // v2+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(broker_id);
      io.str(host);
      io.i32(port);
      io.nullable_str(rack);
      if (v >= 2) io.boolean(is_fenced);
      io.tagged_fields();
    }
    bool operator==(const Broker&) const = default;
  };

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  int8_t endpoint_type = 1;  // v1+
  std::string cluster_id;
  int32_t controller_id = -1;
  std::vector<Broker> brokers;
  int32_t cluster_authorized_operations = INT32_MIN;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.nullable_str(error_message);
    if (v >= 1) io.i8(endpoint_type);
    io.str(cluster_id);
    io.i32(controller_id);
    io.array(brokers, [&](Broker& b) { b.Serde(io, v); });
    io.i32(cluster_authorized_operations);
    io.tagged_fields();
  }
  bool operator==(const DescribeClusterResponse&) const = default;
};

}  // namespace strata::protocol
