// The planner's topic-aware replica spread (Redpanda's topic-aware
// balancing, Cruise Control's TopicReplicaDistributionGoal): no broker
// holds many more of one topic's replicas than an even spread gives it, so
// a topic that turns hot later is already spread. A broker well above the
// average of a topic's replicas (Cruise Control's bounds, below) moves the
// extra ones to the brokers holding fewest of them, within what the goals
// before allow.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "balancer/plan_context.h"

namespace strata::balancer {

namespace {

// Cruise Control's topic.replica.count.balance.threshold and its gaps.
constexpr double kThreshold = 3.0;
constexpr double kMinGap = 2;
constexpr double kMaxGap = 40;

// The active broker holding fewest of topic t's replicas (then the least
// network in, then the lowest id) that may take p's replica from `from`.
int32_t LeastHolding(const PlanContext& ctx, int32_t t, size_t p, int32_t from, int32_t below) {
  const ClusterModel& m = ctx.model();
  int32_t best = -1;
  auto key = [&](int32_t b) {
    return std::make_tuple(m.TopicReplicas(t, b), m.load(b).network_in, m.broker(b).id);
  };
  for (int32_t b : ctx.active()) {
    if (m.TopicReplicas(t, b) >= below) continue;
    if (best >= 0 && key(b) >= key(best)) continue;
    if (!ctx.CanHost(p, from, b) || !ctx.KeepsOptimized(p, MoveKind::kReplica, from, b)) continue;
    best = b;
  }
  return best;
}

void SpreadTopic(PlanContext& ctx, int32_t t, const std::vector<size_t>& partitions) {
  ClusterModel& m = ctx.model();
  std::map<int32_t, int32_t> held;  // broker index -> replicas of t
  int32_t total = 0;
  for (size_t p : partitions) {
    for (NodeId r : m.partition(p).replicas) {
      const int32_t b = m.IndexOf(r);
      if (ctx.IsActive(b)) {
        held[b]++;
        total++;
      }
    }
  }
  const double avg = static_cast<double>(total) / static_cast<double>(ctx.active().size());
  // Cruise Control's bounds: avg + avg * (threshold - 1), the margin kept
  // within [kMinGap, kMaxGap] replicas; a broker above them keeps
  // ceil(avg) + 1.
  const double gap = std::clamp(avg * (kThreshold - 1), kMinGap, kMaxGap);
  const auto upper = static_cast<int32_t>(std::ceil(avg + gap));
  const auto target = static_cast<int32_t>(std::ceil(avg)) + 1;
  for (const auto& [b, count] : held) {
    if (count <= upper) continue;
    for (size_t p : partitions) {
      if (m.TopicReplicas(t, b) <= target || ctx.CapReached()) break;
      const auto& replicas = m.partition(p).replicas;
      if (!ctx.Movable(p) ||
          std::find(replicas.begin(), replicas.end(), m.broker(b).id) == replicas.end()) {
        continue;
      }
      const int32_t to = LeastHolding(ctx, t, p, b, target);
      if (to < 0) continue;
      ctx.MoveReplica(p, b, to, kGoalTopicSpread,
                      fmt::format("broker {} holds {} replicas of {}, at most {}", m.broker(b).id,
                                  m.TopicReplicas(t, b), m.partition(p).topic, upper));
    }
  }
}

}  // namespace

void BalanceTopicSpread(PlanContext& ctx) {
  const ClusterModel& m = ctx.model();
  if (ctx.active().size() < 2) return;
  std::vector<std::vector<size_t>> by_topic(m.topic_count());
  for (size_t p = 0; p < m.partition_count(); ++p) by_topic[m.topic_index(p)].push_back(p);
  for (int32_t t = 0; t < m.topic_count() && !ctx.CapReached(); ++t) {
    SpreadTopic(ctx, t, by_topic[t]);
  }
}

}  // namespace strata::balancer
