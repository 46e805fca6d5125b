// Retention (time, size), segment.ms rolling at retention time, DeleteRecords.
#include <gtest/gtest.h>

#include "storage/file.h"
#include "storage/log.h"
#include "storage/test_util.h"

namespace strata::storage {
namespace {

using testing::AppendAll;
using testing::AppendOne;
using testing::MakeBatch;

namespace fs = std::filesystem;

class LogRetentionTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    batch_size_ = MakeBatch({.records = 2}).size();
    // Two batches (four offsets) per segment.
    config_.segment_bytes = int64_t(batch_size_) * 2;
    config_.retention_ms = -1;
  }
  std::unique_ptr<Log> OpenLog() {
    auto log = Log::Open(dir_, config_, &clock_);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().message);
    return log.ok() ? std::move(*log) : nullptr;
  }
  // Appends one batch with timestamps `ts`, `ts`+1.
  void Append(Log& log, int64_t ts) {
    ASSERT_TRUE(AppendOne(log, {.records = 2, .first_timestamp = ts}).ok());
  }

  LogConfig config_;
  size_t batch_size_ = 0;
  ManualClock clock_{1'000'000};
};

TEST_F(LogRetentionTest, RetentionMsDeletesOldSegmentsAndMovesLogStart) {
  config_.retention_ms = 10'000;
  auto log = OpenLog();
  // Segments [0,4) ts ~100k, [4,8) ts ~500k, [8,12) ts ~995k, active [12,..).
  Append(*log, 100'000);
  Append(*log, 100'010);
  Append(*log, 500'000);
  Append(*log, 500'010);
  Append(*log, 995'000);
  Append(*log, 995'010);
  Append(*log, 999'000);
  ASSERT_EQ(log->segment_count(), 4);
  auto deleted = log->EnforceRetention();
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 2);
  EXPECT_EQ(log->segment_count(), 2);
  EXPECT_EQ(log->log_start_offset(), 8_o);
  EXPECT_FALSE(fs::exists(File(0, ".log")));
  EXPECT_FALSE(fs::exists(File(4, ".index")));
  EXPECT_TRUE(fs::exists(File(8, ".log")));
  auto read = log->Read(4_o, 1 << 20, Offset::Max(), true);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, Errc::kOutOfRange);
  // Everything expires eventually, but the active segment stays.
  clock_.Advance(1'000'000);
  deleted = log->EnforceRetention();
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 1);
  EXPECT_EQ(log->segment_count(), 1);
  EXPECT_EQ(log->log_start_offset(), 12_o);
  auto text = ReadWholeFile(dir_ / "strata-log-start-offset");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(std::string(text->begin(), text->end()), "0\n12\n");
}

TEST_F(LogRetentionTest, RetentionBytesKeepsNewestWithinLimit) {
  config_.retention_bytes = int64_t(batch_size_) * 5;  // room for 2.5 segments
  auto log = OpenLog();
  for (int i = 0; i < 9; ++i) Append(*log, 1'000'000);  // 4 full segments + active
  ASSERT_EQ(log->segment_count(), 5);
  ASSERT_EQ(log->size_bytes(), int64_t(batch_size_) * 9);
  auto deleted = log->EnforceRetention();
  ASSERT_TRUE(deleted.ok());
  // 9 batches, limit 5: dropping two 2-batch segments leaves 5.
  EXPECT_EQ(*deleted, 2);
  EXPECT_EQ(log->size_bytes(), int64_t(batch_size_) * 5);
  EXPECT_EQ(log->log_start_offset(), 8_o);
  EXPECT_TRUE(fs::exists(File(8, ".log")));
  EXPECT_FALSE(fs::exists(File(4, ".log")));
}

TEST_F(LogRetentionTest, NothingDeletedWithoutCleanupDelete) {
  config_.retention_bytes = 1;
  config_.cleanup_delete = false;
  auto log = OpenLog();
  for (int i = 0; i < 5; ++i) Append(*log, 1'000'000);
  auto deleted = log->EnforceRetention();
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 0);
  EXPECT_EQ(log->segment_count(), 3);
}

TEST_F(LogRetentionTest, EnforceRetentionRollsIdleActiveSegment) {
  config_.segment_ms = 5000;
  config_.segment_bytes = 1 << 20;
  auto log = OpenLog();
  Append(*log, 1'000'000);
  clock_.Advance(5000);
  ASSERT_TRUE(log->EnforceRetention().ok());
  EXPECT_EQ(log->segment_count(), 1);
  clock_.Advance(1);
  ASSERT_TRUE(log->EnforceRetention().ok());
  EXPECT_EQ(log->segment_count(), 2);
  EXPECT_TRUE(fs::exists(File(2, ".log")));
  // An empty active segment is not rolled again.
  clock_.Advance(100'000);
  ASSERT_TRUE(log->EnforceRetention().ok());
  EXPECT_EQ(log->segment_count(), 2);
}

TEST_F(LogRetentionTest, DeleteRecordsBeforePersistsAcrossReopen) {
  {
    auto log = OpenLog();
    for (int i = 0; i < 5; ++i) Append(*log, 1'000'000);  // segments 0, 4, 8(active)
    ASSERT_TRUE(log->DeleteRecordsBefore(6_o).ok());
    EXPECT_EQ(log->log_start_offset(), 6_o);
    EXPECT_EQ(log->segment_count(), 2);  // [0,4) deleted; [4,8) still holds 6, 7
    EXPECT_FALSE(fs::exists(File(0, ".log")));
    auto below = log->Read(5_o, 1 << 20, Offset::Max(), true);
    ASSERT_FALSE(below.ok());
    EXPECT_EQ(below.error().code, Errc::kOutOfRange);
    auto at = log->Read(6_o, 1 << 20, Offset::Max(), false);
    ASSERT_TRUE(at.ok());
    EXPECT_EQ(testing::Headers(at->records).front().base_offset, 6_o);
    auto past = log->DeleteRecordsBefore(11_o);
    ASSERT_FALSE(past.ok());
    EXPECT_EQ(past.error().code, Errc::kOutOfRange);
    ASSERT_TRUE(log->DeleteRecordsBefore(3_o).ok());  // lower: no-op
    EXPECT_EQ(log->log_start_offset(), 6_o);
  }  // crash, no Close
  auto log = OpenLog();
  EXPECT_EQ(log->log_start_offset(), 6_o);
  EXPECT_EQ(log->log_end_offset(), 10_o);
  EXPECT_FALSE(log->Read(5_o, 1 << 20, Offset::Max(), true).ok());
  ASSERT_TRUE(log->DeleteRecordsBefore(10_o).ok());
  EXPECT_EQ(log->segment_count(), 1);
  EXPECT_EQ(log->log_start_offset(), 10_o);
}

}  // namespace
}  // namespace strata::storage
