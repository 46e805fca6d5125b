// Transactions in a log: markers appended by the coordinator, the
// aborted-transaction index they fill, the last stable offset, and what
// followers, recovery and truncation make of them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/clock.h"
#include "protocol/control_record.h"
#include "storage/log.h"
#include "storage/test_util.h"

namespace strata::storage {
namespace {

using protocol::ControlType;
using testing::BatchOptions;
using testing::InfoFor;
using testing::MakeBatch;

class LogTxnTest : public testing::TempDirTest {
 protected:
  std::unique_ptr<Log> Open(LogConfig config = {}) {
    auto log = Log::Open(dir_, config, &clock_);
    EXPECT_TRUE(log.ok()) << log.error().message;
    return log.ok() ? std::move(*log) : nullptr;
  }

  // `records` transactional records of producer `pid` at sequence `seq`.
  static Bytes TxnBatch(int64_t pid, int16_t epoch, int32_t seq, int records = 1) {
    BatchOptions o;
    o.records = records;
    o.producer_id = pid;
    o.producer_epoch = epoch;
    o.base_sequence = seq;
    o.transactional = true;
    return MakeBatch(o);
  }
  static Bytes MarkerBatch(int64_t pid, int16_t epoch, ControlType type,
                           int32_t coordinator_epoch = 0) {
    return protocol::BuildTxnMarkerBatch(pid, epoch, {type, coordinator_epoch}, 1000);
  }
  static Result<AppendResult> Append(Log& log, Bytes batch,
                                     AppendOrigin origin = AppendOrigin::kClient) {
    std::vector<BatchInfo> infos{InfoFor(batch)};
    return log.Append(MutableByteView(batch), infos, LeaderEpoch(0), origin);
  }
  static void MustAppend(Log& log, Bytes batch, AppendOrigin origin = AppendOrigin::kClient) {
    auto r = Append(log, std::move(batch), origin);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  // Producer 7 writes 3 records, producer 8 one, then 7's is aborted and
  // 8's committed: offsets 0-2 (7), 3 (8), 4 abort(7), 5 commit(8).
  void InterleavedAbortAndCommit(Log& log) {
    MustAppend(log, TxnBatch(7, 0, 0, 3));
    MustAppend(log, TxnBatch(8, 0, 0));
    MustAppend(log, MarkerBatch(7, 0, ControlType::kAbort, 2), AppendOrigin::kCoordinator);
    MustAppend(log, MarkerBatch(8, 0, ControlType::kCommit, 2), AppendOrigin::kCoordinator);
  }

  ManualClock clock_{1'700'000'000'000};
};

TEST_F(LogTxnTest, AnAbortIsIndexedAndTheLastStableOffsetFollowsTheHighWatermark) {
  auto log = Open();
  MustAppend(*log, TxnBatch(7, 0, 0, 3));
  MustAppend(*log, TxnBatch(8, 0, 0));
  log->SetHighWatermark(4_o);
  EXPECT_EQ(log->last_stable_offset(), 0_o);  // producer 7's transaction is open

  MustAppend(*log, MarkerBatch(7, 0, ControlType::kAbort, 2), AppendOrigin::kCoordinator);
  // Aborted at 4, with producer 8's transaction (from 3) still open.
  const AbortedTxn aborted{7, 0_o, 4_o, 3_o};
  EXPECT_EQ(log->AbortedTransactions(0_o, 5_o), std::vector<AbortedTxn>{aborted});
  EXPECT_EQ(std::filesystem::file_size(File(0, ".txnindex")), kAbortedTxnSize);
  EXPECT_EQ(log->last_stable_offset(), 0_o);  // the marker is not committed yet
  log->SetHighWatermark(5_o);
  EXPECT_EQ(log->last_stable_offset(), 3_o);  // producer 8's is open

  MustAppend(*log, MarkerBatch(8, 0, ControlType::kCommit, 2), AppendOrigin::kCoordinator);
  log->SetHighWatermark(6_o);
  EXPECT_EQ(log->last_stable_offset(), 6_o);
  // A commit is not indexed; a read past the abort does not report it.
  EXPECT_EQ(log->AbortedTransactions(0_o, 6_o), std::vector<AbortedTxn>{aborted});
  EXPECT_TRUE(log->AbortedTransactions(5_o, 6_o).empty());
  ASSERT_TRUE(log->Close().ok());
}

// The coordinator's markers are checked against the producer's epoch and
// the coordinator's; its data writes skip the duplicate check clients get.
TEST_F(LogTxnTest, CoordinatorWritesAreNotDeduplicatedAndMarkersAreFenced) {
  auto log = Open();
  MustAppend(*log, TxnBatch(7, 1, 0), AppendOrigin::kCoordinator);
  auto second = Append(*log, TxnBatch(7, 1, 0), AppendOrigin::kCoordinator);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->duplicate);
  EXPECT_EQ(second->base_offset, 1_o);
  auto retry = Append(*log, TxnBatch(7, 1, 0), AppendOrigin::kClient);
  ASSERT_TRUE(retry.ok());
  EXPECT_TRUE(retry->duplicate);

  MustAppend(*log, MarkerBatch(7, 1, ControlType::kCommit, 5), AppendOrigin::kCoordinator);
  auto fenced = Append(*log, MarkerBatch(7, 1, ControlType::kAbort, 4), AppendOrigin::kCoordinator);
  ASSERT_FALSE(fenced.ok());
  EXPECT_EQ(fenced.error().code, Errc::kTxnCoordinatorFenced);
  auto old_epoch =
      Append(*log, MarkerBatch(7, 0, ControlType::kAbort, 5), AppendOrigin::kCoordinator);
  ASSERT_FALSE(old_epoch.ok());
  EXPECT_EQ(old_epoch.error().code, Errc::kInvalidProducerEpoch);
  EXPECT_EQ(log->log_end_offset(), 3_o);  // nothing of the refused ones was written
  ASSERT_TRUE(log->Close().ok());
}

TEST_F(LogTxnTest, AFollowerBuildsTheSameIndexFromTheLeadersBytes) {
  auto leader = Open();
  InterleavedAbortAndCommit(*leader);
  auto read = leader->Read(0_o, 1 << 20, Offset::Max(), true);
  ASSERT_TRUE(read.ok());
  std::vector<BatchInfo> infos;
  size_t pos = 0;
  for (const auto& h : testing::Headers(read->records)) {
    infos.push_back(InfoFor(ByteView(read->records).subspan(pos, h.size_in_bytes())));
    pos += h.size_in_bytes();
  }
  ASSERT_TRUE(leader->Close().ok());

  dir_ = root_ / "follower-0";
  auto follower = Open();
  ASSERT_TRUE(follower->AppendAsFollower(MutableByteView(read->records), infos).ok());
  EXPECT_EQ(follower->AbortedTransactions(0_o, 6_o), (std::vector<AbortedTxn>{{7, 0_o, 4_o, 3_o}}));
  follower->SetHighWatermark(5_o);
  // 8's transaction (from 3) is committed at 5, not yet below the mark.
  EXPECT_EQ(follower->last_stable_offset(), 3_o);
  follower->SetHighWatermark(6_o);
  EXPECT_EQ(follower->last_stable_offset(), 6_o);
  ASSERT_TRUE(follower->Close().ok());
}

// After a crash (no Close) the index and the open transactions come back
// from the snapshot and the replay; a damaged index is rebuilt whole.
TEST_F(LogTxnTest, RecoveryRebuildsTheIndexAndTheOpenTransactions) {
  LogConfig config;
  config.segment_bytes = 300;  // a few batches per segment: the markers land in later ones
  {
    auto log = Open(config);
    InterleavedAbortAndCommit(*log);
    MustAppend(*log, TxnBatch(9, 0, 0));  // left open at 6
    log = nullptr;                        // crash
  }
  const std::vector<AbortedTxn> expected{{7, 0_o, 4_o, 3_o}};
  {
    auto log = Open(config);
    EXPECT_EQ(log->AbortedTransactions(0_o, 7_o), expected);
    log->SetHighWatermark(7_o);
    EXPECT_EQ(log->last_stable_offset(), 6_o);
    ASSERT_TRUE(log->Close().ok());
  }
  // Damage every .txnindex (a torn entry).
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    if (entry.path().extension() == ".txnindex") {
      std::ofstream(entry.path(), std::ios::app) << "torn";
    }
  }
  auto log = Open(config);
  EXPECT_EQ(log->AbortedTransactions(0_o, 7_o), expected);
  log->SetHighWatermark(7_o);
  EXPECT_EQ(log->last_stable_offset(), 6_o);
  ASSERT_TRUE(log->Close().ok());
}

// A follower truncated below an abort loses its index entry, and the
// transaction the marker ended is open again.
TEST_F(LogTxnTest, TruncationBelowAMarkerReopensItsTransaction) {
  auto log = Open();
  InterleavedAbortAndCommit(*log);
  ASSERT_TRUE(log->TruncateTo(4_o).ok());
  EXPECT_TRUE(log->AbortedTransactions(0_o, 4_o).empty());
  log->SetHighWatermark(4_o);
  EXPECT_EQ(log->last_stable_offset(), 0_o);
  ASSERT_TRUE(log->Close().ok());
}

// A truncation replays the transactions completed since the last snapshot:
// those below the (lowered) high watermark hold nothing back, even though
// the mark does not rise again.
TEST_F(LogTxnTest, ATruncationLeavesNoDecidedTransactionHoldingTheLastStableOffset) {
  auto log = Open();
  MustAppend(*log, TxnBatch(7, 0, 0));                                                    // 0
  MustAppend(*log, MarkerBatch(7, 0, ControlType::kCommit), AppendOrigin::kCoordinator);  // 1
  MustAppend(*log, testing::MakeBatch({}));                                               // 2
  log->SetHighWatermark(3_o);
  ASSERT_EQ(log->last_stable_offset(), 3_o);
  ASSERT_TRUE(log->TruncateTo(2_o).ok());
  EXPECT_EQ(log->last_stable_offset(), 2_o);
  log->SetHighWatermark(2_o);  // the same mark again
  EXPECT_EQ(log->last_stable_offset(), 2_o);
  ASSERT_TRUE(log->Close().ok());
}

}  // namespace
}  // namespace strata::storage

namespace strata::storage {
namespace {

// KIP-890: a transactional write verified against a transaction that ends
// (its marker lands) before the write is appended must not open another
// transaction here; batches in flight together share a guard.
class LogTxnVerificationTest : public LogTxnTest {
 protected:
  static Result<AppendResult> AppendVerified(Log& log, Bytes batch, uint64_t guard) {
    std::vector<BatchInfo> infos{InfoFor(batch)};
    infos[0].txn_verification_guard = guard;
    return log.Append(MutableByteView(batch), infos, LeaderEpoch(0), AppendOrigin::kClient);
  }
};

TEST_F(LogTxnVerificationTest, AMarkerVoidsTheGuardOfAWriteVerifiedBeforeIt) {
  auto log = Open();
  const TxnVerification first = log->StartTxnVerification(7, 0);
  EXPECT_FALSE(first.ongoing);
  // The coordinator ends the transaction (say it timed out) meanwhile.
  MustAppend(*log, MarkerBatch(7, 0, ControlType::kAbort), AppendOrigin::kCoordinator);
  auto late = AppendVerified(*log, TxnBatch(7, 0, 0), first.guard);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, Errc::kInvalidTxnState);
  log->SetHighWatermark(log->log_end_offset());
  EXPECT_EQ(log->last_stable_offset(), log->log_end_offset());  // nothing left open

  // Verified again, it goes in and opens the transaction; later batches
  // find it open.
  const TxnVerification second = log->StartTxnVerification(7, 0);
  ASSERT_TRUE(AppendVerified(*log, TxnBatch(7, 0, 0), second.guard).ok());
  EXPECT_TRUE(log->StartTxnVerification(7, 0).ongoing);
  EXPECT_FALSE(log->StartTxnVerification(7, 1).ongoing);  // another epoch: not its transaction
}

TEST_F(LogTxnVerificationTest, BatchesVerifiedTogetherShareTheGuard) {
  auto log = Open();
  const TxnVerification a = log->StartTxnVerification(7, 0);
  const TxnVerification b = log->StartTxnVerification(7, 0);
  EXPECT_EQ(a.guard, b.guard);
  ASSERT_TRUE(AppendVerified(*log, TxnBatch(7, 0, 0), a.guard).ok());
  ASSERT_TRUE(AppendVerified(*log, TxnBatch(7, 0, 1), b.guard).ok());  // the transaction is open
  // Without verification (disabled) nothing is checked.
  MustAppend(*log, TxnBatch(9, 0, 0));
}

}  // namespace
}  // namespace strata::storage
