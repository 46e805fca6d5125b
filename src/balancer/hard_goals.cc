// The planner's hard goals: replicas only on active brokers, rack
// awareness, the replica cap and the disk cap. Each moves what breaks it to
// the least loaded broker (network in, then replica count, then id) that
// keeps every hard goal; what cannot move is a violation in the plan.
// Moving off dead, draining and standby brokers is not held back by the
// per-cycle move cap or cool-downs: those replicas have nowhere to stay.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "balancer/plan_context.h"

namespace strata::balancer {

namespace {

// The least loaded active broker that may take p's replica from `from`.
int32_t BestDestination(const PlanContext& ctx, size_t p, int32_t from) {
  const ClusterModel& m = ctx.model();
  int32_t best = -1;
  for (int32_t b : ctx.active()) {
    if (!ctx.CanHost(p, from, b)) continue;
    if (best < 0 ||
        std::make_tuple(m.load(b).network_in, m.load(b).replicas, m.broker(b).id) <
            std::make_tuple(m.load(best).network_in, m.load(best).replicas, m.broker(best).id)) {
      best = b;
    }
  }
  return best;
}

std::string Label(const PartitionInfo& p) { return fmt::format("{}-{}", p.topic, p.partition); }

// Moves p's replica off `from` for `goal`; false (and a violation) when
// no broker can take it.
bool MoveOff(PlanContext& ctx, size_t p, int32_t from, const char* goal,
             const std::string& reason) {
  const int32_t to = BestDestination(ctx, p, from);
  const PartitionInfo& info = ctx.model().partition(p);
  if (to < 0) {
    ctx.plan().violations.push_back(
        fmt::format("{}: {} has no broker to move to from broker {} ({})", goal, Label(info),
                    ctx.model().broker(from).id, reason));
    return false;
  }
  ctx.MoveReplica(p, from, to, goal, reason);
  return true;
}

}  // namespace

bool EvacuateBrokers(PlanContext& ctx) {
  ClusterModel& m = ctx.model();
  bool met = true;
  for (int32_t b = 0; b < m.broker_count(); ++b) {
    const BrokerStatus status = m.broker(b).status;
    if (status == BrokerStatus::kActive || status == BrokerStatus::kStale) continue;
    const std::string reason =
        fmt::format("broker {} is {}", m.broker(b).id, BrokerStatusName(status));
    for (size_t p : m.ReplicasOn(b)) {
      if (m.partition(p).frozen) {
        met = false;  // its reassignment decides; the next cycle looks again
        continue;
      }
      met = MoveOff(ctx, p, b, kGoalLiveBrokers, reason) && met;
    }
  }
  return met;
}

bool FixRackAwareness(PlanContext& ctx) {
  ClusterModel& m = ctx.model();
  bool met = true;
  for (size_t p = 0; p < m.partition_count(); ++p) {
    const PartitionInfo& info = m.partition(p);
    const int32_t max = ctx.MaxPerRack(info.replicas.size());
    std::map<std::string, int32_t> per_rack;
    for (NodeId r : info.replicas) {
      const int32_t b = m.IndexOf(r);
      if (b >= 0) per_rack[m.broker(b).rack]++;
    }
    // Followers go first (the last in preference order), leaders last.
    for (size_t i = info.replicas.size(); i-- > 0;) {
      const int32_t b = m.IndexOf(info.replicas[i]);
      if (b < 0 || per_rack[m.broker(b).rack] <= max) continue;
      if (info.frozen || !ctx.Movable(p) || ctx.CapReached()) {
        met = false;
        break;
      }
      const std::string rack = m.broker(b).rack;
      if (!MoveOff(ctx, p, b, kGoalRackAware,
                   fmt::format("rack {} holds {} of its replicas, at most {}", rack, per_rack[rack],
                               max))) {
        met = false;
        break;
      }
      per_rack[rack]--;
      break;  // a partition moves once per cycle; the next cycle goes on
    }
  }
  return met;
}

bool FixReplicaCap(PlanContext& ctx) {
  ClusterModel& m = ctx.model();
  const int32_t cap = ctx.options().max_replicas_per_broker;
  bool met = true;
  for (int32_t b : ctx.active()) {
    if (m.load(b).replicas <= cap) continue;
    std::vector<size_t> replicas = m.ReplicasOn(b);
    // The quietest first: they disturb the soft goals least.
    std::stable_sort(replicas.begin(), replicas.end(), [&](size_t x, size_t y) {
      return m.partition(x).load.bytes_in < m.partition(y).load.bytes_in;
    });
    for (size_t p : replicas) {
      if (m.load(b).replicas <= cap || ctx.CapReached()) break;
      if (!ctx.Movable(p)) continue;
      // No room for one: none for the rest either (one violation said).
      if (!MoveOff(ctx, p, b, kGoalReplicaCap,
                   fmt::format("broker {} holds {} replicas, at most {}", m.broker(b).id,
                               m.load(b).replicas, cap))) {
        break;
      }
    }
    met = met && m.load(b).replicas <= cap;
  }
  return met;
}

bool FixDiskCap(PlanContext& ctx) {
  ClusterModel& m = ctx.model();
  bool met = true;
  for (int32_t b : ctx.active()) {
    const int64_t capacity = m.broker(b).capacity.disk;
    if (capacity <= 0) continue;
    const double cap = ctx.options().disk_cap_ratio * static_cast<double>(capacity);
    if (static_cast<double>(m.load(b).disk) <= cap) continue;
    std::vector<size_t> replicas = m.ReplicasOn(b);
    std::stable_sort(replicas.begin(), replicas.end(), [&](size_t x, size_t y) {
      return m.partition(x).load.size > m.partition(y).load.size;
    });
    for (size_t p : replicas) {
      if (static_cast<double>(m.load(b).disk) <= cap || ctx.CapReached()) break;
      if (!ctx.Movable(p) || m.partition(p).load.size == 0) continue;
      if (!MoveOff(ctx, p, b, kGoalDiskCap,
                   fmt::format("broker {} holds {} bytes locally, at most {:.0f}", m.broker(b).id,
                               m.load(b).disk, cap))) {
        break;
      }
    }
    met = met && static_cast<double>(m.load(b).disk) <= cap;
  }
  return met;
}

}  // namespace strata::balancer
