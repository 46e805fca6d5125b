#pragma once
// Produce (key 0). Flexible from v9. acks=0 requests get no response.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages/field_helpers.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct ProduceRequest {
  static constexpr int16_t kApiKey = 0;
  static constexpr int16_t kMinVersion = 0;  // advertised; v0-2 rejected (old formats)
  static constexpr int16_t kMaxVersion = 12;
  static constexpr int16_t kFirstFlexible = 9;

  struct Partition {
    int32_t index = 0;
    RecordsField records;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(index);
      io.records(records);
      io.tagged_fields();
    }
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
  };

  std::optional<std::string> transactional_id;  // v3+
  int16_t acks = -1;
  int32_t timeout_ms = 30000;
  std::vector<Topic> topics;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 3) io.nullable_str(transactional_id);
    io.i16(acks);
    io.i32(timeout_ms);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    io.tagged_fields();
  }
};

struct ProduceResponse {
  using LeaderIdAndEpoch = protocol::LeaderIdAndEpoch;  // v10+
  struct NodeEndpoint {
    int32_t node_id = 0;
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(node_id);
      io.str(host);
      io.i32(port);
      io.nullable_str(rack);
      io.tagged_fields();
    }
  };
  struct RecordError {
    int32_t batch_index = 0;
    std::optional<std::string> message;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i32(batch_index);
      io.nullable_str(message);
      io.tagged_fields();
    }
  };
  struct Partition {
    int32_t index = 0;
    int16_t error_code = 0;
    int64_t base_offset = -1;
    int64_t log_append_time_ms = -1;                 // v2+
    int64_t log_start_offset = -1;                   // v5+
    std::vector<RecordError> record_errors;          // v8+
    std::optional<std::string> error_message;        // v8+
    std::optional<LeaderIdAndEpoch> current_leader;  // v10+, tag 0
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(index);
      io.i16(error_code);
      io.i64(base_offset);
      if (v >= 2) io.i64(log_append_time_ms);
      if (v >= 5) io.i64(log_start_offset);
      if (v >= 8) {
        io.array(record_errors, [&](RecordError& e) { e.Serde(io, v); });
        io.nullable_str(error_message);
      }
      if (v >= 10) {
        io.tagged_fields(0, current_leader,
                         [&](auto& sub, LeaderIdAndEpoch& l) { l.Serde(sub, v); });
      } else {
        io.tagged_fields();
      }
    }
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
  };

  std::vector<Topic> topics;
  int32_t throttle_time_ms = 0;  // v1+
  // v10+, tag 0: the brokers named by CurrentLeader fields.
  std::optional<std::vector<NodeEndpoint>> node_endpoints;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    if (v >= 1) io.i32(throttle_time_ms);
    if (v >= 10) {
      io.tagged_fields(0, node_endpoints, [&](auto& sub, std::vector<NodeEndpoint>& nodes) {
        sub.array(nodes, [&](NodeEndpoint& n) { n.Serde(sub, v); });
      });
    } else {
      io.tagged_fields();
    }
  }
};

}  // namespace strata::protocol
