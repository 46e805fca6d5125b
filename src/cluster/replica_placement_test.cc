#include "cluster/replica_placement.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace strata::cluster {
namespace {

std::vector<PlacementBroker> Brokers(std::vector<std::pair<int32_t, std::string>> list) {
  std::vector<PlacementBroker> out;
  for (auto& [id, rack] : list) out.push_back({NodeId(id), rack});
  return out;
}

std::map<std::string, std::string> RackOf(const std::vector<PlacementBroker>& brokers) {
  std::map<std::string, std::string> out;
  for (const auto& b : brokers) out[std::to_string(b.id.value())] = b.rack;
  return out;
}

TEST(ReplicaPlacement, LeadersAndReplicasSpreadEvenlyWithoutRacks) {
  auto brokers = Brokers({{1, ""}, {2, ""}, {3, ""}});
  for (uint32_t start = 0; start < 3; ++start) {
    auto placed = PlaceReplicas(
        brokers,
        {.partitions = 48, .replication_factor = 2, .start_index = start, .replica_shift = 1});
    ASSERT_TRUE(placed.ok()) << placed.error().message;
    ASSERT_EQ(placed->size(), 48u);
    std::map<NodeId, int> leaders, replicas;
    for (const auto& r : *placed) {
      ASSERT_EQ(r.size(), 2u);
      EXPECT_NE(r[0], r[1]);
      ++leaders[r[0]];
      for (NodeId id : r) ++replicas[id];
    }
    for (auto& b : brokers) {
      EXPECT_EQ(leaders[b.id], 16) << "broker " << b.id.value();
      EXPECT_EQ(replicas[b.id], 32) << "broker " << b.id.value();
    }
  }
}

TEST(ReplicaPlacement, FollowerSetsChangeEveryRound) {
  auto brokers = Brokers({{1, ""}, {2, ""}, {3, ""}, {4, ""}});
  auto placed = PlaceReplicas(brokers, {.partitions = 8, .replication_factor = 2});
  ASSERT_TRUE(placed.ok());
  // Partitions 0 and 4 have the same leader; a shifted follower.
  EXPECT_EQ((*placed)[0][0], (*placed)[4][0]);
  EXPECT_NE((*placed)[0][1], (*placed)[4][1]);
}

TEST(ReplicaPlacement, EveryPartitionSpansRacks) {
  auto brokers = Brokers({{1, "a"}, {2, "a"}, {3, "b"}, {4, "b"}, {5, "c"}, {6, "c"}});
  auto racks = RackOf(brokers);
  auto placed = PlaceReplicas(
      brokers, {.partitions = 12, .replication_factor = 3, .start_index = 5, .replica_shift = 2});
  ASSERT_TRUE(placed.ok());
  std::map<NodeId, int> leaders;
  for (const auto& r : *placed) {
    std::set<std::string> used;
    for (NodeId id : r) used.insert(racks[std::to_string(id.value())]);
    EXPECT_EQ(used.size(), 3u);
    ++leaders[r[0]];
  }
  for (auto& b : brokers) EXPECT_EQ(leaders[b.id], 2);
}

TEST(ReplicaPlacement, MoreReplicasThanRacksStillDistinctBrokers) {
  auto brokers = Brokers({{1, "a"}, {2, "a"}, {3, "b"}, {4, "b"}});
  auto racks = RackOf(brokers);
  auto placed = PlaceReplicas(brokers, {.partitions = 8, .replication_factor = 3});
  ASSERT_TRUE(placed.ok());
  for (const auto& r : *placed) {
    std::set<NodeId> ids(r.begin(), r.end());
    EXPECT_EQ(ids.size(), 3u);
    std::set<std::string> used;
    for (NodeId id : r) used.insert(racks[std::to_string(id.value())]);
    EXPECT_EQ(used.size(), 2u);
  }
}

TEST(ReplicaPlacement, NewPartitionsContinueTheRoundRobin) {
  auto brokers = Brokers({{1, ""}, {2, ""}, {3, ""}});
  auto all = PlaceReplicas(brokers, {.partitions = 6, .replication_factor = 1});
  auto tail =
      PlaceReplicas(brokers, {.partitions = 3, .replication_factor = 1, .first_partition = 3});
  ASSERT_TRUE(all.ok() && tail.ok());
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ((*tail)[i], (*all)[i + 3]);
}

TEST(ReplicaPlacement, ReplicationFactorAboveBrokersIsRefused) {
  auto brokers = Brokers({{1, ""}, {2, ""}});
  auto placed = PlaceReplicas(brokers, {.partitions = 1, .replication_factor = 3});
  ASSERT_FALSE(placed.ok());
  EXPECT_NE(placed.error().message.find("larger than available brokers: 2"), std::string::npos);
  EXPECT_FALSE(PlaceReplicas({}, {.partitions = 1, .replication_factor = 1}).ok());
  EXPECT_FALSE(PlaceReplicas(brokers, {.partitions = 1, .replication_factor = 0}).ok());
}

TEST(ReplicaPlacement, ManualAssignmentsAreChecked) {
  auto brokers = Brokers({{1, ""}, {2, ""}, {3, ""}});
  auto ids = [](std::vector<int32_t> v) {
    std::vector<NodeId> out;
    for (int32_t i : v) out.emplace_back(i);
    return out;
  };
  EXPECT_TRUE(ValidateAssignment(brokers, {ids({1, 2}), ids({3, 1})}).ok());
  auto unknown = ValidateAssignment(brokers, {ids({1, 4})});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("Unknown broker id 4"), std::string::npos);
  EXPECT_FALSE(ValidateAssignment(brokers, {ids({1, 1})}).ok());
  auto uneven = ValidateAssignment(brokers, {ids({1, 2}), ids({3})});
  ASSERT_FALSE(uneven.ok());
  EXPECT_NE(uneven.error().message.find("same number of replicas"), std::string::npos);
  EXPECT_FALSE(ValidateAssignment(brokers, {ids({})}).ok());
  EXPECT_FALSE(ValidateAssignment(brokers, {}).ok());
}

}  // namespace
}  // namespace strata::cluster
