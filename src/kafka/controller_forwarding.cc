#include "kafka/controller_forwarding.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <asio.hpp>

#include "base/metrics.h"
#include "kafka/authorization.h"
#include "kafka/cluster_state.h"
#include "kafka/handlers/api_table.h"
#include "kafka/logger.h"
#include "protocol/api_key.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/elect_leaders.h"
#include "protocol/messages/envelope.h"

namespace strata::kafka {

using protocol::ErrorCode;
using SteadyClock = std::chrono::steady_clock;

protocol::ElectLeadersResponse ElectLeadersFailed(const protocol::ElectLeadersRequest& req,
                                                  ErrorCode code, const std::string& message) {
  protocol::ElectLeadersResponse resp;
  resp.error_code = Code(code);  // v1+; v0 has the per-partition codes only
  for (const auto& t : req.topic_partitions.value_or(
           std::vector<protocol::ElectLeadersRequest::TopicPartitions>{})) {
    auto& out = resp.replica_election_results.emplace_back();
    out.topic = t.topic;
    for (int32_t p : t.partition_ids) out.partition_results.push_back({p, Code(code), message});
  }
  return resp;
}

HandlerResult ControllerBoundErrorResponse(net::Request& request, ErrorCode code,
                                           const std::string& message) {
  const ApiHandler* api = FindServedApi(request.header.api_key);
  if (api == nullptr || !api->controller_bound()) {
    return MakeError(Errc::kUnsupported, "not a controller-bound request");
  }
  return api->controller_unavailable(request, code, message);
}

namespace {

// The client's address as Envelope carries it: 4 or 16 bytes.
Bytes AddressBytes(const std::string& peer) {
  std::string host = peer.substr(0, peer.rfind(':'));
  uint8_t buf[16];
  if (inet_pton(AF_INET, host.c_str(), buf) == 1) return Bytes(buf, buf + 4);
  if (inet_pton(AF_INET6, host.c_str(), buf) == 1) return Bytes(buf, buf + 16);
  return Bytes{127, 0, 0, 1};
}

metrics::Counter& Forwarded(const char* outcome) {
  return metrics::Global().GetCounter(
      "strata_controller_forwarded_requests_total",
      "Controller-bound requests this broker forwarded to the active controller, by outcome",
      {{"outcome", outcome}});
}

constexpr auto kFirstBackoff = std::chrono::milliseconds(50);
constexpr auto kMaxBackoff = std::chrono::milliseconds(1000);

}  // namespace

ControllerForwarder::ControllerForwarder(
    BrokerContext& ctx, asio::any_io_executor executor, std::function<bool()> is_active_controller,
    std::function<std::optional<std::string>()> store_unreachable,
    std::chrono::milliseconds timeout)
    : ctx_(ctx),
      executor_(std::move(executor)),
      is_active_controller_(std::move(is_active_controller)),
      store_unreachable_(std::move(store_unreachable)),
      timeout_(timeout) {}

ControllerForwarder::~ControllerForwarder() {
  std::lock_guard lock(mu_);
  for (auto& [node, entry] : clients_) entry.second->Close();
}

std::optional<ControllerForwarder::Target> ControllerForwarder::Controller() const {
  if (ctx_.metadata == nullptr) return std::nullopt;
  auto controller = ctx_.metadata->view().Controller();
  if (!controller || controller->node.value() == ctx_.config.node_id()) return std::nullopt;
  for (const auto& b : LiveBrokers(ctx_, InterBrokerListener(ctx_))) {
    if (b.node_id == controller->node.value()) return Target{b.node_id, b.host, b.port};
  }
  return std::nullopt;
}

std::shared_ptr<net::Client> ControllerForwarder::ClientFor(const Target& target) {
  const std::string endpoint = fmt::format("{}:{}", target.host, target.port);
  std::lock_guard lock(mu_);
  auto& entry = clients_[target.node_id];
  if (entry.second == nullptr || entry.first != endpoint) {
    if (entry.second) entry.second->Close();  // the broker moved: a new address
    net::ClientOptions options;
    options.client_id = fmt::format("strata-broker-{}", ctx_.config.node_id());
    options.request_timeout = timeout_;
    options.security = ctx_.inter_broker_security;
    entry = {endpoint,
             std::make_shared<net::Client>(executor_, target.host, uint16_t(target.port), options)};
  }
  return entry.second;
}

asio::awaitable<std::optional<HandlerResult>> ControllerForwarder::Forward(net::Request& request) {
  const auto deadline = SteadyClock::now() + timeout_;
  protocol::EnvelopeRequest envelope;
  envelope.request_data.assign(request.frame.get(), request.frame.get() + request.frame_size);
  envelope.client_host_address = AddressBytes(request.peer);
  // The controller authorizes the request as its client (KIP-590).
  const std::string principal = RequestPrincipal(request).ToString();
  envelope.request_principal = Bytes(principal.begin(), principal.end());
  ErrorCode failure = ErrorCode::kNotController;
  std::string why = "no active controller is known";
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (auto backoff = kFirstBackoff;; backoff = std::min(backoff * 2, kMaxBackoff)) {
    if (IsActiveController()) co_return std::nullopt;
    if (auto reason = store_unreachable_()) {
      Forwarded("store_unreachable").Add();
      co_return ControllerBoundErrorResponse(request, ErrorCode::kRequestTimedOut, *reason);
    }
    if (auto target = Controller()) {
      auto client = ClientFor(*target);
      Bytes body;
      protocol::Encode(envelope, 0, true, body);
      auto got =
          co_await client->Call(protocol::EnvelopeRequest::kApiKey, 0, std::move(body), deadline);
      if (got.ok()) {
        auto answer = protocol::Decode<protocol::EnvelopeResponse>(got->body(), 0, true);
        if (!answer.ok()) {
          why = "malformed Envelope response from the controller: " + answer.error().message;
        } else if (answer->error_code == Code(ErrorCode::kNone) && answer->response_data &&
                   answer->response_data->size() >= 4) {
          Forwarded("ok").Add();
          co_return HandlerResult(std::optional<Bytes>(std::move(*answer->response_data)));
        } else if (answer->error_code != Code(ErrorCode::kNotController)) {
          Forwarded("refused").Add();
          co_return ControllerBoundErrorResponse(
              request, static_cast<ErrorCode>(answer->error_code),
              fmt::format("the controller (node {}) refused the forwarded request",
                          target->node_id));
        } else {
          why = fmt::format("node {} is no longer the controller", target->node_id);
          failure = ErrorCode::kNotController;
        }
      } else {
        why = fmt::format("controller node {}: {}", target->node_id, got.error().message);
        failure = ErrorCode::kRequestTimedOut;
      }
    }
    if (SteadyClock::now() + backoff >= deadline) break;
    timer.expires_after(backoff);
    co_await timer.async_wait(asio::use_awaitable);
  }
  Forwarded("failed").Add();
  Log()->warn("{} from {} not forwarded to the controller within {} ms: {}",
              protocol::ApiKeyName(request.header.api_key), request.peer, timeout_.count(), why);
  co_return ControllerBoundErrorResponse(request, failure, why);
}

void ControllerForwarder::RequestTopicCreation(const std::string& topic) {
  {
    std::lock_guard lock(mu_);
    if (!creating_.insert(topic).second) return;  // already asked
  }
  asio::co_spawn(executor_, CreateOnController(topic), asio::detached);
}

asio::awaitable<void> ControllerForwarder::CreateOnController(std::string topic) {
  std::string outcome = "no active controller is known";
  if (auto target = Controller()) {
    protocol::CreateTopicsRequest req;
    req.topics.push_back({topic, -1, -1, {}, {}});
    req.timeout_ms = static_cast<int32_t>(timeout_.count());
    auto got = co_await ClientFor(*target)
                   ->Send<protocol::CreateTopicsRequest, protocol::CreateTopicsResponse>(req, 7);
    if (!got.ok()) {
      outcome = got.error().message;
    } else if (got->topics.size() == 1) {
      const auto code = static_cast<ErrorCode>(got->topics[0].error_code);
      outcome = code == ErrorCode::kNone || code == ErrorCode::kTopicAlreadyExists
                    ? ""
                    : got->topics[0].error_message.value_or(fmt::format("error {}", int(code)));
    }
  }
  if (!outcome.empty()) Log()->info("auto-creation of '{}' by the controller: {}", topic, outcome);
  std::lock_guard lock(mu_);
  creating_.erase(topic);
}

}  // namespace strata::kafka
