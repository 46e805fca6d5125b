#include "broker/partition.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>

#include "base/clock.h"
#include "protocol/batch_builder.h"
#include "protocol/control_record.h"
#include "storage/test_util.h"

namespace strata::broker {
namespace {

using cluster::LeaderEpoch;
using cluster::NodeId;
using cluster::PartitionEpoch;
using protocol::ErrorCode;

const TopicPartition kTp{"t", 0};

// A real log in a fresh directory (removed when the last user goes).
std::shared_ptr<storage::Log> TempLog() {
  static ManualClock clock{1'700'000'000'000};
  std::string tmpl = (std::filesystem::temp_directory_path() / "strata-partition-XXXXXX").string();
  EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
  auto log = storage::Log::Open(std::filesystem::path(tmpl) / "t-0", {}, &clock);
  EXPECT_TRUE(log.ok());
  std::string dir = tmpl;
  return std::shared_ptr<storage::Log>(log->release(), [dir](storage::Log* l) {
    delete l;
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  });
}

constexpr Offset kNothingTiered = Offset::Max();

// The ISR a leader wants, for a partition with nothing in remote storage.
std::optional<std::vector<NodeId>> WantedIsr(const Partition& p, int64_t now_ms,
                                             int64_t max_lag_ms) {
  auto wanted = p.WantedState(now_ms, max_lag_ms, kNothingTiered);
  if (!wanted) return std::nullopt;
  return wanted->isr;
}

cluster::PartitionRecord Record(int32_t leader, int32_t epoch, int32_t partition_epoch,
                                std::vector<NodeId> replicas, std::vector<NodeId> isr) {
  cluster::PartitionRecord r;
  r.replicas = std::move(replicas);
  r.isr = std::move(isr);
  r.leader = NodeId(leader);
  r.leader_epoch = LeaderEpoch(epoch);
  r.partition_epoch = PartitionEpoch(partition_epoch);
  return r;
}

std::shared_ptr<Partition> Led(int32_t leader, int32_t epoch, int32_t partition_epoch = 0) {
  return std::make_shared<Partition>(
      kTp, "id", TempLog(),
      Record(leader, epoch, partition_epoch, {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}),
      NodeId(1), 0);
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

// KIP-392: a consumer's fetch may be served by any replica hosted here,
// with the same epoch checks; a fenced broker serves none.
TEST(CheckReplica, AFollowerServesAtItsEpochOrUnchecked) {
  for (int32_t asked : {-1, 4}) {
    auto got = CheckReplica(kTp, true, Led(1, 4), NodeId(2), false, asked);
    EXPECT_EQ(got.error, ErrorCode::kNone) << got.message;
    ASSERT_NE(got.partition, nullptr);
    EXPECT_EQ(got.leader, NodeId(1));
  }
  EXPECT_EQ(CheckReplica(kTp, true, Led(1, 4), NodeId(1), false, 4).error, ErrorCode::kNone);
}

TEST(CheckReplica, EpochsReplicaAndFencingAreChecked) {
  EXPECT_EQ(CheckReplica(kTp, false, nullptr, NodeId(2), false, -1).error,
            ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(CheckReplica(kTp, true, nullptr, NodeId(3), false, -1).error,
            ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(CheckReplica(kTp, true, Led(1, 4), NodeId(2), false, 3).error,
            ErrorCode::kFencedLeaderEpoch);
  EXPECT_EQ(CheckReplica(kTp, true, Led(1, 4), NodeId(2), false, 5).error,
            ErrorCode::kUnknownLeaderEpoch);
  auto fenced = CheckReplica(kTp, true, Led(1, 4), NodeId(2), true, 4);
  EXPECT_EQ(fenced.error, ErrorCode::kNotLeaderOrFollower);
  EXPECT_EQ(fenced.partition, nullptr);
}

// What the leader knows of its followers for the replica selector.
TEST(Partition, ReadReplicaCandidatesComeFromTheFollowersFetches) {
  const std::vector<NodeId> three{NodeId(1), NodeId(2), NodeId(3)};
  auto log = TempLog();
  Partition p(kTp, "id", log, Record(1, 3, 1, three, {NodeId(1), NodeId(2)}), NodeId(1), 0);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 3).ok());
  p.OnFollowerFetch(NodeId(2), 10_o, 1, 100, /*follower_log_start=*/4_o);
  p.OnFollowerFetch(NodeId(3), 6_o, 1, 100, 0_o);
  auto c = p.ReadReplicaCandidates(1100);
  ASSERT_EQ(c.size(), 2u);  // the leader is not one
  EXPECT_EQ(c[0].id, NodeId(2));
  EXPECT_TRUE(c[0].in_isr);
  EXPECT_EQ(c[0].log_start_offset, 4_o);
  EXPECT_EQ(c[0].log_end_offset, 10_o);
  EXPECT_EQ(c[0].since_caught_up_ms, 1000);  // caught up at its fetch, at 100
  EXPECT_EQ(c[1].id, NodeId(3));
  EXPECT_FALSE(c[1].in_isr);
  EXPECT_EQ(c[1].log_end_offset, 6_o);
  EXPECT_TRUE(c[0].rack.empty() && !c[0].alive);  // the caller's part
  // A follower has none to offer.
  Partition follower(kTp, "id", TempLog(), Record(1, 3, 1, three, three), NodeId(2), 0);
  EXPECT_TRUE(follower.ReadReplicaCandidates(0).empty());
}

TEST(Partition, StateNeverGoesBack) {
  auto p = Led(1, 4, 7);
  cluster::PartitionRecord older = p->state();
  older.leader_epoch = LeaderEpoch(2);
  older.partition_epoch = PartitionEpoch(5);
  p->Apply(older, 0);
  EXPECT_EQ(p->leader_epoch(), LeaderEpoch(4));
  cluster::PartitionRecord newer = p->state();
  newer.leader = cluster::kNoNode;
  newer.leader_epoch = LeaderEpoch(5);
  newer.partition_epoch = PartitionEpoch(8);
  p->Apply(newer, 0);
  EXPECT_EQ(p->leader(), cluster::kNoNode);
  EXPECT_EQ(p->leader_epoch(), LeaderEpoch(5));
}

// A batch of `n` records as a produce would hand it over, and its description.
struct Batch {
  Bytes bytes;
  std::vector<storage::BatchInfo> infos;
};
Batch RecordsBatch(int n) {
  protocol::BatchBuilder builder;
  for (int i = 0; i < n; ++i) builder.Add("k", "v", 5);
  Batch b{builder.Build(), {}};
  b.infos.push_back({.size = static_cast<int32_t>(b.bytes.size()),
                     .record_count = n,
                     .max_timestamp = 5,
                     .offset_delta_of_max_timestamp = 0});
  return b;
}

// The leader's append: stamped with its epoch, counted, the mark moved as far
// as the ISR allows, and the waiters woken; refused once it no longer leads.
TEST(Partition, AppendAsLeaderStampsItsEpochMovesTheMarkAndWakes) {
  auto log = TempLog();
  Partition p(kTp, "id", log, Record(1, 6, 1, {NodeId(1), NodeId(2)}, {NodeId(1)}), NodeId(1), 0);
  int woken = 0;
  p.SetWakeListener([&](const TopicPartition& tp) {
    EXPECT_EQ(tp, kTp);
    ++woken;
  });
  Batch b = RecordsBatch(3);
  auto first = p.AppendAsLeader(MutableByteView(b.bytes), b.infos, 1);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->appended.base_offset, 0_o);
  EXPECT_EQ(first->appended.last_offset, 2_o);
  EXPECT_EQ(first->leader_epoch, LeaderEpoch(6));
  EXPECT_EQ(log->latest_epoch(), LeaderEpoch(6));
  EXPECT_EQ(p.high_watermark(), 3_o);  // an ISR of one
  EXPECT_EQ(woken, 1);

  // With min.insync.replicas 2 and an ISR of one the mark holds.
  Batch c = RecordsBatch(2);
  auto second = p.AppendAsLeader(MutableByteView(c.bytes), c.infos, 2);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->appended.base_offset, 3_o);
  EXPECT_EQ(p.high_watermark(), 3_o);
  EXPECT_EQ(woken, 2);  // the fetches waiting for new data still wake

  // Leadership passes to broker 2: refused, nothing written.
  p.Apply(Record(2, 7, 2, {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}), 10);
  Batch d = RecordsBatch(1);
  auto refused = p.AppendAsLeader(MutableByteView(d.bytes), d.infos, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::kFenced);
  EXPECT_EQ(log->log_end_offset(), 5_o);
  EXPECT_EQ(woken, 2);
}

TEST(Partition, AppendAsLeaderRefusesARemovedReplica) {
  auto log = TempLog();
  Partition p(kTp, "id", log, Record(1, 2, 1, {NodeId(1)}, {NodeId(1)}), NodeId(1), 0);
  p.MarkRemoved();
  Batch b = RecordsBatch(1);
  auto refused = p.AppendAsLeader(MutableByteView(b.bytes), b.infos, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::kFenced);
  EXPECT_EQ(log->log_end_offset(), 0_o);
}

// The last stable offset: held at an open transaction's first offset while
// the high watermark moves past it, released once its marker is committed
// (here by a follower's fetch, which reaches the log through the partition).
TEST(Partition, TheLastStableOffsetFollowsTransactionsAndTheHighWatermark) {
  auto log = TempLog();
  Partition p(kTp, "id", log, Record(1, 2, 1, {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}),
              NodeId(1), 0);
  Batch plain = RecordsBatch(2);
  ASSERT_TRUE(p.AppendAsLeader(MutableByteView(plain.bytes), plain.infos, 1).ok());
  storage::testing::BatchOptions o;
  o.producer_id = 5;
  o.producer_epoch = 0;
  o.base_sequence = 0;
  o.transactional = true;
  Bytes txn = storage::testing::MakeBatch(o);
  std::vector<storage::BatchInfo> txn_infos{storage::testing::InfoFor(txn)};
  ASSERT_TRUE(p.AppendAsLeader(MutableByteView(txn), txn_infos, 1).ok());
  ASSERT_TRUE(p.OnFollowerFetch(NodeId(2), 3_o, 1, 0));
  EXPECT_EQ(p.high_watermark(), 3_o);
  EXPECT_EQ(p.last_stable_offset(), 2_o);  // the transaction from 2 is open

  Bytes marker = protocol::BuildTxnMarkerBatch(5, 0, {protocol::ControlType::kCommit, 0}, 7);
  std::vector<storage::BatchInfo> marker_infos{storage::testing::InfoFor(marker)};
  ASSERT_TRUE(p.AppendAsLeader(MutableByteView(marker), marker_infos, 1,
                               storage::AppendOrigin::kCoordinator)
                  .ok());
  EXPECT_EQ(p.last_stable_offset(), 2_o);  // committed at 3, not yet replicated
  ASSERT_TRUE(p.OnFollowerFetch(NodeId(2), 4_o, 1, 0));
  EXPECT_EQ(p.high_watermark(), 4_o);
  EXPECT_EQ(p.last_stable_offset(), 4_o);
}

// The leader's high watermark is the smallest log end over the ISR, moves
// only forward, and is held below min.insync.replicas (capped at the
// replication factor); followers join once they reach it and leave after
// replica.lag.time.max.ms without catching up.
TEST(Partition, HighWatermarkAndIsrFollowTheFollowersFetches) {
  const std::vector<NodeId> three{NodeId(1), NodeId(2), NodeId(3)};
  auto log = TempLog();
  Partition p(kTp, "id", log, Record(1, 3, 1, three, {NodeId(1)}), NodeId(1), 0);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 3).ok());
  EXPECT_EQ(p.high_watermark(), 0_o);
  EXPECT_TRUE(p.MaybeAdvanceHighWatermark(1));  // an ISR of one: its own end
  EXPECT_EQ(p.high_watermark(), 10_o);
  EXPECT_FALSE(p.MaybeAdvanceHighWatermark(1));

  // Followers fetch; both reach the mark and are proposed for the ISR.
  EXPECT_FALSE(p.OnFollowerFetch(NodeId(2), 4_o, 1, 100));
  EXPECT_EQ(WantedIsr(p, 100, 30000), std::nullopt);
  p.OnFollowerFetch(NodeId(2), 10_o, 1, 200);
  p.OnFollowerFetch(NodeId(3), 10_o, 1, 200, /*follower_log_start=*/0_o,
                    /*follower_broker_epoch=*/41);
  EXPECT_EQ(WantedIsr(p, 200, 30000), three);
  // Each joins with the broker epoch it fetched under (KIP-903; 0: unregistered).
  EXPECT_EQ(p.WantedState(200, 30000, kNothingTiered)->joining_epochs,
            (std::map<NodeId, int64_t>{{NodeId(2), 0}, {NodeId(3), 41}}));

  // The ISR record comes back from the metadata: the mark now waits for both.
  p.Apply(Record(1, 3, 2, three, three), 300);
  ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 3).ok());  // 10-11
  EXPECT_FALSE(p.MaybeAdvanceHighWatermark(2));
  EXPECT_FALSE(p.OnFollowerFetch(NodeId(2), 12_o, 2, 400));
  EXPECT_EQ(p.high_watermark(), 10_o);
  EXPECT_TRUE(p.OnFollowerFetch(NodeId(3), 12_o, 2, 400));
  EXPECT_EQ(p.high_watermark(), 12_o);

  // Follower 3 stops fetching: after the lag time it is proposed out.
  ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 3).ok());  // 12-13
  p.OnFollowerFetch(NodeId(2), 14_o, 2, 500);
  EXPECT_EQ(WantedIsr(p, 20000, 30000), std::nullopt);
  EXPECT_EQ(WantedIsr(p, 30500, 30000), (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  // An ISR below min.insync.replicas holds the mark.
  p.Apply(Record(1, 3, 3, three, {NodeId(1)}), 31000);
  ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 3).ok());
  EXPECT_FALSE(p.MaybeAdvanceHighWatermark(2));
  EXPECT_EQ(p.high_watermark(), 12_o);
  EXPECT_TRUE(p.MaybeAdvanceHighWatermark(1));
  EXPECT_EQ(p.high_watermark(), 16_o);
}

TEST(Partition, AProposedIsrHoldsTheMarkUntilANewerRecordSettlesIt) {
  const std::vector<NodeId> three{NodeId(1), NodeId(2), NodeId(3)};
  const std::vector<NodeId> two{NodeId(1), NodeId(2)};
  auto log = TempLog();
  Partition p(kTp, "id", log, Record(1, 3, 1, three, two), NodeId(1), 0);
  ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 4}, 3).ok());  // 0-3
  p.OnFollowerFetch(NodeId(2), 4_o, 2, 100);
  p.OnFollowerFetch(NodeId(3), 4_o, 2, 100);
  EXPECT_EQ(p.high_watermark(), 4_o);
  ASSERT_EQ(WantedIsr(p, 100, 30000), three);

  // Expanding to 3 is in flight: the store may already name 3, so a batch
  // is committed only once 3 has it too, although the record says [1,2].
  p.ProposeIsr(PartitionEpoch(1), three);
  ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 3).ok());  // 4-5
  EXPECT_FALSE(p.OnFollowerFetch(NodeId(2), 6_o, 2, 200));
  EXPECT_EQ(p.high_watermark(), 4_o);
  EXPECT_TRUE(p.OnFollowerFetch(NodeId(3), 6_o, 2, 200));
  EXPECT_EQ(p.high_watermark(), 6_o);

  // A shrink proposed on the same base (say the first write timed out) adds
  // nobody, and a proposal on a stale base is dropped.
  p.ProposeIsr(PartitionEpoch(1), {NodeId(1)});
  p.ProposeIsr(PartitionEpoch(0), {NodeId(1)});
  ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 3).ok());  // 6-7
  EXPECT_FALSE(p.OnFollowerFetch(NodeId(2), 8_o, 1, 300));
  EXPECT_TRUE(p.OnFollowerFetch(NodeId(3), 8_o, 1, 300));

  // The store's answer ([1,2]: the expansion lost a race) settles it: 3 no
  // longer holds the mark.
  p.Apply(Record(1, 3, 2, three, two), 400);
  ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 3).ok());  // 8-9
  EXPECT_TRUE(p.OnFollowerFetch(NodeId(2), 10_o, 2, 500));
  EXPECT_EQ(p.high_watermark(), 10_o);
}

// What the leader deleted (DeleteRecords, retention) goes on a follower
// too, as far as the follower's high watermark: a follower that takes over
// never serves it again.
TEST(Partition, AFollowerTakesTheLeadersLogStartUpToItsMark) {
  auto log = TempLog();
  Partition p(kTp, "id", log, Record(2, 1, 1, {NodeId(2), NodeId(1)}, {NodeId(2), NodeId(1)}),
              NodeId(1), 0);
  const LeaderEpoch e1(1);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 1).ok());  // 0-9
  p.OnLeaderFetched(e1, 0_o, 3_o);  // the mark is still 0: nothing committed to delete
  EXPECT_EQ(log->log_start_offset(), 0_o);
  p.OnLeaderFetched(e1, 6_o, 3_o);
  EXPECT_EQ(log->log_start_offset(), 3_o);
  p.OnLeaderFetched(e1, 6_o, 1_o);  // never back
  EXPECT_EQ(log->log_start_offset(), 3_o);
  p.OnLeaderFetched(e1, 6_o, 50_o);  // past the mark: up to it
  EXPECT_EQ(log->log_start_offset(), 6_o);
  EXPECT_EQ(log->log_end_offset(), 10_o);
}

TEST(Partition, AFollowerTakesTheLeadersMarkUpToItsOwnEnd) {
  auto log = TempLog();
  Partition p(kTp, "id", log, Record(2, 1, 1, {NodeId(2), NodeId(1)}, {NodeId(2), NodeId(1)}),
              NodeId(1), 0);
  int wakes = 0;  // consumers reading from this follower wait on the mark
  p.SetWakeListener([&](const TopicPartition&) { ++wakes; });
  const LeaderEpoch e1(1);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 1).ok());
  p.OnLeaderFetched(e1, 4_o, 0_o);
  EXPECT_EQ(p.high_watermark(), 4_o);
  p.OnLeaderFetched(e1, 100_o, 0_o);
  EXPECT_EQ(p.high_watermark(), 6_o);  // our end
  EXPECT_EQ(wakes, 2);
  p.OnLeaderFetched(e1, 100_o, 0_o);  // moved no further: nobody to wake
  p.OnLeaderFetched(e1, 2_o, 0_o);
  EXPECT_EQ(wakes, 2);
  EXPECT_EQ(p.high_watermark(), 6_o);            // never back
  EXPECT_FALSE(p.MaybeAdvanceHighWatermark(1));  // not the leader
  EXPECT_EQ(WantedIsr(p, 100000, 1), std::nullopt);
  // A truncated tail takes the mark down with it, and it rises again from there.
  ASSERT_TRUE(p.TruncateTo(e1, 2_o).ok());
  EXPECT_EQ(p.high_watermark(), 2_o);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 2).ok());
  EXPECT_EQ(p.high_watermark(), 2_o);  // the old mark does not come back with the new tail
  p.OnLeaderFetched(e1, 4_o, 0_o);
  EXPECT_EQ(p.high_watermark(), 4_o);
}

// The leader's batches, as a follower receives them: stamped with their
// offsets and the leader's epoch, described by their infos.
struct FollowerBatches {
  Bytes bytes;
  std::vector<storage::BatchInfo> infos;
};
FollowerBatches LeaderBatches(Offset base_offset, int records, int32_t leader_epoch) {
  Bytes batch = storage::testing::Stamped(storage::testing::MakeBatch({.records = records}),
                                          base_offset, leader_epoch);
  storage::BatchInfo info = storage::testing::InfoFor(batch);
  return {std::move(batch), {info}};
}

// What the replica fetcher writes goes through the partition, and only while
// it follows the leadership the fetch was made under: an answer still in
// flight when the partition moved on (a newer epoch, its own leadership, or
// removal) never reaches the log, and moves no mark.
TEST(Partition, AFollowerTakesTheFetchersWritesOnlyUnderTheLeadershipItFollows) {
  auto log = TempLog();
  const std::vector<NodeId> two{NodeId(2), NodeId(1)};
  Partition p(kTp, "id", log, Record(2, 3, 1, two, two), NodeId(1), 0);
  auto batch = LeaderBatches(0_o, 4, 3);
  EXPECT_EQ(p.AppendAsFollower(LeaderEpoch(2), batch.bytes, batch.infos).error().code,
            Errc::kFenced);
  EXPECT_EQ(log->log_end_offset(), 0_o);
  ASSERT_TRUE(p.AppendAsFollower(LeaderEpoch(3), batch.bytes, batch.infos).ok());
  EXPECT_EQ(p.log_end_offset(), 4_o);
  EXPECT_EQ(p.latest_epoch(), LeaderEpoch(3));
  EXPECT_EQ(p.traffic().replication_bytes_in(), static_cast<int64_t>(batch.bytes.size()));
  p.OnLeaderFetched(LeaderEpoch(3), 4_o, 0_o);
  EXPECT_EQ(p.high_watermark(), 4_o);

  // This broker now leads, at epoch 4: the old leadership's answers are refused.
  p.Apply(Record(1, 4, 2, two, two), 100);
  auto late = LeaderBatches(4_o, 2, 3);
  EXPECT_EQ(p.AppendAsFollower(LeaderEpoch(3), late.bytes, late.infos).error().code, Errc::kFenced);
  EXPECT_EQ(p.AppendAsFollower(LeaderEpoch(4), late.bytes, late.infos).error().code,
            Errc::kFenced);  // its own epoch too: a leader takes no follower writes
  EXPECT_EQ(p.TruncateTo(LeaderEpoch(3), 0_o).error().code, Errc::kFenced);
  EXPECT_EQ(p.StartLogAt(LeaderEpoch(3), 100_o).error().code, Errc::kFenced);
  EXPECT_EQ(p.DeleteRecordsBefore(LeaderEpoch(3), 2_o).error().code, Errc::kFenced);
  EXPECT_EQ(log->log_end_offset(), 4_o);
  EXPECT_EQ(log->log_start_offset(), 0_o);

  // Following again (epoch 5), then removed from this broker.
  p.Apply(Record(2, 5, 3, two, two), 200);
  auto next = LeaderBatches(4_o, 2, 5);
  ASSERT_TRUE(p.AppendAsFollower(LeaderEpoch(5), next.bytes, next.infos).ok());
  p.MarkRemoved();
  auto after = LeaderBatches(6_o, 2, 5);
  EXPECT_EQ(p.AppendAsFollower(LeaderEpoch(5), after.bytes, after.infos).error().code,
            Errc::kFenced);
  p.OnLeaderFetched(LeaderEpoch(5), 6_o, 0_o);
  EXPECT_EQ(p.log_end_offset(), 6_o);
  EXPECT_EQ(p.high_watermark(), 4_o);
}

// A follower's log started over where its leader says (a tiered replica, or
// one below the leader's log start) has nothing below to wait for.
TEST(Partition, AFollowerStartedOverKeepsItsMarkWithinTheNewLog) {
  auto log = TempLog();
  const std::vector<NodeId> two{NodeId(2), NodeId(1)};
  Partition p(kTp, "id", log, Record(2, 3, 1, two, two), NodeId(1), 0);
  auto batch = LeaderBatches(0_o, 4, 3);
  ASSERT_TRUE(p.AppendAsFollower(LeaderEpoch(3), batch.bytes, batch.infos).ok());
  p.OnLeaderFetched(LeaderEpoch(3), 4_o, 0_o);
  ASSERT_TRUE(p.StartLogAt(LeaderEpoch(3), 20_o, LeaderEpoch(3)).ok());
  EXPECT_EQ(p.log_start_offset(), 20_o);
  EXPECT_EQ(p.log_end_offset(), 20_o);
  EXPECT_EQ(p.high_watermark(), 20_o);
  auto tail = LeaderBatches(20_o, 5, 3);
  ASSERT_TRUE(p.AppendAsFollower(LeaderEpoch(3), tail.bytes, tail.infos).ok());
  EXPECT_EQ(p.high_watermark(), 20_o);
  p.OnLeaderFetched(LeaderEpoch(3), 23_o, 20_o);
  EXPECT_EQ(p.high_watermark(), 23_o);
  EXPECT_EQ(p.EndOffsetForEpoch(LeaderEpoch(3)),
            (std::pair<LeaderEpoch, Offset>{LeaderEpoch(3), 25_o}));
}

// Remote contiguity: a follower whose local log starts above the bound
// (remote log end + 1) is flagged and kept out of the ISR even when caught
// up; once uploads reach it, it is cleared and joins in the same change. A
// replica that has not fetched keeps the flag the record gives it.
TEST(Partition, AFollowerWithAGapToRemoteStorageStaysOutOfTheIsr) {
  const std::vector<NodeId> three{NodeId(1), NodeId(2), NodeId(3)};
  auto log = TempLog();
  auto record = Record(1, 3, 1, three, {NodeId(1), NodeId(2)});
  record.non_contiguous = {NodeId(3)};
  Partition p(kTp, "id", log, record, NodeId(1), 0);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(storage::testing::AppendOne(*log, {.records = 2}, 3).ok());
  p.OnFollowerFetch(NodeId(2), 10_o, 1, 100, /*follower_log_start=*/0_o);
  ASSERT_EQ(p.high_watermark(), 10_o);
  // Replica 3 has not fetched: its flag stays, nothing to change.
  EXPECT_EQ(p.WantedState(100, 30000, /*contiguity_bound=*/4_o), std::nullopt);
  // It synced at offset 8 and caught up, but remote storage ends at 3.
  p.OnFollowerFetch(NodeId(3), 10_o, 1, 200, /*follower_log_start=*/8_o);
  EXPECT_EQ(p.WantedState(200, 30000, 4_o), std::nullopt);
  // Uploads reached offset 7: contiguous, and in the ISR in one change.
  auto wanted = p.WantedState(300, 30000, 8_o);
  ASSERT_TRUE(wanted.has_value());
  EXPECT_EQ(wanted->isr, three);
  EXPECT_TRUE(wanted->non_contiguous.empty());
  // A member whose log start jumps past the bound (it started over) is
  // flagged and leaves the ISR.
  p.OnFollowerFetch(NodeId(2), 10_o, 1, 400, /*follower_log_start=*/9_o);
  wanted = p.WantedState(400, 30000, 8_o);
  ASSERT_TRUE(wanted.has_value());
  EXPECT_EQ(wanted->isr, (std::vector<NodeId>{NodeId(1), NodeId(3)}));
  EXPECT_EQ(wanted->non_contiguous, std::vector<NodeId>{NodeId(2)});
}

}  // namespace
}  // namespace strata::broker
