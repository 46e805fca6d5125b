#pragma once
// Envelope (key 58): a request one broker forwards to the active controller
// on a client's behalf (KIP-590), as a whole request frame (header and body)
// with the client's principal and address. The response carries the whole
// response frame (header and body) the controller produced. Broker-to-broker
// only: not advertised to clients in ApiVersions.
#include <cstdint>
#include <optional>

#include "protocol/wire.h"

namespace strata::protocol {

struct EnvelopeRequest {
  static constexpr int16_t kApiKey = 58;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  Bytes request_data;                      // the forwarded request frame
  std::optional<Bytes> request_principal;  // serialized principal; null here (no auth)
  Bytes client_host_address;               // 4 or 16 address bytes of the client

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.bytes(request_data);
    io.nullable_bytes(request_principal);
    io.bytes(client_host_address);
    io.tagged_fields();
  }
  bool operator==(const EnvelopeRequest&) const = default;
};

struct EnvelopeResponse {
  std::optional<Bytes> response_data;  // the controller's response frame
  int16_t error_code = 0;              // NOT_CONTROLLER when the receiver is not it

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.nullable_bytes(response_data);
    io.i16(error_code);
    io.tagged_fields();
  }
  bool operator==(const EnvelopeResponse&) const = default;
};

}  // namespace strata::protocol
