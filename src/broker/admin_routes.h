#pragma once
// The admin HTTP API: /metrics (Prometheus), /v1/cluster and /v1/topics
// (JSON). Registers broker-level gauges (partitions, log sizes and offsets,
// process RSS and CPU, the metadata session) in the global metrics registry.
#include "admin/http_server.h"
#include "broker/broker_context.h"

namespace strata::cluster {
class BrokerSession;
}

namespace strata::broker {

void RegisterAdminRoutes(admin::HttpServer& server, BrokerContext& ctx);
// /v1/balancer: GET status and (dry run) plan; POST pause, resume, apply
// (admin_balancer_routes.cc). Also the balancer's Prometheus gauges.
void RegisterBalancerRoutes(admin::HttpServer& server, BrokerContext& ctx);
class BalancerService;
void RegisterBalancerGauges(BalancerService& balancer);
void RegisterBrokerGauges(BrokerContext& ctx);
// The cluster-metadata session's health: lease age, renewals, fencing and
// how far the metadata watch lags the store.
void RegisterSessionGauges(cluster::BrokerSession& session);

}  // namespace strata::broker
