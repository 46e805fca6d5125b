// Idempotent producer checks through Log::Append, and their persistence.
#include <gtest/gtest.h>

#include "storage/file.h"
#include "storage/log.h"
#include "storage/producer_state.h"
#include "storage/test_util.h"

namespace strata::storage {
namespace {

using testing::AppendAll;
using testing::AppendOne;
using testing::BatchOptions;
using testing::MakeBatch;

namespace fs = std::filesystem;

constexpr int64_t kPid = 4242;

BatchOptions Idem(int32_t seq, int records = 2, int16_t epoch = 0, int64_t pid = kPid) {
  return {.records = records, .producer_id = pid, .producer_epoch = epoch, .base_sequence = seq};
}

class LogProducerTest : public testing::TempDirTest {
 protected:
  std::unique_ptr<Log> OpenLog() {
    auto log = Log::Open(dir_, config_, &clock_);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().message);
    return log.ok() ? std::move(*log) : nullptr;
  }
  static void ExpectError(const Result<AppendResult>& r, Errc code) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, code) << r.error().message;
  }
  static void ExpectDuplicate(const Result<AppendResult>& r, Offset base, Offset last) {
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->duplicate);
    EXPECT_EQ(r->base_offset, base);
    EXPECT_EQ(r->last_offset, last);
  }

  LogConfig config_;
  ManualClock clock_{1'700'000'000'000};
};

TEST_F(LogProducerTest, RetriesOfLastFiveBatchesReturnOriginalOffsets) {
  auto log = OpenLog();
  ASSERT_TRUE(AppendOne(*log, {.records = 3}).ok());  // a non-idempotent batch first: 0..2
  for (int i = 0; i < 6; ++i) {
    auto r = AppendOne(*log, Idem(2 * i));  // seq 2i..2i+1 at offsets 3+2i..4+2i
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->duplicate);
    EXPECT_EQ(r->base_offset, Offset(3 + 2 * i));
  }
  const auto size = log->size_bytes();
  for (int i = 1; i < 6; ++i) {
    ExpectDuplicate(AppendOne(*log, Idem(2 * i)), Offset(3 + 2 * i), Offset(4 + 2 * i));
  }
  EXPECT_EQ(log->log_end_offset(), 15_o);
  EXPECT_EQ(log->size_bytes(), size);  // nothing written
  // The sixth-newest batch fell out of the window: a plain sequence error.
  ExpectError(AppendOne(*log, Idem(0)), Errc::kOutOfOrderSequence);
  // A different range overlapping a stored batch is not a duplicate either.
  ExpectError(AppendOne(*log, Idem(10, 1)), Errc::kOutOfOrderSequence);
  auto next = AppendOne(*log, Idem(12));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->base_offset, 15_o);
}

TEST_F(LogProducerTest, SequenceGapIsOutOfOrder) {
  auto log = OpenLog();
  ASSERT_TRUE(AppendOne(*log, Idem(0)).ok());
  ExpectError(AppendOne(*log, Idem(3)), Errc::kOutOfOrderSequence);
  EXPECT_EQ(log->log_end_offset(), 2_o);
  // A multi-batch append is checked batch after batch and is all or nothing.
  ExpectError(AppendAll(*log, {MakeBatch(Idem(2)), MakeBatch(Idem(5))}), Errc::kOutOfOrderSequence);
  EXPECT_EQ(log->log_end_offset(), 2_o);
  auto ok = AppendAll(*log, {MakeBatch(Idem(2)), MakeBatch(Idem(4))});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->base_offset, 2_o);
  EXPECT_EQ(ok->last_offset, 5_o);
}

TEST_F(LogProducerTest, EpochRules) {
  auto log = OpenLog();
  ASSERT_TRUE(AppendOne(*log, Idem(0, 2, 1)).ok());
  ExpectError(AppendOne(*log, Idem(2, 2, 0)), Errc::kInvalidProducerEpoch);
  ExpectError(AppendOne(*log, Idem(2, 2, 2)), Errc::kOutOfOrderSequence);  // new epoch at 2
  ASSERT_TRUE(AppendOne(*log, Idem(0, 2, 2)).ok());
  ExpectError(AppendOne(*log, Idem(2, 2, 1)), Errc::kInvalidProducerEpoch);
  // The old epoch's batches no longer count as duplicates.
  ExpectError(AppendOne(*log, Idem(0, 2, 1)), Errc::kInvalidProducerEpoch);
}

TEST_F(LogProducerTest, UnknownProducerAcceptedAtAnySequenceAndSequencesWrap) {
  auto log = OpenLog();
  ASSERT_TRUE(AppendOne(*log, Idem(INT32_MAX - 1, 2, 3, 7)).ok());  // last seq INT32_MAX
  auto wrapped = AppendOne(*log, Idem(0, 2, 3, 7));
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(wrapped->base_offset, 2_o);
  ExpectDuplicate(AppendOne(*log, Idem(INT32_MAX - 1, 2, 3, 7)), 0_o, 1_o);
}

TEST_F(LogProducerTest, StateSurvivesCleanReopenViaSnapshot) {
  {
    auto log = OpenLog();
    ASSERT_TRUE(AppendOne(*log, Idem(0)).ok());
    ASSERT_TRUE(AppendOne(*log, Idem(2)).ok());
    ASSERT_TRUE(log->Close().ok());
  }
  // Close wrote a snapshot at the log end in Kafka's format.
  auto snap = ReadWholeFile(File(4, ".snapshot"));
  ASSERT_TRUE(snap.ok());
  ProducerStateManager decoded;
  ASSERT_TRUE(decoded.DecodeSnapshot(*snap).ok());
  ASSERT_NE(decoded.Get(kPid), nullptr);
  EXPECT_EQ(decoded.Get(kPid)->batches.back().last_seq, 3);
  EXPECT_EQ(decoded.Get(kPid)->batches.back().last_offset, 3_o);

  auto log = OpenLog();
  ExpectDuplicate(AppendOne(*log, Idem(2)), 2_o, 3_o);
  ExpectError(AppendOne(*log, Idem(5)), Errc::kOutOfOrderSequence);
  auto next = AppendOne(*log, Idem(4));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->base_offset, 4_o);
}

TEST_F(LogProducerTest, StateSurvivesCrashViaRollSnapshotAndTailReplay) {
  config_.segment_bytes = int64_t(MakeBatch(Idem(0)).size()) * 3;
  {
    auto log = OpenLog();
    ASSERT_TRUE(AppendOne(*log, Idem(0, 2, 0, 99)).ok());  // other producer, offsets 0..1
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(AppendOne(*log, Idem(2 * i)).ok());
    // Segments [0,6) [6,12) [12,16): snapshots at 6 and 12.
    ASSERT_EQ(log->segment_count(), 3);
  }  // crash
  EXPECT_TRUE(fs::exists(File(6, ".snapshot")));
  EXPECT_TRUE(fs::exists(File(12, ".snapshot")));
  EXPECT_FALSE(fs::exists(File(16, ".snapshot")));
  auto log = OpenLog();
  EXPECT_EQ(log->log_end_offset(), 16_o);
  // The snapshot at 12 carries the batch ending at 11; the tail replays 12..15.
  ExpectDuplicate(AppendOne(*log, Idem(12)), 14_o, 15_o);
  ExpectDuplicate(AppendOne(*log, Idem(10)), 12_o, 13_o);
  ExpectDuplicate(AppendOne(*log, Idem(8)), 10_o, 11_o);
  ExpectError(AppendOne(*log, Idem(16 + 1)), Errc::kOutOfOrderSequence);
  ASSERT_TRUE(AppendOne(*log, Idem(14)).ok());
  // The other producer, known only from the snapshot, keeps its sequence.
  ExpectDuplicate(AppendOne(*log, Idem(0, 2, 0, 99)), 0_o, 1_o);
  ExpectError(AppendOne(*log, Idem(3, 2, 0, 99)), Errc::kOutOfOrderSequence);
  ASSERT_TRUE(AppendOne(*log, Idem(2, 2, 0, 99)).ok());
}

TEST_F(LogProducerTest, OnlyRecentSnapshotsAreKept) {
  config_.segment_bytes = int64_t(MakeBatch(Idem(0)).size());
  auto log = OpenLog();
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(AppendOne(*log, Idem(2 * i)).ok());
  std::vector<Offset> snaps = ProducerStateManager::ListSnapshots(dir_);
  EXPECT_EQ(snaps, (std::vector<Offset>{10_o, 12_o, 14_o}));
}

}  // namespace
}  // namespace strata::storage
