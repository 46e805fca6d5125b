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

}  // namespace strata::cluster
