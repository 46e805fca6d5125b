#include "balancer/planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "balancer/plan_context.h"

namespace strata::balancer {

namespace {

// A distribution goal's figures over the active brokers now.
void Measure(const PlanContext& ctx, const Metric& metric, double* max, double* min, bool* met) {
  const Band band = ComputeBand(ctx, metric);
  *max = 0;
  *min = 0;
  *met = true;
  bool first = true;
  for (int32_t b : ctx.active()) {
    const double v = metric.value(ctx.model().load(b));
    *max = first ? v : std::max(*max, v);
    *min = first ? v : std::min(*min, v);
    first = false;
    if (v > band.hi || v < band.lo) *met = false;
  }
  if (band.average < ctx.TrafficFloor(metric)) *met = true;
}

// Replicas that break a hard goal now (for the summary).
double CountHardViolations(const PlanContext& ctx, const std::string& goal) {
  const ClusterModel& m = ctx.model();
  double n = 0;
  for (int32_t b = 0; b < m.broker_count(); ++b) {
    const BrokerInfo& info = m.broker(b);
    const BrokerLoad& load = m.load(b);
    if (goal == kGoalLiveBrokers && info.status != BrokerStatus::kActive &&
        info.status != BrokerStatus::kStale) {
      n += load.replicas;
    } else if (goal == kGoalReplicaCap && ctx.IsActive(b)) {
      n += std::max(0, load.replicas - ctx.options().max_replicas_per_broker);
    } else if (goal == kGoalDiskCap && ctx.IsActive(b) && info.capacity.disk > 0 &&
               static_cast<double>(load.disk) >
                   ctx.options().disk_cap_ratio * static_cast<double>(info.capacity.disk)) {
      n += 1;
    }
  }
  if (goal == kGoalRackAware) {
    for (size_t p = 0; p < m.partition_count(); ++p) {
      const PartitionInfo& info = m.partition(p);
      const int32_t max = ctx.MaxPerRack(info.replicas.size());
      for (NodeId r : info.replicas) {
        const int32_t b = m.IndexOf(r);
        if (b >= 0 && ctx.ReplicasOnRack(p, m.broker(b).rack, -1) > max) {
          n += 1;
          break;
        }
      }
    }
  }
  return n;
}

int CountMoves(const Plan& plan, const std::string& goal) {
  return static_cast<int>(std::count_if(plan.moves.begin(), plan.moves.end(),
                                        [&](const Move& m) { return m.goal == goal; }));
}

}  // namespace

Plan MakePlan(ClusterModel& model, const PlannerOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PlanContext ctx(model, options);
  const char* hard[] = {kGoalLiveBrokers, kGoalRackAware, kGoalReplicaCap, kGoalDiskCap};
  std::vector<GoalSummary> summaries;
  for (const char* goal : hard) {
    GoalSummary s;
    s.goal = goal;
    s.max_before = CountHardViolations(ctx, goal);
    s.met_before = s.max_before == 0;
    summaries.push_back(s);
  }
  for (const std::string& goal : options.goals) {
    GoalSummary s;
    s.goal = goal;
    if (const Metric* metric = FindMetric(goal)) {
      s.average = ComputeBand(ctx, *metric).average;
      Measure(ctx, *metric, &s.max_before, &s.min_before, &s.met_before);
    }
    summaries.push_back(s);
  }

  EvacuateBrokers(ctx);
  FixRackAwareness(ctx);
  FixReplicaCap(ctx);
  FixDiskCap(ctx);
  for (const std::string& goal : options.goals) {
    if (ctx.CapReached()) break;
    if (const Metric* metric = FindMetric(goal)) {
      BalanceDistribution(ctx, *metric);
    } else if (goal == kGoalTopicSpread) {
      BalanceTopicSpread(ctx);
    }
  }

  for (GoalSummary& s : summaries) {
    s.moves = CountMoves(ctx.plan(), s.goal);
    if (const Metric* metric = FindMetric(s.goal)) {
      Measure(ctx, *metric, &s.max_after, &s.min_after, &s.met_after);
    } else if (s.goal != kGoalTopicSpread) {
      s.max_after = CountHardViolations(ctx, s.goal);
      s.met_after = s.max_after == 0;
    }
  }
  const bool cap_reached = ctx.CapReached();
  Plan plan;
  plan.moves = ctx.MergedMoves();
  plan.violations = ctx.plan().violations;
  plan.goals = std::move(summaries);
  plan.move_cap_reached = cap_reached;
  plan.plan_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace strata::balancer
