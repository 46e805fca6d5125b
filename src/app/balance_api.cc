#include "app/balance_api.h"

#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli.h"

namespace strata::app {

namespace {

using nlohmann::json;

std::string Ids(const json& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ",") + std::to_string(id.get<int>());
  return "[" + out + "]";
}

void PrintGoals(const json& plan) {
  std::cout << fmt::format("{:<22} {:>16} {:>16} {:>16} {:>6}\n", "goal", "average", "max before",
                           "max after", "moves");
  for (const auto& g : plan.value("goals", json::array())) {
    std::cout << fmt::format("{:<22} {:>16.1f} {:>16.1f} {:>16.1f} {:>6}\n", g.value("goal", ""),
                             g.value("average", 0.0), g.value("max_before", 0.0),
                             g.value("max_after", 0.0), g.value("moves", 0));
  }
  for (const auto& v : plan.value("violations", json::array())) {
    std::cout << "violation: " << v.get<std::string>() << "\n";
  }
}

void PrintMoves(const json& moves) {
  for (const auto& m : moves) {
    std::cout << fmt::format(
        "  {}-{} {} -> {}, leader {} -> {} ({}: {})\n", m.value("topic", ""),
        m.value("partition", 0), Ids(m.value("replicas_before", json::array())),
        Ids(m.value("replicas_after", json::array())), m.value("leader_before", -1),
        m.value("leader_after", -1), m.value("goal", ""), m.value("reason", ""));
  }
}

void PrintStatus(const json& s) {
  std::cout << fmt::format(
      "balancer: {}, {}; controller {}{}\ncycles {}, moves done {}, failed {}, in flight {}; "
      "{} load samples held{}\n",
      s.value("enabled", false) ? "enabled" : "disabled",
      s.value("paused", false) ? "paused" : "running", s.value("controller", -1),
      s.value("active_controller", false) ? " (this broker)" : "", s.value("cycles", 0),
      s.value("moves_done", 0), s.value("moves_failed", 0), s.value("moves_in_flight", 0),
      s.value("samples", 0),
      s.value("last_error", "").empty() ? "" : "; reading load: " + s.value("last_error", ""));
  const json& plan =
      s.contains("last_plan") && s["last_plan"].is_object() ? s["last_plan"] : json();
  if (plan.is_object()) {
    std::cout << fmt::format("last plan: {} moves in {:.0f} ms\n",
                             plan.value("moves", json::array()).size(), plan.value("plan_ms", 0.0));
    PrintGoals(plan);
  }
  const json decisions = s.value("recent_decisions", json::array());
  if (!decisions.empty()) std::cout << "recent decisions:\n";
  const size_t from = decisions.size() > 10 ? decisions.size() - 10 : 0;
  for (size_t i = from; i < decisions.size(); ++i) {
    const json& d = decisions[i];
    std::cout << fmt::format("  {}-{} {} -> {}: {} in {} ms ({}: {})\n", d.value("topic", ""),
                             d.value("partition", 0),
                             Ids(d.value("replicas_before", json::array())),
                             Ids(d.value("replicas_after", json::array())), d.value("result", ""),
                             d.value("duration_ms", 0), d.value("goal", ""), d.value("reason", ""));
  }
}

}  // namespace

int RunBalanceApi(const std::string& command, const std::string& admin, bool as_json) {
  const bool get = command == "status" || command == "plan";
  const std::string path = command == "status" ? "/v1/balancer" : "/v1/balancer/" + command;
  const HttpAnswer r = AdminHttp(get ? "GET" : "POST", admin, path);
  if (r.status == 0) {
    std::fprintf(stderr, "strata balance %s: cannot reach %s: %s\n", command.c_str(), admin.c_str(),
                 r.body.c_str());
    return 2;
  }
  json body = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (r.status >= 300 || body.is_discarded()) {
    std::string why = body.is_object() ? body.value("error", r.body) : r.body;
    if (body.is_object() && body.contains("controller")) {
      why += fmt::format(" (the active controller is broker {})", body["controller"].dump());
    }
    std::fprintf(stderr, "strata balance %s: HTTP %ld: %s\n", command.c_str(), r.status,
                 why.c_str());
    return 1;
  }
  if (as_json) {
    std::cout << body.dump(2) << "\n";
  } else if (command == "status") {
    PrintStatus(body);
  } else if (command == "plan") {
    std::cout << fmt::format("dry-run plan: {} moves in {:.0f} ms\n",
                             body.value("moves", json::array()).size(), body.value("plan_ms", 0.0));
    PrintMoves(body.value("moves", json::array()));
    PrintGoals(body);
  } else {
    std::cout << "balancer: " << (command == "apply" ? "cycle started" : command + "d") << "\n";
  }
  return 0;
}

}  // namespace strata::app
