// Client telemetry (KIP-714): GetTelemetrySubscriptions (71) and
// PushTelemetry (72). Strata collects no client metrics (Kafka collects
// them only for a configured ClientTelemetry plugin): a client is given an
// instance id and a subscription that requests no metrics, so it pushes
// nothing and asks again after the push interval. Java clients (4.x,
// enable.metrics.push=true by default) otherwise find the API missing and
// log that telemetry is off.
#include <random>

#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/messages/telemetry.h"

namespace strata::kafka {

namespace {

// Kafka's defaults: telemetry.max.bytes, and the push interval of a
// subscription (5 minutes).
constexpr int32_t kPushIntervalMs = 300'000;
constexpr int32_t kTelemetryMaxBytes = 1 << 20;

// A random (version 4) UUID, never all zeros.
protocol::Uuid NewInstanceId() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  protocol::Uuid id{};
  for (size_t i = 0; i < id.size(); i += 8) {
    const uint64_t r = random();
    for (size_t j = 0; j < 8; ++j) id[i + j] = uint8_t(r >> (8 * j));
  }
  id[6] = uint8_t((id[6] & 0x0f) | 0x40);
  id[8] = uint8_t((id[8] & 0x3f) | 0x80);
  return id;
}

}  // namespace

HandlerResult HandleGetTelemetrySubscriptions(BrokerContext&, net::Request& request) {
  using protocol::GetTelemetrySubscriptionsRequest;
  STRATA_ASSIGN_OR_RETURN(GetTelemetrySubscriptionsRequest req,
                          DecodeRequest<GetTelemetrySubscriptionsRequest>(request));
  protocol::GetTelemetrySubscriptionsResponse resp;
  resp.client_instance_id =
      req.client_instance_id == protocol::Uuid{} ? NewInstanceId() : req.client_instance_id;
  resp.push_interval_ms = kPushIntervalMs;
  resp.telemetry_max_bytes = kTelemetryMaxBytes;
  resp.delta_temporality = true;
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult HandlePushTelemetry(BrokerContext&, net::Request& request) {
  using protocol::PushTelemetryRequest;
  STRATA_ASSIGN_OR_RETURN(PushTelemetryRequest req, DecodeRequest<PushTelemetryRequest>(request));
  (void)req;  // nothing was requested, so nothing is kept
  protocol::PushTelemetryResponse resp;
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
