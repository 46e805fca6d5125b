#pragma once
// SyncGroup (key 14), versions 0-5, flexible from v4. The leader sends every
// member's assignment; each member receives its own.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct SyncGroupRequest {
  static constexpr int16_t kApiKey = 14;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 5;
  static constexpr int16_t kFirstFlexible = 4;

  struct Assignment {
    std::string member_id;
    Bytes assignment;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(member_id);
      io.bytes(assignment);
      io.tagged_fields();
    }
    bool operator==(const Assignment&) const = default;
  };

  std::string group_id;
  int32_t generation_id = 0;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v3+
  std::optional<std::string> protocol_type;      // v5+
  std::optional<std::string> protocol_name;      // v5+
  std::vector<Assignment> assignments;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.str(group_id);
    io.i32(generation_id);
    io.str(member_id);
    if (v >= 3) io.nullable_str(group_instance_id);
    if (v >= 5) {
      io.nullable_str(protocol_type);
      io.nullable_str(protocol_name);
    }
    io.array(assignments, [&](Assignment& a) { a.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const SyncGroupRequest&) const = default;
};

struct SyncGroupResponse {
  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  std::optional<std::string> protocol_type;  // v5+
  std::optional<std::string> protocol_name;  // v5+
  Bytes assignment;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 1) io.i32(throttle_time_ms);
    io.i16(error_code);
    if (v >= 5) {
      io.nullable_str(protocol_type);
      io.nullable_str(protocol_name);
    }
    io.bytes(assignment);
    io.tagged_fields();
  }
  bool operator==(const SyncGroupResponse&) const = default;
};

}  // namespace strata::protocol
