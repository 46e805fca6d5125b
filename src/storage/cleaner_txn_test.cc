// Log compaction of transactions: aborted records, the .txnindex of cleaned
// segments, the last stable offset as a bound, and the removal of
// transaction markers (Kafka's CleanedTransactionMetadata rules).
#include <gtest/gtest.h>

#include <algorithm>

#include "protocol/batch_builder.h"
#include "protocol/control_record.h"
#include "storage/cleaner_batch.h"
#include "storage/cleaner_test_util.h"
#include "storage/producer_state.h"

namespace strata::storage {
namespace {

using protocol::ControlType;
using testing::AppendAll;
using testing::ReadAllBatches;
using testing::ReadAllRecords;

namespace fs = std::filesystem;

class CleanerTxnTest : public testing::CompactedLogTest {
 protected:
  // Appends producer `pid`'s transactional batch of one record.
  void PutTxn(Log& log, int64_t pid, int16_t epoch, int32_t seq, const std::string& key,
              const std::string& value) {
    protocol::BatchBuilder txn;
    txn.set_producer(pid, epoch, seq).set_transactional(true).Add(key, value, clock_.NowMs());
    auto r = AppendAll(log, {txn.Build()});
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  // Appends the coordinator's marker and commits it (high watermark).
  void PutMarker(Log& log, int64_t pid, int16_t epoch, ControlType type,
                 int16_t transaction_version = 0) {
    Bytes marker = protocol::BuildTxnMarkerBatch(pid, epoch, {type, 0}, clock_.NowMs());
    std::vector<BatchInfo> infos{testing::InfoFor(marker)};
    infos[0].marker_transaction_version = transaction_version;
    auto r = log.Append(MutableByteView(marker), infos, LeaderEpoch(0), AppendOrigin::kCoordinator);
    ASSERT_TRUE(r.ok()) << r.error().message;
    log.SetHighWatermark(log.log_end_offset());
  }
  // The control batches left, by base offset.
  static std::vector<protocol::BatchHeader> Markers(const Log& log) {
    std::vector<protocol::BatchHeader> out;
    for (const auto& b : ReadAllBatches(log)) {
      if (b.header.control()) out.push_back(b.header);
    }
    return out;
  }
  // Makes the log dirty again (one more rolled segment), so a pass runs.
  void Dirty(Log& log, const std::string& key) {
    Put(log, key, "x");
    Roll(log);
  }
  // Reopens the log with its producer snapshots gone, so producer state is
  // rebuilt from what compaction left in the log.
  std::unique_ptr<Log> ReopenFromTheLogAlone(std::unique_ptr<Log> log) {
    EXPECT_TRUE(log->Close().ok());
    log.reset();
    for (const auto& ent : fs::directory_iterator(dir_)) {
      if (ent.path().extension() == kSnapshotSuffix) fs::remove(ent.path());
    }
    return OpenLog();
  }
  static std::optional<ProducerView> FindProducer(const Log& log, int64_t pid) {
    for (const ProducerView& p : log.ActiveProducers()) {
      if (p.producer_id == pid) return p;
    }
    return std::nullopt;
  }
};

// Compaction drops an aborted transaction's records but keeps its marker,
// and the cleaned segment keeps the aborted transactions of those it
// replaces: a read_committed reader is told of them after the swap and after
// a reopen.
TEST_F(CleanerTxnTest, ACleanedSegmentKeepsTheAbortedTransactionsOfThoseItReplaces) {
  auto log = OpenLog();
  protocol::BatchBuilder txn;
  txn.set_producer(7, 0, 0).set_transactional(true).Add("key-t", "aborted", clock_.NowMs());
  Bytes batch = txn.Build();
  ASSERT_TRUE(AppendAll(*log, {batch}).ok());  // offset 0
  Put(*log, "key-0", "v0");                    // offset 1
  Roll(*log);
  Bytes marker =
      protocol::BuildTxnMarkerBatch(7, 0, {protocol::ControlType::kAbort, 0}, clock_.NowMs());
  std::vector<BatchInfo> infos{testing::InfoFor(marker)};
  ASSERT_TRUE(
      log->Append(MutableByteView(marker), infos, LeaderEpoch(0), AppendOrigin::kCoordinator)
          .ok());                                // offset 2
  log->SetHighWatermark(log->log_end_offset());  // the abort is committed
  Put(*log, "key-0", "v1");                      // offset 3
  Roll(*log);
  Put(*log, "key-0", "active");  // offset 4
  const std::vector<AbortedTxn> aborted{{7, 0_o, 2_o, 3_o}};
  ASSERT_EQ(log->AbortedTransactions(0_o, 4_o), aborted);

  auto r = Clean(*log);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->segments_cleaned, 2);
  EXPECT_EQ(log->AbortedTransactions(0_o, 4_o), aborted);
  // "key-t" has no other value, yet its aborted write is gone; the
  // producer's last batch stays, empty, for its state.
  for (const auto& rec : ReadAllRecords(*log)) EXPECT_NE(rec.value, "aborted") << rec.offset;
  auto producers = log->ActiveProducers();
  EXPECT_TRUE(std::any_of(producers.begin(), producers.end(),
                          [](const ProducerView& p) { return p.producer_id == 7; }));
  ASSERT_TRUE(log->Close().ok());
  log = OpenLog();
  EXPECT_EQ(log->AbortedTransactions(0_o, 5_o), aborted);
  ASSERT_TRUE(log->Close().ok());
}

// An undecided transaction bounds the dirty section: were it aborted, the
// committed value it overwrote must still be there. Decided, it is cleaned.
TEST_F(CleanerTxnTest, AnOpenTransactionIsNotCleanedPast) {
  auto log = OpenLog();
  Put(*log, "key-0", "committed");  // offset 0
  Roll(*log);
  protocol::BatchBuilder txn;
  txn.set_producer(7, 0, 0).set_transactional(true).Add("key-0", "undecided", clock_.NowMs());
  ASSERT_TRUE(AppendAll(*log, {txn.Build()}).ok());  // offset 1, open
  Roll(*log);
  Put(*log, "key-1", "x");  // offset 2
  Roll(*log);
  Put(*log, "key-2", "active");
  EXPECT_EQ(log->EstimateCleaning(clock_.NowMs()).first_uncleanable_offset, 1_o);
  ASSERT_TRUE(Clean(*log).ok());
  auto records = ReadAllRecords(*log);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.front().value, "committed");

  Bytes marker =
      protocol::BuildTxnMarkerBatch(7, 0, {protocol::ControlType::kAbort, 0}, clock_.NowMs());
  std::vector<BatchInfo> infos{testing::InfoFor(marker)};
  ASSERT_TRUE(
      log->Append(MutableByteView(marker), infos, LeaderEpoch(0), AppendOrigin::kCoordinator).ok());
  log->SetHighWatermark(log->log_end_offset());
  Roll(*log);
  EXPECT_GT(log->EstimateCleaning(clock_.NowMs()).first_uncleanable_offset, 1_o);
  ASSERT_TRUE(log->Close().ok());
}

// An aborted write never shadows the committed value it overwrote: the
// committed record stays (read_committed readers skip the aborted one).
TEST_F(CleanerTxnTest, AnAbortedOverwriteDoesNotCompactAwayTheCommittedValue) {
  auto log = OpenLog();
  Put(*log, "key-0", "committed");  // offset 0
  protocol::BatchBuilder txn;
  txn.set_producer(7, 0, 0).set_transactional(true).Add("key-0", "aborted", clock_.NowMs());
  ASSERT_TRUE(AppendAll(*log, {txn.Build()}).ok());  // offset 1
  Bytes marker =
      protocol::BuildTxnMarkerBatch(7, 0, {protocol::ControlType::kAbort, 0}, clock_.NowMs());
  std::vector<BatchInfo> infos{testing::InfoFor(marker)};
  ASSERT_TRUE(
      log->Append(MutableByteView(marker), infos, LeaderEpoch(0), AppendOrigin::kCoordinator)
          .ok());  // offset 2
  log->SetHighWatermark(log->log_end_offset());
  Roll(*log);
  Put(*log, "key-1", "active");
  auto r = Clean(*log);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->segments_cleaned, 1);
  auto records = ReadAllRecords(*log);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.front().offset, 0_o);
  EXPECT_EQ(records.front().value, "committed");
  for (const auto& rec : records) EXPECT_NE(rec.value, "aborted") << rec.offset;
  ASSERT_TRUE(log->Close().ok());
}

// A COMMIT marker outlives its transaction's records by one pass, then gets a
// delete horizon, and goes on the first pass after it; the producer's later
// transaction keeps its own marker. Reloaded from the log alone, the
// producer's state and the last stable offset are what they were.
TEST_F(CleanerTxnTest, ACommitMarkerGoesAfterItsRecordsAndTheDeleteHorizon) {
  auto log = OpenLog();
  PutTxn(*log, 7, 0, 0, "k", "in-txn");         // 0
  PutMarker(*log, 7, 0, ControlType::kCommit);  // 1
  Put(*log, "k", "later");                      // 2
  PutTxn(*log, 7, 0, 1, "j", "second");         // 3
  PutMarker(*log, 7, 0, ControlType::kCommit);  // 4
  Roll(*log);
  Put(*log, "active", "x");

  // Pass 1 drops the overwritten record; its batch was read, so both
  // markers stay as they are.
  ASSERT_TRUE(Clean(*log).ok());
  auto markers = Markers(*log);
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_FALSE(DeleteHorizon(markers[0]).has_value());
  for (const auto& r : ReadAllRecords(*log)) EXPECT_NE(r.value, "in-txn") << r.offset;

  // Pass 2 finds the first transaction empty: its marker gets a horizon.
  Dirty(*log, "d1");
  ASSERT_TRUE(Clean(*log).ok());
  markers = Markers(*log);
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_EQ(markers[0].base_offset, 1_o);
  ASSERT_TRUE(DeleteHorizon(markers[0]).has_value());
  EXPECT_EQ(*DeleteHorizon(markers[0]), clock_.NowMs() + config_.delete_retention_ms);
  EXPECT_FALSE(DeleteHorizon(markers[1]).has_value());  // its record "j" is still there

  // Before the horizon nothing changes; past it the marker goes, with no
  // new writes needed (the horizon schedules the pass).
  clock_.Advance(config_.delete_retention_ms - 1);
  EXPECT_FALSE(log->EstimateCleaning(clock_.NowMs()).tombstones_expired);
  clock_.Advance(2);
  EXPECT_TRUE(log->EstimateCleaning(clock_.NowMs()).tombstones_expired);
  ASSERT_TRUE(Clean(*log).ok());
  markers = Markers(*log);
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(markers[0].base_offset, 4_o);

  log = ReopenFromTheLogAlone(std::move(log));
  log->SetHighWatermark(log->log_end_offset());
  EXPECT_EQ(log->last_stable_offset(), log->log_end_offset());
  std::optional<ProducerView> p = FindProducer(*log, 7);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->producer_epoch, 0);
  EXPECT_EQ(p->last_sequence, 1);
  EXPECT_EQ(p->current_txn_start_offset, kNoOffset);
  ASSERT_TRUE(log->Close().ok());
}

// An ABORT marker and its .txnindex entry stay while any batch of its
// transaction is in the log; then the entry goes, and the marker after its
// delete horizon.
TEST_F(CleanerTxnTest, AnAbortMarkerAndItsIndexEntryGoAfterItsRecords) {
  auto log = OpenLog();
  PutTxn(*log, 7, 0, 0, "k", "aborted");        // 0
  Put(*log, "k2", "v");                         // 1
  PutMarker(*log, 7, 0, ControlType::kAbort);   // 2
  PutTxn(*log, 7, 0, 1, "j", "committed");      // 3
  PutMarker(*log, 7, 0, ControlType::kCommit);  // 4
  Roll(*log);
  Put(*log, "active", "x");
  const std::vector<AbortedTxn> aborted{{7, 0_o, 2_o, 3_o}};
  ASSERT_EQ(log->AbortedTransactions(0_o, 5_o), aborted);

  ASSERT_TRUE(Clean(*log).ok());
  EXPECT_EQ(log->AbortedTransactions(0_o, 5_o), aborted);
  ASSERT_EQ(Markers(*log).size(), 2u);
  for (const auto& r : ReadAllRecords(*log)) EXPECT_NE(r.value, "aborted") << r.offset;

  Dirty(*log, "d1");
  ASSERT_TRUE(Clean(*log).ok());
  EXPECT_TRUE(log->AbortedTransactions(0_o, 5_o).empty());
  auto markers = Markers(*log);
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_TRUE(DeleteHorizon(markers[0]).has_value());

  clock_.Advance(config_.delete_retention_ms + 1);
  ASSERT_TRUE(Clean(*log).ok());
  markers = Markers(*log);
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(markers[0].base_offset, 4_o);
  log = ReopenFromTheLogAlone(std::move(log));
  EXPECT_TRUE(log->AbortedTransactions(0_o, 6_o).empty());
  log->SetHighWatermark(log->log_end_offset());
  EXPECT_EQ(log->last_stable_offset(), log->log_end_offset());
  ASSERT_TRUE(log->Close().ok());
}

// Under transaction version 2 the marker bumps the producer's epoch and is
// its last batch: past its horizon its record goes but the batch stays,
// empty, so a reload from the log still knows the producer's epoch (fencing).
TEST_F(CleanerTxnTest, TheMarkerCarryingAProducersEpochStaysEmpty) {
  auto log = OpenLog();
  PutTxn(*log, 7, 0, 0, "k", "in-txn");                                    // 0
  PutMarker(*log, 7, 1, ControlType::kCommit, /*transaction_version=*/2);  // 1
  Put(*log, "k", "later");                                                 // 2
  Roll(*log);
  Put(*log, "active", "x");
  ASSERT_TRUE(Clean(*log).ok());
  Dirty(*log, "d1");
  ASSERT_TRUE(Clean(*log).ok());
  auto markers = Markers(*log);
  ASSERT_EQ(markers.size(), 1u);
  ASSERT_TRUE(DeleteHorizon(markers[0]).has_value());

  clock_.Advance(config_.delete_retention_ms + 1);
  ASSERT_TRUE(Clean(*log).ok());
  auto batches = ReadAllBatches(*log);
  auto marker = std::find_if(batches.begin(), batches.end(),
                             [](const auto& b) { return b.header.control(); });
  ASSERT_NE(marker, batches.end());
  EXPECT_EQ(marker->header.base_offset, 1_o);
  EXPECT_EQ(marker->header.producer_epoch, 1);
  EXPECT_TRUE(marker->records.empty());
  // Nothing is left for a later pass to do with it.
  EXPECT_FALSE(log->EstimateCleaning(clock_.NowMs()).tombstones_expired);

  log = ReopenFromTheLogAlone(std::move(log));
  std::optional<ProducerView> p = FindProducer(*log, 7);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->producer_epoch, 1);
  EXPECT_EQ(p->current_txn_start_offset, kNoOffset);
  log->SetHighWatermark(log->log_end_offset());
  EXPECT_EQ(log->last_stable_offset(), log->log_end_offset());
  ASSERT_TRUE(log->Close().ok());
}

// A marker whose transaction still has a record keeps no horizon, however
// many passes run: readers of the record need the marker.
TEST_F(CleanerTxnTest, AMarkerStaysWhileARecordOfItsTransactionDoes) {
  auto log = OpenLog();
  PutTxn(*log, 7, 0, 0, "k", "committed");      // 0, the latest "k"
  PutMarker(*log, 7, 0, ControlType::kCommit);  // 1
  Put(*log, "other", "v");                      // 2
  Roll(*log);
  Put(*log, "active", "x");
  for (int pass = 0; pass < 3; ++pass) {
    ASSERT_TRUE(Clean(*log).ok());
    clock_.Advance(config_.delete_retention_ms + 1);
    Dirty(*log, "d" + std::to_string(pass));
  }
  auto markers = Markers(*log);
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_FALSE(DeleteHorizon(markers[0]).has_value());
  auto records = ReadAllRecords(*log);
  EXPECT_TRUE(std::any_of(records.begin(), records.end(),
                          [](const auto& r) { return r.value == "committed"; }));
  ASSERT_TRUE(log->Close().ok());
}

}  // namespace
}  // namespace strata::storage
