#pragma once
// The JSON form of plans (admin API, __strata_balancer_log, the
// simulator's --json): one writer, so the three say the same thing.
#include <nlohmann/json.hpp>
#include <vector>

#include "balancer/planner.h"

namespace strata::balancer {

nlohmann::json IdsToJson(const std::vector<NodeId>& ids);
nlohmann::json MoveToJson(const Move& move);
nlohmann::json GoalsToJson(const std::vector<GoalSummary>& goals);
// Moves, goals, violations, whether the cap was reached, plan time.
nlohmann::json PlanToJson(const Plan& plan);

}  // namespace strata::balancer
