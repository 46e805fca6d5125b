#pragma once
// Reassigning one partition's replicas, as Kafka's controller models it
// (KIP-455): while a reassignment runs, the record's `replicas` are the
// target followed by the original replicas being removed, `adding` the
// target replicas that were not there before and `removing` the original
// ones not in the target. New replicas copy the log and join the ISR like any
// follower; once the ISR holds every target replica the reassignment
// completes: `replicas` becomes the target, the removed replicas leave the
// ISR and, if one led, the leadership goes to the first live target replica
// in the ISR. Pure functions, so the rules are tested without a cluster;
// each change bumps the partition epoch, and the leader epoch when the
// leader changes or replicas are removed (so removed replicas are fenced).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cluster/records.h"

namespace strata::cluster {

enum class ReassignmentError {
  kNone,
  kNoReassignmentInProgress,  // cancel with nothing running (Kafka's 85)
  kInvalidReplicaAssignment,  // empty or duplicate target; a revert that needs an unclean election
};

struct ReassignmentChange {
  ReassignmentError error = ReassignmentError::kNone;
  std::string message;
  PartitionRecord record;  // the record to write, when error is kNone
};

// The replicas as they were before the reassignment in progress, if any.
std::vector<NodeId> OriginalReplicas(const PartitionRecord& current);
bool Reassigning(const PartitionRecord& current);

// Starts a reassignment to `target` (replacing one in progress: its target
// is dropped, the original replicas stay the base).
ReassignmentChange StartReassignment(const PartitionRecord& current,
                                     const std::vector<NodeId>& target);
// Stops the reassignment in progress and goes back to the original replicas.
ReassignmentChange CancelReassignment(const PartitionRecord& current);
// The completed record when the ISR holds every target replica; nullopt
// while it does not (or nothing is being reassigned).
std::optional<PartitionRecord> CompleteReassignment(const PartitionRecord& current,
                                                    const std::function<bool(NodeId)>& live);

}  // namespace strata::cluster
