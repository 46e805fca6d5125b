#include "balancer/model_builder.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata::balancer {

namespace {

BrokerStatus StatusOf(const BrokerTopology& b, const LoadWindow& load, const ModelOptions& o) {
  if (b.registered && b.draining) return BrokerStatus::kDraining;
  if (b.registered && b.standby) return BrokerStatus::kStandby;
  if (!b.registered || b.fenced) return BrokerStatus::kStale;
  const int64_t last = load.LastSampleMs(b.id);
  if (last == 0 || o.now_ms - last > o.stale_after_ms) return BrokerStatus::kStale;
  return BrokerStatus::kActive;
}

}  // namespace

int64_t FailureTimeoutOf(const BrokerTopology& b, const ModelOptions& options) {
  return b.left_cleanly ? std::max(options.failure_timeout_ms, options.shutdown_grace_ms)
                        : options.failure_timeout_ms;
}

BuiltModel BuildModel(const std::vector<BrokerTopology>& brokers,
                      const std::vector<PartitionTopology>& partitions, const LoadWindow& load,
                      const ModelOptions& options) {
  BuiltModel out;
  std::vector<BrokerTopology> sorted = brokers;
  std::sort(sorted.begin(), sorted.end(),
            [](const BrokerTopology& x, const BrokerTopology& y) { return x.id < y.id; });
  std::vector<NodeId> overdue;
  for (const BrokerTopology& b : sorted) {
    if (b.registered) continue;
    out.gone.push_back(b.id);
    if (options.now_ms - b.gone_since_ms >= FailureTimeoutOf(b, options)) overdue.push_back(b.id);
  }
  if (static_cast<int32_t>(overdue.size()) > options.max_failed_brokers) {
    out.note = fmt::format(
        "{} brokers gone longer than the failure timeout, more than "
        "strata.balancer.max.failed.brokers={}: none is re-placed",
        overdue.size(), options.max_failed_brokers);
    overdue.clear();
  }
  out.dead = overdue;
  for (const BrokerTopology& b : sorted) {
    BrokerInfo info;
    info.id = b.id;
    info.rack = b.rack;
    info.capacity = b.capacity;
    const bool dead = std::find(overdue.begin(), overdue.end(), b.id) != overdue.end();
    info.status = dead ? BrokerStatus::kDead : StatusOf(b, load, options);
    if (auto totals = load.Totals(b.id)) info.cpu_used = totals->cpu_cores_used;
    out.model.AddBroker(std::move(info));
  }
  for (const PartitionTopology& p : partitions) {
    PartitionInfo info;
    info.topic = p.topic;
    info.partition = p.partition;
    info.replicas = p.replicas;
    info.leader = p.leader;
    info.isr = p.isr;
    info.frozen = p.reassigning;
    if (auto l = load.Load(p.topic, p.partition)) info.load = *l;
    out.model.AddPartition(std::move(info));
  }
  return out;
}

}  // namespace strata::balancer
