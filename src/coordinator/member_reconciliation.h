#pragma once
// Incremental reconciliation of one KIP-848 consumer group member: moves a
// member's current assignment towards its target one step per heartbeat,
// revoke before assign, so no partition is ever owned by two members. The
// steps, as Kafka's CurrentAssignmentBuilder takes them:
//   - Partitions the member keeps stay; those it loses go into
//     `pending_revocation`. While it still owns any of them the member stays
//     at its epoch (UNREVOKED_PARTITIONS) and gets only what it keeps.
//   - Once it reports them gone (its owned partitions in a heartbeat), it
//     moves to the target epoch and gets the new partitions, except those
//     another member still owns or is revoking (UNRELEASED_PARTITIONS), which
//     it gets on a later heartbeat after their owner lets them go.
//   - With nothing left to revoke or wait for, it is STABLE at the target
//     epoch.
//
// Thread-safety: pure functions.
#include <cstdint>
#include <functional>
#include <optional>

#include "coordinator/server_assignor.h"

namespace strata::coordinator {

// Kafka's MemberState, with the values its records carry.
enum class MemberState : int8_t {
  kStable = 0,
  kUnrevokedPartitions = 1,
  kUnreleasedPartitions = 2,
  kUnknown = 127,
};
// "stable", "unrevoked_partitions", "unreleased_partitions", "unknown".
const char* MemberStateName(MemberState s);

// Where a member stands (Kafka's ConsumerGroupCurrentMemberAssignment record).
struct MemberAssignment {
  int32_t member_epoch = 0;
  int32_t previous_member_epoch = 0;
  MemberState state = MemberState::kStable;
  TopicAssignment assigned;            // what the member may consume now
  TopicAssignment pending_revocation;  // what it must give up first
  bool operator==(const MemberAssignment&) const = default;
};

// The epoch of the member that owns (or is revoking) a partition, or -1
// when no member does. Asked only of partitions the member does not hold.
using PartitionOwnerEpoch = std::function<int32_t(const TopicId&, int32_t)>;

// The member's next step towards `target` at `target_epoch`. `owned` is
// what the member reported owning in this heartbeat (nullopt: it did not
// say, so it is taken to still own what it was told to revoke).
MemberAssignment ReconcileMember(const MemberAssignment& member, int32_t target_epoch,
                                 const TopicAssignment& target,
                                 const std::optional<TopicAssignment>& owned,
                                 const PartitionOwnerEpoch& owner_epoch);

// Whether every partition of `a` is in `b`.
bool IsSubset(const TopicAssignment& a, const TopicAssignment& b);

}  // namespace strata::coordinator
