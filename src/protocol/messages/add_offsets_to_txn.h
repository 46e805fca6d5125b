#pragma once
// AddOffsetsToTxn (key 25), versions 0-4, flexible from v3: a transactional
// producer (transaction version 1 only; TV2 clients skip it) asks its
// transaction coordinator to add the __consumer_offsets partition of GroupId
// to the transaction before sending TxnOffsetCommit. v2 adds PRODUCER_FENCED,
// v4 TRANSACTION_ABORTABLE as possible errors; the bytes do not change.
#include <cstdint>
#include <string>

#include "protocol/wire.h"

namespace strata::protocol {

struct AddOffsetsToTxnRequest {
  static constexpr int16_t kApiKey = 25;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 4;
  static constexpr int16_t kFirstFlexible = 3;

  std::string transactional_id;
  int64_t producer_id = 0;
  int16_t producer_epoch = 0;
  std::string group_id;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.str(transactional_id);
    io.i64(producer_id);
    io.i16(producer_epoch);
    io.str(group_id);
    io.tagged_fields();
  }
  bool operator==(const AddOffsetsToTxnRequest&) const = default;
};

struct AddOffsetsToTxnResponse {
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.tagged_fields();
  }
  bool operator==(const AddOffsetsToTxnResponse&) const = default;
};

}  // namespace strata::protocol
