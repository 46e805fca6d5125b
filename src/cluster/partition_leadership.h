#pragma once
// Leader election for one partition, as the controller decides it when
// brokers come and go: pure functions, so the rules are tested without a
// cluster. A leader must be a live broker in the ISR (only an in-sync
// replica has every acknowledged record), unless unclean election is
// allowed (`unclean.leader.election.enable`, or an operator's unclean
// ElectLeaders): then, with no live ISR member, the first live replica
// leads with an ISR of itself, and records it lacks are lost. Each change of
// leader bumps the leader epoch and the partition epoch.
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "cluster/records.h"

namespace strata::cluster {

// `live(id)`: the broker is registered and not fenced. `restarted(id)`: it
// registered again (a new broker epoch) since the controller last looked,
// so it must take its leadership anew, at a new epoch.
// Brokers neither live nor the same incarnation leave the ISR (unless it
// would be empty); a leader among them is replaced by the first live ISR
// member in replica order, or none (-1) until one returns; with
// `allow_unclean`, then the first live replica of all.
// Returns the new record, or nullopt when nothing changes.
//
// KIP-966 eligible leader replicas, with `elr.min_insync_replicas` > 0 (the
// topic's min.insync.replicas): replicas that left the ISR while it was
// below it hold every committed record (the high watermark does not move
// then), so with no live ISR member the first live one of them in replica
// order leads, cleanly, with an ISR of itself. The sets are kept by
// UpdateEligibleLeaders.
struct EligibleLeaderRules {
  int min_insync_replicas = 0;  // 0: no eligible leader replicas
  // The broker restarted after an unclean shutdown, so records it had not
  // flushed may be gone: it leaves the ELR. Null: none did.
  std::function<bool(NodeId)> lost_unflushed;
};
std::optional<PartitionRecord> ElectLeader(const PartitionRecord& current,
                                           const std::function<bool(NodeId)>& live,
                                           const std::function<bool(NodeId)>& restarted,
                                           bool allow_unclean = false,
                                           const EligibleLeaderRules& elr = {});
// Whether `next` got its leader by an unclean election: one outside the
// ISR and the ELR it was elected from.
bool IsUncleanElection(const PartitionRecord& current, const PartitionRecord& next);

// Kafka's maybePopulateTargetElr for a change from `before` to `after`: with
// the ISR at or above the (effective) min ISR both ELR sets are empty;
// otherwise the ELR is the old ELR and ISR minus the new ISR and minus
// replicas that lost unflushed records. An unclean leader clears them.
void UpdateEligibleLeaders(const PartitionRecord& before, PartitionRecord& after,
                           const EligibleLeaderRules& rules);

// Replica `id`'s broker came back with a new, empty log directory (a
// replaced or wiped disk): whatever `p` says it held is gone. It leaves the
// leadership (at a new leader epoch), the ELR and the ISR, unless it is the
// ISR's last member (the ISR is never empty; the partition then stays
// offline rather than be led by an empty log), and is marked non-contiguous,
// so no election, clean or unclean, picks it until a leader sees its log
// rebuilt. `tiered`: the topic has remote.storage.enable. Returns whether
// `p` changed (ForgetsLostReplica); its partition epoch is the caller's.
bool ForgetLostReplica(PartitionRecord& p, NodeId id, bool tiered);
// Whether the record `p` of a partition made at revision `created` still
// counts on data that replica `id` lost when its broker registered with a
// new log directory, LostDataBefore `lost_before`: the partition is older
// than that, `p` has not forgotten that loss yet
// (PartitionRecord::forgot_lost_data) and it counts on the replica
// (ForgetsLostReplica). Not the record's write revision: a leader's ISR
// change or a reassignment written after the registration may still carry
// the replica's ISR membership from before.
bool CountsOnLostData(const PartitionRecord& p, int64_t created, NodeId id, int64_t lost_before,
                      bool tiered);
// Whether ForgetLostReplica changes `p`: it counts on replica `id`'s data
// (it leads, or is in the ISR or an ELR), and that data may be held
// elsewhere: by another replica, or by remote storage. The only replica of
// a topic without remote storage comes back empty, as in Kafka: nothing
// could ever bring its records back, and keeping the partition offline
// would only keep it offline for good.
bool ForgetsLostReplica(const PartitionRecord& p, NodeId id, bool tiered);

// An election an operator asks for (ElectLeaders, kafka-leader-election).
enum class ElectionType : int8_t { kPreferred = 0, kUnclean = 1 };
enum class ElectionOutcome {
  kElected,                // `record` holds the new leader
  kNotNeeded,              // the wanted leader leads already
  kPreferredNotAvailable,  // the first replica is not live or not in the ISR
  kEligibleNotAvailable,   // unclean: no live in-sync replica to lead
};
struct RequestedElection {
  ElectionOutcome outcome = ElectionOutcome::kNotNeeded;
  PartitionRecord record;
};
// Preferred: the first replica leads, if live and in the ISR. Unclean (as
// Kafka's): only when the leader is gone; the first live ISR member, else
// the first live replica, with an ISR of itself.
RequestedElection ElectRequested(ElectionType type, const PartitionRecord& current,
                                 const std::function<bool(NodeId)>& live);

// Automatic preferred-leader election (auto.leader.rebalance.enable), as
// Kafka's controller decides it: a broker is imbalanced when, of the
// partitions whose preferred (first) replica it is, more than
// `imbalance_percent` % are led by another broker. Returns the indices into
// `partitions` of the imbalanced brokers' partitions where a preferred
// election would succeed (the preferred replica is live and in the ISR).
std::vector<size_t> PartitionsToRebalance(std::span<const PartitionRecord* const> partitions,
                                          const std::function<bool(NodeId)>& live,
                                          int imbalance_percent);

}  // namespace strata::cluster
