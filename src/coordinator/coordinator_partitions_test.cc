// A coordinator serves the groups of the offsets partitions it has loaded:
// unloading one (its leadership moved) answers its waiting members
// NOT_COORDINATOR and drops its groups; loading it again rebuilds them from
// the log.
#include <gtest/gtest.h>

#include "coordinator/coordinator_test_util.h"
#include "coordinator/group_partitioner.h"

namespace strata::coordinator {
namespace {

using protocol::ErrorCode;
using testing::CoordinatorTest;
using testing::JoinOptions;

// A group id other than `avoid` whose partition is (or is not) `partition`.
std::string GroupIn(int32_t partition, bool same, const std::string& avoid, int32_t partitions) {
  for (int i = 0;; ++i) {
    std::string id = "group-" + std::to_string(i);
    if (id != avoid && (PartitionForGroup(id, partitions) == partition) == same) return id;
  }
}

TEST_F(CoordinatorTest, UnloadingAPartitionDropsItsGroupsAndLoadingRebuildsThem) {
  const std::string kept = "kept";
  const int32_t p = PartitionForGroup(kept, kPartitions);
  const std::string waiting = GroupIn(p, true, kept, kPartitions);
  const std::string elsewhere = GroupIn(p, false, kept, kPartitions);
  ASSERT_EQ(Commit(kept, -1, "", "orders", {{0, 77}}).topics[0].partitions[0].error_code, 0);
  ASSERT_EQ(Commit(elsewhere, -1, "", "orders", {{0, 5}}).topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(coord_->Serves(kept), ErrorCode::kNone);
  // A member parked in JoinGroup (the initial rebalance delay holds it; v3
  // needs no member id round trip).
  JoinOptions v3;
  v3.version = 3;
  auto join = Join(waiting, v3);
  ASSERT_FALSE(join->has_value());

  coord_->UnloadPartition(p);
  ASSERT_TRUE(join->has_value());
  EXPECT_EQ((*join)->error_code, Code(ErrorCode::kNotCoordinator));
  EXPECT_EQ(coord_->Serves(kept), ErrorCode::kNotCoordinator);
  EXPECT_EQ(coord_->Serves(waiting), ErrorCode::kNotCoordinator);
  EXPECT_EQ(coord_->Serves(elsewhere), ErrorCode::kNone);
  std::vector<std::string> listed;
  for (const auto& g : coord_->ListGroups({})) listed.push_back(g.group_id);
  EXPECT_EQ(listed, std::vector<std::string>{elsewhere});
  EXPECT_EQ(Committed(elsewhere, "orders", 0), 5);
  clock_.Advance(1000);
  coord_->Tick();  // timers of dropped groups are gone with them

  ASSERT_TRUE(coord_->LoadPartition(p).ok());
  EXPECT_EQ(coord_->Serves(kept), ErrorCode::kNone);
  EXPECT_EQ(Committed(kept, "orders", 0), 77);
  ASSERT_TRUE(coord_->LoadPartition(p).ok());  // a second load changes nothing
  EXPECT_EQ(Committed(kept, "orders", 0), 77);
  EXPECT_FALSE(coord_->LoadPartition(kPartitions).ok());
}

}  // namespace
}  // namespace strata::coordinator
