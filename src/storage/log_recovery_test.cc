// Recovery at Open: torn tails, corrupt batches, missing or corrupt indexes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "storage/file.h"
#include "storage/log.h"
#include "storage/test_util.h"

namespace strata::storage {
namespace {

using testing::AppendAll;
using testing::AppendOne;
using testing::BatchOptions;
using testing::Headers;
using testing::MakeBatch;

namespace fs = std::filesystem;

class LogRecoveryTest : public testing::TempDirTest {
 protected:
  std::unique_ptr<Log> OpenLog() {
    auto log = Log::Open(dir_, config_, &clock_);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().message);
    return log.ok() ? std::move(*log) : nullptr;
  }
  // Appends `n` two-record batches; returns each batch's byte size.
  std::vector<size_t> Fill(Log& log, int n) {
    std::vector<size_t> sizes;
    for (int i = 0; i < n; ++i) {
      Bytes b = MakeBatch({.records = 2, .first_timestamp = 1000 + i, .value_bytes = 40});
      EXPECT_TRUE(AppendAll(log, {b}).ok());
      sizes.push_back(b.size());
    }
    return sizes;
  }
  Bytes ReadAll(Log& log) {
    auto r = log.Read(log.log_start_offset(), 1 << 30, Offset::Max(), false);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->records : Bytes();
  }
  static void FlipByte(const fs::path& path, uint64_t pos) {
    int fd = ::open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    uint8_t b = 0;
    ASSERT_EQ(::pread(fd, &b, 1, off_t(pos)), 1);
    b ^= 0xff;
    ASSERT_EQ(::pwrite(fd, &b, 1, off_t(pos)), 1);
    ::close(fd);
  }

  LogConfig config_;
  ManualClock clock_{1'700'000'000'000};
};

TEST_F(LogRecoveryTest, TornTailIsTruncatedAndAppendsContinue) {
  Bytes before;
  size_t keep = 0;
  {
    auto log = OpenLog();
    auto sizes = Fill(*log, 5);
    for (size_t i = 0; i < 4; ++i) keep += sizes[i];
    before = ReadAll(*log);
  }                                             // no Close: a crash
  fs::resize_file(File(0, ".log"), keep + 30);  // cut the fifth batch in half
  auto log = OpenLog();
  EXPECT_EQ(log->log_end_offset(), 8_o);
  EXPECT_EQ(fs::file_size(File(0, ".log")), keep);
  EXPECT_EQ(ReadAll(*log), Bytes(before.begin(), before.begin() + long(keep)));
  auto r = AppendOne(*log, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->base_offset, 8_o);
}

TEST_F(LogRecoveryTest, GarbageAfterCleanCloseIsTruncated) {
  Bytes before;
  {
    auto log = OpenLog();
    Fill(*log, 3);
    before = ReadAll(*log);
    ASSERT_TRUE(log->Close().ok());
  }
  {
    auto file = storage::File::Open(File(0, ".log"), false);
    ASSERT_TRUE(file.ok());
    Bytes garbage(37, 0xab);
    ASSERT_TRUE((*file)->Append(garbage).ok());
  }
  auto log = OpenLog();
  EXPECT_EQ(log->log_end_offset(), 6_o);
  EXPECT_EQ(fs::file_size(File(0, ".log")), before.size());
  EXPECT_EQ(ReadAll(*log), before);
  auto r = AppendOne(*log, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->base_offset, 6_o);
}

TEST_F(LogRecoveryTest, CorruptCrcInLastBatchTruncatesFromThere) {
  size_t keep = 0;
  {
    auto log = OpenLog();
    auto sizes = Fill(*log, 4);
    for (size_t i = 0; i < 3; ++i) keep += sizes[i];
  }
  FlipByte(File(0, ".log"), keep + 70);  // inside the fourth batch's records
  auto log = OpenLog();
  EXPECT_EQ(log->log_end_offset(), 6_o);
  EXPECT_EQ(fs::file_size(File(0, ".log")), keep);
  auto r = AppendOne(*log, {.records = 3});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->base_offset, 6_o);
  EXPECT_EQ(r->last_offset, 8_o);
}

TEST_F(LogRecoveryTest, DeletedAndCorruptIndexesAreRebuilt) {
  config_.index_interval_bytes = 150;
  config_.segment_bytes = 2000;
  Bytes before;
  Bytes index0, tindex0, index1;
  {
    auto log = OpenLog();
    Fill(*log, 40);
    ASSERT_GE(log->segment_count(), 3);
    before = ReadAll(*log);
    ASSERT_TRUE(log->Close().ok());
  }
  const int64_t second_base = [&] {
    for (const auto& e : fs::directory_iterator(dir_)) {
      auto base = ParseOffsetFileName(e.path().filename().string(), ".log");
      if (base && *base != 0 && *base < 40) return *base;
    }
    return int64_t(-1);
  }();
  ASSERT_GT(second_base, 0);
  index0 = *ReadWholeFile(File(0, ".index"));
  tindex0 = *ReadWholeFile(File(0, ".timeindex"));
  index1 = *ReadWholeFile(File(second_base, ".index"));
  ASSERT_FALSE(index0.empty());
  fs::remove(File(0, ".index"));
  fs::remove(File(0, ".timeindex"));
  {
    // An index length that is not a multiple of 8.
    auto f = storage::File::Open(File(second_base, ".index"), false);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append(Bytes{1, 2, 3}).ok());
  }
  auto log = OpenLog();
  EXPECT_EQ(*ReadWholeFile(File(0, ".index")), index0);
  EXPECT_EQ(*ReadWholeFile(File(0, ".timeindex")), tindex0);
  EXPECT_EQ(*ReadWholeFile(File(second_base, ".index")), index1);
  EXPECT_EQ(ReadAll(*log), before);  // the first segment's batches
  for (Offset off = 0_o; off < 80_o; off += 3) {
    auto r = log->Read(off, 1, Offset::Max(), true);
    ASSERT_TRUE(r.ok());
    auto h = Headers(r->records);
    ASSERT_EQ(h.size(), 1u);
    EXPECT_LE(h[0].base_offset, off);
    EXPECT_GE(h[0].last_offset(), off);
  }
}

TEST_F(LogRecoveryTest, IndexPointingPastTheLogIsRebuilt) {
  config_.index_interval_bytes = 100;
  Bytes index;
  {
    auto log = OpenLog();
    Fill(*log, 10);
    ASSERT_TRUE(log->Close().ok());
  }
  index = *ReadWholeFile(File(0, ".index"));
  {
    auto f = storage::File::Open(File(0, ".index"), false);
    ASSERT_TRUE(f.ok());
    Bytes entry(8);
    StoreBE32(entry.data(), 30);
    StoreBE32(entry.data() + 4, 1'000'000);
    ASSERT_TRUE((*f)->Append(entry).ok());
  }
  auto log = OpenLog();
  EXPECT_EQ(*ReadWholeFile(File(0, ".index")), index);
  EXPECT_EQ(log->log_end_offset(), 20_o);
}

TEST_F(LogRecoveryTest, UncleanShutdownRebuildsActiveIndexIdentically) {
  config_.index_interval_bytes = 120;
  Bytes index, tindex;
  {
    auto log = OpenLog();
    Fill(*log, 25);
    index = *ReadWholeFile(File(0, ".index"));
  }
  ASSERT_FALSE(index.empty());
  auto log = OpenLog();
  EXPECT_EQ(*ReadWholeFile(File(0, ".index")), index);
  EXPECT_EQ(log->log_end_offset(), 50_o);
}

TEST_F(LogRecoveryTest, CorruptionInOlderSegmentDropsLaterSegments) {
  config_.segment_bytes = 1000;
  std::vector<size_t> sizes;
  {
    auto log = OpenLog();
    sizes = Fill(*log, 30);
    ASSERT_GE(log->segment_count(), 3);
    ASSERT_TRUE(log->Close().ok());
  }
  // Corrupt the last batch of the first segment (a tail the open check scans).
  const uint64_t first_size = fs::file_size(File(0, ".log"));
  FlipByte(File(0, ".log"), first_size - 5);
  const int64_t batches_in_first = int64_t(first_size / sizes[0]);
  auto log = OpenLog();
  EXPECT_EQ(log->segment_count(), 1);
  EXPECT_EQ(log->log_end_offset(), Offset((batches_in_first - 1) * 2));
  EXPECT_EQ(fs::file_size(File(0, ".log")), first_size - sizes[0]);
  auto r = AppendOne(*log, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->base_offset, Offset((batches_in_first - 1) * 2));
}

}  // namespace
}  // namespace strata::storage
