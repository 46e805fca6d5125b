// GET /v1/remote: this broker's remote store as an operator checks it: which
// store, the breaker's state (open = the store is failing and the broker runs
// local-only), upload and read throughput over the last 10 s, totals and
// error counts, and what the retry, hedge and breaker layers did.
// {"enabled": false} when tiered storage is off here.
#include <nlohmann/json.hpp>

#include "admin/routes.h"
#include "tiered/remote_log_manager.h"

namespace strata::admin {

namespace {

using nlohmann::json;

json RemoteJson(kafka::BrokerContext& ctx) {
  tiered::RemoteLogManager* remote = ctx.topics.remote();
  if (remote == nullptr) return {{"enabled", false}};
  const tiered::RemoteLogCounters c = remote->counters();
  const tiered::ResilienceCounters r = remote->resilience_counters();
  const std::string& uri = remote->store_uri();
  return {
      {"enabled", true},
      {"uri", uri},
      {"backend", uri.substr(0, uri.find("://"))},
      {"breaker", tiered::BreakerStateName(remote->breaker_state())},
      {"upload",
       {{"bytes_per_second", c.upload_bytes_per_second},
        {"segments", c.uploads},
        {"bytes", c.bytes_uploaded},
        {"failures", c.upload_failures},
        {"throttled_ms", c.copy_throttle_ms},
        {"manifest_writes", c.manifest_writes},
        {"manifest_write_failures", c.manifest_write_failures}}},
      {"read",
       {{"bytes_per_second", c.read_bytes_per_second},
        {"reads", c.remote_reads},
        {"bytes", c.remote_read_bytes},
        {"failures", c.remote_read_failures}}},
      {"calls",
       {{"calls", r.retry.calls},
        {"retries", r.retry.retries},
        {"failures", r.retry.failures},
        {"hedges_fired", r.hedge.hedges_fired},
        {"hedges_won", r.hedge.hedges_won},
        {"breaker_opened", r.breaker.opened},
        {"breaker_rejected", r.breaker.rejected}}},
      {"segments_expired", c.segments_expired},
      {"pending_dir_deletions", remote->pending_dir_count()},
  };
}

}  // namespace

void RegisterRemoteRoutes(HttpServer& server, AdminContext& admin) {
  kafka::BrokerContext& ctx = admin.broker;
  server.Route("/v1/remote", [&ctx](const std::string&) {
    return HttpResponse{200, "application/json", RemoteJson(ctx).dump(2) + "\n"};
  });
}

}  // namespace strata::admin
