#pragma once
// AddPartitionsToTxn (key 24), versions 0-5, flexible from v3: adds
// partitions to a producer's ongoing transaction on its transaction
// coordinator. v0-3 are the client form (one transaction, V3AndBelow fields,
// results by topic); v4+ are the broker form (KIP-890): a batch of
// transactions, each with VerifyOnly (check, don't add), answered per
// transaction with a top-level error code. v2 adds PRODUCER_FENCED, v5
// TRANSACTION_ABORTABLE as possible errors; the bytes do not change.
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct AddPartitionsToTxnRequest {
  static constexpr int16_t kApiKey = 24;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 5;
  static constexpr int16_t kFirstFlexible = 3;

  struct Topic {
    std::string name;
    std::vector<int32_t> partitions;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.array(partitions);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };
  struct Transaction {
    std::string transactional_id;
    int64_t producer_id = 0;
    int16_t producer_epoch = 0;
    bool verify_only = false;
    std::vector<Topic> topics;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(transactional_id);
      io.i64(producer_id);
      io.i16(producer_epoch);
      io.boolean(verify_only);
      io.array(topics, [&](Topic& t) { t.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Transaction&) const = default;
  };

  std::vector<Transaction> transactions;      // v4+
  std::string v3_and_below_transactional_id;  // v0-3
  int64_t v3_and_below_producer_id = 0;       // v0-3
  int16_t v3_and_below_producer_epoch = 0;    // v0-3
  std::vector<Topic> v3_and_below_topics;     // v0-3

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 4) {
      io.array(transactions, [&](Transaction& t) { t.Serde(io, v); });
    } else {
      io.str(v3_and_below_transactional_id);
      io.i64(v3_and_below_producer_id);
      io.i16(v3_and_below_producer_epoch);
      io.array(v3_and_below_topics, [&](Topic& t) { t.Serde(io, v); });
    }
    io.tagged_fields();
  }
  bool operator==(const AddPartitionsToTxnRequest&) const = default;
};

struct AddPartitionsToTxnResponse {
  struct PartitionResult {
    int32_t partition_index = 0;
    int16_t partition_error_code = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.i16(partition_error_code);
      io.tagged_fields();
    }
    bool operator==(const PartitionResult&) const = default;
  };
  struct TopicResult {
    std::string name;
    std::vector<PartitionResult> results_by_partition;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(name);
      io.array(results_by_partition, [&](PartitionResult& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const TopicResult&) const = default;
  };
  struct TransactionResult {
    std::string transactional_id;
    std::vector<TopicResult> topic_results;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(transactional_id);
      io.array(topic_results, [&](TopicResult& t) { t.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const TransactionResult&) const = default;
  };

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;                                  // v4+
  std::vector<TransactionResult> results_by_transaction;   // v4+
  std::vector<TopicResult> results_by_topic_v3_and_below;  // v0-3

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    if (v >= 4) {
      io.i16(error_code);
      io.array(results_by_transaction, [&](TransactionResult& t) { t.Serde(io, v); });
    } else {
      io.array(results_by_topic_v3_and_below, [&](TopicResult& t) { t.Serde(io, v); });
    }
    io.tagged_fields();
  }
  bool operator==(const AddPartitionsToTxnResponse&) const = default;
};

}  // namespace strata::protocol
