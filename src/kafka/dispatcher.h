#pragma once
// Dispatcher: the Kafka API layer's entry point. The network server hands it
// each decoded request header and body; it finds the API's row in the table
// (handlers/api_table.h), refuses unsupported versions, forwards
// controller-bound requests to the active controller, runs the handler, and
// counts requests, failures and handling time per API (Prometheus).
#include <array>
#include <optional>

#include "base/metrics.h"
#include "kafka/broker_context.h"
#include "kafka/quota_charge.h"
#include "net/server.h"

namespace strata::kafka {

class Dispatcher : public net::RequestHandler {
 public:
  // `ctx` outlives the dispatcher; its forwarder is read per request (it is
  // set once the broker has registered).
  explicit Dispatcher(BrokerContext& ctx);

  bool IsFlexibleRequest(int16_t api_key, int16_t api_version) const override;
  asio::awaitable<Result<std::optional<Bytes>>> Handle(net::Request& request) override;

 private:
  // `from_envelope`: forwarded by another broker, so never forwarded again.
  asio::awaitable<Result<std::optional<Bytes>>> Dispatch(net::Request& request, bool from_envelope);

  // Indexed by API key (small, fixed); null for keys not served.
  static constexpr int kMaxApiKey = 80;
  BrokerContext& ctx_;
  // Each request carries it, so its response encoder charges its time.
  RequestTimeQuota request_time_{ctx_};
  std::array<metrics::Counter*, kMaxApiKey> requests_{};
  std::array<metrics::Counter*, kMaxApiKey> requests_closed_{};
  std::array<metrics::Histogram*, kMaxApiKey> handle_seconds_{};
};

}  // namespace strata::kafka
