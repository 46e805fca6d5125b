// OffsetIndex and TimeIndex: file format, lookups, sanity checks.
#include <gtest/gtest.h>

#include "storage/file.h"
#include "storage/offset_index.h"
#include "storage/test_util.h"
#include "storage/time_index.h"

namespace strata::storage {
namespace {

class IndexTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::filesystem::create_directories(dir_);
  }
};

TEST_F(IndexTest, OffsetIndexWritesKafkaEntriesAndLooksUp) {
  auto path = File(100, ".index");
  {
    auto index = OffsetIndex::Open(path, 100, 1024);
    ASSERT_TRUE(index.ok());
    ASSERT_TRUE((*index)->Append(105, 4200).ok());
    ASSERT_TRUE((*index)->Append(0x1000064, 9000).ok());
  }
  auto bytes = ReadWholeFile(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, (Bytes{0, 0, 0, 5, 0, 0, 0x10, 0x68, 1, 0, 0, 0, 0, 0, 0x23, 0x28}));
  auto index = OffsetIndex::Open(path, 100, 1024);
  ASSERT_TRUE(index.ok());
  ASSERT_EQ((*index)->entries(), 2u);
  EXPECT_TRUE((*index)->SanityCheck(10'000).ok());
  EXPECT_EQ((*index)->Lookup(104).position, 0u);  // before the first entry: {base, 0}
  EXPECT_EQ((*index)->Lookup(104).offset, 100);
  EXPECT_EQ((*index)->Lookup(105).position, 4200u);
  EXPECT_EQ((*index)->Lookup(0x1000063).position, 4200u);
  EXPECT_EQ((*index)->Lookup(INT32_MAX).position, 9000u);
  // Positions must lie inside the log.
  EXPECT_EQ((*index)->SanityCheck(9000).error().code, Errc::kCorrupt);
}

TEST_F(IndexTest, OffsetIndexSanityRejectsBadFiles) {
  auto path = File(0, ".index");
  {
    auto f = storage::File::Open(path, true);
    ASSERT_TRUE(f.ok());
    // Entries (10 -> 500) then (9 -> 600): offsets go backwards.
    ASSERT_TRUE((*f)->Append(Bytes{0, 0, 0, 10, 0, 0, 1, 0xf4, 0, 0, 0, 9, 0, 0, 2, 0x58}).ok());
  }
  auto index = OffsetIndex::Open(path, 0, 1024);
  ASSERT_TRUE(index.ok());
  EXPECT_FALSE((*index)->SanityCheck(1000).ok());
  ASSERT_TRUE((*index)->Reset().ok());
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  {
    auto f = storage::File::Open(path, true);
    ASSERT_TRUE((*f)->Append(Bytes{0, 0, 0, 1, 0}).ok());  // 5 bytes
  }
  auto odd = OffsetIndex::Open(path, 0, 1024);
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ((*odd)->entries(), 0u);
  EXPECT_FALSE((*odd)->SanityCheck(1000).ok());
}

TEST_F(IndexTest, OffsetIndexFullAtMaxBytes) {
  auto index = OffsetIndex::Open(File(0, ".index"), 0, 16);
  ASSERT_TRUE(index.ok());
  ASSERT_TRUE((*index)->Append(1, 10).ok());
  EXPECT_FALSE((*index)->IsFull());
  ASSERT_TRUE((*index)->Append(2, 20).ok());
  EXPECT_TRUE((*index)->IsFull());
}

TEST_F(IndexTest, TimeIndexAppendsOnlyGrowingTimestamps) {
  auto path = File(50, ".timeindex");
  auto index = TimeIndex::Open(path, 50, 1200);
  ASSERT_TRUE(index.ok());
  TimeIndex& ti = **index;
  EXPECT_EQ(ti.LastEntry().timestamp, -1);
  EXPECT_EQ(ti.LastEntry().offset, 50);
  ASSERT_TRUE(ti.MaybeAppend(-1, 50).ok());  // no timestamp: ignored
  ASSERT_TRUE(ti.MaybeAppend(1000, 55).ok());
  ASSERT_TRUE(ti.MaybeAppend(1000, 60).ok());  // same timestamp: ignored
  ASSERT_TRUE(ti.MaybeAppend(999, 61).ok());   // lower: ignored
  ASSERT_TRUE(ti.MaybeAppend(2000, 70).ok());
  EXPECT_EQ(ti.entries(), 2u);
  auto bytes = ReadWholeFile(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, (Bytes{0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0, 5,  //
                           0, 0, 0, 0, 0, 0, 0x07, 0xd0, 0, 0, 0, 20}));
  EXPECT_EQ(ti.Lookup(999).offset, 50);  // below every entry: {-1, base}
  EXPECT_EQ(ti.Lookup(999).timestamp, -1);
  EXPECT_EQ(ti.Lookup(1500).offset, 55);
  EXPECT_EQ(ti.Lookup(5000).offset, 70);
  EXPECT_TRUE(ti.SanityCheck().ok());
}

TEST_F(IndexTest, TimeIndexKeepsLastSlotForRoll) {
  auto index = TimeIndex::Open(File(0, ".timeindex"), 0, 36);  // 3 slots
  ASSERT_TRUE(index.ok());
  TimeIndex& ti = **index;
  ASSERT_TRUE(ti.MaybeAppend(10, 1).ok());
  ASSERT_TRUE(ti.MaybeAppend(20, 2).ok());
  EXPECT_TRUE(ti.IsFull());
  ASSERT_TRUE(ti.MaybeAppend(30, 3).ok());  // refused: full
  EXPECT_EQ(ti.entries(), 2u);
  ASSERT_TRUE(ti.MaybeAppend(30, 3, /*skip_full_check=*/true).ok());
  EXPECT_EQ(ti.entries(), 3u);
}

TEST_F(IndexTest, OffsetFileNames) {
  EXPECT_EQ(OffsetFileName(1234, ".log"), "00000000000000001234.log");
  EXPECT_EQ(ParseOffsetFileName("00000000000000001234.log", ".log"), 1234);
  EXPECT_FALSE(ParseOffsetFileName("0000000000000001234.log", ".log").has_value());
  EXPECT_FALSE(ParseOffsetFileName("00000000000000001234.index", ".log").has_value());
  EXPECT_FALSE(ParseOffsetFileName("0000000000000000123x.log", ".log").has_value());
}

}  // namespace
}  // namespace strata::storage
