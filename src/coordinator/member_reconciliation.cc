#include "coordinator/member_reconciliation.h"

#include <algorithm>

namespace strata::coordinator {

namespace {

// Whether the member may still own any of `revoking`: unknown (it did not
// report) counts as yes.
bool StillOwnsAny(const std::optional<TopicAssignment>& owned, const TopicAssignment& revoking) {
  if (!owned) return true;
  for (const auto& [t, partitions] : revoking) {
    auto it = owned->find(t);
    if (it == owned->end()) continue;
    for (int32_t p : partitions) {
      if (it->second.count(p) > 0) return true;
    }
  }
  return false;
}

// The previous epoch is kept while the epoch stays: a member whose last
// answer was lost may still speak at it.
MemberAssignment WithEpoch(MemberAssignment m, int32_t epoch) {
  if (epoch == m.member_epoch) return m;
  m.previous_member_epoch = m.member_epoch;
  m.member_epoch = epoch;
  return m;
}

// One step from `member`'s assigned partitions towards `target`; while
// something is left to revoke the member is at `revoking_epoch`.
MemberAssignment NextStep(const MemberAssignment& member, int32_t revoking_epoch,
                          int32_t target_epoch, const TopicAssignment& target,
                          const std::optional<TopicAssignment>& owned,
                          const PartitionOwnerEpoch& owner_epoch) {
  TopicAssignment keep, revoke, add;
  bool unreleased = false;
  std::set<TopicId> topics;
  for (const auto& [t, ps] : target) topics.insert(t);
  for (const auto& [t, ps] : member.assigned) topics.insert(t);
  static const std::set<int32_t> kNone;
  for (const TopicId& t : topics) {
    auto in_target = target.find(t);
    auto in_current = member.assigned.find(t);
    const std::set<int32_t>& want = in_target == target.end() ? kNone : in_target->second;
    const std::set<int32_t>& have =
        in_current == member.assigned.end() ? kNone : in_current->second;
    for (int32_t p : have) (want.count(p) > 0 ? keep : revoke)[t].insert(p);
    for (int32_t p : want) {
      if (have.count(p) > 0) continue;
      auto revoking = member.pending_revocation.find(t);
      const bool own = revoking != member.pending_revocation.end() && revoking->second.count(p);
      if (!own && owner_epoch(t, p) != -1) {
        unreleased = true;  // another member still holds it
      } else {
        add[t].insert(p);
      }
    }
  }
  MemberAssignment next;
  if (!revoke.empty() && StillOwnsAny(owned, revoke)) {
    next = WithEpoch(member, revoking_epoch);
    next.state = MemberState::kUnrevokedPartitions;
    next.assigned = std::move(keep);
    next.pending_revocation = std::move(revoke);
    return next;
  }
  next = WithEpoch(member, target_epoch);
  next.state = unreleased ? MemberState::kUnreleasedPartitions : MemberState::kStable;
  next.assigned = std::move(keep);
  for (auto& [t, ps] : add) next.assigned[t].insert(ps.begin(), ps.end());
  next.pending_revocation.clear();
  return next;
}

}  // namespace

const char* MemberStateName(MemberState s) {
  switch (s) {
    case MemberState::kStable:
      return "stable";
    case MemberState::kUnreleasedPartitions:
      return "unreleased_partitions";
    case MemberState::kUnrevokedPartitions:
      return "unrevoked_partitions";
    case MemberState::kUnknown:
      break;
  }
  return "unknown";
}

MemberAssignment ReconcileMember(const MemberAssignment& member, int32_t target_epoch,
                                 const TopicAssignment& target,
                                 const std::optional<TopicAssignment>& owned,
                                 const PartitionOwnerEpoch& owner_epoch) {
  switch (member.state) {
    case MemberState::kStable:
      if (member.member_epoch == target_epoch) return member;
      return NextStep(member, member.member_epoch, target_epoch, target, owned, owner_epoch);
    case MemberState::kUnrevokedPartitions:
      // Nothing moves until the member has let go of what it revokes. If
      // the target moved on meanwhile and takes more away, the member's
      // epoch steps once (never past the target), so the new revocation is
      // told apart from the last.
      if (StillOwnsAny(owned, member.pending_revocation)) return member;
      return NextStep(member, std::min(member.member_epoch + 1, target_epoch), target_epoch, target,
                      owned, owner_epoch);
    case MemberState::kUnreleasedPartitions:
      // At the target epoch it waits for partitions to be released; asking
      // again hands over those that were since.
      return NextStep(member, member.member_epoch, target_epoch, target, owned, owner_epoch);
    case MemberState::kUnknown:
      break;
  }
  return member;
}

bool IsSubset(const TopicAssignment& a, const TopicAssignment& b) {
  for (const auto& [t, partitions] : a) {
    if (partitions.empty()) continue;
    auto it = b.find(t);
    if (it == b.end() ||
        !std::includes(it->second.begin(), it->second.end(), partitions.begin(), partitions.end()))
      return false;
  }
  return true;
}

}  // namespace strata::coordinator
