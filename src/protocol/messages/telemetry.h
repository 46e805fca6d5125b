#pragma once
// Client telemetry (KIP-714), version 0, flexible: GetTelemetrySubscriptions
// (key 71), which a client asks first (and again each push interval), and
// PushTelemetry (key 72), which it sends only for the metrics a
// subscription requested.
#include <cstdint>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct GetTelemetrySubscriptionsRequest {
  static constexpr int16_t kApiKey = 71;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  Uuid client_instance_id{};  // zero on the first request: the broker assigns one

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.uuid(client_instance_id);
    io.tagged_fields();
  }
  bool operator==(const GetTelemetrySubscriptionsRequest&) const = default;
};

struct GetTelemetrySubscriptionsResponse {
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  Uuid client_instance_id{};
  int32_t subscription_id = 0;
  std::vector<int8_t> accepted_compression_types;
  int32_t push_interval_ms = 0;
  int32_t telemetry_max_bytes = 0;
  bool delta_temporality = false;
  std::vector<std::string> requested_metrics;  // empty: push nothing

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.uuid(client_instance_id);
    io.i32(subscription_id);
    io.array(accepted_compression_types, [&](int8_t& c) { io.i8(c); });
    io.i32(push_interval_ms);
    io.i32(telemetry_max_bytes);
    io.boolean(delta_temporality);
    io.array(requested_metrics, [&](std::string& m) { io.str(m); });
    io.tagged_fields();
  }
  bool operator==(const GetTelemetrySubscriptionsResponse&) const = default;
};

struct PushTelemetryRequest {
  static constexpr int16_t kApiKey = 72;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  Uuid client_instance_id{};
  int32_t subscription_id = 0;
  bool terminating = false;
  int8_t compression_type = 0;
  Bytes metrics;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.uuid(client_instance_id);
    io.i32(subscription_id);
    io.boolean(terminating);
    io.i8(compression_type);
    io.bytes(metrics);
    io.tagged_fields();
  }
  bool operator==(const PushTelemetryRequest&) const = default;
};

struct PushTelemetryResponse {
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.tagged_fields();
  }
  bool operator==(const PushTelemetryResponse&) const = default;
};

}  // namespace strata::protocol
