// TxnMetadata against the rules of Kafka's TransactionCoordinator and
// TransactionMetadata (4.2): the valid-previous-state table, every
// InitProducerId path, AddPartitions and verify-only. EndTxn, the two-phase
// transition, timeouts, expiration and loading are in txn_end_test.cc.
#include "coordinator/txn_metadata.h"

#include <gtest/gtest.h>

#include "coordinator/txn_metadata_test_util.h"

namespace strata::coordinator {
namespace {

using namespace txn_test;  // NOLINT: the shared fixtures of these tests

// ---- Free functions ----

TEST(TxnStateTable, ValidPreviousStates) {
  // Kafka's TransactionState.validPreviousStates, row = target state.
  const std::map<TxnStatus, std::set<TxnStatus>> valid = {
      {S::kEmpty, {S::kEmpty, S::kCompleteCommit, S::kCompleteAbort}},
      {S::kOngoing, {S::kOngoing, S::kEmpty, S::kCompleteCommit, S::kCompleteAbort}},
      {S::kPrepareCommit, {S::kOngoing}},
      {S::kPrepareAbort,
       {S::kOngoing, S::kPrepareEpochFence, S::kEmpty, S::kCompleteCommit, S::kCompleteAbort}},
      {S::kCompleteCommit, {S::kPrepareCommit}},
      {S::kCompleteAbort, {S::kPrepareAbort}},
      {S::kDead, {S::kEmpty, S::kCompleteCommit, S::kCompleteAbort}},
      {S::kPrepareEpochFence, {S::kOngoing}},
  };
  for (TxnStatus to : kAllStates) {
    for (TxnStatus from : kAllStates) {
      EXPECT_EQ(IsValidPreviousState(from, to), valid.at(to).count(from) == 1)
          << TxnStatusName(from) << " -> " << TxnStatusName(to);
    }
  }
}

TEST(TxnStateTable, EpochExhaustionAndExpirableStates) {
  EXPECT_FALSE(IsEpochExhausted(0));
  EXPECT_FALSE(IsEpochExhausted(kMax - 2));
  EXPECT_TRUE(IsEpochExhausted(kMax - 1));
  EXPECT_TRUE(IsEpochExhausted(kMax));
  for (TxnStatus s : kAllStates) {
    EXPECT_EQ(IsExpirationAllowed(s),
              s == S::kEmpty || s == S::kCompleteCommit || s == S::kCompleteAbort);
  }
  EXPECT_FALSE(SupportsEpochBump(1));
  EXPECT_TRUE(SupportsEpochBump(2));
}

// ---- InitProducerId ----

TEST(TxnInitProducerId, NewIdGetsEpochZero) {
  TxnMetadata md = TxnMetadata::New("txn", kPid, kTimeout, kT0);
  EXPECT_EQ(md.producer_epoch(), -1);
  EXPECT_EQ(md.state(), S::kEmpty);
  TxnOutcome out = md.InitProducerId(kTimeout, std::nullopt, kNow);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(md.pending(), S::kEmpty);
  EXPECT_EQ(out.transit.producer_id, kPid);
  EXPECT_EQ(out.transit.producer_epoch, 0);
  EXPECT_EQ(out.transit.last_producer_epoch, -1);
  EXPECT_EQ(out.transit.start_ms, -1);
  EXPECT_EQ(out.transit.last_update_ms, kNow);
  Apply(md, out);
  EXPECT_EQ(md.producer_epoch(), 0);
}

TEST(TxnInitProducerId, BumpsFromEveryIdleStateWithTheNewTimeout) {
  for (TxnStatus s : {S::kEmpty, S::kCompleteCommit, S::kCompleteAbort}) {
    TxnMetadata md = Loaded(s, 5);
    TxnOutcome out = md.InitProducerId(30'000, std::nullopt, kNow);
    ASSERT_EQ(out.step, TxnStep::kWrite) << TxnStatusName(s);
    EXPECT_EQ(out.transit.state, S::kEmpty);
    EXPECT_EQ(out.transit.producer_id, kPid);
    EXPECT_EQ(out.transit.producer_epoch, 6);
    EXPECT_EQ(out.transit.last_producer_epoch, -1);
    EXPECT_EQ(out.transit.timeout_ms, 30'000);
    EXPECT_TRUE(out.transit.partitions.empty());
    EXPECT_EQ(out.transit.start_ms, -1);
    Apply(md, out);
    EXPECT_EQ(md.timeout_ms(), 30'000);
  }
}

TEST(TxnInitProducerId, Kip360ExpectedEpochBumpRetryAndFence) {
  TxnMetadata md = Loaded(S::kCompleteCommit, 5);
  // The producer recovers with the epoch it holds: bump, remembering it.
  TxnOutcome out = md.InitProducerId(kTimeout, ProducerIdAndEpoch{kPid, 5}, kNow);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_epoch, 6);
  EXPECT_EQ(out.transit.last_producer_epoch, 5);
  Apply(md, out);
  // Its answer was lost and it retries with the same expectation: the same
  // epoch again, no bump.
  out = md.InitProducerId(kTimeout, ProducerIdAndEpoch{kPid, 5}, kNow);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_epoch, 6);
  EXPECT_EQ(out.transit.last_producer_epoch, 5);
  Apply(md, out);
  // Any other epoch is a zombie's.
  EXPECT_TRUE(md.InitProducerId(kTimeout, ProducerIdAndEpoch{kPid, 4}, kNow)
                  .IsAnswer(ErrorCode::kProducerFenced));
  EXPECT_TRUE(md.InitProducerId(kTimeout, ProducerIdAndEpoch{kPid, 7}, kNow)
                  .IsAnswer(ErrorCode::kProducerFenced));
  // A new producer instance (no expectation) forgets the last epoch.
  out = md.InitProducerId(kTimeout, std::nullopt, kNow);
  EXPECT_EQ(out.transit.producer_epoch, 7);
  EXPECT_EQ(out.transit.last_producer_epoch, -1);
}

TEST(TxnInitProducerId, ExpectedProducerIdMustBeThisIdsUnlessJustCreated) {
  TxnMetadata md = Loaded(S::kEmpty, 5);
  EXPECT_TRUE(md.InitProducerId(kTimeout, ProducerIdAndEpoch{999, 5}, kNow)
                  .IsAnswer(ErrorCode::kProducerFenced));
  EXPECT_FALSE(md.pending());
  // Just created (epoch -1): any expectation is accepted (UNKNOWN_PRODUCER_ID recovery).
  TxnMetadata fresh = TxnMetadata::New("txn", kPid, kTimeout, kT0);
  TxnOutcome out = fresh.InitProducerId(kTimeout, ProducerIdAndEpoch{999, 3}, kNow);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_id, kPid);
  EXPECT_EQ(out.transit.producer_epoch, 0);
  EXPECT_EQ(out.transit.last_producer_epoch, -1);
}

TEST(TxnInitProducerId, ExhaustedEpochRotatesTheProducerId) {
  TxnMetadata md = Loaded(S::kCompleteAbort, kMax - 1);
  TxnOutcome out = md.InitProducerId(kTimeout, std::nullopt, kNow);
  EXPECT_EQ(out.step, TxnStep::kNeedProducerId);
  EXPECT_FALSE(md.pending());
  out = md.InitProducerId(kTimeout, std::nullopt, kNow, kFresh);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_id, kFresh);
  EXPECT_EQ(out.transit.prev_producer_id, kPid);
  EXPECT_EQ(out.transit.producer_epoch, 0);
  EXPECT_EQ(out.transit.last_producer_epoch, -1);  // no expectation: not recorded
  Apply(md, out);
  EXPECT_EQ(md.producer_id(), kFresh);
  EXPECT_EQ(md.prev_producer_id(), kPid);
}

TEST(TxnInitProducerId, RotationWithExpectationAndItsRetry) {
  TxnMetadata md = Loaded(S::kEmpty, kMax - 1);
  const ProducerIdAndEpoch held{kPid, kMax - 1};
  EXPECT_EQ(md.InitProducerId(kTimeout, held, kNow).step, TxnStep::kNeedProducerId);
  TxnOutcome out = md.InitProducerId(kTimeout, held, kNow, kFresh);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_id, kFresh);
  EXPECT_EQ(out.transit.last_producer_epoch, kMax - 1);
  Apply(md, out);
  // The answer was lost: the retry names the old id and exhausted epoch,
  // which the previous producer id admits; it gets the same id and epoch.
  out = md.InitProducerId(kTimeout, held, kNow, 3000);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_id, kFresh);
  EXPECT_EQ(out.transit.producer_epoch, 0);
  Apply(md, out);
  // The old id with an epoch that is not exhausted is a zombie.
  EXPECT_TRUE(md.InitProducerId(kTimeout, ProducerIdAndEpoch{kPid, 7}, kNow)
                  .IsAnswer(ErrorCode::kProducerFenced));
}

TEST(TxnInitProducerId, RetryOfABumpIntoExhaustionIsAnUnknownServerError) {
  // Kafka's prepareIncrementProducerEpoch throws on an exhausted epoch: the
  // KIP-360 retry of the bump from MAX-2 to MAX-1 meets it.
  TxnMetadata md = Loaded(S::kEmpty, kMax - 2);
  Apply(md, md.InitProducerId(kTimeout, ProducerIdAndEpoch{kPid, kMax - 2}, kNow));
  EXPECT_EQ(md.producer_epoch(), kMax - 1);
  EXPECT_TRUE(md.InitProducerId(kTimeout, ProducerIdAndEpoch{kPid, kMax - 2}, kNow, kFresh)
                  .IsAnswer(ErrorCode::kUnknownServerError));
  EXPECT_FALSE(md.pending());
}

TEST(TxnInitProducerId, PrepareStatesAndPendingAreConcurrent) {
  for (TxnStatus s : {S::kPrepareCommit, S::kPrepareAbort}) {
    TxnMetadata md = Loaded(s, 5);
    EXPECT_TRUE(md.InitProducerId(kTimeout, std::nullopt, kNow)
                    .IsAnswer(ErrorCode::kConcurrentTransactions));
  }
  TxnMetadata md = Loaded(S::kEmpty, 5);
  ASSERT_EQ(md.InitProducerId(kTimeout, std::nullopt, kNow).step, TxnStep::kWrite);
  // Pending comes before the producer id check.
  EXPECT_TRUE(md.InitProducerId(kTimeout, ProducerIdAndEpoch{999, 1}, kNow)
                  .IsAnswer(ErrorCode::kConcurrentTransactions));
}

TEST(TxnInitProducerId, OngoingTv1FencesThenAbortsAndTheRetryBumpsAgain) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  TxnOutcome fence = md.InitProducerId(kTimeout, std::nullopt, kNow);
  ASSERT_EQ(fence.step, TxnStep::kAbortAfterFence);
  EXPECT_EQ(fence.transit.state, S::kPrepareEpochFence);
  EXPECT_EQ(fence.transit.producer_epoch, 6);
  EXPECT_EQ(md.pending(), S::kPrepareEpochFence);
  EXPECT_EQ(md.producer_epoch(), 5);
  // The fence is never written by itself.
  EXPECT_FALSE(md.Complete(fence.transit).ok());
  EXPECT_EQ(md.pending(), S::kPrepareEpochFence);

  TxnOutcome abort = md.EndTxn(ServerAbort(fence.transit.producer_epoch, 0));
  ASSERT_EQ(abort.step, TxnStep::kWrite);
  EXPECT_EQ(abort.transit.state, S::kPrepareAbort);
  EXPECT_EQ(abort.transit.producer_epoch, 6);
  EXPECT_EQ(abort.transit.last_producer_epoch, -1);
  EXPECT_EQ(abort.transit.partitions, (std::set<TopicPartition>{kA, kB}));
  EXPECT_EQ(md.producer_epoch(), 6);  // TV1: the bump is in memory before the write
  Apply(md, abort);
  ASSERT_EQ(md.MarkersToSend()->producer_epoch, 6);
  Apply(md, md.PrepareComplete(kNow));
  EXPECT_EQ(md.state(), S::kCompleteAbort);
  // The fenced producer cannot come back with its epoch; a new instance bumps once more.
  EXPECT_TRUE(md.InitProducerId(kTimeout, ProducerIdAndEpoch{kPid, 5}, kNow)
                  .IsAnswer(ErrorCode::kProducerFenced));
  TxnOutcome retry = md.InitProducerId(kTimeout, std::nullopt, kNow);
  ASSERT_EQ(retry.step, TxnStep::kWrite);
  EXPECT_EQ(retry.transit.producer_epoch, 7);
}

TEST(TxnInitProducerId, OngoingTv2FenceBumpsOnlyThroughTheAbort) {
  TxnMetadata md = Loaded(S::kOngoing, 5, 2);
  TxnOutcome fence = md.InitProducerId(kTimeout, std::nullopt, kNow);
  ASSERT_EQ(fence.step, TxnStep::kAbortAfterFence);
  TxnOutcome abort = md.EndTxn(ServerAbort(fence.transit.producer_epoch, 2));
  ASSERT_EQ(abort.step, TxnStep::kWrite);
  EXPECT_EQ(md.producer_epoch(), 5);  // nothing in memory before the write
  EXPECT_EQ(abort.transit.producer_epoch, 6);
  EXPECT_EQ(abort.transit.last_producer_epoch, 5);
  EXPECT_EQ(abort.transit.next_producer_id, kNoProducerId);
  EXPECT_EQ(abort.transit.client_transaction_version, 2);
  Apply(md, abort);
  Apply(md, md.PrepareComplete(kNow));
  EXPECT_EQ(md.producer_epoch(), 6);
  EXPECT_TRUE(md.InitProducerId(kTimeout, std::nullopt, kNow).transit.producer_epoch == 7);
}

TEST(TxnInitProducerId, FailedTv1FenceIsNotBumpedTwice) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  TxnOutcome fence = md.InitProducerId(kTimeout, std::nullopt, kNow);
  ASSERT_EQ(md.EndTxn(ServerAbort(fence.transit.producer_epoch, 0)).step, TxnStep::kWrite);
  md.AbortPending();  // the PrepareAbort write failed
  EXPECT_FALSE(md.pending());
  EXPECT_TRUE(md.has_failed_epoch_fence());
  EXPECT_EQ(md.state(), S::kOngoing);
  EXPECT_EQ(md.producer_epoch(), 6);  // kept in memory, never returned to a client
  // The old producer is fenced already.
  EXPECT_TRUE(md.EndTxn(End(TxnResult::kCommit, 5, 0)).IsAnswer(ErrorCode::kProducerFenced));
  fence = md.InitProducerId(kTimeout, std::nullopt, kNow);
  ASSERT_EQ(fence.step, TxnStep::kAbortAfterFence);
  EXPECT_EQ(fence.transit.producer_epoch, 6);
  TxnOutcome abort = md.EndTxn(ServerAbort(6, 0));
  EXPECT_EQ(abort.transit.producer_epoch, 6);
  Apply(md, abort);
  TxnOutcome complete = md.PrepareComplete(kNow);
  EXPECT_FALSE(md.has_failed_epoch_fence());
  Apply(md, complete);
}

TEST(TxnInitProducerId, FailedTv2FenceBumpsAgainNextTime) {
  TxnMetadata md = Loaded(S::kOngoing, 5, 2);
  TxnOutcome fence = md.InitProducerId(kTimeout, std::nullopt, kNow);
  ASSERT_EQ(md.EndTxn(ServerAbort(fence.transit.producer_epoch, 2)).step, TxnStep::kWrite);
  md.AbortPending();
  EXPECT_FALSE(md.has_failed_epoch_fence());
  EXPECT_EQ(md.producer_epoch(), 5);
  EXPECT_EQ(md.InitProducerId(kTimeout, std::nullopt, kNow).transit.producer_epoch, 6);
}

TEST(TxnInitProducerId, FenceNeverPassesMaxEpoch) {
  TxnMetadata md = Loaded(S::kOngoing, kMax);
  TxnOutcome fence = md.InitProducerId(kTimeout, std::nullopt, kNow);
  ASSERT_EQ(fence.step, TxnStep::kAbortAfterFence);
  EXPECT_EQ(fence.transit.producer_epoch, kMax);
}

TEST(TxnInitProducerId, StatesThatMustNeverBeCurrentAreRefused) {
  for (TxnStatus s : {S::kDead, S::kPrepareEpochFence}) {
    TxnMetadata md = Loaded(s, 5);
    EXPECT_TRUE(
        md.InitProducerId(kTimeout, std::nullopt, kNow).IsAnswer(ErrorCode::kUnknownServerError));
    EXPECT_TRUE(md.EndTxn(End(TxnResult::kAbort, 5, 0)).IsAnswer(ErrorCode::kUnknownServerError));
    EXPECT_TRUE(md.EndTxn(End(TxnResult::kAbort, 5, 2)).IsAnswer(ErrorCode::kUnknownServerError));
    EXPECT_FALSE(md.pending());
  }
}

// ---- AddPartitionsToTxn ----

TEST(TxnAddPartitions, RefusalsInKafkasOrder) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  EXPECT_TRUE(
      md.AddPartitions(999, 5, {kC}, 0, kNow).IsAnswer(ErrorCode::kInvalidProducerIdMapping));
  EXPECT_TRUE(md.AddPartitions(kPid, 4, {kC}, 0, kNow).IsAnswer(ErrorCode::kProducerFenced));
  EXPECT_TRUE(md.AddPartitions(kPid, 6, {kC}, 0, kNow).IsAnswer(ErrorCode::kProducerFenced));
  for (TxnStatus s : {S::kPrepareCommit, S::kPrepareAbort}) {
    TxnMetadata prep = Loaded(s, 5);
    EXPECT_TRUE(
        prep.AddPartitions(kPid, 5, {kC}, 0, kNow).IsAnswer(ErrorCode::kConcurrentTransactions));
  }
  // Pending first, even before a wrong producer id.
  ASSERT_EQ(md.AddPartitions(kPid, 5, {kC}, 0, kNow).step, TxnStep::kWrite);
  EXPECT_TRUE(md.AddPartitions(999, 5, {kC}, 0, kNow).IsAnswer(ErrorCode::kConcurrentTransactions));
}

TEST(TxnAddPartitions, StartsATransactionFromEveryIdleState) {
  for (TxnStatus s : {S::kEmpty, S::kCompleteCommit, S::kCompleteAbort}) {
    TxnMetadata md = Loaded(s, 5);
    TxnOutcome out = md.AddPartitions(kPid, 5, {kA, kC}, 1, kNow);
    ASSERT_EQ(out.step, TxnStep::kWrite) << TxnStatusName(s);
    EXPECT_EQ(out.transit.state, S::kOngoing);
    EXPECT_EQ(out.transit.partitions, (std::set<TopicPartition>{kA, kC}));
    EXPECT_EQ(out.transit.start_ms, kNow);
    EXPECT_EQ(out.transit.last_update_ms, kNow);
    EXPECT_EQ(out.transit.client_transaction_version, 1);
    EXPECT_EQ(out.transit.producer_epoch, 5);
    Apply(md, out);
  }
}

TEST(TxnAddPartitions, OngoingUnionsKeepsStartAndSkipsKnownPartitions) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  TxnOutcome known = md.AddPartitions(kPid, 5, {kB}, 0, kNow);
  EXPECT_TRUE(known.IsAnswer(ErrorCode::kNone));
  EXPECT_FALSE(md.pending());  // no write
  EXPECT_TRUE(md.AddPartitions(kPid, 5, {}, 0, kNow).IsAnswer(ErrorCode::kNone));
  TxnOutcome out = md.AddPartitions(kPid, 5, {kB, kC}, 0, kNow);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.partitions, (std::set<TopicPartition>{kA, kB, kC}));
  EXPECT_EQ(out.transit.start_ms, kT0);
  Apply(md, out);
  EXPECT_EQ(md.partitions().size(), 3u);
}

// ---- Verify-only ----

TEST(TxnVerifyPartitions, PerPartitionAnswersAndWholeRequestErrors) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  using Answers = std::map<TopicPartition, ErrorCode>;
  EXPECT_EQ(md.VerifyPartitions(kPid, 5, {kA, kC}),
            (Answers{{kA, ErrorCode::kNone}, {kC, ErrorCode::kTransactionAbortable}}));
  EXPECT_EQ(md.VerifyPartitions(999, 5, {kA, kC}),
            (Answers{{kA, ErrorCode::kInvalidProducerIdMapping},
                     {kC, ErrorCode::kInvalidProducerIdMapping}}));
  EXPECT_EQ(md.VerifyPartitions(kPid, 4, {kA}), (Answers{{kA, ErrorCode::kProducerFenced}}));
  for (TxnStatus s : {S::kPrepareCommit, S::kPrepareAbort}) {
    EXPECT_EQ(Loaded(s, 5).VerifyPartitions(kPid, 5, {kA}),
              (Answers{{kA, ErrorCode::kConcurrentTransactions}}));
  }
  // Empty and complete transactions hold no partition.
  EXPECT_EQ(Loaded(S::kEmpty, 5).VerifyPartitions(kPid, 5, {kA}),
            (Answers{{kA, ErrorCode::kTransactionAbortable}}));
  // A pending write does not matter, and nothing becomes pending.
  ASSERT_EQ(md.AddPartitions(kPid, 5, {kC}, 0, kNow).step, TxnStep::kWrite);
  EXPECT_EQ(md.VerifyPartitions(kPid, 5, {kA}), (Answers{{kA, ErrorCode::kNone}}));
  EXPECT_EQ(md.pending(), S::kOngoing);
}

}  // namespace
}  // namespace strata::coordinator
