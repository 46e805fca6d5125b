#pragma once
// Metadata (key 3). Flexible from v9. v10+ carries topic ids; from v10 a
// request topic may be named by id only (null name), from v12 a response topic
// may have a null name. A null topic list (v1+) means "all topics".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages/field_helpers.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct MetadataRequest {
  static constexpr int16_t kApiKey = 3;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 12;
  static constexpr int16_t kFirstFlexible = 9;

  struct Topic {
    Uuid topic_id{};                  // v10+
    std::optional<std::string> name;  // nullable v10+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      if (v >= 10) io.uuid(topic_id);
      StrNullableIf(io, name, v >= 10);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  // Null (v1+) = all topics; in v0 an empty list means all topics.
  std::optional<std::vector<Topic>> topics;
  bool allow_auto_topic_creation = true;               // v4+
  bool include_cluster_authorized_operations = false;  // v8-10
  bool include_topic_authorized_operations = false;    // v8+

  template <class IO>
  void Serde(IO& io, int16_t v) {
    ArrayNullableIf(io, topics, v >= 1, [&](Topic& t) { t.Serde(io, v); });
    if (v >= 4) io.boolean(allow_auto_topic_creation);
    if (v >= 8 && v <= 10) io.boolean(include_cluster_authorized_operations);
    if (v >= 8) io.boolean(include_topic_authorized_operations);
    io.tagged_fields();
  }
  bool operator==(const MetadataRequest&) const = default;
};

struct MetadataResponse {
  struct Broker {
    int32_t node_id = 0;
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;  // v1+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i32(node_id);
      io.str(host);
      io.i32(port);
      if (v >= 1) io.nullable_str(rack);
      io.tagged_fields();
    }
    bool operator==(const Broker&) const = default;
  };
  struct Partition {
    int16_t error_code = 0;
    int32_t partition_index = 0;
    int32_t leader_id = 0;
    int32_t leader_epoch = -1;  // v7+
    std::vector<int32_t> replica_nodes;
    std::vector<int32_t> isr_nodes;
    std::vector<int32_t> offline_replicas;  // v5+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.i32(partition_index);
      io.i32(leader_id);
      if (v >= 7) io.i32(leader_epoch);
      io.array(replica_nodes);
      io.array(isr_nodes);
      if (v >= 5) io.array(offline_replicas);
      io.tagged_fields();
    }
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    int16_t error_code = 0;
    std::optional<std::string> name;  // nullable v12+
    Uuid topic_id{};                  // v10+
    bool is_internal = false;         // v1+
    std::vector<Partition> partitions;
    int32_t topic_authorized_operations = INT32_MIN;  // v8+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      StrNullableIf(io, name, v >= 12);
      if (v >= 10) io.uuid(topic_id);
      if (v >= 1) io.boolean(is_internal);
      io.array(partitions, [&](Partition& p) { p.Serde(io, v); });
      if (v >= 8) io.i32(topic_authorized_operations);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  int32_t throttle_time_ms = 0;  // v3+
  std::vector<Broker> brokers;
  std::optional<std::string> cluster_id;  // v2+
  int32_t controller_id = -1;             // v1+
  std::vector<Topic> topics;
  int32_t cluster_authorized_operations = INT32_MIN;  // v8-10

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 3) io.i32(throttle_time_ms);
    io.array(brokers, [&](Broker& b) { b.Serde(io, v); });
    if (v >= 2) io.nullable_str(cluster_id);
    if (v >= 1) io.i32(controller_id);
    io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    if (v >= 8 && v <= 10) io.i32(cluster_authorized_operations);
    io.tagged_fields();
  }
  bool operator==(const MetadataResponse&) const = default;
};

}  // namespace strata::protocol
