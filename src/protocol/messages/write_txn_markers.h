#pragma once
// WriteTxnMarkers (key 27), versions 1-2, flexible: a transaction
// coordinator tells partition leaders to append the COMMIT or ABORT control
// record of producers' transactions (kafka-transactions abort sends it too).
// v0 was removed in Kafka 4.0; v2 adds each marker's TransactionVersion (a
// version 2 marker must carry a newer producer epoch than the data).
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

struct WriteTxnMarkersRequest {
  static constexpr int16_t kApiKey = 27;
  static constexpr int16_t kMinVersion = 1;
  static constexpr int16_t kMaxVersion = 2;
  static constexpr int16_t kFirstFlexible = 1;

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
  struct Marker {
    int64_t producer_id = 0;
    int16_t producer_epoch = 0;
    bool transaction_result = false;  // true = commit, false = abort
    std::vector<Topic> topics;
    int32_t coordinator_epoch = 0;
    int8_t transaction_version = 0;  // v2+; 0/1 legacy, 2 = KIP-890 part 2
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i64(producer_id);
      io.i16(producer_epoch);
      io.boolean(transaction_result);
      io.array(topics, [&](Topic& t) { t.Serde(io, v); });
      io.i32(coordinator_epoch);
      if (v >= 2) io.i8(transaction_version);
      io.tagged_fields();
    }
    bool operator==(const Marker&) const = default;
  };

  std::vector<Marker> markers;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(markers, [&](Marker& m) { m.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const WriteTxnMarkersRequest&) const = default;
};

struct WriteTxnMarkersResponse {
  struct Partition {
    int32_t partition_index = 0;
    int16_t error_code = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(partition_index);
      io.i16(error_code);
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
  struct Marker {
    int64_t producer_id = 0;
    std::vector<Topic> topics;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i64(producer_id);
      io.array(topics, [&](Topic& t) { t.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Marker&) const = default;
  };

  std::vector<Marker> markers;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(markers, [&](Marker& m) { m.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const WriteTxnMarkersResponse&) const = default;
};

}  // namespace strata::protocol
