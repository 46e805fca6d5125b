#pragma once
// Charging clients' requests against their quotas (KIP-13, KIP-124):
// produce request bytes, consumer fetch response bytes, and every request's
// handling time. Over its quota a client is throttled: the throttle time
// goes into the response's throttle_time_ms where it has one, and onto the
// request, so the server mutes the connection for that long (KIP-219).
// Replication and other brokers' requests (CLUSTER_ACTION principals:
// follower fetches, markers) are not charged.
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "kafka/broker_context.h"
#include "net/server.h"

namespace strata::kafka {

// The throttle time for `bytes` of a produce request; 0 without a quota.
int32_t ChargeProduce(BrokerContext& ctx, net::Request& request, size_t bytes);
// The throttle time for `bytes` of a consumer's fetch response.
int32_t ChargeFetch(BrokerContext& ctx, net::Request& request, size_t bytes);
// Charges the time a request took to handle (request_percentage); mutes the
// connection when over, never shortening a longer throttle already set.
void ChargeRequestTime(BrokerContext& ctx, net::Request& request,
                       std::chrono::steady_clock::duration took);

}  // namespace strata::kafka
