#include "balancer/plan_json.h"

namespace strata::balancer {

nlohmann::json IdsToJson(const std::vector<NodeId>& ids) {
  nlohmann::json out = nlohmann::json::array();
  for (NodeId id : ids) out.push_back(id.value());
  return out;
}

nlohmann::json MoveToJson(const Move& m) {
  return {{"kind", m.kind == MoveKind::kLeadership ? "leadership" : "replica"},
          {"topic", m.topic},
          {"partition", m.partition},
          {"replicas_before", IdsToJson(m.replicas_before)},
          {"replicas_after", IdsToJson(m.replicas_after)},
          {"leader_before", m.leader_before.value()},
          {"leader_after", m.leader_after.value()},
          {"goal", m.goal},
          {"reason", m.reason}};
}

nlohmann::json GoalsToJson(const std::vector<GoalSummary>& goals) {
  nlohmann::json out = nlohmann::json::array();
  for (const GoalSummary& g : goals) {
    out.push_back({{"goal", g.goal},
                   {"average", g.average},
                   {"max_before", g.max_before},
                   {"max_after", g.max_after},
                   {"min_before", g.min_before},
                   {"min_after", g.min_after},
                   {"met_before", g.met_before},
                   {"met_after", g.met_after},
                   {"moves", g.moves}});
  }
  return out;
}

nlohmann::json PlanToJson(const Plan& plan) {
  nlohmann::json moves = nlohmann::json::array();
  for (const Move& m : plan.moves) moves.push_back(MoveToJson(m));
  return {{"moves", moves},
          {"goals", GoalsToJson(plan.goals)},
          {"violations", plan.violations},
          {"move_cap_reached", plan.move_cap_reached},
          {"plan_ms", plan.plan_ms}};
}

}  // namespace strata::balancer
