#include "cluster/partition_leadership.h"

#include <algorithm>

namespace strata::cluster {

std::optional<PartitionRecord> ElectLeader(const PartitionRecord& current,
                                           const std::function<bool(NodeId)>& live,
                                           const std::function<bool(NodeId)>& restarted) {
  bool leader_ok = current.leader != kNoNode && live(current.leader) && !restarted(current.leader);
  if (leader_ok) return std::nullopt;
  // The first live ISR member in replica order: the preferred leader when it
  // is back.
  NodeId next = kNoNode;
  for (NodeId id : current.replicas) {
    bool in_isr = std::find(current.isr.begin(), current.isr.end(), id) != current.isr.end();
    if (in_isr && live(id)) {
      next = id;
      break;
    }
  }
  if (next == kNoNode && current.leader == kNoNode) return std::nullopt;  // still offline
  PartitionRecord out = current;
  out.leader = next;
  out.leader_epoch = LeaderEpoch(current.leader_epoch.value() + 1);
  out.partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
  // With no live ISR member the ISR keeps its last member, so the partition
  // comes back only with a replica that has every record.
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
    if (next == kNoNode) return {ElectionOutcome::kEligibleNotAvailable, current};
  }
  PartitionRecord out = current;
  out.leader = next;
  out.leader_epoch = LeaderEpoch(current.leader_epoch.value() + 1);
  out.partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
  return {ElectionOutcome::kElected, out};
}

}  // namespace strata::cluster
