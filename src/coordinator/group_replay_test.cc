// Persistence of the coordinator: replaying __consumer_offsets after a
// restart rebuilds offsets and groups (last record per key wins, tombstones
// delete), and offsets of empty groups expire with tombstones.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "coordinator/coordinator_test_util.h"
#include "coordinator/group_records.h"
#include "coordinator/key_partitioner.h"
#include "protocol/record_batch.h"
#include "protocol/records.h"

namespace strata::coordinator {
namespace {

using protocol::ErrorCode;
using testing::CoordinatorTest;
using testing::JoinOptions;
using testing::JoinSlot;

// Every (key, value) of one partition of the test log, in order.
std::vector<std::pair<Bytes, std::optional<Bytes>>> ReadAll(storage::Log& log) {
  std::vector<std::pair<Bytes, std::optional<Bytes>>> out;
  auto read = log.Read(0_o, 64 << 20, log.log_end_offset(), true);
  EXPECT_TRUE(read.ok());
  ByteView data(read->records);
  while (!data.empty()) {
    auto h = protocol::ParseBatchHeader(data);
    EXPECT_TRUE(h.ok());
    ByteView batch = data.subspan(0, h->size_in_bytes());
    data = data.subspan(batch.size());
    Status st = protocol::ForEachRecord(*h, batch, 1 << 20, [&](const protocol::Record& r) {
      std::optional<Bytes> v;
      if (r.value) v = Bytes(r.value->begin(), r.value->end());
      out.emplace_back(Bytes(r.key->begin(), r.key->end()), std::move(v));
      return Status::Ok();
    });
    EXPECT_TRUE(st.ok());
  }
  return out;
}

TEST_F(CoordinatorTest, CommitIsWrittenInKafkaFormatToTheGroupsPartition) {
  ASSERT_EQ(Commit("simple", -1, "", "orders", {{3, 77}}).topics[0].partitions[0].error_code, 0);
  int32_t p = PartitionForKey("simple", kPartitions);
  auto records = ReadAll(*logs_[p]);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].first, EncodeOffsetCommitKey({"simple", "orders", 3}));
  ASSERT_TRUE(records[0].second.has_value());
  EXPECT_EQ(*records[0].second, EncodeOffsetCommitValue({77, 4, "md", clock_.NowMs(), -1}));
  for (int32_t other = 0; other < kPartitions; ++other) {
    if (other != p) {
      EXPECT_EQ(logs_[other]->log_end_offset(), 0_o);
    }
  }
}

TEST_F(CoordinatorTest, RestartReplaysOffsetsGroupsAndTombstones) {
  auto g = StableGroup("g", 2);
  ASSERT_EQ(Commit("g", g.generation, g.members[1], "t", {{0, 10}, {1, 20}})
                .topics[0]
                .partitions[0]
                .error_code,
            0);
  ASSERT_EQ(
      Commit("g", g.generation, g.members[1], "t", {{0, 15}}).topics[0].partitions[0].error_code,
      0);
  Commit("s", -1, "", "t", {{0, 5}});
  ASSERT_EQ(coord_->DeleteOffsets({"s", {{"t", {{0}}}}}).topics[0].partitions[0].error_code, 0);
  Commit("s", -1, "", "t", {{1, 7}});
  // A group that is deleted must stay deleted.
  auto d = StableGroup("d", 1);
  Commit("d", d.generation, d.members[0], "t", {{0, 1}});
  coord_->LeaveGroup("d", {{d.members[0], std::nullopt, std::nullopt}});
  ASSERT_EQ(coord_->DeleteGroup("d").error_code, 0);

  Restart();

  EXPECT_EQ(Committed("g", "t", 0), 15);
  EXPECT_EQ(Committed("g", "t", 1), 20);
  EXPECT_EQ(Committed("s", "t", 0), -1);
  EXPECT_EQ(Committed("s", "t", 1), 7);
  EXPECT_EQ(Committed("d", "t", 0), -1);
  EXPECT_EQ(coord_->DescribeGroup("d").group_state, "Dead");
  auto desc = coord_->DescribeGroup("g");
  EXPECT_EQ(desc.group_state, "Stable");
  EXPECT_EQ(desc.protocol_data, "range");
  ASSERT_EQ(desc.members.size(), 2u);
  for (const auto& m : desc.members) {
    size_t i = m.member_id == g.members[0] ? 0 : 1;
    EXPECT_EQ(m.member_id, g.members[i]);
    std::string a = "assign-" + std::to_string(i);
    EXPECT_EQ(m.member_assignment, Bytes(a.begin(), a.end()));
    EXPECT_EQ(m.client_host, "/127.0.0.1");
  }
  // The members carry on where they were: same generation, same leader.
  EXPECT_EQ(Heartbeat("g", g.members[1], g.generation), 0);
  auto sync = Sync("g", g.members[1], g.generation);
  ASSERT_TRUE(sync->has_value());
  EXPECT_EQ((*sync)->assignment, Bytes({'a', 's', 's', 'i', 'g', 'n', '-', '1'}));
  EXPECT_EQ(
      Commit("g", g.generation, g.members[0], "t", {{0, 16}}).topics[0].partitions[0].error_code,
      0);
  auto groups = coord_->ListGroups({});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].group_id, "g");
  EXPECT_EQ(groups[1].group_id, "s");
  // Members that never come back expire after their session timeout.
  clock_.Advance(5000);
  EXPECT_EQ(Heartbeat("g", g.members[1], g.generation), 0);
  clock_.Advance(5001);
  coord_->Tick();
  auto after = coord_->DescribeGroup("g");
  EXPECT_EQ(after.group_state, "PreparingRebalance");
  ASSERT_EQ(after.members.size(), 1u);
  EXPECT_EQ(after.members[0].member_id, g.members[1]);
}

TEST_F(CoordinatorTest, EmptyGroupAfterRestartKeepsGenerationAndProtocolType) {
  auto g = StableGroup("g", 1);
  coord_->LeaveGroup("g", {{g.members[0], std::nullopt, std::nullopt}});
  ASSERT_EQ(coord_->DescribeGroup("g").group_state, "Empty");
  Restart();
  auto groups = coord_->ListGroups({});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].group_state, "Empty");
  EXPECT_EQ(groups[0].protocol_type, "consumer");
  // The next generation continues the numbering.
  JoinOptions o;
  o.version = 3;
  JoinSlot j = Join("g", o);
  TickUntil({j});
  EXPECT_EQ((*j)->generation_id, g.generation + 2);  // +1 for the empty generation
}

TEST_F(CoordinatorTest, OffsetsOfEmptyGroupsExpireWithTombstones) {
  config_.offsets_retention_ms = 60000;
  coord_ = Make();
  auto g = StableGroup("g", 1);  // subscribed to topic-a
  Commit("g", g.generation, g.members[0], "topic-a", {{0, 1}});
  Commit("g", g.generation, g.members[0], "other", {{0, 9}});
  Commit("simple", -1, "", "t", {{0, 2}});
  clock_.Advance(30000);
  Commit("simple", -1, "", "t", {{1, 3}});
  // A stable group's offsets of subscribed topics never expire; others do.
  clock_.Advance(40000);
  coord_->ExpireOffsets();
  EXPECT_EQ(Committed("g", "topic-a", 0), 1);
  EXPECT_EQ(Committed("g", "other", 0), -1);
  EXPECT_EQ(Committed("simple", "t", 0), -1);                             // 70 s after its commit
  EXPECT_EQ(Committed("simple", "t", 1), 3);                              // 40 s after its commit
  coord_->LeaveGroup("g", {{g.members[0], std::nullopt, std::nullopt}});  // Empty from now
  clock_.Advance(59999);
  coord_->ExpireOffsets();
  EXPECT_EQ(Committed("g", "topic-a", 0), 1);
  clock_.Advance(1);
  coord_->ExpireOffsets();
  EXPECT_EQ(Committed("g", "topic-a", 0), -1);
  EXPECT_EQ(Committed("simple", "t", 1), -1);
  // Both groups are now empty without offsets: removed, also after a restart.
  EXPECT_TRUE(coord_->ListGroups({}).empty());
  Restart();
  EXPECT_TRUE(coord_->ListGroups({}).empty());
  EXPECT_EQ(Committed("g", "topic-a", 0), -1);
}

TEST_F(CoordinatorTest, TickRunsExpiryEveryCheckInterval) {
  config_.offsets_retention_ms = 1000;
  config_.retention_check_interval_ms = 5000;
  coord_ = Make();
  Commit("simple", -1, "", "t", {{0, 2}});
  clock_.Advance(4999);
  coord_->Tick();
  EXPECT_EQ(Committed("simple", "t", 0), 2);
  clock_.Advance(1);
  coord_->Tick();
  EXPECT_EQ(Committed("simple", "t", 0), -1);
}

// Many groups rebalancing at once from many threads (real clock, the
// coordinator ticking in the background): every member ends in a Stable group
// with its own assignment.
TEST_F(CoordinatorTest, ConcurrentGroupsFromManyThreads) {
  // Each join restarts the initial delay: long enough that all 80 member
  // threads, started one after another (slowly under ASan), join generation 1.
  config_.initial_rebalance_delay_ms = 500;
  auto log = std::make_unique<CoordinatorLog>(
      kOffsetsTopic, kPartitions, [this](int32_t p) { return logs_[p]; },
      testing::AppendAtEpochZero([this](int32_t p) { return logs_[p]; }), Clock::Real());
  auto coord = std::make_unique<GroupCoordinator>(config_, std::move(log), Clock::Real());
  std::atomic<bool> stop{false};
  std::thread ticker([&] {
    while (!stop) {
      coord->Tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  constexpr int kGroups = 20, kMembers = 4;
  std::vector<std::thread> threads;
  std::atomic<int> assigned{0};
  for (int gi = 0; gi < kGroups; ++gi) {
    for (int mi = 0; mi < kMembers; ++mi) {
      threads.emplace_back([&, gi] {
        std::string group = "group-" + std::to_string(gi);
        protocol::JoinGroupRequest req;
        req.group_id = group;
        req.session_timeout_ms = 10000;
        req.rebalance_timeout_ms = 10000;
        req.protocol_type = "consumer";
        req.protocols = testing::Protocols({"range"});
        std::promise<protocol::JoinGroupResponse> joined;
        coord->JoinGroup({"c", "/h", 3}, req,
                         [&](protocol::JoinGroupResponse r) { joined.set_value(r); });
        auto j = joined.get_future().get();
        ASSERT_EQ(j.error_code, 0);
        protocol::SyncGroupRequest sync;
        sync.group_id = group;
        sync.member_id = j.member_id;
        sync.generation_id = j.generation_id;
        for (const auto& m : j.members)
          sync.assignments.push_back({m.member_id, Bytes(m.member_id.begin(), m.member_id.end())});
        std::promise<protocol::SyncGroupResponse> synced;
        coord->SyncGroup({"c", "/h", 3}, sync,
                         [&](protocol::SyncGroupResponse r) { synced.set_value(r); });
        auto s = synced.get_future().get();
        ASSERT_EQ(s.error_code, 0);
        ASSERT_EQ(s.assignment, Bytes(j.member_id.begin(), j.member_id.end()));
        ++assigned;
      });
    }
  }
  for (auto& t : threads) t.join();
  stop = true;
  ticker.join();
  EXPECT_EQ(assigned.load(), kGroups * kMembers);
  auto groups = coord->ListGroups({"Stable"});
  EXPECT_EQ(groups.size(), static_cast<size_t>(kGroups));
  for (int gi = 0; gi < kGroups; ++gi) {
    EXPECT_EQ(coord->DescribeGroup("group-" + std::to_string(gi)).members.size(),
              static_cast<size_t>(kMembers));
  }
}

}  // namespace
}  // namespace strata::coordinator
