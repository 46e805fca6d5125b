#pragma once
// Heartbeat (key 12), versions 0-4, flexible from v4.
#include <cstdint>
#include <optional>
#include <string>

#include "protocol/wire.h"

namespace strata::protocol {

struct HeartbeatRequest {
  static constexpr int16_t kApiKey = 12;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 4;
  static constexpr int16_t kFirstFlexible = 4;

  std::string group_id;
  int32_t generation_id = 0;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v3+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.str(group_id);
    io.i32(generation_id);
    io.str(member_id);
    if (v >= 3) io.nullable_str(group_instance_id);
    io.tagged_fields();
  }
  bool operator==(const HeartbeatRequest&) const = default;
};

struct HeartbeatResponse {
  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 1) io.i32(throttle_time_ms);
    io.i16(error_code);
    io.tagged_fields();
  }
  bool operator==(const HeartbeatResponse&) const = default;
};

}  // namespace strata::protocol
