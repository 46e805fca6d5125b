#pragma once
// DescribeProducers (key 61), version 0, flexible (KIP-664): the active
// producers of some partitions as their leader sees them, with the first
// offset of each one's open transaction; kafka-transactions
// describe-producers / find-hanging send it. The producer epoch is an int32
// here (int16 everywhere else).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct DescribeProducersRequest {
  static constexpr int16_t kApiKey = 61;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  struct Topic {
    std::string name;
    std::vector<int32_t> partition_indexes;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.array(partition_indexes);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeProducersRequest&) const = default;
};

struct DescribeProducersResponse {
  struct ProducerState {
    int64_t producer_id = 0;
    int32_t producer_epoch = 0;
    int32_t last_sequence = -1;
    int64_t last_timestamp = -1;
    int32_t coordinator_epoch = 0;
    int64_t current_txn_start_offset = -1;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i64(producer_id);
      io.i32(producer_epoch);
      io.i32(last_sequence);
      io.i64(last_timestamp);
      io.i32(coordinator_epoch);
      io.i64(current_txn_start_offset);
      io.tagged_fields();
    }
    bool operator==(const ProducerState&) const = default;
  };
  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::vector<ProducerState> active_producers;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(partition_index);
      io.i16(error_code);
      io.nullable_str(error_message);
      io.array(active_producers, [&](ProducerState& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(name);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeProducersResponse&) const = default;
};

}  // namespace strata::protocol
