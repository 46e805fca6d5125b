// The follower's side of Log: AppendAsFollower keeps the leader's bytes,
// offsets and epochs and rebuilds producer state from them; TruncateTo cuts
// a tail at a batch boundary with epochs, producer state and a reopen
// following; TruncateFullyAndStartAt starts an emptied log above its end,
// or an empty one lower.
#include <gtest/gtest.h>

#include "storage/file.h"
#include "storage/log.h"
#include "storage/test_util.h"

namespace strata::storage {
namespace {

using testing::AppendOne;
using testing::BatchOptions;
using testing::InfoFor;

namespace fs = std::filesystem;

constexpr int64_t kPid = 77;

class LogReplicaTest : public testing::TempDirTest {
 protected:
  std::unique_ptr<Log> OpenLog(const fs::path& dir) {
    auto log = Log::Open(dir, config_, &clock_);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().message);
    return log.ok() ? std::move(*log) : nullptr;
  }
  // The batches of `log` in [from, to), as stored (to = kNoOffset: the log end).
  static Bytes ReadRange(const Log& log, Offset from, Offset to = kNoOffset) {
    if (to < 0_o) to = log.log_end_offset();
    Bytes out;
    for (Offset offset = from; offset < to;) {
      auto r = log.Read(offset, 1 << 20, to, true);
      EXPECT_TRUE(r.ok());
      if (!r.ok() || r->records.empty()) break;
      offset = testing::Headers(r->records).back().last_offset() + 1;
      out.insert(out.end(), r->records.begin(), r->records.end());
    }
    return out;
  }
  // What a follower does with a fetched byte run: split, then append it.
  static Result<AppendResult> Replicate(Log& follower, Bytes data) {
    std::vector<BatchInfo> infos;
    size_t pos = 0;
    for (const auto& h : testing::Headers(data)) {
      infos.push_back(InfoFor(ByteView(data).subspan(pos, static_cast<size_t>(h.size_in_bytes()))));
      pos += static_cast<size_t>(h.size_in_bytes());
    }
    return follower.AppendAsFollower(MutableByteView(data), infos);
  }

  LogConfig config_;
  ManualClock clock_{1'700'000'000'000};
};

TEST_F(LogReplicaTest, AFollowerKeepsTheLeadersBytesOffsetsEpochsAndProducerState) {
  config_.segment_bytes = 600;  // several segments on both sides
  auto leader = OpenLog(root_ / "leader-0");
  auto follower = OpenLog(dir_);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(AppendOne(*leader, {.records = 3}, 1).ok());
  for (int32_t seq = 0; seq < 8; seq += 2) {
    ASSERT_TRUE(
        AppendOne(*leader,
                  {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = seq}, 4)
            .ok());
  }
  // Fetched in two pieces, as a follower would.
  Bytes all = ReadRange(*leader, 0_o);
  ASSERT_FALSE(all.empty());
  auto first = leader->Read(0_o, 1, leader->log_end_offset(), true);  // one batch
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(Replicate(*follower, first->records).ok());
  auto rest = Replicate(*follower, ReadRange(*leader, follower->log_end_offset()));
  ASSERT_TRUE(rest.ok()) << rest.error().message;

  EXPECT_EQ(follower->log_end_offset(), leader->log_end_offset());
  EXPECT_EQ(ReadRange(*follower, 0_o), all);  // byte-identical
  EXPECT_GT(follower->segment_count(), 1);
  EXPECT_EQ(follower->latest_epoch(), LeaderEpoch(4));
  EXPECT_EQ(follower->LeaderEpochEntries(), leader->LeaderEpochEntries());
  EXPECT_EQ(follower->EndOffsetForEpoch(LeaderEpoch(1)), leader->EndOffsetForEpoch(LeaderEpoch(1)));

  // Producer state came with the batches: as the new leader, this replica
  // answers a retry of the producer's last batch with its original offsets.
  auto retry = AppendOne(
      *follower, {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = 6}, 5);
  ASSERT_TRUE(retry.ok()) << retry.error().message;
  EXPECT_TRUE(retry->duplicate);
  EXPECT_EQ(retry->base_offset, leader->log_end_offset() - 2);
  // And the next sequence is accepted, a gap refused.
  EXPECT_EQ(
      AppendOne(*follower,
                {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = 12}, 5)
          .error()
          .code,
      Errc::kOutOfOrderSequence);
}

TEST_F(LogReplicaTest, BatchesBelowTheLogEndAreRefused) {
  auto leader = OpenLog(root_ / "leader-0");
  auto follower = OpenLog(dir_);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(AppendOne(*leader, {.records = 2}, 1).ok());
  Bytes all = ReadRange(*leader, 0_o);
  ASSERT_TRUE(Replicate(*follower, all).ok());
  auto again = Replicate(*follower, all);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(follower->log_end_offset(), 6_o);
}

TEST_F(LogReplicaTest, TruncationCutsTheTailWithItsEpochsAndProducerState) {
  config_.segment_bytes = 500;
  auto log = OpenLog(dir_);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(AppendOne(*log, {.records = 2}, 1).ok());  // 0-15
  const Offset epoch2_start = log->log_end_offset();
  ASSERT_TRUE(
      AppendOne(*log, {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = 0},
                2)
          .ok());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(AppendOne(*log, {.records = 2}, 2).ok());
  const int segments_before = log->segment_count();
  ASSERT_GT(segments_before, 2);
  const Bytes kept = ReadRange(*log, 0_o, epoch2_start);

  // Inside a batch: the whole batch goes.
  ASSERT_TRUE(log->TruncateTo(epoch2_start + 1).ok());
  EXPECT_EQ(log->log_end_offset(), epoch2_start);
  EXPECT_EQ(log->latest_epoch(), LeaderEpoch(1));
  EXPECT_LT(log->segment_count(), segments_before);
  EXPECT_EQ(ReadRange(*log, 0_o), kept);
  // The producer's batch went with the tail: its retry is new, not a duplicate.
  auto retry = AppendOne(
      *log, {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = 0}, 3);
  ASSERT_TRUE(retry.ok()) << retry.error().message;
  EXPECT_FALSE(retry->duplicate);
  EXPECT_EQ(retry->base_offset, epoch2_start);
  EXPECT_EQ(log->latest_epoch(), LeaderEpoch(3));
  EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(1)).second, epoch2_start);

  // A clean reopen sees the truncated log.
  const Offset end = log->log_end_offset();
  ASSERT_TRUE(log->Close().ok());
  log = OpenLog(dir_);
  EXPECT_EQ(log->log_end_offset(), end);
  EXPECT_EQ(log->latest_epoch(), LeaderEpoch(3));
  // To a segment's base, and to the start: the log stays usable.
  ASSERT_TRUE(log->TruncateTo(0_o).ok());
  EXPECT_EQ(log->log_end_offset(), 0_o);
  EXPECT_EQ(log->segment_count(), 1);
  EXPECT_EQ(log->latest_epoch(), LeaderEpoch(-1));
  ASSERT_TRUE(AppendOne(*log, {.records = 1}, 4).ok());
  EXPECT_EQ(log->log_end_offset(), 1_o);
  ASSERT_TRUE(log->TruncateTo(5_o).ok());  // past the end: nothing to do
  EXPECT_EQ(log->log_end_offset(), 1_o);
}

// A follower whose whole log is below the leader's log start (the leader's
// retention ran while it was away) starts again there: empty, at the
// leader's start, and takes the leader's batches from that offset on; a
// reopen sees the same log.
TEST_F(LogReplicaTest, AFullTruncationStartsTheLogAboveItsEnd) {
  config_.segment_bytes = 500;
  auto leader = OpenLog(root_ / "leader-0");
  auto follower = OpenLog(dir_);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(AppendOne(*leader, {.records = 2}, 1).ok());
  ASSERT_TRUE(Replicate(*follower, ReadRange(*leader, 0_o)).ok());  // 0-7
  ASSERT_TRUE(
      AppendOne(*follower,
                {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = 0}, 1)
          .ok());  // 8-9: a tail the leader never had
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(AppendOne(*leader, {.records = 2}, 2).ok());  // 8-31
  ASSERT_TRUE(leader->DeleteRecordsBefore(20_o).ok());
  const Offset start = leader->log_start_offset();
  ASSERT_GT(start, follower->log_end_offset());

  EXPECT_EQ(follower->TruncateFullyAndStartAt(5_o).error().code, Errc::kInvalidArgument);
  ASSERT_TRUE(follower->TruncateFullyAndStartAt(start).ok());
  EXPECT_EQ(follower->log_start_offset(), start);
  EXPECT_EQ(follower->log_end_offset(), start);
  EXPECT_EQ(follower->segment_count(), 1);
  EXPECT_EQ(follower->latest_epoch(), LeaderEpoch(-1));
  EXPECT_TRUE(ReadRange(*follower, start).empty());
  ASSERT_TRUE(Replicate(*follower, ReadRange(*leader, start)).ok());
  EXPECT_EQ(follower->log_end_offset(), leader->log_end_offset());
  EXPECT_EQ(ReadRange(*follower, start), ReadRange(*leader, start));
  EXPECT_EQ(follower->latest_epoch(), LeaderEpoch(2));
  // The producer's batch is gone with the log: its retry is new.
  auto retry = AppendOne(
      *follower, {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = 0}, 3);
  ASSERT_TRUE(retry.ok()) << retry.error().message;
  EXPECT_FALSE(retry->duplicate);

  const Bytes before = ReadRange(*follower, start);
  ASSERT_TRUE(follower->Close().ok());
  follower = OpenLog(dir_);
  EXPECT_EQ(follower->log_start_offset(), start);
  EXPECT_EQ(ReadRange(*follower, start), before);
}

// The leader's log start inside a batch (DeleteRecords): an empty follower
// started there starts again at the batch's base to take the batch whole,
// and its log start goes back up, as it is after a reopen.
TEST_F(LogReplicaTest, AnEmptyLogStartsLowerToTakeABatchHoldingItsStart) {
  auto leader = OpenLog(root_ / "leader-0");
  auto follower = OpenLog(dir_);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(AppendOne(*leader, {.records = 5}, 1).ok());  // 0-14
  ASSERT_TRUE(leader->DeleteRecordsBefore(7_o).ok());  // inside the batch 5-9
  ASSERT_TRUE(follower->TruncateFullyAndStartAt(7_o).ok());
  ASSERT_TRUE(AppendOne(*follower, {.records = 1}, 1).ok());
  // Not empty: never lower.
  EXPECT_EQ(follower->TruncateFullyAndStartAt(5_o).error().code, Errc::kInvalidArgument);
  ASSERT_TRUE(follower->TruncateTo(7_o).ok());
  ASSERT_EQ(follower->log_end_offset(), follower->log_start_offset());

  ASSERT_TRUE(follower->TruncateFullyAndStartAt(5_o).ok());
  EXPECT_EQ(follower->log_start_offset(), 5_o);
  EXPECT_EQ(follower->log_end_offset(), 5_o);
  EXPECT_EQ(follower->segment_count(), 1);
  ASSERT_TRUE(Replicate(*follower, ReadRange(*leader, 7_o)).ok());  // from the batch at 5
  ASSERT_TRUE(follower->DeleteRecordsBefore(7_o).ok());
  EXPECT_EQ(follower->log_start_offset(), 7_o);
  EXPECT_EQ(follower->log_end_offset(), 15_o);
  EXPECT_EQ(ReadRange(*follower, 7_o), ReadRange(*leader, 7_o));
  ASSERT_TRUE(follower->Close().ok());
  follower = OpenLog(dir_);
  EXPECT_EQ(follower->log_start_offset(), 7_o);
  EXPECT_EQ(ReadRange(*follower, 7_o), ReadRange(*leader, 7_o));
}

// A replica that starts at a leader's active segment is told the epoch of
// the leader's records there: its history starts with it, so it agrees with
// a follower whose log reaches that offset at that epoch (no divergence,
// KIP-320). (A reopen before any record drops the entry, as Kafka's drops
// entries at the log end.)
TEST_F(LogReplicaTest, AFullTruncationCanStartTheEpochHistory) {
  auto log = OpenLog(dir_);
  ASSERT_TRUE(log->TruncateFullyAndStartAt(3000_o, /*leader_epoch=*/LeaderEpoch(2)).ok());
  EXPECT_EQ(log->latest_epoch(), LeaderEpoch(2));
  using Entries = std::vector<std::pair<LeaderEpoch, Offset>>;
  EXPECT_EQ(log->LeaderEpochEntries(), (Entries{{LeaderEpoch(2), 3000_o}}));
  // Epoch 2 runs to the log end; an older one ends where the history starts.
  EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(2)),
            (std::pair<LeaderEpoch, Offset>{LeaderEpoch(2), 3000_o}));
  EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(1)),
            (std::pair<LeaderEpoch, Offset>{LeaderEpoch(1), 3000_o}));
  // A newer epoch at the same offset takes the entry over (as Kafka's
  // cache does); epoch 2 still ends there.
  ASSERT_TRUE(AppendOne(*log, {.records = 2}, 4).ok());
  EXPECT_EQ(log->LeaderEpochEntries(), (Entries{{LeaderEpoch(4), 3000_o}}));
  ASSERT_TRUE(log->Close().ok());
  log = OpenLog(dir_);
  EXPECT_EQ(log->LeaderEpochEntries(), (Entries{{LeaderEpoch(4), 3000_o}}));
  EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(2)),
            (std::pair<LeaderEpoch, Offset>{LeaderEpoch(2), 3000_o}));
}

// A replica started at its leader's active segment does not know the
// producers that wrote only below it until a producer snapshot from there
// (the leader's, in remote storage) is merged: a retry of such a
// producer's last batch is then answered as a duplicate. The gap is kept
// across a reopen until the merge, and gone after it.
TEST_F(LogReplicaTest, AStartedLogGetsItsProducerStateFromASnapshot) {
  auto leader = OpenLog(root_ / "leader-0");
  for (int32_t seq = 0; seq < 6; seq += 2) {
    ASSERT_TRUE(
        AppendOne(*leader,
                  {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = seq}, 3)
            .ok());
  }
  ASSERT_TRUE(leader->Roll().ok());  // the sync point: a snapshot at 6
  const Offset start = leader->active_segment_base_offset();
  ASSERT_EQ(start, 6_o);
  ASSERT_TRUE(AppendOne(*leader, {.records = 2}, 3).ok());  // another producer's records

  auto follower = OpenLog(dir_);
  ASSERT_TRUE(follower->TruncateFullyAndStartAt(start, LeaderEpoch(3)).ok());
  EXPECT_EQ(follower->producer_state_gap(), start);
  ASSERT_TRUE(Replicate(*follower, ReadRange(*leader, start)).ok());
  ASSERT_TRUE(follower->Close().ok());
  follower = OpenLog(dir_);
  EXPECT_EQ(follower->producer_state_gap(), start);

  auto snapshot = ReadWholeFile(root_ / "leader-0" / OffsetFileName(start.value(), ".snapshot"));
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  EXPECT_EQ(follower->MergeProducerSnapshot(*snapshot, start - 1).error().code,
            Errc::kInvalidArgument);  // from before the gap: would miss records
  ASSERT_TRUE(follower->MergeProducerSnapshot(*snapshot, start).ok());
  EXPECT_EQ(follower->producer_state_gap(), kNoOffset);
  auto retry = AppendOne(
      *follower, {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = 4}, 4);
  ASSERT_TRUE(retry.ok()) << retry.error().message;
  EXPECT_TRUE(retry->duplicate);
  EXPECT_EQ(retry->base_offset, 4_o);
  ASSERT_TRUE(follower->Close().ok());
  follower = OpenLog(dir_);
  EXPECT_EQ(follower->producer_state_gap(), kNoOffset);
  retry = AppendOne(
      *follower, {.records = 2, .producer_id = kPid, .producer_epoch = 0, .base_sequence = 4}, 4);
  ASSERT_TRUE(retry.ok()) << retry.error().message;
  EXPECT_TRUE(retry->duplicate);
}

}  // namespace
}  // namespace strata::storage
