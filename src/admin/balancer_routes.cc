// The balancer's admin API: GET /v1/balancer (state, last plan, recent
// decisions), GET /v1/balancer/plan (a dry-run plan now, on the active
// controller), POST /v1/balancer/pause, /resume and /apply (a cycle now).
// On a broker that is not the active controller the state says so and
// names the controller, whose admin API has the rest.
#include <nlohmann/json.hpp>

#include "admin/routes.h"
#include "balancer/service/balancer_service.h"
#include "base/metrics.h"
#include "cluster/metadata.h"

namespace strata::admin {

namespace {

admin::HttpResponse Json(int status, const nlohmann::json& body) {
  return {status, "application/json", body.dump(2) + "\n"};
}

admin::HttpResponse NoBalancer() {
  return Json(503, {{"error", "the balancer runs only in cluster mode"}});
}

}  // namespace

void RegisterBalancerGauges(balancer::BalancerService& balancer) {
  balancer::BalancerService* b = &balancer;
  auto& r = metrics::Global();
  r.SetGauge("strata_balancer_paused", "1 while the balancer is paused", {},
             [b] { return b->paused() ? 1.0 : 0.0; });
  r.SetCounterFunc("strata_balancer_cycles_total", "balancing cycles run as the active controller",
                   {}, [b] { return static_cast<double>(b->cycles()); });
  r.SetCounterFunc("strata_balancer_moves_done_total", "balancer moves completed", {},
                   [b] { return static_cast<double>(b->moves_done()); });
  r.SetCounterFunc("strata_balancer_moves_failed_total",
                   "balancer moves that failed, were skipped or were cancelled", {},
                   [b] { return static_cast<double>(b->moves_failed()); });
  r.SetGauge("strata_balancer_enabled",
             "1 while the balancer is on (strata.balancer.enable, the dynamic value first)", {},
             [b] { return b->enabled() ? 1.0 : 0.0; });
  r.SetGauge("strata_balancer_self_healing_enabled",
             "1 while dead brokers' replicas are re-placed (strata.balancer.self.healing.enable, "
             "the dynamic value first)",
             {}, [b] { return b->self_healing() ? 1.0 : 0.0; });
  r.SetGauge("strata_balancer_moves_in_flight", "moves of the current cycle not yet finished", {},
             [b] { return static_cast<double>(b->moves_in_flight()); });
  r.SetGauge("strata_balancer_last_plan_seconds", "how long the last cycle took to plan", {},
             [b] { return b->last_plan_ms() / 1000.0; });
  r.SetCounterFunc("strata_balancer_scale_events_total",
                   "scaling events (standby activated or wanted, drains started, called off, done)",
                   {}, [b] { return static_cast<double>(b->scale_events()); });
}

void RegisterBalancerRoutes(HttpServer& server, AdminContext& admin) {
  // The balancer starts after the admin API (at registration): each
  // request looks it up.
  server.Route("/v1/balancer", [&admin](const std::string&) {
    balancer::BalancerService* b = admin.balancer.load();
    if (b == nullptr) return NoBalancer();
    nlohmann::json body = b->StatusJson();
    if (admin.broker.metadata != nullptr) {
      auto controller = admin.broker.metadata->view().Controller();
      body["controller"] = controller ? controller->node.value() : -1;
    }
    return Json(200, body);
  });
  server.Route("/v1/balancer/plan", [&admin](const std::string&) {
    balancer::BalancerService* b = admin.balancer.load();
    if (b == nullptr) return NoBalancer();
    nlohmann::json plan = b->DryRun();
    return Json(plan.contains("error") ? 409 : 200, plan);
  });
  server.RoutePost("/v1/balancer/pause", [&admin](const std::string&) {
    balancer::BalancerService* b = admin.balancer.load();
    if (b == nullptr) return NoBalancer();
    Status st = b->Pause();
    if (!st.ok()) return Json(503, {{"error", st.error().message}});
    return Json(200, {{"paused", true}});
  });
  server.RoutePost("/v1/balancer/resume", [&admin](const std::string&) {
    balancer::BalancerService* b = admin.balancer.load();
    if (b == nullptr) return NoBalancer();
    Status st = b->Resume();
    if (!st.ok()) return Json(503, {{"error", st.error().message}});
    return Json(200, {{"paused", false}});
  });
  server.RoutePost("/v1/balancer/apply", [&admin](const std::string&) {
    balancer::BalancerService* b = admin.balancer.load();
    if (b == nullptr) return NoBalancer();
    b->RunNow();
    return Json(202, {{"cycle", "started"}});
  });
}

}  // namespace strata::admin
