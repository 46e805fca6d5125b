// FollowerTracker: the high watermark over the ISR, Kafka's caught-up rule,
// and ISR joins and lag.
#include "replication/follower_tracker.h"

#include <gtest/gtest.h>

namespace strata::replication {
namespace {

const NodeId kLeader{1}, kF2{2}, kF3{3};
const std::vector<NodeId> kReplicas{kLeader, kF2, kF3};

TEST(FollowerTrackerTest, HighWatermarkIsTheSmallestLogEndOverTheIsr) {
  FollowerTracker t;
  t.Reset(kLeader, kReplicas, kReplicas, 0);
  // Not heard from every ISR member yet: no advance.
  EXPECT_EQ(t.HighWatermark(kReplicas, 100_o, 1, 0_o), std::nullopt);
  t.OnFetch(kF2, 80_o, 100_o, 10);
  t.OnFetch(kF3, 60_o, 100_o, 10);
  EXPECT_EQ(t.HighWatermark(kReplicas, 100_o, 1, 0_o), 60_o);
  EXPECT_EQ(t.HighWatermark({kLeader, kF2}, 100_o, 1, 0_o), 80_o);  // F3 out of the ISR
  EXPECT_EQ(t.HighWatermark({kLeader}, 100_o, 1, 0_o), 100_o);
  // Monotonic, and held below min.insync.replicas.
  EXPECT_EQ(t.HighWatermark(kReplicas, 100_o, 1, 70_o), 70_o);
  EXPECT_EQ(t.HighWatermark({kLeader}, 100_o, 2, 0_o), std::nullopt);
  // A fetch from a broker that is no replica changes nothing.
  t.OnFetch(NodeId(9), 5_o, 100_o, 20);
  EXPECT_FALSE(t.Get(NodeId(9)));
  EXPECT_EQ(t.HighWatermark(kReplicas, 100_o, 1, 0_o), 60_o);
}

// A fetch past the leader's log end (answered OFFSET_OUT_OF_RANGE) says
// nothing of what the follower holds: it keeps holding the mark back.
TEST(FollowerTrackerTest, AFetchPastTheLeadersEndDoesNotReleaseTheHighWatermark) {
  FollowerTracker t;
  t.Reset(kLeader, kReplicas, kReplicas, 0);
  t.OnFetch(kF2, 100_o, 100_o, 10);
  t.OnFetch(kF3, 90_o, 100_o, 10);
  t.OnFetch(kF3, 150_o, 100_o, 20);
  EXPECT_EQ(t.Get(kF3)->log_end_offset, 90_o);
  EXPECT_EQ(t.Get(kF3)->last_fetch_ms, 10);
  // The leader appends up to 120: F3 still holds the mark at 90.
  EXPECT_EQ(t.HighWatermark(kReplicas, 120_o, 1, 0_o), 90_o);
}

TEST(FollowerTrackerTest, AFollowerThatKeepsUpWithABusyLeaderIsNeverLagging) {
  FollowerTracker t;
  t.Reset(kLeader, kReplicas, kReplicas, 0);
  // Each fetch reaches the leader's end as of the previous fetch, never the
  // current one (the leader appends in between).
  Offset leader_end = 10_o;
  for (int64_t now = 100; now <= 5000; now += 100) {
    t.OnFetch(kF2, leader_end - 10, leader_end, now);
    leader_end += 10;
  }
  EXPECT_TRUE(t.Lagging(kReplicas, 5000, 1000).size() == 1);  // only F3, silent since 0
  EXPECT_EQ(t.Lagging(kReplicas, 5000, 1000)[0], kF3);
  EXPECT_GE(t.Get(kF2)->last_caught_up_ms, 4900);
  // Falling behind: caught-up time stops, and the follower lags after max.
  t.OnFetch(kF2, 5_o, leader_end, 5100);
  t.OnFetch(kF2, 6_o, leader_end + 10, 5200);
  EXPECT_TRUE(t.Lagging({kLeader, kF2}, 5900, 1000).empty());
  EXPECT_EQ(t.Lagging({kLeader, kF2}, 6100, 1000), std::vector<NodeId>{kF2});
}

TEST(FollowerTrackerTest, FollowersJoinOnceTheyHoldTheHighWatermarkAndTheEpochStart) {
  FollowerTracker t;
  t.Reset(kLeader, kReplicas, {kLeader}, 0);
  t.OnFetch(kF2, 40_o, 100_o, 10);
  t.OnFetch(kF3, 100_o, 100_o, 10);
  EXPECT_EQ(t.ReadyToJoin({kLeader}, 100_o, 0_o), std::vector<NodeId>{kF3});
  EXPECT_EQ(t.ReadyToJoin({kLeader}, 40_o, 0_o), (std::vector<NodeId>{kF2, kF3}));
  EXPECT_EQ(t.ReadyToJoin({kLeader}, 40_o, 50_o), std::vector<NodeId>{kF3});  // epoch began at 50
  EXPECT_TRUE(t.ReadyToJoin(kReplicas, 0_o, 0_o).empty());
}

TEST(FollowerTrackerTest, AReplicaAddedToTheSameLeadershipIsTrackedFromItsFirstFetch) {
  FollowerTracker t;
  t.Reset(kLeader, {kLeader, kF2}, {kLeader, kF2}, 0);
  t.OnFetch(kF2, 100_o, 100_o, 10);
  t.OnFetch(kF3, 100_o, 100_o, 10);  // not a replica yet: ignored
  EXPECT_FALSE(t.Get(kF3).has_value());
  t.UpdateReplicas({kLeader, kF2, kF3});  // a reassignment adds 3
  ASSERT_TRUE(t.Get(kF3).has_value());
  EXPECT_EQ(t.Get(kF3)->log_end_offset, kNoOffset);
  EXPECT_EQ(t.Get(kF2)->log_end_offset, 100_o);  // kept
  EXPECT_TRUE(t.ReadyToJoin({kLeader, kF2}, 100_o, 0_o).empty());
  t.OnFetch(kF3, 100_o, 100_o, 20);
  EXPECT_EQ(t.ReadyToJoin({kLeader, kF2}, 100_o, 0_o), std::vector<NodeId>{kF3});
  t.UpdateReplicas({kLeader, kF3});  // and removes 2
  EXPECT_FALSE(t.Get(kF2).has_value());
}

TEST(FollowerTrackerTest, WhatARestartedFollowerSaidBeforeCountsForNothing) {
  FollowerTracker t;
  t.Reset(kLeader, kReplicas, {kLeader, kF3}, 0);
  t.OnFetch(kF2, 100_o, 100_o, 10, /*log_start=*/0_o, /*broker_epoch=*/5);
  t.OnFetch(kF3, 100_o, 100_o, 10, 0_o, 6);
  ASSERT_EQ(t.ReadyToJoin({kLeader, kF3}, 100_o, 0_o), std::vector<NodeId>{kF2});
  // Broker 2 registers again (epoch 9), say with an empty disk: until it
  // fetches again it neither joins, nor clears its contiguity flag.
  auto now_epoch = [](NodeId id) -> int64_t { return id == kF2 ? 9 : 6; };
  t.ForgetRestarted(now_epoch);
  EXPECT_TRUE(t.ReadyToJoin({kLeader, kF3}, 100_o, 0_o).empty());
  EXPECT_EQ(t.NonContiguous(kReplicas, {kF2}, 50_o), std::vector<NodeId>{kF2});
  EXPECT_EQ(t.Get(kF2)->log_end_offset, kNoOffset);
  EXPECT_EQ(t.Get(kF3)->log_end_offset, 100_o);  // broker 3 is the same incarnation
  // An ISR member that restarted holds the high watermark until it fetches.
  t.OnFetch(kF3, 100_o, 100_o, 20, 0_o, 6);
  t.ForgetRestarted([](NodeId) -> int64_t { return 7; });
  EXPECT_EQ(t.HighWatermark({kLeader, kF3}, 120_o, 1, 100_o), std::nullopt);
  // Its fetch as the new incarnation counts: from an empty log it is far behind.
  t.OnFetch(kF2, 0_o, 100_o, 30, 0_o, 9);
  EXPECT_TRUE(t.ReadyToJoin({kLeader}, 100_o, 0_o).empty());
  t.OnFetch(kF2, 100_o, 100_o, 40, 0_o, 9);
  EXPECT_EQ(t.ReadyToJoin({kLeader}, 100_o, 0_o), std::vector<NodeId>{kF2});
}

}  // namespace
}  // namespace strata::replication
