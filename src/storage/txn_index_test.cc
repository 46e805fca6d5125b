// TxnIndex: Kafka's .txnindex bytes, lazy creation, truncation, collection
// for read_committed fetches, corruption checks and a failing disk.
#include "storage/txn_index.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>

#include "base/env.h"
#include "storage/test_util.h"

namespace strata::storage {

// For test failure messages.
void PrintTo(const AbortedTxn& t, std::ostream* os) {
  *os << "{pid " << t.producer_id << ", first " << t.first_offset << ", last " << t.last_offset
      << ", lso " << t.last_stable_offset << "}";
}

namespace {

namespace fs = std::filesystem;

AbortedTxn Txn(int64_t pid, int64_t first, int64_t last, int64_t lso) {
  return AbortedTxn{pid, Offset(first), Offset(last), Offset(lso)};
}

class TxnIndexTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_directories(dir_);
    path_ = File(100, ".txnindex");
  }

  std::unique_ptr<TxnIndex> OpenIndex(Env* env = Env::Default()) {
    auto index = TxnIndex::Open(path_, 100_o, env);
    EXPECT_TRUE(index.ok()) << (index.ok() ? "" : index.error().message);
    return index.ok() ? std::move(*index) : nullptr;
  }
  uint64_t FileSize() const { return fs::file_size(path_); }
  void WriteFile(const Bytes& bytes) const {
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(path_, bytes).ok());
  }

  fs::path path_;
};

TEST_F(TxnIndexTest, WritesKafkaBytesAndReloadsThem) {
  const AbortedTxn first = Txn(0x0102030405060708, 90, 0x1'0000'0105, 0x1'0000'0106);
  const AbortedTxn second = Txn(7, 0x1'0000'0110, 0x1'0000'0120, 0x1'0000'0121);
  auto index = OpenIndex();
  ASSERT_TRUE(index->Append(first).ok());
  ASSERT_TRUE(index->Flush().ok());
  auto bytes = Env::Default()->ReadFile(path_);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, (Bytes{0, 0,                             // version 0
                           1, 2, 3, 4, 5, 6, 7,    8,        // producer id
                           0, 0, 0, 0, 0, 0, 0,    90,       // first offset
                           0, 0, 0, 1, 0, 0, 0x01, 0x05,     // last offset (marker)
                           0, 0, 0, 1, 0, 0, 0x01, 0x06}));  // last stable offset
  ASSERT_TRUE(index->Append(second).ok());
  EXPECT_EQ(FileSize(), 2 * kAbortedTxnSize);
  EXPECT_EQ(EncodeAbortedTxns(index->entries()), *Env::Default()->ReadFile(path_));

  auto reopened = OpenIndex();
  EXPECT_EQ(reopened->entries(), (std::vector<AbortedTxn>{first, second}));
  EXPECT_EQ(reopened->last_offset(), Offset(0x1'0000'0120));
  EXPECT_EQ(reopened->size_bytes(), 68u);
}

TEST_F(TxnIndexTest, TheFileIsCreatedByTheFirstAppend) {
  auto index = OpenIndex();
  EXPECT_TRUE(index->empty());
  EXPECT_FALSE(index->file_exists());
  EXPECT_EQ(index->last_offset(), std::nullopt);
  // Nothing that leaves the index empty creates the file.
  ASSERT_TRUE(index->TruncateTo(0_o).ok());
  ASSERT_TRUE(index->Reset().ok());
  ASSERT_TRUE(index->Flush().ok());
  index->Close();
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_TRUE(index->Collect(0_o, Offset::Max()).aborted.empty());

  ASSERT_TRUE(index->Append(Txn(1, 100, 105, 106)).ok());
  EXPECT_TRUE(index->file_exists());
  EXPECT_EQ(FileSize(), kAbortedTxnSize);

  // An empty file (truncated to nothing) is an empty index too.
  ASSERT_TRUE(index->Reset().ok());
  EXPECT_EQ(FileSize(), 0u);
  auto reopened = OpenIndex();
  EXPECT_TRUE(reopened->file_exists());
  EXPECT_TRUE(reopened->empty());
}

TEST_F(TxnIndexTest, CreateDiscardsAnExistingFile) {
  WriteFile(Bytes(35, 0));  // corrupt
  EXPECT_EQ(TxnIndex::Open(path_, 100_o).error().code, Errc::kCorrupt);
  auto index = TxnIndex::Create(path_, 100_o);
  ASSERT_TRUE(index.ok());
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_TRUE((*index)->empty());
  ASSERT_TRUE((*index)->Append(Txn(1, 100, 101, 102)).ok());
  EXPECT_EQ(OpenIndex()->entries().size(), 1u);
}

TEST_F(TxnIndexTest, RefusesEntriesThatDoNotFollowTheLastOne) {
  auto index = OpenIndex();
  ASSERT_TRUE(index->Append(Txn(1, 95, 110, 111)).ok());
  for (const AbortedTxn& bad : {Txn(2, 100, 110, 111),     // same last offset
                                Txn(2, 100, 109, 111),     // lower last offset
                                Txn(2, 115, 112, 113)}) {  // ends before it starts
    Status st = index->Append(bad);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, Errc::kInvalidArgument) << st.error().message;
  }
  auto below_base = OpenIndex();
  ASSERT_TRUE(below_base->Reset().ok());
  EXPECT_EQ(below_base->Append(Txn(1, 90, 99, 100)).error().code, Errc::kInvalidArgument);
  EXPECT_TRUE(below_base->empty());
  EXPECT_EQ(FileSize(), 0u);
  ASSERT_TRUE(below_base->Append(Txn(1, 90, 100, 101)).ok());  // the base itself is fine
  EXPECT_EQ(FileSize(), kAbortedTxnSize);
}

TEST_F(TxnIndexTest, TruncateToDropsEntriesFromTheOffsetOn) {
  auto index = OpenIndex();
  for (int64_t last : {110, 120, 130}) {
    ASSERT_TRUE(index->Append(Txn(last, last - 5, last, last + 1)).ok());
  }
  ASSERT_TRUE(index->TruncateTo(131_o).ok());  // nothing at or above 131
  EXPECT_EQ(index->entries().size(), 3u);
  ASSERT_TRUE(index->TruncateTo(125_o).ok());
  EXPECT_EQ(index->entries().size(), 2u);
  EXPECT_EQ(FileSize(), 2 * kAbortedTxnSize);
  ASSERT_TRUE(index->TruncateTo(120_o).ok());  // last_offset == offset goes too
  EXPECT_EQ(index->last_offset(), 110_o);
  EXPECT_EQ(FileSize(), kAbortedTxnSize);
  // A deposed leader's abort at 120 is gone; a new one may take lower offsets.
  ASSERT_TRUE(index->Append(Txn(9, 111, 115, 116)).ok());
  ASSERT_TRUE(index->Flush().ok());
  EXPECT_EQ(OpenIndex()->entries(),
            (std::vector<AbortedTxn>{Txn(110, 105, 110, 111), Txn(9, 111, 115, 116)}));
  ASSERT_TRUE(index->TruncateTo(0_o).ok());
  EXPECT_TRUE(index->empty());
  EXPECT_EQ(FileSize(), 0u);
}

TEST_F(TxnIndexTest, CollectTakesOverlappingEntriesUntilOneIsComplete) {
  const AbortedTxn a = Txn(1, 95, 112, 96);  // began in the previous segment
  const AbortedTxn b = Txn(2, 108, 120, 121);
  const AbortedTxn c = Txn(3, 125, 130, 131);
  const AbortedTxn d = Txn(4, 140, 145, 146);
  auto index = OpenIndex();
  for (const AbortedTxn& t : {a, b, c, d}) ASSERT_TRUE(index->Append(t).ok());

  auto found = index->Collect(115_o, 128_o);  // a ended before 115; c's LSO 131 >= 128
  EXPECT_EQ(found.aborted, (std::vector<AbortedTxn>{b, c}));
  EXPECT_TRUE(found.complete);

  found = index->Collect(112_o, 126_o);  // fetch offset inclusive: a ends at 112
  EXPECT_EQ(found.aborted, (std::vector<AbortedTxn>{a, b, c}));
  EXPECT_TRUE(found.complete);

  found = index->Collect(100_o, 108_o);  // upper bound exclusive: b starts at 108
  EXPECT_EQ(found.aborted, (std::vector<AbortedTxn>{a}));
  EXPECT_TRUE(found.complete);  // b's LSO 121 >= 108 ends the search

  found = index->Collect(131_o, 140_o);  // between c and d: d starts at the bound
  EXPECT_TRUE(found.aborted.empty());
  EXPECT_TRUE(found.complete);  // d's LSO 146

  found = index->Collect(131_o, 200_o);
  EXPECT_EQ(found.aborted, (std::vector<AbortedTxn>{d}));
  EXPECT_FALSE(found.complete);  // a later segment may hold more

  found = index->Collect(146_o, 300_o);
  EXPECT_TRUE(found.aborted.empty());
  EXPECT_FALSE(found.complete);
}

TEST_F(TxnIndexTest, MalformedFilesAreCorrupt) {
  const Bytes good = EncodeAbortedTxns(std::vector<AbortedTxn>{Txn(1, 90, 100, 101)});
  Bytes torn = good;
  torn.resize(good.size() + 1);
  Bytes below_base = EncodeAbortedTxns(std::vector<AbortedTxn>{Txn(1, 90, 99, 100)});
  Bytes not_increasing =
      EncodeAbortedTxns(std::vector<AbortedTxn>{Txn(1, 100, 105, 106), Txn(2, 101, 105, 106)});
  Bytes version_one = good;
  version_one[1] = 1;
  Bytes half(17, 0);
  for (const Bytes& bytes : {torn, below_base, not_increasing, version_one, half}) {
    WriteFile(bytes);
    auto index = TxnIndex::Open(path_, 100_o);
    ASSERT_FALSE(index.ok());
    EXPECT_EQ(index.error().code, Errc::kCorrupt);
    EXPECT_NE(index.error().message.find(path_.filename().string()), std::string::npos)
        << index.error().message;
  }
  WriteFile(good);
  EXPECT_EQ(OpenIndex()->entries().size(), 1u);
}

TEST_F(TxnIndexTest, AFailedWriteLeavesFileAndMemoryAgreeing) {
  FaultInjectingEnv env(Env::Default());
  auto index = OpenIndex(&env);
  ASSERT_TRUE(index->Append(Txn(1, 100, 101, 102)).ok());
  for (bool torn : {false, true}) {
    env.FailAfterBytes(10, torn);
    Status st = index->Append(Txn(2, 103, 106, 107));
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, Errc::kIoError) << st.error().message;
    EXPECT_EQ(index->entries().size(), 1u);
    EXPECT_EQ(FileSize(), kAbortedTxnSize);  // a torn tail is cut off
    env.Heal();
  }
  ASSERT_TRUE(index->Append(Txn(2, 103, 110, 111)).ok());
  ASSERT_TRUE(index->Flush().ok());
  EXPECT_EQ(OpenIndex()->entries(),
            (std::vector<AbortedTxn>{Txn(1, 100, 101, 102), Txn(2, 103, 110, 111)}));
}

TEST_F(TxnIndexTest, FlushSyncsTheDirectoryOfANewFileUntilItSucceeds) {
  FaultInjectingEnv env(Env::Default());
  auto index = OpenIndex(&env);
  env.FailDirSyncs(true);
  ASSERT_TRUE(index->Flush().ok());  // nothing written yet
  ASSERT_TRUE(index->Append(Txn(1, 100, 101, 102)).ok());
  EXPECT_EQ(index->Flush().error().code, Errc::kIoError);
  env.Heal();
  ASSERT_TRUE(index->Flush().ok());
  env.FailDirSyncs(true);
  ASSERT_TRUE(index->Append(Txn(1, 103, 104, 105)).ok());
  EXPECT_TRUE(index->Flush().ok());  // the file already existed: no directory sync
}

TEST_F(TxnIndexTest, RenameCloseAndDelete) {
  auto empty = OpenIndex();
  fs::path cleaned = path_;
  cleaned += ".cleaned";
  ASSERT_TRUE(empty->RenameTo(cleaned).ok());  // no file: only the name changes
  EXPECT_FALSE(fs::exists(cleaned));
  EXPECT_EQ(empty->path(), cleaned);

  auto index = OpenIndex();
  ASSERT_TRUE(index->Append(Txn(1, 100, 101, 102)).ok());
  fs::path deleted = path_;
  deleted += ".deleted";
  ASSERT_TRUE(index->RenameTo(deleted).ok());
  EXPECT_FALSE(fs::exists(path_));
  ASSERT_TRUE(index->Append(Txn(1, 103, 104, 105)).ok());  // through the open handle
  index->Close();
  ASSERT_TRUE(index->Append(Txn(1, 106, 107, 108)).ok());  // reopened by name
  EXPECT_FALSE(fs::exists(path_));
  auto renamed = TxnIndex::Open(deleted, 100_o);
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ((*renamed)->entries(), index->entries());

  ASSERT_TRUE(index->Delete().ok());
  EXPECT_FALSE(fs::exists(deleted));
  EXPECT_EQ(index->entries().size(), 3u);  // still readable
  EXPECT_EQ(index->Collect(0_o, 105_o).aborted.size(), 2u);
  EXPECT_EQ(index->Append(Txn(1, 109, 110, 111)).error().code, Errc::kInvalidArgument);
  ASSERT_TRUE(index->TruncateTo(104_o).ok());  // in memory only
  EXPECT_EQ(index->entries().size(), 1u);
  EXPECT_TRUE(index->Flush().ok());
  EXPECT_FALSE(fs::exists(deleted));
}

}  // namespace
}  // namespace strata::storage
