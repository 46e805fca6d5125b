#include "cluster/partition_leadership.h"

#include <gtest/gtest.h>

#include <set>

namespace strata::cluster {
namespace {

PartitionRecord Record(std::vector<int32_t> replicas, std::vector<int32_t> isr, int32_t leader,
                       int32_t epoch) {
  PartitionRecord r;
  for (int32_t id : replicas) r.replicas.emplace_back(id);
  for (int32_t id : isr) r.isr.emplace_back(id);
  r.leader = NodeId(leader);
  r.leader_epoch = LeaderEpoch(epoch);
  r.partition_epoch = PartitionEpoch(epoch + 10);
  return r;
}

auto Live(std::set<int32_t> ids) {
  return [ids](NodeId id) { return ids.contains(id.value()); };
}
auto None() {
  return [](NodeId) { return false; };
}

TEST(PartitionLeadership, LiveLeaderStays) {
  EXPECT_FALSE(ElectLeader(Record({1, 2}, {1, 2}, 1, 3), Live({1, 2}), None()));
}

TEST(PartitionLeadership, DeadLeaderMovesToLiveIsrMember) {
  auto r = ElectLeader(Record({1, 2, 3}, {1, 3}, 1, 3), Live({2, 3}), None());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->leader, NodeId(3));  // 2 is live but not in sync
  EXPECT_EQ(r->leader_epoch, LeaderEpoch(4));
  EXPECT_EQ(r->partition_epoch, PartitionEpoch(14));
  EXPECT_EQ(r->isr, std::vector<NodeId>{NodeId(3)});  // the dead leader left it
}

TEST(PartitionLeadership, GoneFollowersLeaveTheIsrAtTheSameLeaderEpoch) {
  auto r = ElectLeader(Record({1, 2, 3}, {1, 2, 3}, 1, 3), Live({1, 3}), None());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->leader, NodeId(1));
  EXPECT_EQ(r->leader_epoch, LeaderEpoch(3));
  EXPECT_EQ(r->partition_epoch, PartitionEpoch(14));
  EXPECT_EQ(r->isr, (std::vector<NodeId>{NodeId(1), NodeId(3)}));
  // A restarted follower leaves it too (it rejoins by catching up).
  auto again = ElectLeader(*r, Live({1, 3}), Live({3}));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->isr, std::vector<NodeId>{NodeId(1)});
  EXPECT_FALSE(ElectLeader(*again, Live({1, 3}), None()));
}

TEST(PartitionLeadership, NoLiveIsrMemberGoesOfflineAndComesBack) {
  auto offline = ElectLeader(Record({1}, {1}, 1, 0), Live({2, 3}), None());
  ASSERT_TRUE(offline);
  EXPECT_EQ(offline->leader, kNoNode);
  EXPECT_EQ(offline->leader_epoch, LeaderEpoch(1));  // reported even without a leader
  EXPECT_EQ(offline->isr, std::vector<NodeId>{NodeId(1)});
  // Still gone: nothing to write.
  EXPECT_FALSE(ElectLeader(*offline, Live({2, 3}), None()));
  auto back = ElectLeader(*offline, Live({1, 2, 3}), None());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->leader, NodeId(1));
  EXPECT_EQ(back->leader_epoch, LeaderEpoch(2));
}

TEST(PartitionLeadership, RestartedLeaderTakesItsLeadershipAtANewEpoch) {
  auto r = ElectLeader(Record({1}, {1}, 1, 5), Live({1}), Live({1}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->leader, NodeId(1));
  EXPECT_EQ(r->leader_epoch, LeaderEpoch(6));
}

TEST(PartitionLeadership, PreferredReplicaOrderWins) {
  auto r = ElectLeader(Record({3, 2, 1}, {1, 2, 3}, -1, 7), Live({1, 2, 3}), None());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->leader, NodeId(3));
}

TEST(RequestedElection, PreferredMovesLeadershipToTheFirstReplicaWhenItCan) {
  auto moved = ElectRequested(ElectionType::kPreferred, Record({2, 1}, {1, 2}, 1, 3), Live({1, 2}));
  ASSERT_EQ(moved.outcome, ElectionOutcome::kElected);
  EXPECT_EQ(moved.record.leader, NodeId(2));
  EXPECT_EQ(moved.record.leader_epoch, LeaderEpoch(4));
  EXPECT_EQ(moved.record.partition_epoch, PartitionEpoch(14));
  EXPECT_EQ(
      ElectRequested(ElectionType::kPreferred, Record({2, 1}, {2, 1}, 2, 3), Live({1, 2})).outcome,
      ElectionOutcome::kNotNeeded);
  // Not live, or not in the ISR (it may miss acknowledged records): refused.
  EXPECT_EQ(
      ElectRequested(ElectionType::kPreferred, Record({2, 1}, {1, 2}, 1, 3), Live({1})).outcome,
      ElectionOutcome::kPreferredNotAvailable);
  EXPECT_EQ(
      ElectRequested(ElectionType::kPreferred, Record({2, 1}, {1}, 1, 3), Live({1, 2})).outcome,
      ElectionOutcome::kPreferredNotAvailable);
}

TEST(PartitionLeadership, UncleanElectionOnlyWhenAllowedAndNoInSyncReplicaLives) {
  const PartitionRecord offline = Record({1, 2, 3}, {1}, -1, 4);
  // Not allowed: stays offline.
  EXPECT_FALSE(ElectLeader(offline, Live({2, 3}), None()));
  // Allowed: the first live replica, with an ISR of itself.
  auto r = ElectLeader(offline, Live({3, 2}), None(), /*allow_unclean=*/true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->leader, NodeId(2));
  EXPECT_EQ(r->isr, std::vector<NodeId>{NodeId(2)});
  EXPECT_EQ(r->leader_epoch, LeaderEpoch(5));
  EXPECT_TRUE(IsUncleanElection(offline, *r));
  // A live in-sync replica is always preferred, allowed or not.
  auto clean = ElectLeader(Record({1, 2, 3}, {1, 3}, 1, 4), Live({2, 3}), None(), true);
  ASSERT_TRUE(clean);
  EXPECT_EQ(clean->leader, NodeId(3));
  EXPECT_EQ(clean->isr, std::vector<NodeId>{NodeId(3)});
  EXPECT_FALSE(IsUncleanElection(Record({1, 2, 3}, {1, 3}, 1, 4), *clean));
  // Nobody live at all: offline even when allowed.
  EXPECT_FALSE(ElectLeader(offline, None(), None(), true));
}

TEST(RequestedElection, UncleanPrefersInSyncReplicasThenAnyLiveReplica) {
  EXPECT_EQ(
      ElectRequested(ElectionType::kUnclean, Record({1, 2}, {1, 2}, 1, 3), Live({1, 2})).outcome,
      ElectionOutcome::kNotNeeded);
  auto moved = ElectRequested(ElectionType::kUnclean, Record({1, 2}, {1, 2}, -1, 3), Live({2}));
  ASSERT_EQ(moved.outcome, ElectionOutcome::kElected);
  EXPECT_EQ(moved.record.leader, NodeId(2));
  // Broker 2 is live but out of sync: elected (an operator's unclean election),
  // with an ISR of itself.
  auto unclean = ElectRequested(ElectionType::kUnclean, Record({1, 2}, {1}, -1, 3), Live({2}));
  ASSERT_EQ(unclean.outcome, ElectionOutcome::kElected);
  EXPECT_EQ(unclean.record.leader, NodeId(2));
  EXPECT_EQ(unclean.record.isr, std::vector<NodeId>{NodeId(2)});
  EXPECT_EQ(ElectRequested(ElectionType::kUnclean, Record({1, 2}, {1}, -1, 3), None()).outcome,
            ElectionOutcome::kEligibleNotAvailable);
}

// Kafka's rule for auto.leader.rebalance.enable: a broker whose preferred
// partitions are led elsewhere beyond the percentage gets them back, where
// it is live and in sync; a broker within the percentage is left alone.
// A replica with a gap to remote storage never leads: not by the
// controller's unclean election, not by an operator's, not from the ELR.
TEST(PartitionLeadership, AReplicaNotContiguousWithRemoteStorageIsNeverElected) {
  PartitionRecord gapped = Record({1, 2, 3}, {1}, 1, 3);
  gapped.non_contiguous = {NodeId(2)};
  auto r = ElectLeader(gapped, Live({2, 3}), None(), /*allow_unclean=*/true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->leader, NodeId(3));  // 2 comes first in replica order
  // With only the gapped replica live the partition stays offline.
  auto offline = ElectLeader(gapped, Live({2}), None(), /*allow_unclean=*/true);
  ASSERT_TRUE(offline);
  EXPECT_EQ(offline->leader, kNoNode);
  EXPECT_EQ(ElectRequested(ElectionType::kUnclean, *offline, Live({2})).outcome,
            ElectionOutcome::kEligibleNotAvailable);
  // Nor as an eligible leader replica (KIP-966).
  PartitionRecord elr = Record({1, 2}, {1}, 1, 3);
  elr.elr = {NodeId(2)};
  elr.non_contiguous = {NodeId(2)};
  auto none = ElectLeader(elr, Live({2}), None(), false, {.min_insync_replicas = 2});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->leader, kNoNode);
  // Preferred election of a gapped first replica is refused, even were it
  // listed in the ISR (it never should be): contiguity alone decides here,
  // as the same record without the gap shows.
  PartitionRecord preferred = Record({2, 1}, {1, 2}, 1, 3);
  EXPECT_EQ(ElectRequested(ElectionType::kPreferred, preferred, Live({1, 2})).outcome,
            ElectionOutcome::kElected);
  preferred.non_contiguous = {NodeId(2)};
  EXPECT_EQ(ElectRequested(ElectionType::kPreferred, preferred, Live({1, 2})).outcome,
            ElectionOutcome::kPreferredNotAvailable);
  // Nor does the automatic preferred-leader rebalance pick it.
  const PartitionRecord* one[] = {&preferred};
  EXPECT_TRUE(PartitionsToRebalance(one, Live({1, 2}), 0).empty());
  // An unclean election, by the operator or the controller, passes over a
  // gapped ISR member too.
  PartitionRecord gapped_isr = Record({2, 3}, {2, 3}, 1, 3);
  gapped_isr.leader = kNoNode;
  gapped_isr.non_contiguous = {NodeId(2)};
  auto unclean = ElectRequested(ElectionType::kUnclean, gapped_isr, Live({2, 3}));
  ASSERT_EQ(unclean.outcome, ElectionOutcome::kElected);
  EXPECT_EQ(unclean.record.leader, NodeId(3));
  auto controller = ElectLeader(gapped_isr, Live({2, 3}), None(), /*allow_unclean=*/true);
  ASSERT_TRUE(controller);
  EXPECT_EQ(controller->leader, NodeId(3));
}

// A broker back with an empty disk stays listed in a one-member ISR (it
// is marked, not removed); when an eligible leader replica takes over, the
// gapped one must not become an eligible leader in turn.
TEST(PartitionLeadership, AReplicaNotContiguousWithRemoteStorageNeverJoinsTheElr) {
  PartitionRecord r = Record({2, 3}, {2}, -1, 3);
  r.elr = {NodeId(3)};
  r.non_contiguous = {NodeId(2)};
  auto by_controller = ElectLeader(r, Live({2, 3}), None(), false, {.min_insync_replicas = 2});
  ASSERT_TRUE(by_controller);
  EXPECT_EQ(by_controller->leader, NodeId(3));
  EXPECT_TRUE(by_controller->elr.empty());
  auto asked = ElectRequested(ElectionType::kUnclean, r, Live({2, 3}));
  ASSERT_EQ(asked.outcome, ElectionOutcome::kElected);
  EXPECT_EQ(asked.record.leader, NodeId(3));
  EXPECT_TRUE(asked.record.elr.empty());
}

TEST(PartitionLeadership, RebalanceOnlyBrokersAboveTheImbalancePercentage) {
  std::vector<PartitionRecord> records;
  // Broker 1 prefers 10 partitions and leads 7 of them: 30 % imbalance.
  for (int i = 0; i < 7; ++i) records.push_back(Record({1, 2, 3}, {1, 2, 3}, 1, 1));
  records.push_back(Record({1, 2, 3}, {1, 2, 3}, 2, 1));  // 7: movable
  records.push_back(Record({1, 2, 3}, {2, 3}, 2, 1));     // 8: 1 is not in sync
  records.push_back(Record({1, 2, 3}, {1, 2, 3}, 3, 1));  // 9: movable
  // Broker 2 prefers 20 and leads 19 of them: 5 %, within 10 %.
  for (int i = 0; i < 19; ++i) records.push_back(Record({2, 3, 1}, {1, 2, 3}, 2, 1));
  records.push_back(Record({2, 3, 1}, {1, 2, 3}, 3, 1));  // 29
  std::vector<const PartitionRecord*> ptrs;
  for (const auto& r : records) ptrs.push_back(&r);

  EXPECT_EQ(PartitionsToRebalance(ptrs, Live({1, 2, 3}), 10), (std::vector<size_t>{7, 9}));
  // With no tolerance broker 2's one partition moves too; at 30 % nothing does.
  EXPECT_EQ(PartitionsToRebalance(ptrs, Live({1, 2, 3}), 0), (std::vector<size_t>{7, 9, 29}));
  EXPECT_TRUE(PartitionsToRebalance(ptrs, Live({1, 2, 3}), 30).empty());
  // A preferred broker that is not live gets nothing.
  EXPECT_EQ(PartitionsToRebalance(ptrs, Live({2, 3}), 0), (std::vector<size_t>{29}));
}

}  // namespace
}  // namespace strata::cluster

namespace strata::cluster {
namespace {

std::vector<NodeId> Ids(std::vector<int32_t> ids) {
  std::vector<NodeId> out;
  for (int32_t id : ids) out.emplace_back(id);
  return out;
}

TEST(EligibleLeaders, ReplicasLeavingAnIsrBelowMinIsrStayEligible) {
  const EligibleLeaderRules min2{2, nullptr};
  PartitionRecord full = Record({1, 2, 3}, {1, 2, 3}, 1, 3);
  PartitionRecord two = full;
  two.isr = Ids({1, 2});
  UpdateEligibleLeaders(full, two, min2);
  EXPECT_TRUE(two.elr.empty());  // still at min ISR: the mark moves, 3 falls behind it
  PartitionRecord one = two;
  one.isr = Ids({1});
  UpdateEligibleLeaders(two, one, min2);
  EXPECT_EQ(one.elr, Ids({2}));  // it has everything below the (now held) mark
  // 3 catching up brings the ISR back to min: nobody needs the ELR then.
  PartitionRecord back = one;
  back.isr = Ids({1, 3});
  UpdateEligibleLeaders(one, back, min2);
  EXPECT_TRUE(back.elr.empty());
  // A replica that crashed since (unflushed records lost) is not eligible.
  PartitionRecord crashed = one;
  UpdateEligibleLeaders(one, crashed, {2, [](NodeId id) { return id == NodeId(2); }});
  EXPECT_TRUE(crashed.elr.empty());
  // Without KIP-966 rules nothing is kept.
  PartitionRecord off = one;
  UpdateEligibleLeaders(two, off, {});
  EXPECT_TRUE(off.elr.empty());
}

TEST(EligibleLeaders, WithNoLiveInSyncReplicaAnEligibleOneLeadsCleanly) {
  PartitionRecord r = Record({1, 2, 3}, {1}, 1, 3);
  r.elr = Ids({2});
  // Without the ELR rules: offline, as before KIP-966.
  auto off = ElectLeader(r, Live({2, 3}), None());
  ASSERT_TRUE(off);
  EXPECT_EQ(off->leader, kNoNode);
  auto next = ElectLeader(r, Live({2, 3}), None(), false, {2, nullptr});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->leader, NodeId(2));
  EXPECT_EQ(next->leader_epoch, LeaderEpoch(4));
  EXPECT_EQ(next->isr, Ids({2}));
  EXPECT_EQ(next->elr, Ids({1}));  // the old leader has every committed record too
  EXPECT_FALSE(IsUncleanElection(r, *next));
  // 3 was never eligible: with 2 crashed since, the partition stays offline.
  auto crashed =
      ElectLeader(r, Live({2, 3}), None(), false, {2, [](NodeId id) { return id == NodeId(2); }});
  ASSERT_TRUE(crashed);
  EXPECT_EQ(crashed->leader, kNoNode);
  EXPECT_TRUE(crashed->elr.empty());
  // An operator's unclean election also takes an eligible replica first.
  PartitionRecord offline = r;
  offline.leader = kNoNode;
  auto asked = ElectRequested(ElectionType::kUnclean, offline, Live({2, 3}));
  ASSERT_EQ(asked.outcome, ElectionOutcome::kElected);
  EXPECT_EQ(asked.record.leader, NodeId(2));
  EXPECT_EQ(asked.record.elr, Ids({1}));
  EXPECT_FALSE(IsUncleanElection(offline, asked.record));
}

TEST(LostReplicas, AReplicaBackWithAnEmptyDiskLeavesIsrElrAndLeadership) {
  // 2 is in the ELR, 1 is the ISR's last member and the leader.
  PartitionRecord r = Record({1, 2, 3}, {1}, 1, 3);
  r.elr = Ids({2});
  PartitionRecord two = r;
  ASSERT_TRUE(ForgetLostReplica(two, NodeId(2), false));
  EXPECT_TRUE(two.elr.empty());
  EXPECT_EQ(two.non_contiguous, Ids({2}));
  EXPECT_EQ(two.leader, NodeId(1));
  EXPECT_EQ(two.leader_epoch, LeaderEpoch(3));
  // With the leader gone, 2 is not elected from the ELR, not even uncleanly.
  auto off = ElectLeader(two, Live({2}), None(), /*allow_unclean=*/true, {2, nullptr});
  ASSERT_TRUE(off);
  EXPECT_EQ(off->leader, kNoNode);
  // The leader itself, the ISR's last member: no longer leader, at a new
  // epoch, kept as the ISR (never empty) but never elected from it.
  PartitionRecord one = r;
  ASSERT_TRUE(ForgetLostReplica(one, NodeId(1), false));
  EXPECT_EQ(one.leader, kNoNode);
  EXPECT_EQ(one.leader_epoch, LeaderEpoch(4));
  EXPECT_EQ(one.isr, Ids({1}));
  EXPECT_EQ(one.non_contiguous, Ids({1}));
  auto still = ElectLeader(one, Live({1}), None(), false, {2, nullptr});
  EXPECT_TRUE(!still || still->leader == kNoNode);
  // 2 (eligible, intact) leads cleanly instead.
  auto from_elr = ElectLeader(one, Live({1, 2}), None(), false, {2, nullptr});
  ASSERT_TRUE(from_elr);
  EXPECT_EQ(from_elr->leader, NodeId(2));
  // A member of a larger ISR just leaves it.
  PartitionRecord full = Record({1, 2, 3}, {1, 2, 3}, 1, 3);
  ASSERT_TRUE(ForgetLostReplica(full, NodeId(3), false));
  EXPECT_EQ(full.isr, Ids({1, 2}));
  // A replica the record does not count on is left alone, as is a stranger.
  PartitionRecord out = Record({1, 2, 3}, {1, 2}, 1, 3);
  EXPECT_FALSE(ForgetLostReplica(out, NodeId(3), false));
  EXPECT_FALSE(ForgetLostReplica(out, NodeId(7), false));
  EXPECT_EQ(out, Record({1, 2, 3}, {1, 2}, 1, 3));
  // The only replica: without remote storage it comes back (empty) as in
  // Kafka; with remote storage it stays out, its records being there.
  PartitionRecord sole = Record({4}, {4}, -1, 3);
  EXPECT_FALSE(ForgetLostReplica(sole, NodeId(4), /*tiered=*/false));
  EXPECT_TRUE(ForgetLostReplica(sole, NodeId(4), /*tiered=*/true));
  EXPECT_EQ(sole.non_contiguous, Ids({4}));
}

// Whether a record still counts on a wiped replica's data depends on when
// the partition was made and on the record's mark, not on when the record
// was last written: a leader's ISR change after the registration may carry
// the replica's old membership.
TEST(LostReplicas, ARecordCountsOnLostDataUntilMarkedWhateverItsWriteTime) {
  const int64_t lost_before = 100;  // broker 3 registered with a new log directory then
  PartitionRecord r = Record({1, 2, 3}, {1, 3}, 1, 3);
  EXPECT_TRUE(CountsOnLostData(r, /*created=*/40, NodeId(3), lost_before, false));
  // Made after the registration: its replica started from the new directory.
  EXPECT_FALSE(CountsOnLostData(r, /*created=*/100, NodeId(3), lost_before, false));
  EXPECT_FALSE(CountsOnLostData(r, 40, NodeId(2), lost_before, false));  // not counted on
  // Forgotten once: later ISR membership is the rebuilt replica's.
  r.forgot_lost_data[NodeId(3)] = lost_before;
  EXPECT_FALSE(CountsOnLostData(r, 40, NodeId(3), lost_before, false));
  // A second wipe of the same broker counts again.
  EXPECT_TRUE(CountsOnLostData(r, 40, NodeId(3), lost_before + 50, false));
}

}  // namespace
}  // namespace strata::cluster
