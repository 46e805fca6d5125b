#pragma once
// ListTransactions (key 66), versions 0-2, flexible from v0 (KIP-664): the
// transactions a broker coordinates, optionally filtered by state name,
// producer id, v1+ minimum running time (KIP-994; -1 none) and v2+ a
// transactional id regular expression (KIP-1152; null none);
// kafka-transactions list sends it to every broker. Empty filters match
// everything; state names the broker does not know come back in
// unknown_state_filters.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct ListTransactionsRequest {
  static constexpr int16_t kApiKey = 66;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 2;
  static constexpr int16_t kFirstFlexible = 0;

  std::vector<std::string> state_filters;
  std::vector<int64_t> producer_id_filters;
  int64_t duration_filter = -1;                         // v1+; ms
  std::optional<std::string> transactional_id_pattern;  // v2+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(state_filters);
    io.array(producer_id_filters);
    if (v >= 1) io.i64(duration_filter);
    if (v >= 2) io.nullable_str(transactional_id_pattern);
    io.tagged_fields();
  }
  bool operator==(const ListTransactionsRequest&) const = default;
};

struct ListTransactionsResponse {
  struct TransactionState {
    std::string transactional_id;
    int64_t producer_id = 0;
    std::string transaction_state;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(transactional_id);
      io.i64(producer_id);
      io.str(transaction_state);
      io.tagged_fields();
    }
    bool operator==(const TransactionState&) const = default;
  };

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::vector<std::string> unknown_state_filters;
  std::vector<TransactionState> transaction_states;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.array(unknown_state_filters);
    io.array(transaction_states, [&](TransactionState& s) { s.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const ListTransactionsResponse&) const = default;
};

}  // namespace strata::protocol
