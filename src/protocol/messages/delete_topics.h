#pragma once
// DeleteTopics (key 20), versions 0-6, flexible from v4. v0-5 name topics in
// topic_names; v6 uses `topics` (name or id).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages/field_helpers.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct DeleteTopicsRequest {
  static constexpr int16_t kApiKey = 20;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 6;
  static constexpr int16_t kFirstFlexible = 4;

  struct Topic {
    std::optional<std::string> name;  // null: deleted by id
    Uuid topic_id{};
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.nullable_str(name);
      io.uuid(topic_id);
      io.tagged_fields();
    }
    bool operator==(const Topic&) const = default;
  };

  std::vector<Topic> topics;             // v6+
  std::vector<std::string> topic_names;  // v0-5
  int32_t timeout_ms = 0;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 6) io.array(topics, [&](Topic& t) { t.Serde(io, v); });
    if (v <= 5) io.array(topic_names);
    io.i32(timeout_ms);
    io.tagged_fields();
  }
  bool operator==(const DeleteTopicsRequest&) const = default;
};

struct DeleteTopicsResponse {
  struct TopicResult {
    std::optional<std::string> name;  // nullable v6+
    Uuid topic_id{};                  // v6+
    int16_t error_code = 0;
    std::optional<std::string> error_message;  // v5+
    template <class IO>
    void Serde(IO& io, int16_t v) {
      StrNullableIf(io, name, v >= 6);
      if (v >= 6) io.uuid(topic_id);
      io.i16(error_code);
      if (v >= 5) io.nullable_str(error_message);
      io.tagged_fields();
    }
    bool operator==(const TopicResult&) const = default;
  };

  int32_t throttle_time_ms = 0;  // v1+
  std::vector<TopicResult> responses;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    if (v >= 1) io.i32(throttle_time_ms);
    io.array(responses, [&](TopicResult& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DeleteTopicsResponse&) const = default;
};

}  // namespace strata::protocol
