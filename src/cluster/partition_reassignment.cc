#include "cluster/partition_reassignment.h"

#include <algorithm>
#include <set>

namespace strata::cluster {
namespace {

bool Contains(const std::vector<NodeId>& v, NodeId id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

// `v` without the members of `drop`, in order.
std::vector<NodeId> Without(std::vector<NodeId> v, const std::vector<NodeId>& drop) {
  std::erase_if(v, [&](NodeId id) { return Contains(drop, id); });
  return v;
}

// `v` with only the members of `keep`, in order.
std::vector<NodeId> Within(std::vector<NodeId> v, const std::vector<NodeId>& keep) {
  std::erase_if(v, [&](NodeId id) { return !Contains(keep, id); });
  return v;
}

ReassignmentChange Invalid(std::string message) {
  return {ReassignmentError::kInvalidReplicaAssignment, std::move(message), {}};
}

// A new leader among `replicas` when the current one is not one of them:
// the first ISR member in replica order that `live` accepts (all, when it
// is null), else none.
NodeId LeaderWithin(const PartitionRecord& r, const std::vector<NodeId>& replicas,
                    const std::function<bool(NodeId)>& live) {
  if (r.leader != kNoNode && Contains(replicas, r.leader)) return r.leader;
  for (NodeId id : replicas) {
    if (Contains(r.isr, id) && (!live || live(id))) return id;
  }
  return kNoNode;
}

}  // namespace

std::vector<NodeId> OriginalReplicas(const PartitionRecord& current) {
  return Without(current.replicas, current.adding);
}

bool Reassigning(const PartitionRecord& current) {
  return !current.adding.empty() || !current.removing.empty();
}

ReassignmentChange StartReassignment(const PartitionRecord& current,
                                     const std::vector<NodeId>& target) {
  if (target.empty()) return Invalid("the target replica list is empty");
  if (std::set<NodeId>(target.begin(), target.end()).size() != target.size()) {
    return Invalid("the target replica list has a duplicate broker");
  }
  const std::vector<NodeId> original = OriginalReplicas(current);
  PartitionRecord next = current;
  next.adding = Without(target, original);
  next.removing = Without(original, target);
  next.replicas = target;
  next.replicas.insert(next.replicas.end(), next.removing.begin(), next.removing.end());
  // Replicas of a replaced reassignment that the new one drops leave too.
  next.isr = Within(current.isr, next.replicas);
  next.elr = Within(current.elr, next.replicas);
  // A replica new to the partition holds nothing yet: it is not contiguous
  // with remote storage until its leader has seen where its log starts.
  next.non_contiguous = Within(current.non_contiguous, next.replicas);
  for (NodeId id : next.adding) {
    if (!Contains(current.replicas, id)) next.non_contiguous.push_back(id);
  }
  if (next.isr.empty()) return Invalid("no in-sync replica would be left");
  next.leader = LeaderWithin(current, next.replicas, nullptr);
  // A replica dropped (from a replaced reassignment) is fenced by a new
  // leader epoch, as Kafka bumps it whenever replicas are removed: the
  // leader then forgets what it knew of its followers, so a replica dropped
  // and added again can join the ISR only on what it fetches anew.
  const bool dropped = !Without(current.replicas, next.replicas).empty();
  if (next.leader != current.leader || dropped) {
    next.leader_epoch = LeaderEpoch(current.leader_epoch.value() + 1);
  }
  next.partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
  return {ReassignmentError::kNone, "", std::move(next)};
}

ReassignmentChange CancelReassignment(const PartitionRecord& current) {
  if (!Reassigning(current)) {
    return {ReassignmentError::kNoReassignmentInProgress, "no reassignment in progress", {}};
  }
  PartitionRecord next = current;
  next.replicas = OriginalReplicas(current);
  next.adding.clear();
  next.removing.clear();
  next.isr = Within(current.isr, next.replicas);
  next.elr = Within(current.elr, next.replicas);
  next.non_contiguous = Within(current.non_contiguous, next.replicas);
  if (next.isr.empty()) {
    return Invalid("reverting would leave no in-sync replica (it needs an unclean election)");
  }
  next.leader = LeaderWithin(current, next.replicas, nullptr);
  // The added replicas are removed: fence them with a new leader epoch.
  next.leader_epoch = LeaderEpoch(current.leader_epoch.value() + 1);
  next.partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
  return {ReassignmentError::kNone, "", std::move(next)};
}

std::optional<PartitionRecord> CompleteReassignment(const PartitionRecord& current,
                                                    const std::function<bool(NodeId)>& live) {
  if (!Reassigning(current)) return std::nullopt;
  const std::vector<NodeId> target = Without(current.replicas, current.removing);
  for (NodeId id : target) {
    if (!Contains(current.isr, id)) return std::nullopt;
  }
  PartitionRecord next = current;
  next.replicas = target;
  next.isr = Within(current.isr, target);
  next.elr = Within(current.elr, target);
  next.non_contiguous = Within(current.non_contiguous, target);
  std::erase_if(next.forgot_lost_data,
                [&](const auto& mark) { return !Contains(target, mark.first); });
  next.adding.clear();
  next.removing.clear();
  next.leader = LeaderWithin(current, target, live);
  if (next.leader != current.leader || !current.removing.empty()) {
    next.leader_epoch = LeaderEpoch(current.leader_epoch.value() + 1);
  }
  next.partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
  return next;
}

}  // namespace strata::cluster
