#pragma once
// JoinGroup (key 11), versions 0-9, flexible from v6.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "protocol/messages/field_helpers.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct JoinGroupRequest {
  static constexpr int16_t kApiKey = 11;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 9;
  static constexpr int16_t kFirstFlexible = 6;

  struct Protocol {
    std::string name;
    Bytes metadata;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.bytes(metadata);
      io.tagged_fields();
    }
    bool operator==(const Protocol&) const = default;
  };

  std::string group_id;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = -1;  // v1+
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v5+
  std::string protocol_type;
  std::vector<Protocol> protocols;
  std::optional<std::string> reason;  // v8+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.str(group_id);
    io.i32(session_timeout_ms);
    if (v >= 1) io.i32(rebalance_timeout_ms);
    io.str(member_id);
    if (v >= 5) io.nullable_str(group_instance_id);
    io.str(protocol_type);
    io.array(protocols, [&](Protocol& p) { p.Serde(io, v); });
    if (v >= 8) io.nullable_str(reason);
    io.tagged_fields();
  }
  bool operator==(const JoinGroupRequest&) const = default;
};

struct JoinGroupResponse {
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;  // v5+
    Bytes metadata;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(member_id);
      if (v >= 5) io.nullable_str(group_instance_id);
      io.bytes(metadata);
      io.tagged_fields();
    }
    bool operator==(const Member&) const = default;
  };

  int32_t throttle_time_ms = 0;  // v2+
  int16_t error_code = 0;
  int32_t generation_id = -1;
  std::optional<std::string> protocol_type;  // v7+
  std::optional<std::string> protocol_name;  // nullable v7+
  std::string leader;
  bool skip_assignment = false;  // v9+
  std::string member_id;
  std::vector<Member> members;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 2) io.i32(throttle_time_ms);
    io.i16(error_code);
    io.i32(generation_id);
    if (v >= 7) io.nullable_str(protocol_type);
    StrNullableIf(io, protocol_name, v >= 7);
    io.str(leader);
    if (v >= 9) io.boolean(skip_assignment);
    io.str(member_id);
    io.array(members, [&](Member& m) { m.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const JoinGroupResponse&) const = default;
};

}  // namespace strata::protocol
