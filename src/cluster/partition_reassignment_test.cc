#include "cluster/partition_reassignment.h"

#include <gtest/gtest.h>

namespace strata::cluster {
namespace {

std::vector<NodeId> Ids(std::initializer_list<int32_t> ids) {
  std::vector<NodeId> out;
  for (int32_t id : ids) out.emplace_back(id);
  return out;
}

PartitionRecord Record(std::initializer_list<int32_t> replicas, std::initializer_list<int32_t> isr,
                       int32_t leader) {
  PartitionRecord r;
  r.replicas = Ids(replicas);
  r.isr = Ids(isr);
  r.leader = NodeId(leader);
  r.leader_epoch = LeaderEpoch(4);
  r.partition_epoch = PartitionEpoch(9);
  return r;
}

const auto kAllLive = [](NodeId) { return true; };

TEST(PartitionReassignment, StartAddsTheTargetAndKeepsTheRemovedUntilDone) {
  auto start = StartReassignment(Record({1, 2}, {1, 2}, 1), Ids({2, 3}));
  ASSERT_EQ(start.error, ReassignmentError::kNone) << start.message;
  const PartitionRecord& r = start.record;
  EXPECT_EQ(r.replicas, Ids({2, 3, 1}));  // target, then the ones being removed
  EXPECT_EQ(r.adding, Ids({3}));
  EXPECT_EQ(r.removing, Ids({1}));
  EXPECT_EQ(r.isr, Ids({1, 2}));
  EXPECT_EQ(r.leader, NodeId(1));             // the leader stays until completion
  EXPECT_EQ(r.leader_epoch, LeaderEpoch(4));  // no leader change yet
  EXPECT_EQ(r.partition_epoch, PartitionEpoch(10));
  EXPECT_EQ(OriginalReplicas(r), Ids({2, 1}));
  EXPECT_TRUE(Reassigning(r));
  // The new replica is not contiguous with remote storage until its leader
  // has seen where its log starts.
  EXPECT_EQ(r.non_contiguous, Ids({3}));
  // Not done while the new replica is out of the ISR.
  EXPECT_FALSE(CompleteReassignment(r, kAllLive).has_value());
  // Cancelled, the flag goes with the replica.
  auto cancelled = CancelReassignment(r);
  ASSERT_EQ(cancelled.error, ReassignmentError::kNone) << cancelled.message;
  EXPECT_TRUE(cancelled.record.non_contiguous.empty());
}

TEST(PartitionReassignment, CompletesOnceTheIsrHoldsTheTargetAndMovesTheLeaderOff) {
  PartitionRecord r = StartReassignment(Record({1, 2}, {1, 2}, 1), Ids({2, 3})).record;
  r.isr = Ids({1, 2, 3});  // the new replica caught up
  auto done = CompleteReassignment(r, kAllLive);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->replicas, Ids({2, 3}));
  EXPECT_EQ(done->isr, Ids({2, 3}));
  EXPECT_TRUE(done->adding.empty() && done->removing.empty());
  EXPECT_EQ(done->leader, NodeId(2));  // the first target replica in the ISR
  EXPECT_EQ(done->leader_epoch, LeaderEpoch(5));
  EXPECT_EQ(done->partition_epoch, PartitionEpoch(11));
  // A live leader that stays keeps leading, at a new epoch (replicas removed).
  PartitionRecord keep = StartReassignment(Record({1, 2}, {1, 2}, 2), Ids({2, 3})).record;
  keep.isr = Ids({1, 2, 3});
  auto kept = CompleteReassignment(keep, kAllLive);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->leader, NodeId(2));
  EXPECT_EQ(kept->leader_epoch, LeaderEpoch(5));
  // A dead target replica is not elected.
  auto skip_dead = CompleteReassignment(r, [](NodeId id) { return id != NodeId(2); });
  ASSERT_TRUE(skip_dead.has_value());
  EXPECT_EQ(skip_dead->leader, NodeId(3));
}

TEST(PartitionReassignment, GrowingTheReplicationFactorRemovesNothing) {
  auto start = StartReassignment(Record({1}, {1}, 1), Ids({1, 2, 3}));
  ASSERT_EQ(start.error, ReassignmentError::kNone);
  EXPECT_EQ(start.record.adding, Ids({2, 3}));
  EXPECT_TRUE(start.record.removing.empty());
  PartitionRecord r = start.record;
  r.isr = Ids({1, 2});
  EXPECT_FALSE(CompleteReassignment(r, kAllLive).has_value());
  r.isr = Ids({1, 2, 3});
  auto done = CompleteReassignment(r, kAllLive);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->leader, NodeId(1));
  EXPECT_EQ(done->leader_epoch, LeaderEpoch(4));  // same leader, nothing removed
}

TEST(PartitionReassignment, CancelRestoresTheOriginalReplicas) {
  PartitionRecord r = StartReassignment(Record({1, 2}, {1, 2}, 1), Ids({3, 4})).record;
  r.isr = Ids({1, 2, 3});
  auto cancel = CancelReassignment(r);
  ASSERT_EQ(cancel.error, ReassignmentError::kNone) << cancel.message;
  EXPECT_EQ(cancel.record.replicas, Ids({1, 2}));
  EXPECT_EQ(cancel.record.isr, Ids({1, 2}));
  EXPECT_EQ(cancel.record.leader, NodeId(1));
  EXPECT_FALSE(Reassigning(cancel.record));
  EXPECT_EQ(cancel.record.leader_epoch, LeaderEpoch(5));  // the added replica is fenced
  EXPECT_EQ(CancelReassignment(cancel.record).error, ReassignmentError::kNoReassignmentInProgress);
  // A revert with no original replica in sync would need an unclean election.
  PartitionRecord lost = r;
  lost.isr = Ids({3});
  lost.leader = NodeId(3);
  EXPECT_EQ(CancelReassignment(lost).error, ReassignmentError::kInvalidReplicaAssignment);
}

TEST(PartitionReassignment, ANewTargetReplacesTheOneInProgress) {
  PartitionRecord r = StartReassignment(Record({1, 2}, {1, 2}, 1), Ids({2, 3})).record;
  r.isr = Ids({1, 2, 3});
  auto again = StartReassignment(r, Ids({1, 4}));
  ASSERT_EQ(again.error, ReassignmentError::kNone);
  EXPECT_EQ(again.record.adding, Ids({4}));    // relative to the original [1, 2]
  EXPECT_EQ(again.record.removing, Ids({2}));  // 3 is simply dropped
  EXPECT_EQ(again.record.replicas, Ids({1, 4, 2}));
  EXPECT_EQ(again.record.isr, Ids({1, 2}));
  EXPECT_EQ(again.record.leader_epoch, LeaderEpoch(5));  // 3 was dropped: fenced
  // A new target that drops nothing keeps the epoch.
  auto grow = StartReassignment(r, Ids({2, 3, 1}));
  ASSERT_EQ(grow.error, ReassignmentError::kNone);
  EXPECT_EQ(grow.record.leader_epoch, LeaderEpoch(4));
}

TEST(PartitionReassignment, BadTargetsAreRefused) {
  EXPECT_EQ(StartReassignment(Record({1}, {1}, 1), {}).error,
            ReassignmentError::kInvalidReplicaAssignment);
  EXPECT_EQ(StartReassignment(Record({1}, {1}, 1), Ids({2, 2})).error,
            ReassignmentError::kInvalidReplicaAssignment);
  // Moving everything to replicas with no data in sync is fine: the old ones
  // stay in the ISR until the new ones caught up.
  auto move = StartReassignment(Record({1}, {1}, 1), Ids({2}));
  ASSERT_EQ(move.error, ReassignmentError::kNone);
  EXPECT_EQ(move.record.isr, Ids({1}));
  EXPECT_EQ(move.record.leader, NodeId(1));
}

}  // namespace
}  // namespace strata::cluster
