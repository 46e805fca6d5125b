#pragma once
// ApiVersions (key 18). Flexible from v3. The response always uses header v0.
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct ApiVersionsRequest {
  static constexpr int16_t kApiKey = 18;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 4;
  static constexpr int16_t kFirstFlexible = 3;

  std::string client_software_name;     // v3+
  std::string client_software_version;  // v3+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 3) {
      io.str(client_software_name);
      io.str(client_software_version);
    }
    io.tagged_fields();
  }
};

struct ApiVersionsResponse {
  struct ApiVersion {
    int16_t api_key = 0;
    int16_t min_version = 0;
    int16_t max_version = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i16(api_key);
      io.i16(min_version);
      io.i16(max_version);
      io.tagged_fields();
    }
  };

  int16_t error_code = 0;
  std::vector<ApiVersion> api_keys;
  int32_t throttle_time_ms = 0;  // v1+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i16(error_code);
    io.array(api_keys, [&](ApiVersion& a) { a.Serde(io, v); });
    if (v >= 1) io.i32(throttle_time_ms);
    io.tagged_fields();
  }
};

}  // namespace strata::protocol
