#include "cluster/partition_leadership.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace strata::cluster {

namespace {

// The first live replica in replica order, or kNoNode.
NodeId FirstLive(const PartitionRecord& current, const std::function<bool(NodeId)>& live) {
  for (NodeId id : current.replicas) {
    if (live(id)) return id;
  }
  return kNoNode;
}

}  // namespace

bool IsUncleanElection(const PartitionRecord& current, const PartitionRecord& next) {
  return next.leader != kNoNode && next.leader != current.leader &&
         std::find(current.isr.begin(), current.isr.end(), next.leader) == current.isr.end();
}

std::optional<PartitionRecord> ElectLeader(const PartitionRecord& current,
                                           const std::function<bool(NodeId)>& live,
                                           const std::function<bool(NodeId)>& restarted,
                                           bool allow_unclean) {
  auto alive = [&](NodeId id) { return live(id) && !restarted(id); };
  // Gone or restarted brokers leave the ISR (a restarted one rejoins as a
  // follower that caught up), as Kafka's controller removes a fenced
  // broker; with no member left the ISR stays as it was, so the partition
  // comes back only with a replica that has every acknowledged record.
  std::vector<NodeId> isr;
  std::copy_if(current.isr.begin(), current.isr.end(), std::back_inserter(isr), alive);
  if (isr.empty()) isr = current.isr;
  bool leader_ok = current.leader != kNoNode && alive(current.leader);
  if (leader_ok && isr == current.isr) return std::nullopt;
  NodeId next = current.leader;
  if (!leader_ok) {
    // The first live ISR member in replica order: the preferred leader
    // when it is back.
    next = kNoNode;
    for (NodeId id : current.replicas) {
      if (std::find(isr.begin(), isr.end(), id) != isr.end() && live(id)) {
        next = id;
        break;
      }
    }
  }
  if (next == kNoNode && allow_unclean) {
    next = FirstLive(current, live);
    if (next != kNoNode) isr = {next};
  }
  if (next == kNoNode && current.leader == kNoNode && isr == current.isr) {
    return std::nullopt;  // still offline
  }
  PartitionRecord out = current;
  out.isr = std::move(isr);
  if (!leader_ok) {
    out.leader = next;
    out.leader_epoch = LeaderEpoch(current.leader_epoch.value() + 1);
  }
  out.partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
  return out;
}

RequestedElection ElectRequested(ElectionType type, const PartitionRecord& current,
                                 const std::function<bool(NodeId)>& live) {
  auto in_isr = [&](NodeId id) {
    return std::find(current.isr.begin(), current.isr.end(), id) != current.isr.end();
  };
  NodeId next = kNoNode;
  if (type == ElectionType::kPreferred) {
    if (current.replicas.empty()) return {ElectionOutcome::kPreferredNotAvailable, current};
    const NodeId preferred = current.replicas.front();
    if (current.leader == preferred && live(preferred))
      return {ElectionOutcome::kNotNeeded, current};
    if (!live(preferred) || !in_isr(preferred)) {
      return {ElectionOutcome::kPreferredNotAvailable, current};
    }
    next = preferred;
  } else {
    if (current.leader != kNoNode && live(current.leader)) {
      return {ElectionOutcome::kNotNeeded, current};
    }
    for (NodeId id : current.replicas) {
      if (in_isr(id) && live(id)) {
        next = id;
        break;
      }
    }
    if (next == kNoNode) next = FirstLive(current, live);
    if (next == kNoNode) return {ElectionOutcome::kEligibleNotAvailable, current};
  }
  PartitionRecord out = current;
  if (!in_isr(next)) out.isr = {next};
  out.leader = next;
  out.leader_epoch = LeaderEpoch(current.leader_epoch.value() + 1);
  out.partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
  return {ElectionOutcome::kElected, out};
}

std::vector<size_t> PartitionsToRebalance(std::span<const PartitionRecord* const> partitions,
                                          const std::function<bool(NodeId)>& live,
                                          int imbalance_percent) {
  struct Preferred {
    int64_t total = 0;
    int64_t led_by_another = 0;
  };
  std::map<NodeId, Preferred> by_broker;
  for (const PartitionRecord* p : partitions) {
    if (p->replicas.empty()) continue;
    Preferred& b = by_broker[p->replicas.front()];
    b.total++;
    if (p->leader != p->replicas.front()) b.led_by_another++;
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < partitions.size(); ++i) {
    const PartitionRecord& p = *partitions[i];
    if (p.replicas.empty() || p.leader == p.replicas.front()) continue;
    const Preferred& b = by_broker[p.replicas.front()];
    // Integer form of Kafka's led_by_another / total > percent / 100.
    if (b.led_by_another * 100 <= b.total * imbalance_percent) continue;
    if (ElectRequested(ElectionType::kPreferred, p, live).outcome == ElectionOutcome::kElected)
      out.push_back(i);
  }
  return out;
}

}  // namespace strata::cluster
