#pragma once
// DescribeGroups (key 15), versions 0-5, flexible from v5.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct DescribeGroupsRequest {
  static constexpr int16_t kApiKey = 15;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 5;
  static constexpr int16_t kFirstFlexible = 5;

  std::vector<std::string> groups;
  bool include_authorized_operations = false;  // v3+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(groups);
    if (v >= 3) io.boolean(include_authorized_operations);
    io.tagged_fields();
  }
  bool operator==(const DescribeGroupsRequest&) const = default;
};

struct DescribeGroupsResponse {
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;  // v4+
    std::string client_id;
    std::string client_host;
    Bytes member_metadata;
    Bytes member_assignment;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(member_id);
      if (v >= 4) io.nullable_str(group_instance_id);
      io.str(client_id);
      io.str(client_host);
      io.bytes(member_metadata);
      io.bytes(member_assignment);
      io.tagged_fields();
    }
    bool operator==(const Member&) const = default;
  };
  struct Group {
    int16_t error_code = 0;
    std::string group_id;
    std::string group_state;
    std::string protocol_type;
    std::string protocol_data;
    std::vector<Member> members;
    int32_t authorized_operations = INT32_MIN;  // v3+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.str(group_id);
      io.str(group_state);
      io.str(protocol_type);
      io.str(protocol_data);
      io.array(members, [&](Member& m) { m.Serde(io, v); });
      if (v >= 3) io.i32(authorized_operations);
      io.tagged_fields();
    }
    bool operator==(const Group&) const = default;
  };

  int32_t throttle_time_ms = 0;  // v1+
  std::vector<Group> groups;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 1) io.i32(throttle_time_ms);
    io.array(groups, [&](Group& g) { g.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeGroupsResponse&) const = default;
};

}  // namespace strata::protocol
