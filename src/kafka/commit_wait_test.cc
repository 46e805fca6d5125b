// AwaitCommitted: what an acks=all produce (and a group coordinator write)
// is told, against a real partition whose leadership moves under it.
#include "kafka/commit_wait.h"

#include <gtest/gtest.h>

#include <asio.hpp>

#include "kafka/in_process_broker.h"
#include "storage/test_util.h"

namespace strata::kafka {
namespace {

using cluster::LeaderEpoch;
using cluster::NodeId;
using cluster::PartitionEpoch;

cluster::PartitionRecord Record(int32_t leader, int32_t epoch, int32_t partition_epoch) {
  cluster::PartitionRecord r;
  r.replicas = r.isr = {NodeId(1), NodeId(2)};
  r.leader = NodeId(leader);
  r.leader_epoch = LeaderEpoch(epoch);
  r.partition_epoch = PartitionEpoch(partition_epoch);
  return r;
}

class CommitWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_.MakeTopic("t", {{NodeId(1), NodeId(2)}});
    ASSERT_TRUE(broker_.topics().Start().ok());
    partition_ = broker_.topics().GetPartition({"t", 0});
    ASSERT_NE(partition_, nullptr);
    partition_->Apply(Record(1, 1, 10), 0);  // this broker (1) leads at epoch 1
  }

  // This broker's append of `records` records as leader; the wait for it.
  CommitWait Append(int records) {
    Bytes batch = storage::testing::MakeBatch({.records = records});
    std::vector<storage::BatchInfo> infos{storage::testing::InfoFor(batch)};
    auto appended = partition_->AppendAsLeader(MutableByteView(batch), infos, 2);
    EXPECT_TRUE(appended.ok());
    if (!appended.ok()) return {};
    return {partition_, appended->appended.last_offset, NodeId(1), appended->leader_epoch};
  }

  CommitOutcome Await(const CommitWait& w, std::chrono::milliseconds timeout) {
    asio::io_context io;
    const std::vector<CommitWait> waits{w};
    std::vector<CommitOutcome> out;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          out = co_await AwaitCommitted(broker_.context(), waits, timeout);
        },
        asio::detached);
    io.run();
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? CommitOutcome::kTimedOut : out[0];
  }

  testing::InProcessBroker broker_;
  std::shared_ptr<broker::Partition> partition_;
};

TEST_F(CommitWaitTest, AnAppendTheIsrConfirmedIsCommitted) {
  CommitWait w = Append(3);
  EXPECT_EQ(Await(w, std::chrono::milliseconds(20)), CommitOutcome::kTimedOut);
  partition_->OnFollowerFetch(NodeId(2), 3_o, 2, 100);  // the follower has it
  EXPECT_EQ(Await(w, std::chrono::milliseconds(20)), CommitOutcome::kCommitted);
}

// The leader is deposed before its follower confirmed the append; as a
// follower of the new leader its log is truncated below the append and
// filled again with the new leader's records, whose mark passes the
// append's offset. Those are not the producer's records: it is told
// NOT_LEADER (deposed), never that its write was committed.
TEST_F(CommitWaitTest, AnAppendOfADeposedLeaderIsNeverCommittedByTheNextLeadersMark) {
  CommitWait w = Append(3);  // offsets 0-2 at epoch 1, not confirmed
  partition_->Apply(Record(2, 2, 11), 200);
  const LeaderEpoch following(2);
  ASSERT_TRUE(partition_->TruncateTo(following, 0_o).ok());  // the new leader never had them
  Bytes batch = storage::testing::Stamped(storage::testing::MakeBatch({.records = 5}), 0_o, 2);
  std::vector<storage::BatchInfo> infos{storage::testing::InfoFor(batch)};
  ASSERT_TRUE(partition_->AppendAsFollower(following, MutableByteView(batch), infos).ok());
  partition_->OnLeaderFetched(following, 5_o, 0_o);
  ASSERT_EQ(partition_->high_watermark(), 5_o);  // past the append's last offset, 2
  EXPECT_EQ(Await(w, std::chrono::milliseconds(20)), CommitOutcome::kDeposed);
}

}  // namespace
}  // namespace strata::kafka
