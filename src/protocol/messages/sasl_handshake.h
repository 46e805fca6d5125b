#pragma once
// SaslHandshake (key 17), versions 0-1: the client names the SASL mechanism
// it will use; the broker answers with the mechanisms enabled on the
// listener. After version 1 the exchange goes in SaslAuthenticate requests,
// after version 0 in bare size-prefixed tokens (Kafka still serves it, and
// older librdkafka, such as Debian 12's 2.0.2, authenticates only with a
// broker offering it).
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct SaslHandshakeRequest {
  static constexpr int16_t kApiKey = 17;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 1;
  static constexpr int16_t kFirstFlexible = 2;  // never flexible

  std::string mechanism;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.str(mechanism);
  }
  bool operator==(const SaslHandshakeRequest&) const = default;
};

struct SaslHandshakeResponse {
  int16_t error_code = 0;
  std::vector<std::string> mechanisms;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.i16(error_code);
    io.array(mechanisms);
  }
  bool operator==(const SaslHandshakeResponse&) const = default;
};

}  // namespace strata::protocol
