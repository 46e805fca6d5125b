#pragma once
// FindCoordinator (key 10), versions 0-4, flexible from v3. v4 batches:
// coordinator_keys in the request and one entry per key in the response
// (KIP-699); v0-3 carry a single key and flat response fields.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct FindCoordinatorRequest {
  static constexpr int16_t kApiKey = 10;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 4;
  static constexpr int16_t kFirstFlexible = 3;

  std::string key;                            // v0-3
  int8_t key_type = 0;                        // v1+; 0 group, 1 transaction
  std::vector<std::string> coordinator_keys;  // v4+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v <= 3) io.str(key);
    if (v >= 1) io.i8(key_type);
    if (v >= 4) io.array(coordinator_keys);
    io.tagged_fields();
  }
  bool operator==(const FindCoordinatorRequest&) const = default;
};

struct FindCoordinatorResponse {
  struct Coordinator {
    std::string key;
    int32_t node_id = 0;
    std::string host;
    int32_t port = 0;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(key);
      io.i32(node_id);
      io.str(host);
      io.i32(port);
      io.i16(error_code);
      io.nullable_str(error_message);
      io.tagged_fields();
    }
    bool operator==(const Coordinator&) const = default;
  };

  int32_t throttle_time_ms = 0;              // v1+
  int16_t error_code = 0;                    // v0-3
  std::optional<std::string> error_message;  // v1-3
  int32_t node_id = 0;                       // v0-3
  std::string host;                          // v0-3
  int32_t port = 0;                          // v0-3
  std::vector<Coordinator> coordinators;     // v4+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 1) io.i32(throttle_time_ms);
    if (v <= 3) {
      io.i16(error_code);
      if (v >= 1) io.nullable_str(error_message);
      io.i32(node_id);
      io.str(host);
      io.i32(port);
    }
    if (v >= 4) io.array(coordinators, [&](Coordinator& c) { c.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const FindCoordinatorResponse&) const = default;
};

}  // namespace strata::protocol
