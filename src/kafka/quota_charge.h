#pragma once
// Charging clients' requests against their quotas (KIP-13, KIP-124):
// produce request bytes, consumer fetch response bytes, and every request's
// handling time. Over its quota a client is throttled: the throttle time
// goes into the response's throttle_time_ms where it has one, and onto the
// request, so the server mutes the connection for that long (KIP-219).
// Replication and other brokers' requests (CLUSTER_ACTION principals:
// follower fetches, markers) are not charged.
#include <asio.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kafka/broker_context.h"
#include "net/server.h"

namespace strata::kafka {

// The throttle time for `bytes` of a produce request; 0 without a quota.
int32_t ChargeProduce(BrokerContext& ctx, net::Request& request, size_t bytes);
// The throttle time for `bytes` of a consumer's fetch response.
int32_t ChargeFetch(BrokerContext& ctx, net::Request& request, size_t bytes);
// Takes back `bytes` charged by ChargeFetch: a throttled fetch is answered
// empty, and bytes not sent must not count (Kafka's unrecordQuotaSensor).
void UnchargeFetch(BrokerContext& ctx, net::Request& request, size_t bytes);
// The most a consumer's fetch may return: what its fetch quota lets through
// at once (ClientQuotaManager::MaxValueInQuotaWindow); INT32_MAX without a
// quota. Kafka caps fetch.max.bytes with it, since a larger response would
// be throttled however long the client had been idle.
int32_t FetchBytesBound(BrokerContext& ctx, const net::Request& request);

// Charges requests' handling time to their request quota
// (request_percentage): the time since the dispatcher started the request
// less what it waited, as Kafka charges request-thread time and not the time
// in purgatory. Not charged: quota_exempt requests, and JoinGroup and
// SyncGroup, whose time goes on waiting for the rest of the group.
// Thread-safe (the quota managers lock inside).
class RequestTimeQuota final : public net::RequestTimeCharger {
 public:
  explicit RequestTimeQuota(BrokerContext& ctx) : ctx_(ctx) {}
  int32_t Charge(net::Request& request) override;

 private:
  BrokerContext& ctx_;
};

// Awaits `op` and counts the time as `request`'s waiting (request.waited),
// not its handling: for waits on replicas, coordinators, other brokers or
// remote storage, which Kafka spends in purgatory or callbacks, off the
// request thread whose time the request quota charges.
template <class T>
asio::awaitable<T> Waited(net::Request& request, asio::awaitable<T> op) {
  const auto start = std::chrono::steady_clock::now();
  if constexpr (std::is_void_v<T>) {
    co_await std::move(op);
    request.waited += std::chrono::steady_clock::now() - start;
  } else {
    T result = co_await std::move(op);
    request.waited += std::chrono::steady_clock::now() - start;
    co_return result;
  }
}

}  // namespace strata::kafka
