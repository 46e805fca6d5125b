#pragma once
// UnregisterBroker (key 64), version 0, flexible: kafka-cluster unregister
// --id N, to forget a decommissioned broker.
#include <cstdint>
#include <optional>
#include <string>

#include "protocol/wire.h"

namespace strata::protocol {

struct UnregisterBrokerRequest {
  static constexpr int16_t kApiKey = 64;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  int32_t broker_id = 0;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.i32(broker_id);
    io.tagged_fields();
  }
  bool operator==(const UnregisterBrokerRequest&) const = default;
};

struct UnregisterBrokerResponse {
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.nullable_str(error_message);
    io.tagged_fields();
  }
  bool operator==(const UnregisterBrokerResponse&) const = default;
};

}  // namespace strata::protocol
