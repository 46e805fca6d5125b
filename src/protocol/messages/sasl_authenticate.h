#pragma once
// SaslAuthenticate (key 36), versions 0-2 (flexible from 2): one round of a
// SASL exchange, the mechanism's token each way. Version 1 adds the session
// lifetime (KIP-368): the client re-authenticates on the same connection
// before it ends.
#include <cstdint>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct SaslAuthenticateRequest {
  static constexpr int16_t kApiKey = 36;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 2;
  static constexpr int16_t kFirstFlexible = 2;

  Bytes auth_bytes;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.bytes(auth_bytes);
    if (v >= 2) io.tagged_fields();
  }
  bool operator==(const SaslAuthenticateRequest&) const = default;
};

struct SaslAuthenticateResponse {
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  Bytes auth_bytes;
  int64_t session_lifetime_ms = 0;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i16(error_code);
    io.nullable_str(error_message);
    io.bytes(auth_bytes);
    if (v >= 1) io.i64(session_lifetime_ms);
    if (v >= 2) io.tagged_fields();
  }
  bool operator==(const SaslAuthenticateResponse&) const = default;
};

}  // namespace strata::protocol
