#include "coordinator/member_reconciliation.h"

#include <gtest/gtest.h>

namespace strata::coordinator {
namespace {

const TopicId kA = [] {
  TopicId id{};
  id[0] = 0xa;
  return id;
}();

TopicAssignment Of(std::set<int32_t> partitions) {
  if (partitions.empty()) return {};
  return {{kA, std::move(partitions)}};
}

MemberAssignment Stable(int32_t epoch, std::set<int32_t> partitions) {
  MemberAssignment m;
  m.member_epoch = epoch;
  m.previous_member_epoch = epoch - 1;
  m.assigned = Of(std::move(partitions));
  return m;
}

const PartitionOwnerEpoch kNobodyElse = [](const TopicId&, int32_t) { return -1; };

TEST(MemberReconciliationTest, AStableMemberAtTheTargetEpochStaysAsItIs) {
  MemberAssignment m = Stable(3, {0, 1});
  EXPECT_EQ(ReconcileMember(m, 3, Of({0, 1, 2}), Of({0, 1}), kNobodyElse), m);
}

TEST(MemberReconciliationTest, NewPartitionsWithNothingToRevokeComeAtOnce) {
  MemberAssignment next = ReconcileMember(Stable(3, {0}), 4, Of({0, 1}), Of({0}), kNobodyElse);
  EXPECT_EQ(next.state, MemberState::kStable);
  EXPECT_EQ(next.member_epoch, 4);
  EXPECT_EQ(next.previous_member_epoch, 3);
  EXPECT_EQ(next.assigned, Of({0, 1}));
  EXPECT_TRUE(next.pending_revocation.empty());
}

TEST(MemberReconciliationTest, RevocationComesFirstAndTheEpochWaitsForIt) {
  // Target 4 takes partition 1 away and gives 2.
  MemberAssignment m = Stable(3, {0, 1});
  MemberAssignment revoking = ReconcileMember(m, 4, Of({0, 2}), Of({0, 1}), kNobodyElse);
  EXPECT_EQ(revoking.state, MemberState::kUnrevokedPartitions);
  EXPECT_EQ(revoking.member_epoch, 3);  // not yet at the target
  EXPECT_EQ(revoking.assigned, Of({0}));
  EXPECT_EQ(revoking.pending_revocation, Of({1}));

  // A heartbeat that does not say what it owns changes nothing; nor one
  // that still owns partition 1.
  EXPECT_EQ(ReconcileMember(revoking, 4, Of({0, 2}), std::nullopt, kNobodyElse), revoking);
  EXPECT_EQ(ReconcileMember(revoking, 4, Of({0, 2}), Of({0, 1}), kNobodyElse), revoking);

  // Revoked: on to epoch 4 with partition 2.
  MemberAssignment done = ReconcileMember(revoking, 4, Of({0, 2}), Of({0}), kNobodyElse);
  EXPECT_EQ(done.state, MemberState::kStable);
  EXPECT_EQ(done.member_epoch, 4);
  EXPECT_EQ(done.previous_member_epoch, 3);
  EXPECT_EQ(done.assigned, Of({0, 2}));
  EXPECT_TRUE(done.pending_revocation.empty());
}

TEST(MemberReconciliationTest, APartitionAnotherMemberStillOwnsIsWithheldUntilReleased) {
  int32_t owner_of_2 = 3;  // another member at epoch 3 holds partition 2
  const PartitionOwnerEpoch owners = [&](const TopicId&, int32_t p) {
    return p == 2 ? owner_of_2 : -1;
  };
  MemberAssignment waiting = ReconcileMember(Stable(3, {0}), 4, Of({0, 1, 2}), Of({0}), owners);
  EXPECT_EQ(waiting.state, MemberState::kUnreleasedPartitions);
  EXPECT_EQ(waiting.member_epoch, 4);
  EXPECT_EQ(waiting.assigned, Of({0, 1}));

  // Still held: no change, and the previous epoch is kept (a member whose
  // last answer was lost may still speak at 3).
  MemberAssignment again = ReconcileMember(waiting, 4, Of({0, 1, 2}), Of({0, 1}), owners);
  EXPECT_EQ(again, waiting);
  EXPECT_EQ(again.previous_member_epoch, 3);

  owner_of_2 = -1;  // released
  MemberAssignment done = ReconcileMember(waiting, 4, Of({0, 1, 2}), Of({0, 1}), owners);
  EXPECT_EQ(done.state, MemberState::kStable);
  EXPECT_EQ(done.assigned, Of({0, 1, 2}));
}

TEST(MemberReconciliationTest, AMemberThatNoLongerOwnsWhatItLosesSkipsTheRevocation) {
  // It reports owning only partition 0 (it lost 1 already, e.g. after a
  // rebalance timeout on its side): nothing to wait for.
  MemberAssignment next = ReconcileMember(Stable(3, {0, 1}), 4, Of({0}), Of({0}), kNobodyElse);
  EXPECT_EQ(next.state, MemberState::kStable);
  EXPECT_EQ(next.member_epoch, 4);
  EXPECT_EQ(next.assigned, Of({0}));
}

TEST(MemberReconciliationTest, ATargetThatMovesOnDuringARevocationStepsTheEpochOnce) {
  // At epoch 3 revoking 1 towards target 4; target 6 then also takes 0.
  MemberAssignment revoking =
      ReconcileMember(Stable(3, {0, 1}), 4, Of({0}), Of({0, 1}), kNobodyElse);
  ASSERT_EQ(revoking.state, MemberState::kUnrevokedPartitions);
  MemberAssignment again = ReconcileMember(revoking, 6, Of({2}), Of({0}), kNobodyElse);
  EXPECT_EQ(again.state, MemberState::kUnrevokedPartitions);
  EXPECT_EQ(again.member_epoch, 4);  // one step, not the target's 6
  EXPECT_EQ(again.pending_revocation, Of({0}));
  EXPECT_TRUE(again.assigned.empty());
}

TEST(MemberReconciliationTest, APartitionBeingRevokedThatTheTargetGivesBackIsKept) {
  MemberAssignment revoking =
      ReconcileMember(Stable(3, {0, 1}), 4, Of({0}), Of({0, 1}), kNobodyElse);
  ASSERT_EQ(revoking.pending_revocation, Of({1}));
  // The member itself is the owner the lookup reports for partition 1.
  const PartitionOwnerEpoch self = [](const TopicId&, int32_t p) { return p == 1 ? 3 : -1; };
  MemberAssignment next = ReconcileMember(revoking, 5, Of({0, 1}), Of({0}), self);
  EXPECT_EQ(next.state, MemberState::kStable);
  EXPECT_EQ(next.member_epoch, 5);
  EXPECT_EQ(next.assigned, Of({0, 1}));
}

TEST(MemberReconciliationTest, SubsetsAreByPartition) {
  EXPECT_TRUE(IsSubset(Of({1}), Of({0, 1})));
  EXPECT_TRUE(IsSubset({}, Of({0})));
  EXPECT_FALSE(IsSubset(Of({2}), Of({0, 1})));
  EXPECT_FALSE(IsSubset(Of({0}), {}));
}

}  // namespace
}  // namespace strata::coordinator
