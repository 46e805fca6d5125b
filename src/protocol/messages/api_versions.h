#pragma once
// ApiVersions (key 18). Flexible from v3. The response always uses header v0.
#include <cstdint>
#include <optional>
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

  // v3+ tagged fields (KIP-584): the feature levels this broker supports
  // and those finalized for the cluster, which clients read to pick
  // protocols (transaction.version 2 makes Java clients use KIP-890 part 2).
  struct SupportedFeature {
    std::string name;
    int16_t min_version = 0;
    int16_t max_version = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.i16(min_version);
      io.i16(max_version);
      io.tagged_fields();
    }
  };
  struct FinalizedFeature {
    std::string name;
    int16_t max_version_level = 0;
    int16_t min_version_level = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.i16(max_version_level);
      io.i16(min_version_level);
      io.tagged_fields();
    }
  };

  int16_t error_code = 0;
  std::vector<ApiVersion> api_keys;
  int32_t throttle_time_ms = 0;                                     // v1+
  std::optional<std::vector<SupportedFeature>> supported_features;  // v3+, tag 0
  std::optional<int64_t> finalized_features_epoch;                  // v3+, tag 1
  std::optional<std::vector<FinalizedFeature>> finalized_features;  // v3+, tag 2

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i16(error_code);
    io.array(api_keys, [&](ApiVersion& a) { a.Serde(io, v); });
    if (v >= 1) io.i32(throttle_time_ms);
    io.tagged_fields(
        0, supported_features,
        [v](auto& sub, std::vector<SupportedFeature>& f) {
          sub.array(f, [&](SupportedFeature& e) { e.Serde(sub, v); });
        },
        1, finalized_features_epoch, [](auto& sub, int64_t& e) { sub.i64(e); }, 2,
        finalized_features,
        [v](auto& sub, std::vector<FinalizedFeature>& f) {
          sub.array(f, [&](FinalizedFeature& e) { e.Serde(sub, v); });
        });
  }
};

}  // namespace strata::protocol
