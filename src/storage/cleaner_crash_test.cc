// Crash safety of the compaction swap: a crash after each step (simulated by
// stopping the swap there and reopening without Close) loses nothing; the
// next Open rolls back an uncommitted swap or completes a committed one.
#include <gtest/gtest.h>

#include "protocol/control_record.h"
#include "storage/cleaner_test_util.h"
#include "storage/log_impl.h"

namespace strata::storage {
namespace {

using testing::ReadAllRecords;
using testing::ReadRecord;
using Step = LogImpl::SwapStep;

namespace fs = std::filesystem;

class CleanerCrashTest : public testing::CompactedLogTest {
 protected:
  // Four segments of overwrites (one group when cleaned) and an active one.
  void Fill(Log& log) {
    for (int round = 0; round < 4; ++round) {
      for (int k = 0; k < 6; ++k) {
        Put(log, "key-" + std::to_string(k), "r" + std::to_string(round) + "-" + std::to_string(k));
      }
      Roll(log);
    }
    Put(log, "key-1", "active");
  }
  static constexpr Offset kEnd = 24_o;  // first uncleanable offset after Fill

  // Cleans with a crash injected after `step`, then "restarts".
  void CrashDuringSwap(std::unique_ptr<Log> log, Step step) {
    static_cast<LogImpl&>(*log).InjectSwapCrashForTest(step);
    auto r = Clean(*log);
    EXPECT_FALSE(r.ok());
    log.reset();  // no Close(): a crash
  }
  void Rename(const std::string& from, const std::string& to) {
    fs::rename(dir_ / from, dir_ / to);
  }
  static std::string Name(int64_t base, const char* suffix) {
    char name[64];
    snprintf(name, sizeof(name), "%020lld%s", static_cast<long long>(base), suffix);
    return name;
  }

  // After recovery: the expected records, no leftovers, valid indexes, and
  // the cleaner still works (a new pass reaches the fully cleaned state).
  void ExpectRecovered(const std::vector<ReadRecord>& expected,
                       const std::vector<ReadRecord>& fully_cleaned) {
    auto log = OpenLog();
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(Describe(ReadAllRecords(*log)), Describe(expected));
    EXPECT_EQ(SwapLeftovers(), std::vector<std::string>());
    ExpectAllIndexesValid();
    EXPECT_EQ(log->log_end_offset(), kEnd + 1);
    // The checkpoint was not advanced by the interrupted pass.
    EXPECT_EQ(log->cleaner_checkpoint(), kNoOffset);
    auto r = Clean(*log);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(Describe(ReadAllRecords(*log)), Describe(fully_cleaned));
    EXPECT_TRUE(SwapLeftovers().empty());
    ExpectAllIndexesValid();
  }
  // A group holding an aborted transaction: its records at 0, its ABORT
  // marker at 7 in the next segment; both segments are cleaned into one.
  void FillWithAbort(Log& log) {
    protocol::BatchBuilder txn;
    txn.set_producer(7, 0, 0).set_transactional(true).Add("key-t", "aborted", clock_.NowMs());
    ASSERT_TRUE(testing::AppendAll(log, {txn.Build()}).ok());
    for (int round = 0; round < 4; ++round) {
      if (round == 1) {
        Bytes marker =
            protocol::BuildTxnMarkerBatch(7, 0, {protocol::ControlType::kAbort, 0}, clock_.NowMs());
        std::vector<BatchInfo> infos{testing::InfoFor(marker)};
        ASSERT_TRUE(
            log.Append(MutableByteView(marker), infos, LeaderEpoch(0), AppendOrigin::kCoordinator)
                .ok());
        log.SetHighWatermark(log.log_end_offset());  // the abort is committed
      }
      for (int k = 0; k < 6; ++k) Put(log, "key-" + std::to_string(k), "r" + std::to_string(round));
      Roll(log);
    }
    Put(log, "key-1", "active");
  }
  static inline const std::vector<AbortedTxn> kAborted{{7, 0_o, 7_o, 8_o}};
};

class CleanerCrashStepTest : public CleanerCrashTest, public ::testing::WithParamInterface<Step> {};

TEST_P(CleanerCrashStepTest, CrashAfterStepLosesNothing) {
  const Step step = GetParam();
  auto log = OpenLog();
  Fill(*log);
  const auto before = ReadAllRecords(*log);
  const auto cleaned = ExpectedAfterClean(before, kEnd);
  ASSERT_EQ(cleaned.size(), 7u);
  CrashDuringSwap(std::move(log), step);
  switch (step) {
    case Step::kCleanedWritten:
      EXPECT_TRUE(fs::exists(File(0, ".log.cleaned")));
      break;
    case Step::kRenamedToSwap:
      EXPECT_TRUE(fs::exists(File(0, ".log.swap")));
      EXPECT_TRUE(fs::exists(File(0, ".log")));
      break;
    case Step::kFirstOldDeleted:
      EXPECT_TRUE(fs::exists(File(0, ".log.deleted")));
      EXPECT_TRUE(fs::exists(File(6, ".log")));
      break;
    case Step::kAllOldDeleted:
      EXPECT_TRUE(fs::exists(File(18, ".log.deleted")));
      EXPECT_FALSE(fs::exists(File(0, ".log")));
      break;
    case Step::kSwapLive:
      EXPECT_TRUE(fs::exists(File(6, ".log.deleted")));
      EXPECT_TRUE(fs::exists(File(0, ".log")));
      break;
  }
  // Before the .swap rename the old segments win; from it on the cleaned one.
  ExpectRecovered(step == Step::kCleanedWritten ? before : cleaned, cleaned);
}

INSTANTIATE_TEST_SUITE_P(Steps, CleanerCrashStepTest,
                         ::testing::Values(Step::kCleanedWritten, Step::kRenamedToSwap,
                                           Step::kFirstOldDeleted, Step::kAllOldDeleted,
                                           Step::kSwapLive),
                         [](const auto& info) { return "Step" + std::to_string(int(info.param)); });

TEST_F(CleanerCrashTest, CrashHalfwayThroughRenameToSwapRollsBack) {
  auto log = OpenLog();
  Fill(*log);
  const auto before = ReadAllRecords(*log);
  CrashDuringSwap(std::move(log), Step::kCleanedWritten);
  // The index files already carry .swap, the .log is still .cleaned.
  Rename(Name(0, ".index.cleaned"), Name(0, ".index.swap"));
  Rename(Name(0, ".timeindex.cleaned"), Name(0, ".timeindex.swap"));
  ExpectRecovered(before, ExpectedAfterClean(before, kEnd));
}

TEST_F(CleanerCrashTest, CrashHalfwayThroughFinalRenameCompletes) {
  auto log = OpenLog();
  Fill(*log);
  const auto before = ReadAllRecords(*log);
  const auto cleaned = ExpectedAfterClean(before, kEnd);
  CrashDuringSwap(std::move(log), Step::kAllOldDeleted);
  // The cleaned indexes already have their live names, the .log not yet.
  Rename(Name(0, ".index.swap"), Name(0, ".index"));
  Rename(Name(0, ".timeindex.swap"), Name(0, ".timeindex"));
  ExpectRecovered(cleaned, cleaned);
}

TEST_F(CleanerCrashTest, SwapWithoutIndexesIsRebuilt) {
  auto log = OpenLog();
  Fill(*log);
  const auto before = ReadAllRecords(*log);
  const auto cleaned = ExpectedAfterClean(before, kEnd);
  CrashDuringSwap(std::move(log), Step::kRenamedToSwap);
  fs::remove(File(0, ".index.swap"));
  fs::remove(File(0, ".timeindex.swap"));
  ExpectRecovered(cleaned, cleaned);
}

TEST_F(CleanerCrashTest, TornCleanedFileIsDiscarded) {
  auto log = OpenLog();
  Fill(*log);
  const auto before = ReadAllRecords(*log);
  CrashDuringSwap(std::move(log), Step::kCleanedWritten);
  fs::resize_file(File(0, ".log.cleaned"), fs::file_size(File(0, ".log.cleaned")) / 2);
  ExpectRecovered(before, ExpectedAfterClean(before, kEnd));
}

class CleanerCrashTxnTest : public CleanerCrashTest, public ::testing::WithParamInterface<Step> {};

TEST_P(CleanerCrashTxnTest, ACrashDuringTheSwapLosesNoAbortedTransaction) {
  auto log = OpenLog();
  FillWithAbort(*log);
  ASSERT_EQ(log->AbortedTransactions(0_o, 26_o), kAborted);
  CrashDuringSwap(std::move(log), GetParam());
  log = OpenLog();
  EXPECT_EQ(log->AbortedTransactions(0_o, 26_o), kAborted);
  ASSERT_TRUE(log->Close().ok());
}

INSTANTIATE_TEST_SUITE_P(Steps, CleanerCrashTxnTest,
                         ::testing::Values(Step::kCleanedWritten, Step::kRenamedToSwap,
                                           Step::kFirstOldDeleted, Step::kAllOldDeleted,
                                           Step::kSwapLive),
                         [](const auto& info) { return "Step" + std::to_string(int(info.param)); });

// The final rename cut after the cleaned .txnindex took its live name: it is
// the one kept (the old one went to .deleted with its segment).
TEST_F(CleanerCrashTest, AHalfDoneFinalRenameKeepsTheCleanedTxnIndex) {
  auto log = OpenLog();
  FillWithAbort(*log);
  CrashDuringSwap(std::move(log), Step::kAllOldDeleted);
  ASSERT_TRUE(fs::exists(File(0, ".txnindex.swap")));
  Rename(Name(0, ".index.swap"), Name(0, ".index"));
  Rename(Name(0, ".timeindex.swap"), Name(0, ".timeindex"));
  Rename(Name(0, ".txnindex.swap"), Name(0, ".txnindex"));
  log = OpenLog();
  EXPECT_EQ(log->AbortedTransactions(0_o, 26_o), kAborted);
  ASSERT_TRUE(log->Close().ok());
}

}  // namespace
}  // namespace strata::storage
