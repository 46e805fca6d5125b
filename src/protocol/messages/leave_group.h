#pragma once
// LeaveGroup (key 13), versions 0-5, flexible from v4. v0-2 name a single
// member_id; v3+ batch members (KIP-345).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct LeaveGroupRequest {
  static constexpr int16_t kApiKey = 13;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 5;
  static constexpr int16_t kFirstFlexible = 4;

  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::optional<std::string> reason;  // v5+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(member_id);
      io.nullable_str(group_instance_id);
      if (v >= 5) io.nullable_str(reason);
      io.tagged_fields();
    }
    bool operator==(const Member&) const = default;
  };

  std::string group_id;
  std::string member_id;        // v0-2
  std::vector<Member> members;  // v3+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.str(group_id);
    if (v <= 2) io.str(member_id);
    if (v >= 3) io.array(members, [&](Member& m) { m.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const LeaveGroupRequest&) const = default;
};

struct LeaveGroupResponse {
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    int16_t error_code = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(member_id);
      io.nullable_str(group_instance_id);
      io.i16(error_code);
      io.tagged_fields();
    }
    bool operator==(const Member&) const = default;
  };

  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  std::vector<Member> members;  // v3+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 1) io.i32(throttle_time_ms);
    io.i16(error_code);
    if (v >= 3) io.array(members, [&](Member& m) { m.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const LeaveGroupResponse&) const = default;
};

}  // namespace strata::protocol
