// ProducerStateManager snapshot format and LeaderEpochCache.
#include "storage/producer_state.h"

#include <gtest/gtest.h>

#include "protocol/crc32c.h"
#include "storage/file.h"
#include "storage/leader_epoch_cache.h"
#include "storage/test_util.h"

namespace strata::storage {
namespace {

ProducerBatch Batch(int64_t pid, int16_t epoch, int32_t first_seq, int32_t last_seq,
                    Offset first_offset, Offset last_offset, int64_t ts) {
  ProducerBatch b;
  b.producer_id = pid;
  b.epoch = epoch;
  b.first_seq = first_seq;
  b.last_seq = last_seq;
  b.first_offset = first_offset;
  b.last_offset = last_offset;
  b.max_timestamp = ts;
  return b;
}

TEST(ProducerStateTest, SnapshotBytesFollowKafkaLayout) {
  ProducerStateManager psm;
  psm.Replay(Batch(7, 2, 0, 4, 100_o, 104_o, 5555));
  psm.Replay(Batch(7, 2, 5, 6, 110_o, 111_o, 6666));
  Bytes data = psm.EncodeSnapshot();
  ASSERT_EQ(data.size(), 6u + 4 + 46);
  EXPECT_EQ(LoadBE16(&data[0]), 1);  // version
  EXPECT_EQ(LoadBE32(&data[2]), protocol::Crc32c(&data[6], data.size() - 6));
  EXPECT_EQ(LoadBE32(&data[6]), 1u);  // entry count
  const uint8_t* e = &data[10];
  EXPECT_EQ(LoadBE64(e), 7u);                 // producerId
  EXPECT_EQ(LoadBE16(e + 8), 2);              // epoch
  EXPECT_EQ(LoadBE32(e + 10), 6u);            // lastSequence
  EXPECT_EQ(LoadBE64(e + 14), 111u);          // lastOffset
  EXPECT_EQ(LoadBE32(e + 22), 1u);            // offsetDelta
  EXPECT_EQ(LoadBE64(e + 26), 6666u);         // timestamp
  EXPECT_EQ(LoadBE32(e + 34), 0xffffffffu);   // coordinatorEpoch -1
  EXPECT_EQ(LoadBE64(e + 38), ~uint64_t(0));  // no open transaction

  ProducerStateManager loaded;
  ASSERT_TRUE(loaded.DecodeSnapshot(data).ok());
  const ProducerEntry* entry = loaded.Get(7);
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(entry->batches.size(), 1u);  // only the last batch is persisted
  EXPECT_EQ(entry->batches[0].first_seq, 5);
  EXPECT_EQ(entry->batches[0].first_offset, 110_o);
  EXPECT_EQ(entry->epoch, 2);
  EXPECT_EQ(loaded.EncodeSnapshot(), data);
}

TEST(ProducerStateTest, SnapshotDecodeRejectsDamage) {
  ProducerStateManager psm;
  psm.Replay(Batch(1, 0, INT32_MAX - 1, 1, 0_o, 3_o, 10));  // 4 records, wraps
  Bytes data = psm.EncodeSnapshot();
  ProducerStateManager loaded;
  ASSERT_TRUE(loaded.DecodeSnapshot(data).ok());
  EXPECT_EQ(loaded.Get(1)->batches[0].first_seq, INT32_MAX - 1);
  Bytes bad_crc = data;
  bad_crc.back() ^= 1;
  EXPECT_EQ(loaded.DecodeSnapshot(bad_crc).error().code, Errc::kCorrupt);
  Bytes bad_version = data;
  bad_version[1] = 2;
  EXPECT_FALSE(loaded.DecodeSnapshot(bad_version).ok());
  Bytes short_data(data.begin(), data.end() - 1);
  EXPECT_FALSE(loaded.DecodeSnapshot(short_data).ok());
}

TEST(ProducerStateTest, TransactionalBatchOpensTransactionUntilMarker) {
  ProducerStateManager psm;
  ProducerBatch b = Batch(9, 0, 0, 0, 40_o, 40_o, 1);
  b.transactional = true;
  psm.Replay(b);
  EXPECT_EQ(psm.Get(9)->current_txn_first_offset, 40_o);
  ProducerBatch marker = Batch(9, 0, -1, -1, 41_o, 41_o, 2);
  marker.control = true;
  marker.marker = protocol::TxnMarker{protocol::ControlType::kCommit, 0};
  psm.Replay(marker);
  EXPECT_EQ(psm.Get(9)->current_txn_first_offset, kNoOffset);
  EXPECT_EQ(psm.Get(9)->batches.size(), 1u);
}

// producer.id.expiration.ms: an idle producer is forgotten unless its
// transaction is open; a guard of a refused produce goes after as long, and
// a verified append holding it is then refused.
TEST(ProducerStateTest, IdleProducersAndOldVerificationGuardsExpire) {
  ProducerStateManager psm;
  psm.Replay(Batch(1, 0, 0, 0, 10_o, 10_o, /*ts=*/1000));  // idempotent, idle
  ProducerBatch open = Batch(2, 0, 0, 0, 11_o, 11_o, 1000);
  open.transactional = true;
  psm.Replay(open);                                 // transaction open
  psm.Replay(Batch(3, 0, 0, 0, 12_o, 12_o, 5000));  // recent
  const TxnVerification guard = psm.StartVerification(4, 0, /*now_ms=*/1000);

  EXPECT_EQ(psm.RemoveExpired(/*now_ms=*/5999, /*expiration_ms=*/5000), 0u);
  EXPECT_EQ(psm.RemoveExpired(6000, 5000), 1u);
  EXPECT_EQ(psm.Get(1), nullptr);
  EXPECT_NE(psm.Get(2), nullptr);
  EXPECT_NE(psm.Get(3), nullptr);

  ProducerBatch late = Batch(4, 0, 0, 0, 13_o, 13_o, 6000);
  late.transactional = true;
  late.verification_guard = guard.guard;
  ProducerStateManager::Staged staged;
  Status st = psm.Validate(late, AppendOrigin::kClient, &staged);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kInvalidTxnState);
}

class LeaderEpochCacheTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::filesystem::create_directories(dir_);
  }
  std::string FileText() {
    auto data = ReadWholeFile(dir_ / "leader-epoch-checkpoint");
    return data.ok() ? std::string(data->begin(), data->end()) : "<missing>";
  }
};

TEST_F(LeaderEpochCacheTest, AssignPersistsAndReloads) {
  auto cache = LeaderEpochCache::Load(dir_);
  ASSERT_TRUE(cache.ok());
  EXPECT_EQ(cache->latest_epoch(), LeaderEpoch(-1));
  ASSERT_TRUE(cache->Assign(LeaderEpoch(0), 0_o).ok());
  ASSERT_TRUE(cache->Assign(LeaderEpoch(0), 10_o).ok());  // same epoch, later offset: no change
  ASSERT_TRUE(cache->Assign(LeaderEpoch(3), 25_o).ok());
  EXPECT_EQ(FileText(), "0\n2\n0 0\n3 25\n");
  auto reloaded = LeaderEpochCache::Load(dir_);
  ASSERT_TRUE(reloaded.ok());
  EXPECT_EQ(reloaded->entries(),
            (std::vector<EpochEntry>{{LeaderEpoch(0), 0_o}, {LeaderEpoch(3), 25_o}}));
}

TEST_F(LeaderEpochCacheTest, TruncationFromBothEnds) {
  auto cache = LeaderEpochCache::Load(dir_);
  ASSERT_TRUE(cache->Assign(LeaderEpoch(1), 0_o).ok());
  ASSERT_TRUE(cache->Assign(LeaderEpoch(2), 10_o).ok());
  ASSERT_TRUE(cache->Assign(LeaderEpoch(4), 20_o).ok());
  ASSERT_TRUE(cache->TruncateFromEnd(20_o).ok());
  EXPECT_EQ(FileText(), "0\n2\n1 0\n2 10\n");
  ASSERT_TRUE(cache->TruncateFromStart(15_o).ok());
  EXPECT_EQ(FileText(), "0\n1\n2 15\n");
  EXPECT_EQ(cache->EndOffsetFor(LeaderEpoch(2), 30_o),
            (std::pair<LeaderEpoch, Offset>{LeaderEpoch(2), 30_o}));
  EXPECT_EQ(cache->EndOffsetFor(LeaderEpoch(1), 30_o),
            (std::pair<LeaderEpoch, Offset>{LeaderEpoch(1), 15_o}));
  ASSERT_TRUE(cache->Clear().ok());  // a log restarted empty elsewhere
  EXPECT_EQ(FileText(), "0\n0\n");
  EXPECT_EQ(cache->latest_epoch(), LeaderEpoch(-1));
  EXPECT_TRUE(LeaderEpochCache::Load(dir_)->entries().empty());
}

TEST_F(LeaderEpochCacheTest, MalformedCheckpointIsCorrupt) {
  for (const char* text : {"1\n0\n", "0\n2\n1 0\n", "0\n1\n1 x\n", "0\n2\n3 5\n2 9\n"}) {
    EXPECT_FALSE(LeaderEpochCache::Parse(text).ok()) << text;
  }
  auto ok = LeaderEpochCache::Parse("0\n2\n1 0\n5 100\n");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 2u);
}

}  // namespace
}  // namespace strata::storage
