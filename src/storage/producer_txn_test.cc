// Transactions in the producer state: what opens and completes them, the
// checks each append origin gets, the last stable offset they hold back and
// what a snapshot keeps of them.
#include <gtest/gtest.h>

#include "storage/producer_state.h"

namespace strata::storage {
namespace {

using protocol::ControlType;
using protocol::TxnMarker;

// A transactional data batch of producer `pid` at [first, last].
ProducerBatch TxnData(int64_t pid, int16_t epoch, int32_t seq, Offset first, Offset last) {
  ProducerBatch b;
  b.producer_id = pid;
  b.epoch = epoch;
  b.first_seq = seq;
  b.last_seq = seq + static_cast<int32_t>(last - first);
  b.first_offset = first;
  b.last_offset = last;
  b.max_timestamp = 100;
  b.transactional = true;
  return b;
}

ProducerBatch Marker(int64_t pid, int16_t epoch, Offset at, ControlType type,
                     int32_t coordinator_epoch = 0) {
  ProducerBatch b;
  b.producer_id = pid;
  b.epoch = epoch;
  b.first_offset = b.last_offset = at;
  b.max_timestamp = 200;
  b.transactional = b.control = true;
  b.marker = TxnMarker{type, coordinator_epoch};
  return b;
}

// Validates and commits `b` alone; the error, or the transactions completed.
Result<std::vector<CompletedTxn>> Append(ProducerStateManager& psm, const ProducerBatch& b,
                                         AppendOrigin origin) {
  ProducerStateManager::Staged staged;
  STRATA_RETURN_IF_ERROR(psm.Validate(b, origin, &staged));
  return psm.Commit(std::move(staged));
}

TEST(ProducerTxnTest, ACommitMarkerCompletesTheTransactionAndTheHighWatermarkReleasesIt) {
  ProducerStateManager psm;
  EXPECT_EQ(psm.txns().FirstUnstableOffset(), std::nullopt);
  ASSERT_TRUE(Append(psm, TxnData(7, 0, 0, 10_o, 12_o), AppendOrigin::kClient).ok());
  ASSERT_TRUE(Append(psm, TxnData(7, 0, 3, 13_o, 13_o), AppendOrigin::kClient).ok());
  EXPECT_EQ(psm.Get(7)->current_txn_first_offset, 10_o);
  EXPECT_EQ(psm.txns().FirstUnstableOffset(), 10_o);

  auto done = Append(psm, Marker(7, 0, 14_o, ControlType::kCommit, 5), AppendOrigin::kCoordinator);
  ASSERT_TRUE(done.ok()) << done.error().message;
  ASSERT_EQ(done->size(), 1u);
  EXPECT_EQ((*done)[0], (CompletedTxn{7, 10_o, 14_o, /*aborted=*/false, 15_o}));
  EXPECT_EQ(psm.Get(7)->current_txn_first_offset, kNoOffset);
  EXPECT_EQ(psm.Get(7)->coordinator_epoch, 5);
  // Completed, but its marker is not committed yet: still unstable.
  EXPECT_EQ(psm.txns().FirstUnstableOffset(), 10_o);
  psm.OnHighWatermark(14_o);
  EXPECT_EQ(psm.txns().FirstUnstableOffset(), 10_o);
  psm.OnHighWatermark(15_o);
  EXPECT_EQ(psm.txns().FirstUnstableOffset(), std::nullopt);
}

// An aborted transaction's last stable offset is the first offset of the
// earliest transaction another producer still has open.
TEST(ProducerTxnTest, InterleavedProducersBoundEachOthersLastStableOffset) {
  ProducerStateManager psm;
  ASSERT_TRUE(Append(psm, TxnData(1, 0, 0, 10_o, 11_o), AppendOrigin::kClient).ok());
  ASSERT_TRUE(Append(psm, TxnData(2, 0, 0, 12_o, 12_o), AppendOrigin::kClient).ok());
  ASSERT_TRUE(Append(psm, TxnData(1, 0, 2, 13_o, 13_o), AppendOrigin::kClient).ok());
  auto aborted = Append(psm, Marker(1, 0, 14_o, ControlType::kAbort), AppendOrigin::kCoordinator);
  ASSERT_TRUE(aborted.ok());
  EXPECT_EQ(*aborted, (std::vector<CompletedTxn>{{1, 10_o, 14_o, true, 12_o}}));
  psm.OnHighWatermark(20_o);
  EXPECT_EQ(psm.txns().FirstUnstableOffset(), 12_o);  // producer 2's is open

  auto committed =
      Append(psm, Marker(2, 0, 15_o, ControlType::kCommit), AppendOrigin::kCoordinator);
  ASSERT_TRUE(committed.ok());
  EXPECT_EQ(*committed, (std::vector<CompletedTxn>{{2, 12_o, 15_o, false, 16_o}}));
  psm.OnHighWatermark(20_o);
  EXPECT_EQ(psm.txns().FirstUnstableOffset(), std::nullopt);
}

// One replicated append may open a transaction and complete another: the
// one opened counts for the completed one's last stable offset (Kafka's
// order), and one opened and completed in it leaves nothing open.
TEST(ProducerTxnTest, OneAppendCanOpenAndCompleteTransactions) {
  ProducerStateManager psm;
  ASSERT_TRUE(Append(psm, TxnData(1, 0, 0, 10_o, 10_o), AppendOrigin::kClient).ok());
  ProducerStateManager::Staged staged;
  ASSERT_TRUE(
      psm.Validate(Marker(1, 0, 11_o, ControlType::kAbort), AppendOrigin::kReplication, &staged)
          .ok());
  ASSERT_TRUE(psm.Validate(TxnData(2, 0, 0, 12_o, 12_o), AppendOrigin::kReplication, &staged).ok());
  ASSERT_TRUE(psm.Validate(TxnData(3, 0, 0, 13_o, 13_o), AppendOrigin::kReplication, &staged).ok());
  ASSERT_TRUE(
      psm.Validate(Marker(3, 0, 14_o, ControlType::kCommit), AppendOrigin::kReplication, &staged)
          .ok());
  auto completed = psm.Commit(std::move(staged));
  EXPECT_EQ(completed,
            (std::vector<CompletedTxn>{{1, 10_o, 11_o, true, 12_o}, {3, 13_o, 14_o, false, 12_o}}));
  EXPECT_EQ(psm.txns().open().size(), 1u);
  EXPECT_EQ(psm.txns().open().begin()->second, 2);
}

TEST(ProducerTxnTest, AProducerMayNotWriteOutsideItsOpenTransaction) {
  ProducerStateManager psm;
  ASSERT_TRUE(Append(psm, TxnData(7, 0, 0, 10_o, 10_o), AppendOrigin::kClient).ok());
  ProducerBatch plain = TxnData(7, 0, 1, 11_o, 11_o);
  plain.transactional = false;
  auto refused = Append(psm, plain, AppendOrigin::kClient);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::kInvalidTxnState);
  EXPECT_EQ(psm.Get(7)->batches.size(), 1u);  // nothing of it was applied
  // What a leader accepted, a follower applies.
  EXPECT_TRUE(Append(psm, plain, AppendOrigin::kReplication).ok());
}

TEST(ProducerTxnTest, MarkersFromAnOlderCoordinatorOrProducerEpochAreFenced) {
  ProducerStateManager psm;
  ASSERT_TRUE(Append(psm, TxnData(7, 3, 0, 10_o, 10_o), AppendOrigin::kClient).ok());
  ASSERT_TRUE(
      Append(psm, Marker(7, 3, 11_o, ControlType::kCommit, 4), AppendOrigin::kCoordinator).ok());

  auto old_coordinator =
      Append(psm, Marker(7, 3, 12_o, ControlType::kAbort, 3), AppendOrigin::kCoordinator);
  ASSERT_FALSE(old_coordinator.ok());
  EXPECT_EQ(old_coordinator.error().code, Errc::kTxnCoordinatorFenced);
  auto old_epoch =
      Append(psm, Marker(7, 2, 12_o, ControlType::kAbort, 4), AppendOrigin::kCoordinator);
  ASSERT_FALSE(old_epoch.ok());
  EXPECT_EQ(old_epoch.error().code, Errc::kInvalidProducerEpoch);
  EXPECT_EQ(psm.Get(7)->coordinator_epoch, 4);

  // A marker with no open transaction is still applied: it completes nothing.
  auto again = Append(psm, Marker(7, 3, 12_o, ControlType::kCommit, 4), AppendOrigin::kCoordinator);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  // A newer producer epoch in a marker (a fenced producer's transaction
  // aborted by the coordinator) becomes the producer's epoch.
  ASSERT_TRUE(
      Append(psm, Marker(7, 4, 13_o, ControlType::kAbort, 4), AppendOrigin::kCoordinator).ok());
  EXPECT_EQ(psm.Get(7)->epoch, 4);
}

// Transaction version 2: the coordinator bumps the epoch before it writes
// markers, so a marker at the data's epoch is a stale one (of an earlier
// transaction) and must not end the transaction open now; the same marker
// repeated once its transaction has ended is harmless and taken.
TEST(ProducerTxnTest, TransactionVersion2MarkersNeedANewerEpoch) {
  ProducerStateManager psm;
  auto tv2 = [](ProducerBatch b) {
    b.marker_transaction_version = 2;
    return b;
  };
  ASSERT_TRUE(Append(psm, TxnData(7, 3, 0, 10_o, 10_o), AppendOrigin::kClient).ok());
  auto stale = Append(psm, tv2(Marker(7, 3, 11_o, ControlType::kCommit)), AppendOrigin::kCoordinator);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, Errc::kInvalidProducerEpoch);
  EXPECT_EQ(psm.txns().FirstUnstableOffset(), 10_o);  // still open
  // A transaction version 1 marker at the same epoch ends it, as Kafka's do.
  ProducerStateManager tv1;
  ASSERT_TRUE(Append(tv1, TxnData(7, 3, 0, 10_o, 10_o), AppendOrigin::kClient).ok());
  EXPECT_TRUE(Append(tv1, Marker(7, 3, 11_o, ControlType::kCommit), AppendOrigin::kCoordinator).ok());

  auto ended = Append(psm, tv2(Marker(7, 4, 11_o, ControlType::kCommit)), AppendOrigin::kCoordinator);
  ASSERT_TRUE(ended.ok());
  ASSERT_EQ(ended->size(), 1u);
  EXPECT_EQ(psm.Get(7)->epoch, 4);
  // Repeated after a lost answer: accepted, completes nothing.
  auto repeated =
      Append(psm, tv2(Marker(7, 4, 12_o, ControlType::kCommit)), AppendOrigin::kCoordinator);
  ASSERT_TRUE(repeated.ok());
  EXPECT_TRUE(repeated->empty());
  // The next transaction at epoch 4 is not ended by the old marker again.
  ASSERT_TRUE(Append(psm, TxnData(7, 4, 0, 13_o, 13_o), AppendOrigin::kClient).ok());
  auto late = Append(psm, tv2(Marker(7, 4, 14_o, ControlType::kCommit)), AppendOrigin::kCoordinator);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, Errc::kInvalidProducerEpoch);
  // Followers take what their leader wrote.
  EXPECT_TRUE(Append(psm, Marker(7, 4, 14_o, ControlType::kAbort), AppendOrigin::kReplication).ok());
}

// The group coordinator writes every transactional offset commit of an
// epoch with sequence 0: no sequence check for it, one for a client.
TEST(ProducerTxnTest, CoordinatorWritesSkipTheSequenceChecks) {
  ProducerStateManager psm;
  ASSERT_TRUE(Append(psm, TxnData(7, 0, 0, 10_o, 10_o), AppendOrigin::kCoordinator).ok());
  EXPECT_TRUE(Append(psm, TxnData(7, 0, 0, 11_o, 11_o), AppendOrigin::kCoordinator).ok());
  auto client = Append(psm, TxnData(7, 0, 0, 12_o, 12_o), AppendOrigin::kClient);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.error().code, Errc::kOutOfOrderSequence);
  EXPECT_EQ(psm.txns().FirstUnstableOffset(), 10_o);
}

// A snapshot keeps each producer's open transaction and coordinator epoch;
// loading it reopens the transactions.
TEST(ProducerTxnTest, ASnapshotKeepsTheOpenTransactions) {
  ProducerStateManager psm;
  ASSERT_TRUE(Append(psm, TxnData(1, 0, 0, 10_o, 10_o), AppendOrigin::kClient).ok());
  ASSERT_TRUE(
      Append(psm, Marker(1, 0, 11_o, ControlType::kCommit, 6), AppendOrigin::kCoordinator).ok());
  ASSERT_TRUE(Append(psm, TxnData(2, 1, 0, 12_o, 13_o), AppendOrigin::kClient).ok());

  ProducerStateManager loaded;
  ASSERT_TRUE(loaded.DecodeSnapshot(psm.EncodeSnapshot()).ok());
  EXPECT_EQ(loaded.Get(1)->coordinator_epoch, 6);
  EXPECT_EQ(loaded.Get(1)->current_txn_first_offset, kNoOffset);
  EXPECT_EQ(loaded.Get(2)->current_txn_first_offset, 12_o);
  EXPECT_EQ(loaded.txns().open(), (std::map<Offset, int64_t>{{12_o, 2}}));
  // Completed ones are not in a snapshot: the high watermark is at or
  // above a snapshot's offset once it is read back (truncation reloads).
  EXPECT_EQ(loaded.txns().FirstUnstableOffset(), 12_o);
  auto done = loaded.Replay(Marker(2, 1, 14_o, ControlType::kAbort, 6));
  EXPECT_EQ(done, (std::vector<CompletedTxn>{{2, 12_o, 14_o, true, 15_o}}));
  loaded.Clear();
  EXPECT_EQ(loaded.txns().FirstUnstableOffset(), std::nullopt);
}

}  // namespace
}  // namespace strata::storage
