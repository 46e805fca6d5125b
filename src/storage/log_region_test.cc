// Log::ReadRegion (the zero-copy fetch path): the region names exactly the
// bytes Read returns, and stays readable after its segment is deleted.
#include <gtest/gtest.h>
#include <unistd.h>

#include "storage/log.h"
#include "storage/test_util.h"

namespace strata::storage {
namespace {

using testing::AppendAll;
using testing::MakeBatch;

Bytes PreadRegion(const FileRegion& r) {
  Bytes out(r.length);
  size_t done = 0;
  while (done < r.length) {
    ssize_t n = ::pread(r.fd, out.data() + done, r.length - done, off_t(r.offset + done));
    if (n <= 0) break;
    done += size_t(n);
  }
  out.resize(done);
  return out;
}

class LogRegionTest : public testing::TempDirTest {
 protected:
  ManualClock clock_{1'700'000'000'000};
};

TEST_F(LogRegionTest, RegionHoldsTheBytesReadReturns) {
  LogConfig config;
  config.segment_bytes = int64_t(MakeBatch({.records = 4}).size()) * 3;  // 3 batches a segment
  auto opened = Log::Open(dir_, config, &clock_);
  ASSERT_TRUE(opened.ok());
  auto& log = *opened;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(AppendAll(*log, {MakeBatch({.records = 4, .fill = uint8_t('a' + i)})}, 1).ok());
  }
  ASSERT_GT(log->segment_count(), 2);
  const Offset end = log->log_end_offset();
  for (int32_t max_bytes : {1, 100, 1 << 20}) {
    for (Offset offset = 0_o; offset < end; ++offset) {
      for (Offset hw : {end, offset + 1}) {
        auto copy = log->Read(offset, max_bytes, hw, /*min_one_batch=*/true);
        auto region = log->ReadRegion(offset, max_bytes, hw, /*min_one_batch=*/true);
        ASSERT_TRUE(copy.ok() && region.ok());
        EXPECT_EQ(PreadRegion(region->region), copy->records) << offset << " " << max_bytes;
        if (hw == end) {
          EXPECT_FALSE(copy->records.empty());
        }
        EXPECT_EQ(region->log_end_offset, end);
      }
    }
  }
  auto none = log->ReadRegion(end, 1 << 20, end, true);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->region.length, 0u);
  EXPECT_FALSE(log->ReadRegion(end + 1, 1 << 20, end + 1, true).ok());
}

TEST_F(LogRegionTest, RegionOutlivesDeletedSegment) {
  LogConfig config;
  config.segment_bytes = int64_t(MakeBatch({.records = 4}).size());  // one batch a segment
  auto opened = Log::Open(dir_, config, &clock_);
  ASSERT_TRUE(opened.ok());
  auto& log = *opened;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(AppendAll(*log, {MakeBatch({.records = 4, .fill = uint8_t('k' + i)})}, 1).ok());
  }
  auto before = log->Read(0_o, 1 << 20, log->log_end_offset(), true);
  auto region = log->ReadRegion(0_o, 1 << 20, log->log_end_offset(), true);
  ASSERT_TRUE(before.ok() && region.ok());
  ASSERT_TRUE(log->DeleteRecordsBefore(8_o).ok());  // unlinks the first segments
  EXPECT_FALSE(std::filesystem::exists(dir_ / "00000000000000000000.log"));
  EXPECT_EQ(PreadRegion(region->region), before->records);
}

}  // namespace
}  // namespace strata::storage

namespace strata::storage {
namespace {

// The periodic flush (FlushIfDue) follows flush.ms: nothing with the default
// (Kafka's: never), and only logs with unflushed appends.
TEST_F(LogRegionTest, FlushIfDueFollowsFlushMs) {
  LogConfig config;
  auto opened = Log::Open(dir_, config, &clock_);
  ASSERT_TRUE(opened.ok());
  auto& log = *opened;
  ASSERT_TRUE(testing::AppendAll(*log, {testing::MakeBatch({.records = 2})}, 1).ok());
  clock_.Advance(3'600'000);
  EXPECT_FALSE(log->FlushIfDue().value());  // default flush.ms: never

  config.flush_ms = 1000;
  log->UpdateConfig(config);
  clock_.Advance(1000);
  EXPECT_TRUE(log->FlushIfDue().value());
  EXPECT_FALSE(log->FlushIfDue().value());  // nothing appended since
  ASSERT_TRUE(testing::AppendAll(*log, {testing::MakeBatch({.records = 2})}, 1).ok());
  clock_.Advance(400);
  EXPECT_FALSE(log->FlushIfDue().value());
  clock_.Advance(600);
  EXPECT_TRUE(log->FlushIfDue().value());
}

}  // namespace
}  // namespace strata::storage

namespace strata::storage {
namespace {

TEST_F(LogRegionTest, RollListenerHearsEveryRoll) {
  LogConfig config;
  config.segment_bytes = int64_t(testing::MakeBatch({.records = 4}).size());  // one batch a segment
  auto log = Log::Open(dir_, config, &clock_).value();
  int rolls = 0;
  log->SetRollListener([&rolls] { ++rolls; });
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(testing::AppendAll(*log, {testing::MakeBatch({.records = 4})}, 1).ok());
  }
  EXPECT_EQ(rolls, log->segment_count() - 1);
  EXPECT_EQ(rolls, 4);
  log->SetRollListener({});
  ASSERT_TRUE(testing::AppendAll(*log, {testing::MakeBatch({.records = 4})}, 1).ok());
  EXPECT_EQ(rolls, 4);
}

}  // namespace
}  // namespace strata::storage
