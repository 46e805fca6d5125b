#include "broker/partition.h"

#include <gtest/gtest.h>

namespace strata::broker {
namespace {

using cluster::LeaderEpoch;
using cluster::NodeId;
using cluster::PartitionEpoch;
using protocol::ErrorCode;

const TopicPartition kTp{"t", 0};

std::shared_ptr<Partition> Led(int32_t leader, int32_t epoch, int32_t partition_epoch = 0) {
  cluster::PartitionRecord r;
  r.replicas = r.isr = {NodeId(1), NodeId(2)};
  r.leader = NodeId(leader);
  r.leader_epoch = LeaderEpoch(epoch);
  r.partition_epoch = PartitionEpoch(partition_epoch);
  return std::make_shared<Partition>(kTp, "id", nullptr, r);
}

TEST(CheckLeader, TheLeaderServesAtItsEpochOrUnchecked) {
  for (int32_t asked : {-1, 4}) {
    auto got = CheckLeader(kTp, true, Led(1, 4), NodeId(1), false, asked);
    EXPECT_EQ(got.error, ErrorCode::kNone) << got.message;
    ASSERT_NE(got.partition, nullptr);
  }
}

TEST(CheckLeader, UnknownPartitionComesFirst) {
  auto got = CheckLeader(kTp, false, nullptr, NodeId(1), false, 3);
  EXPECT_EQ(got.error, ErrorCode::kUnknownTopicOrPartition);
}

TEST(CheckLeader, NoReplicaHereIsNotLeader) {
  auto got = CheckLeader(kTp, true, nullptr, NodeId(3), false, -1);
  EXPECT_EQ(got.error, ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(got.partition, nullptr);
}

TEST(CheckLeader, EpochsAreCheckedBeforeLeadership) {
  // A follower asked with a stale epoch says FENCED, as Kafka's ReplicaManager.
  auto stale = CheckLeader(kTp, true, Led(1, 4), NodeId(2), false, 3);
  EXPECT_EQ(stale.error, ErrorCode::kFencedLeaderEpoch);
  auto future = CheckLeader(kTp, true, Led(1, 4), NodeId(1), false, 5);
  EXPECT_EQ(future.error, ErrorCode::kUnknownLeaderEpoch);
  EXPECT_EQ(future.leader_epoch, LeaderEpoch(4));
}

TEST(CheckLeader, AFollowerNamesTheLeader) {
  auto got = CheckLeader(kTp, true, Led(1, 4), NodeId(2), false, -1);
  EXPECT_EQ(got.error, ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(got.leader, NodeId(1));
  EXPECT_EQ(got.leader_epoch, LeaderEpoch(4));
  EXPECT_EQ(got.partition, nullptr);
}

TEST(CheckLeader, AFencedBrokerLeadsNothing) {
  auto got = CheckLeader(kTp, true, Led(1, 4), NodeId(1), true, 4);
  EXPECT_EQ(got.error, ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(got.leader, cluster::kNoNode);
  EXPECT_NE(got.message.find("registration"), std::string::npos);
}

TEST(Partition, StateNeverGoesBack) {
  auto p = Led(1, 4, 7);
  cluster::PartitionRecord older = p->state();
  older.leader_epoch = LeaderEpoch(2);
  older.partition_epoch = PartitionEpoch(5);
  p->Apply(older);
  EXPECT_EQ(p->leader_epoch(), LeaderEpoch(4));
  cluster::PartitionRecord newer = p->state();
  newer.leader = cluster::kNoNode;
  newer.leader_epoch = LeaderEpoch(5);
  newer.partition_epoch = PartitionEpoch(8);
  p->Apply(newer);
  EXPECT_EQ(p->leader(), cluster::kNoNode);
  EXPECT_EQ(p->leader_epoch(), LeaderEpoch(5));
}

}  // namespace
}  // namespace strata::broker
