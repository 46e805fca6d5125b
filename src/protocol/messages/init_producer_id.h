#pragma once
// InitProducerId (key 22), versions 0-4, flexible from v2. v3+ lets a
// producer bump the epoch of an existing producer id (KIP-360).
#include <cstdint>
#include <optional>
#include <string>

#include "protocol/wire.h"

namespace strata::protocol {

struct InitProducerIdRequest {
  static constexpr int16_t kApiKey = 22;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 4;
  static constexpr int16_t kFirstFlexible = 2;

  std::optional<std::string> transactional_id;
  int32_t transaction_timeout_ms = 0;
  int64_t producer_id = -1;     // v3+
  int16_t producer_epoch = -1;  // v3+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.nullable_str(transactional_id);
    io.i32(transaction_timeout_ms);
    if (v >= 3) {
      io.i64(producer_id);
      io.i16(producer_epoch);
    }
    io.tagged_fields();
  }
  bool operator==(const InitProducerIdRequest&) const = default;
};

struct InitProducerIdResponse {
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = 0;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.i64(producer_id);
    io.i16(producer_epoch);
    io.tagged_fields();
  }
  bool operator==(const InitProducerIdResponse&) const = default;
};

}  // namespace strata::protocol
