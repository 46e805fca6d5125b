#pragma once
// DeleteGroups (key 42), versions 0-2, flexible from v2.
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct DeleteGroupsRequest {
  static constexpr int16_t kApiKey = 42;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 2;
  static constexpr int16_t kFirstFlexible = 2;

  std::vector<std::string> groups_names;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.array(groups_names);
    io.tagged_fields();
  }
  bool operator==(const DeleteGroupsRequest&) const = default;
};

struct DeleteGroupsResponse {
  struct GroupResult {
    std::string group_id;
    int16_t error_code = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(group_id);
      io.i16(error_code);
      io.tagged_fields();
    }
    bool operator==(const GroupResult&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<GroupResult> results;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(results, [&](GroupResult& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DeleteGroupsResponse&) const = default;
};

}  // namespace strata::protocol
