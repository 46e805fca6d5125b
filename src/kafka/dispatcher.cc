#include "kafka/dispatcher.h"

#include <fmt/format.h>

#include <chrono>

#include "kafka/controller_forwarding.h"
#include "kafka/handlers/api_table.h"
#include "kafka/handlers/handlers.h"
#include "kafka/quota_charge.h"
#include "protocol/api_key.h"
#include "protocol/request_registry.h"

namespace strata::kafka {

Dispatcher::Dispatcher(BrokerContext& ctx) : ctx_(ctx) {
  for (const ApiHandler& api : ServedApis()) {
    if (api.key < 0 || api.key >= kMaxApiKey) continue;
    metrics::Labels labels{{"api", protocol::ApiKeyName(api.key)}};
    requests_[api.key] =
        &metrics::Global().GetCounter("strata_requests_total", "Kafka requests received", labels);
    requests_closed_[api.key] = &metrics::Global().GetCounter(
        "strata_requests_failed_total",
        "Requests that closed their connection (malformed or unsupported)", labels);
    handle_seconds_[api.key] = &metrics::Global().GetHistogram(
        "strata_request_handle_seconds",
        "Time from a request's arrival to its response being ready (Fetch and acks=all Produce "
        "waits included; sending the response not)",
        labels, metrics::LatencyBuckets());
  }
}

bool Dispatcher::IsFlexibleRequest(int16_t api_key, int16_t api_version) const {
  return protocol::RequestIsFlexible(api_key, api_version);
}

asio::awaitable<Result<std::optional<Bytes>>> Dispatcher::Handle(net::Request& request) {
  const int16_t key = request.header.api_key;
  const bool known = key >= 0 && key < kMaxApiKey && requests_[key] != nullptr;
  if (known) requests_[key]->Add();
  request.started = std::chrono::steady_clock::now();
  request.request_time_charger = &request_time_;
  auto result = co_await Dispatch(request, false);
  const auto took = std::chrono::steady_clock::now() - request.started;
  if (known) {
    handle_seconds_[key]->Observe(std::chrono::duration<double>(took).count());
    if (!result.ok()) requests_closed_[key]->Add();
  }
  // A response with throttle_time_ms was charged as it was encoded
  // (EncodeResponse); the others (and errors) are charged here, their
  // throttle only muting the connection.
  net::ChargeRequestTime(request);
  co_return result;
}

asio::awaitable<Result<std::optional<Bytes>>> Dispatcher::Dispatch(net::Request& request,
                                                                   bool from_envelope) {
  const int16_t key = request.header.api_key;
  const int16_t version = request.header.api_version;
  using protocol::ApiKey;
  if (key == static_cast<int16_t>(ApiKey::kApiVersions)) {
    co_return HandleApiVersions(ctx_, request);  // answers unsupported versions itself
  }
  const protocol::ApiRange* range = protocol::FindApi(key);
  const ApiHandler* api = FindServedApi(key);
  const bool envelope = key == static_cast<int16_t>(ApiKey::kEnvelope);
  if (range == nullptr || api == nullptr || (envelope && from_envelope) || version < range->min ||
      version > range->max) {
    co_return MakeError(Errc::kUnsupported, fmt::format("unsupported API {} ({}) version {}", key,
                                                        protocol::ApiKeyName(key), version));
  }
  // Only these ask whether this broker is the active controller: the
  // produce and fetch path never does.
  ControllerForwarder* forwarder = ctx_.forwarder;
  if (envelope) {
    const bool active = forwarder == nullptr || forwarder->IsActiveController();
    co_return co_await HandleEnvelope(
        ctx_, request, active, [this](net::Request& inner) { return Dispatch(inner, true); });
  }
  if (api->controller_bound() && !from_envelope && forwarder != nullptr &&
      !forwarder->IsActiveController()) {
    // The controller's time is not this broker's (Kafka's forwarding is a
    // callback, off the request thread).
    auto forwarded = co_await Waited(request, forwarder->Forward(request));
    if (forwarded) co_return std::move(*forwarded);
  }
  if (api->handle_async != nullptr) co_return co_await api->handle_async(ctx_, request);
  co_return api->handle(ctx_, request);
}

}  // namespace strata::kafka
