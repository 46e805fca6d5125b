#include "broker/replica_selector.h"

#include <gtest/gtest.h>

namespace strata::broker {
namespace {

using cluster::NodeId;

// A live in-sync follower in `rack` holding offsets [0, log_end).
ReadReplicaCandidate Follower(int32_t id, std::string rack, int64_t log_end = 100,
                              int64_t since_caught_up_ms = 0) {
  ReadReplicaCandidate c;
  c.id = NodeId(id);
  c.rack = std::move(rack);
  c.alive = true;
  c.in_isr = true;
  c.log_start_offset = 0_o;
  c.log_end_offset = Offset(log_end);
  c.since_caught_up_ms = since_caught_up_ms;
  return c;
}

ReadReplicaQuery Query(std::string client_rack, std::vector<ReadReplicaCandidate> followers,
                       int64_t fetch_offset = 50, std::string leader_rack = "r1") {
  ReadReplicaQuery q;
  q.client_rack = std::move(client_rack);
  q.fetch_offset = Offset(fetch_offset);
  q.leader_rack = std::move(leader_rack);
  q.followers = std::move(followers);
  return q;
}

constexpr auto kRack = ReplicaSelectorKind::kRackAware;

TEST(ReplicaSelector, ParsesKafkasClassNameAndRejectsOthers) {
  EXPECT_EQ(ParseReplicaSelector("").value(), ReplicaSelectorKind::kLeaderOnly);
  EXPECT_EQ(
      ParseReplicaSelector("org.apache.kafka.common.replica.RackAwareReplicaSelector").value(),
      kRack);
  auto bad = ParseReplicaSelector("com.example.NearestReplicaSelector");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("com.example.NearestReplicaSelector"), std::string::npos);
}

TEST(ReplicaSelector, PicksTheFollowerInTheClientsRack) {
  auto q = Query("r2", {Follower(2, "r2"), Follower(3, "r3")});
  EXPECT_EQ(SelectReadReplica(kRack, q), NodeId(2));
  q.client_rack = "r3";
  EXPECT_EQ(SelectReadReplica(kRack, q), NodeId(3));
}

TEST(ReplicaSelector, LeaderOnlyOrNoClientRackMeansTheLeader) {
  auto q = Query("r2", {Follower(2, "r2")});
  EXPECT_FALSE(SelectReadReplica(ReplicaSelectorKind::kLeaderOnly, q));
  q.client_rack = "";
  EXPECT_FALSE(SelectReadReplica(kRack, q));
}

TEST(ReplicaSelector, TheLeaderInTheClientsRackIsPreferred) {
  // Kafka: "Use the leader if it's in this rack", even with followers there.
  EXPECT_FALSE(SelectReadReplica(kRack, Query("r1", {Follower(2, "r1"), Follower(3, "r3")})));
}

TEST(ReplicaSelector, NoReplicaInTheClientsRackMeansTheLeader) {
  EXPECT_FALSE(SelectReadReplica(kRack, Query("r9", {Follower(2, "r2"), Follower(3, "r3")})));
  // Rack names are compared exactly, as Kafka's String.equals.
  EXPECT_FALSE(SelectReadReplica(kRack, Query("R2", {Follower(2, "r2")})));
  // A follower without a rack is in no rack.
  EXPECT_FALSE(SelectReadReplica(kRack, Query("r2", {Follower(2, "")})));
}

TEST(ReplicaSelector, OnlyLiveInSyncFollowersHoldingTheOffsetAreCandidates) {
  auto out_of_isr = Follower(2, "r2");
  out_of_isr.in_isr = false;
  EXPECT_FALSE(SelectReadReplica(kRack, Query("r2", {out_of_isr})));
  auto dead = Follower(2, "r2");
  dead.alive = false;
  EXPECT_FALSE(SelectReadReplica(kRack, Query("r2", {dead})));
  // Not caught up to the fetch offset yet (the offset equal to its log end
  // is served: an empty read that long-polls there).
  EXPECT_FALSE(SelectReadReplica(kRack, Query("r2", {Follower(2, "r2", 49)}, 50)));
  EXPECT_EQ(SelectReadReplica(kRack, Query("r2", {Follower(2, "r2", 50)}, 50)), NodeId(2));
  // Not fetched yet as this leader's follower.
  EXPECT_FALSE(SelectReadReplica(kRack, Query("r2", {Follower(2, "r2", -1)}, 0)));
  // Its log starts above the offset.
  auto trimmed = Follower(2, "r2");
  trimmed.log_start_offset = 60_o;
  EXPECT_FALSE(SelectReadReplica(kRack, Query("r2", {trimmed}, 50)));
  EXPECT_EQ(SelectReadReplica(kRack, Query("r2", {trimmed}, 60)), NodeId(2));
}

TEST(ReplicaSelector, TheMostCaughtUpFollowerOfTheRackWins) {
  // Largest log end first.
  EXPECT_EQ(SelectReadReplica(kRack, Query("r2", {Follower(2, "r2", 90), Follower(3, "r2", 95),
                                                  Follower(4, "r3", 200)})),
            NodeId(3));
  // Same log end: the most recently caught up.
  EXPECT_EQ(SelectReadReplica(kRack,
                              Query("r2", {Follower(2, "r2", 95, 10), Follower(3, "r2", 95, 300)})),
            NodeId(2));
  // A full tie: the largest id (Kafka's comparator ends with the node id).
  EXPECT_EQ(SelectReadReplica(kRack, Query("r2", {Follower(4, "r2"), Follower(2, "r2")})),
            NodeId(4));
  // A lagging but larger candidate does not beat a live one that is in sync.
  auto lagging = Follower(5, "r2", 1000);
  lagging.in_isr = false;
  EXPECT_EQ(SelectReadReplica(kRack, Query("r2", {lagging, Follower(2, "r2")})), NodeId(2));
}

}  // namespace
}  // namespace strata::broker
