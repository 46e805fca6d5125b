#pragma once
// ListGroups (key 16), versions 0-4, flexible from v3. v4 adds a state filter.
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct ListGroupsRequest {
  static constexpr int16_t kApiKey = 16;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 4;
  static constexpr int16_t kFirstFlexible = 3;

  std::vector<std::string> states_filter;  // v4+; empty = all states

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 4) io.array(states_filter);
    io.tagged_fields();
  }
  bool operator==(const ListGroupsRequest&) const = default;
};

struct ListGroupsResponse {
  struct Group {
    std::string group_id;
    std::string protocol_type;
    std::string group_state;  // v4+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(group_id);
      io.str(protocol_type);
      if (v >= 4) io.str(group_state);
      io.tagged_fields();
    }
    bool operator==(const Group&) const = default;
  };

  int32_t throttle_time_ms = 0;  // v1+
  int16_t error_code = 0;
  std::vector<Group> groups;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 1) io.i32(throttle_time_ms);
    io.i16(error_code);
    io.array(groups, [&](Group& g) { g.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const ListGroupsResponse&) const = default;
};

}  // namespace strata::protocol
