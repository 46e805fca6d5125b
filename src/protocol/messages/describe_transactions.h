#pragma once
// DescribeTransactions (key 65), version 0, flexible (KIP-664): the state of
// some transactional ids as their transaction coordinator holds it;
// kafka-transactions describe sends it. TransactionState is a name (Empty,
// Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort,
// PrepareEpochFence); an unknown or expired id is TRANSACTIONAL_ID_NOT_FOUND.
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct DescribeTransactionsRequest {
  static constexpr int16_t kApiKey = 65;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  std::vector<std::string> transactional_ids;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.array(transactional_ids);
    io.tagged_fields();
  }
  bool operator==(const DescribeTransactionsRequest&) const = default;
};

struct DescribeTransactionsResponse {
  struct Topic {
    std::string topic;
    std::vector<int32_t> partitions;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(topic);
      io.array(partitions);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };
  struct TransactionState {
    int16_t error_code = 0;
    std::string transactional_id;
    std::string transaction_state;
    int32_t transaction_timeout_ms = 0;
    int64_t transaction_start_time_ms = 0;
    int64_t producer_id = 0;
    int16_t producer_epoch = 0;
    std::vector<Topic> topics;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.str(transactional_id);
      io.str(transaction_state);
      io.i32(transaction_timeout_ms);
      io.i64(transaction_start_time_ms);
      io.i64(producer_id);
      io.i16(producer_epoch);
      io.array(topics, [&](Topic& t) { t.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const TransactionState&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<TransactionState> transaction_states;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(transaction_states, [&](TransactionState& s) { s.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeTransactionsResponse&) const = default;
};

}  // namespace strata::protocol
