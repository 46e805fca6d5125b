// A coordinator serves the groups of the offsets partitions it has loaded:
// unloading one (its leadership moved) answers its waiting members
// NOT_COORDINATOR and drops its groups; loading it again rebuilds them from
// the log, and until that is done its groups get COORDINATOR_LOAD_IN_PROGRESS.
#include <gtest/gtest.h>

#include "coordinator/coordinator_test_util.h"
#include "coordinator/key_partitioner.h"

namespace strata::coordinator {
namespace {

using protocol::ErrorCode;
using testing::CoordinatorTest;
using testing::JoinOptions;

// A group id other than `avoid` whose partition is (or is not) `partition`.
std::string GroupIn(int32_t partition, bool same, const std::string& avoid, int32_t partitions) {
  for (int i = 0;; ++i) {
    std::string id = "group-" + std::to_string(i);
    if (id != avoid && (PartitionForKey(id, partitions) == partition) == same) return id;
  }
}

TEST_F(CoordinatorTest, UnloadingAPartitionDropsItsGroupsAndLoadingRebuildsThem) {
  const std::string kept = "kept";
  const int32_t p = PartitionForKey(kept, kPartitions);
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

TEST_F(CoordinatorTest, AGroupOfAPartitionBeingLoadedIsAnsweredLoadInProgress) {
  const std::string group = "loading";
  const int32_t p = PartitionForKey(group, kPartitions);
  const std::string elsewhere = GroupIn(p, false, group, kPartitions);
  ASSERT_EQ(Commit(group, -1, "", "orders", {{0, 42}}).topics[0].partitions[0].error_code, 0);
  coord_->UnloadPartition(p);
  ASSERT_EQ(coord_->Serves(group), ErrorCode::kNotCoordinator);

  // What a request for either group would have been told while the
  // coordinator replays p's log (it asks for the log as it starts).
  std::vector<ErrorCode> during;
  std::vector<ErrorCode> others_during;
  on_log_lookup_ = [&](int32_t looked_up) {
    if (looked_up != p) return;
    during.push_back(coord_->Serves(group));
    others_during.push_back(coord_->Serves(elsewhere));
  };
  ASSERT_TRUE(coord_->LoadPartition(p).ok());
  on_log_lookup_ = nullptr;
  ASSERT_FALSE(during.empty());
  EXPECT_EQ(during.back(), ErrorCode::kCoordinatorLoadInProgress);
  for (ErrorCode e : others_during) EXPECT_EQ(e, ErrorCode::kNone);  // other partitions serve on
  EXPECT_EQ(coord_->Serves(group), ErrorCode::kNone);
  EXPECT_EQ(Committed(group, "orders", 0), 42);
}

}  // namespace
}  // namespace strata::coordinator
