#pragma once
// EndTxn (key 26), versions 0-5, flexible from v3: a transactional producer
// asks its transaction coordinator to commit or abort the ongoing
// transaction. v5 is transaction version 2 (KIP-890 part 2): the coordinator
// bumps the epoch at every transaction end and the response carries the
// producer id and epoch to use next. v2 adds PRODUCER_FENCED, v4
// TRANSACTION_ABORTABLE as possible errors.
#include <cstdint>
#include <string>

#include "protocol/wire.h"

namespace strata::protocol {

struct EndTxnRequest {
  static constexpr int16_t kApiKey = 26;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 5;
  static constexpr int16_t kFirstFlexible = 3;

  std::string transactional_id;
  int64_t producer_id = 0;
  int16_t producer_epoch = 0;
  bool committed = false;  // false = abort

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.str(transactional_id);
    io.i64(producer_id);
    io.i16(producer_epoch);
    io.boolean(committed);
    io.tagged_fields();
  }
  bool operator==(const EndTxnRequest&) const = default;
};

struct EndTxnResponse {
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  int64_t producer_id = -1;     // v5+
  int16_t producer_epoch = -1;  // v5+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    if (v >= 5) {
      io.i64(producer_id);
      io.i16(producer_epoch);
    }
    io.tagged_fields();
  }
  bool operator==(const EndTxnResponse&) const = default;
};

}  // namespace strata::protocol
