#pragma once
// The admin HTTP API: /metrics (Prometheus), /v1/cluster, /v1/topics,
// /v1/groups, /v1/transactions, /v1/reassignments, /v1/balancer (JSON) and
// the web console. Registers broker-level gauges (partitions, log sizes and
// offsets, process RSS and CPU, the metadata session, transactions) in the
// global metrics registry.
#include <atomic>

#include "admin/http_server.h"
#include "kafka/broker_context.h"

namespace strata::cluster {
class BrokerSession;
}

namespace strata::balancer {
class BalancerService;
}

namespace strata::admin {

// What the routes read. Owned by the broker; outlives the HTTP server.
struct AdminContext {
  kafka::BrokerContext& broker;
  // The autobalancer (it acts while this broker is the active controller):
  // set at registration, after the admin API has started, so null until
  // then. Read per request, from the admin thread.
  std::atomic<balancer::BalancerService*> balancer{nullptr};
};

void RegisterAdminRoutes(HttpServer& server, AdminContext& admin);
// /v1/balancer: GET status and (dry run) plan; POST pause, resume, apply
// (balancer_routes.cc). Also the balancer's Prometheus gauges.
void RegisterBalancerRoutes(HttpServer& server, AdminContext& admin);
void RegisterBalancerGauges(balancer::BalancerService& balancer);
void RegisterBrokerGauges(kafka::BrokerContext& ctx);
// /v1/transactions: the transactional ids this broker coordinates; and the
// transaction coordinator's Prometheus metrics (transaction_routes.cc).
// Both read ctx.txn_coordinator and ctx.txn_markers when asked.
void RegisterTransactionRoutes(HttpServer& server, AdminContext& admin);
// /v1/remote: the remote store's health and throughput (remote_routes.cc).
void RegisterRemoteRoutes(HttpServer& server, AdminContext& admin);
void RegisterTransactionGauges(kafka::BrokerContext& ctx);
// The cluster-metadata session's health: lease age, renewals, fencing and
// how far the metadata watch lags the store.
void RegisterSessionGauges(cluster::BrokerSession& session);

}  // namespace strata::admin
