#pragma once
// DescribeClientQuotas (key 48) and AlterClientQuotas (49), versions 0-1
// (flexible from 1), KIP-546: kafka-configs --entity-type users|clients
// --describe / --alter --add-config producer_byte_rate=... An entity is a
// list of (type, name) with a null name for the type's default.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

// One (entity type, name) pair; a null name is the default entity.
struct QuotaEntityData {
  std::string entity_type;
  std::optional<std::string> entity_name;
  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.str(entity_type);
    io.nullable_str(entity_name);
    if (v >= 1) io.tagged_fields();
  }
  bool operator==(const QuotaEntityData&) const = default;
};

struct DescribeClientQuotasRequest {
  static constexpr int16_t kApiKey = 48;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 1;
  static constexpr int16_t kFirstFlexible = 1;

  // match_type: 0 the exact name in `match`, 1 the default entity, 2 any.
  struct Component {
    std::string entity_type;
    int8_t match_type = 0;
    std::optional<std::string> match;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(entity_type);
      io.i8(match_type);
      io.nullable_str(match);
      if (v >= 1) io.tagged_fields();
    }
    bool operator==(const Component&) const = default;
  };

  std::vector<Component> components;
  bool strict = false;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(components, [&](Component& c) { c.Serde(io, v); });
    io.boolean(strict);
    if (v >= 1) io.tagged_fields();
  }
  bool operator==(const DescribeClientQuotasRequest&) const = default;
};

struct DescribeClientQuotasResponse {
  struct Value {
    std::string key;
    double value = 0;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(key);
      io.f64(value);
      if (v >= 1) io.tagged_fields();
    }
    bool operator==(const Value&) const = default;
  };
  struct Entry {
    std::vector<QuotaEntityData> entity;
    std::vector<Value> values;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.array(entity, [&](QuotaEntityData& e) { e.Serde(io, v); });
      io.array(values, [&](Value& x) { x.Serde(io, v); });
      if (v >= 1) io.tagged_fields();
    }
    bool operator==(const Entry&) const = default;
  };

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::optional<std::vector<Entry>> entries;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.nullable_str(error_message);
    io.nullable_array(entries, [&](Entry& e) { e.Serde(io, v); });
    if (v >= 1) io.tagged_fields();
  }
  bool operator==(const DescribeClientQuotasResponse&) const = default;
};

struct AlterClientQuotasRequest {
  static constexpr int16_t kApiKey = 49;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 1;
  static constexpr int16_t kFirstFlexible = 1;

  struct Op {
    std::string key;
    double value = 0;
    bool remove = false;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(key);
      io.f64(value);
      io.boolean(remove);
      if (v >= 1) io.tagged_fields();
    }
    bool operator==(const Op&) const = default;
  };
  struct Entry {
    std::vector<QuotaEntityData> entity;
    std::vector<Op> ops;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.array(entity, [&](QuotaEntityData& e) { e.Serde(io, v); });
      io.array(ops, [&](Op& o) { o.Serde(io, v); });
      if (v >= 1) io.tagged_fields();
    }
    bool operator==(const Entry&) const = default;
  };

  std::vector<Entry> entries;
  bool validate_only = false;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(entries, [&](Entry& e) { e.Serde(io, v); });
    io.boolean(validate_only);
    if (v >= 1) io.tagged_fields();
  }
  bool operator==(const AlterClientQuotasRequest&) const = default;
};

struct AlterClientQuotasResponse {
  struct Entry {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::vector<QuotaEntityData> entity;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.nullable_str(error_message);
      io.array(entity, [&](QuotaEntityData& e) { e.Serde(io, v); });
      if (v >= 1) io.tagged_fields();
    }
    bool operator==(const Entry&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<Entry> entries;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(entries, [&](Entry& e) { e.Serde(io, v); });
    if (v >= 1) io.tagged_fields();
  }
  bool operator==(const AlterClientQuotasResponse&) const = default;
};

}  // namespace strata::protocol
