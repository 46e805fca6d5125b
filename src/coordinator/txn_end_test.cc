// TxnMetadata against the rules of Kafka's TransactionCoordinator and
// TransactionMetadata (4.2): every cell of the TV1 and TV2 EndTxn tables,
// PrepareComplete and markers, the two-phase transition (pending refusals,
// Complete's checks, AbortPending), timeouts, expiration and the round trip
// through the __transaction_state value.
#include <gtest/gtest.h>

#include "coordinator/txn_metadata.h"
#include "coordinator/txn_metadata_test_util.h"

namespace strata::coordinator {
namespace {

using namespace txn_test;  // NOLINT: the shared fixtures of these tests

// ---- EndTxn, TV1 ----

struct Cell {
  bool write;        // a PrepareX write...
  TxnStatus to;      // ...to this state
  ErrorCode answer;  // else this answer
};
constexpr Cell Write(TxnStatus to) { return {true, to, ErrorCode::kNone}; }
constexpr Cell Answer(ErrorCode e) { return {false, S::kEmpty, e}; }

void ExpectCell(TxnMetadata md, const EndTxnArgs& args, const Cell& cell, const char* what) {
  const TxnStatus before = md.state();
  TxnOutcome out = md.EndTxn(args);
  if (cell.write) {
    ASSERT_EQ(out.step, TxnStep::kWrite) << what;
    EXPECT_EQ(out.transit.state, cell.to) << what;
    Apply(md, out);
  } else {
    EXPECT_TRUE(out.IsAnswer(cell.answer))
        << what << ": got step " << int(out.step) << " error " << int(out.error);
    EXPECT_FALSE(md.pending()) << what;
    EXPECT_EQ(md.state(), before) << what;
  }
}

TEST(TxnEndTxnV1, EveryCellOfTheTable) {
  const ErrorCode its = ErrorCode::kInvalidTxnState;
  const ErrorCode cc = ErrorCode::kConcurrentTransactions;
  struct Row {
    TxnStatus state;
    Cell commit, abort;
  };
  const Row rows[] = {
      {S::kOngoing, Write(S::kPrepareCommit), Write(S::kPrepareAbort)},
      {S::kPrepareCommit, Answer(cc), Answer(its)},
      {S::kPrepareAbort, Answer(its), Answer(cc)},
      {S::kCompleteCommit, Answer(ErrorCode::kNone), Answer(its)},
      {S::kCompleteAbort, Answer(its), Answer(ErrorCode::kNone)},
      {S::kEmpty, Answer(its), Answer(its)},
  };
  for (const Row& r : rows) {
    for (int16_t tv : {0, 1}) {
      const std::string what = std::string(TxnStatusName(r.state)) + " tv" + std::to_string(tv);
      ExpectCell(Loaded(r.state, 5, tv), End(TxnResult::kCommit, 5, tv), r.commit,
                 (what + " commit").c_str());
      ExpectCell(Loaded(r.state, 5, tv), End(TxnResult::kAbort, 5, tv), r.abort,
                 (what + " abort").c_str());
    }
  }
}

TEST(TxnEndTxnV1, ProducerChecksComeFirst) {
  for (TxnStatus s : {S::kOngoing, S::kPrepareCommit, S::kCompleteCommit, S::kEmpty}) {
    TxnMetadata md = Loaded(s, 5);
    EXPECT_TRUE(md.EndTxn(End(TxnResult::kCommit, 5, 0, 999))
                    .IsAnswer(ErrorCode::kInvalidProducerIdMapping));
    EXPECT_TRUE(md.EndTxn(End(TxnResult::kCommit, 4, 0)).IsAnswer(ErrorCode::kProducerFenced));
    EXPECT_TRUE(md.EndTxn(End(TxnResult::kCommit, 6, 0)).IsAnswer(ErrorCode::kProducerFenced));
    // The coordinator's own aborts may be ahead, never behind.
    EXPECT_TRUE(md.EndTxn(ServerAbort(4, 0)).IsAnswer(ErrorCode::kProducerFenced));
  }
  // A pending transition is refused after the producer checks.
  TxnMetadata md = Loaded(S::kOngoing, 5);
  ASSERT_EQ(md.AddPartitions(kPid, 5, {kC}, 0, kNow).step, TxnStep::kWrite);
  EXPECT_TRUE(
      md.EndTxn(End(TxnResult::kCommit, 5, 0, 999)).IsAnswer(ErrorCode::kInvalidProducerIdMapping));
  EXPECT_TRUE(md.EndTxn(End(TxnResult::kCommit, 4, 0)).IsAnswer(ErrorCode::kProducerFenced));
  EXPECT_TRUE(
      md.EndTxn(End(TxnResult::kCommit, 5, 0)).IsAnswer(ErrorCode::kConcurrentTransactions));
}

TEST(TxnEndTxnV1, CommitKeepsTheEpochAndMarkersCarryIt) {
  TxnMetadata md = Loaded(S::kOngoing, 5, 1);
  TxnOutcome out = md.EndTxn(End(TxnResult::kCommit, 5, 1));
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_epoch, 5);
  EXPECT_EQ(out.transit.start_ms, kT0);
  EXPECT_EQ(out.transit.last_update_ms, kNow);
  EXPECT_EQ(out.transit.next_producer_id, kNoProducerId);
  EXPECT_EQ(out.transit.client_transaction_version, 0);  // Kafka's TV1 path records TV 0
  EXPECT_FALSE(md.MarkersToSend());                      // not before the write
  Apply(md, out);
  std::optional<TxnMarkers> markers = md.MarkersToSend();
  ASSERT_TRUE(markers);
  EXPECT_EQ(markers->producer_id, kPid);
  EXPECT_EQ(markers->producer_epoch, 5);
  EXPECT_EQ(markers->result, TxnResult::kCommit);
  EXPECT_EQ(markers->partitions, (std::set<TopicPartition>{kA, kB}));
  TxnOutcome complete = md.PrepareComplete(kNow + 1);
  ASSERT_EQ(complete.step, TxnStep::kWrite);
  EXPECT_EQ(complete.transit.state, S::kCompleteCommit);
  EXPECT_EQ(complete.transit.producer_epoch, 5);
  EXPECT_TRUE(complete.transit.partitions.empty());
  EXPECT_EQ(complete.transit.start_ms, kT0);
  EXPECT_EQ(complete.transit.last_update_ms, kNow + 1);
  Apply(md, complete);
  EXPECT_EQ(md.state(), S::kCompleteCommit);
  EXPECT_FALSE(md.MarkersToSend());
}

TEST(TxnEndTxnV1, FenceMustBeFollowedByAnAbort) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  TxnOutcome fence = md.PrepareFence();
  ASSERT_EQ(fence.step, TxnStep::kAbortAfterFence);
  // A commit cannot use the fence (Kafka throws): nothing changes.
  EndTxnArgs commit = End(TxnResult::kCommit, 6, 0);
  commit.from_client = false;
  EXPECT_TRUE(md.EndTxn(commit).IsAnswer(ErrorCode::kUnknownServerError));
  EXPECT_EQ(md.pending(), S::kPrepareEpochFence);
}

// ---- EndTxn, TV2 ----

TEST(TxnEndTxnV2, EveryCellOfTheTable) {
  const ErrorCode its = ErrorCode::kInvalidTxnState;
  const ErrorCode pf = ErrorCode::kProducerFenced;
  const ErrorCode cc = ErrorCode::kConcurrentTransactions;
  const Cell none = Answer(ErrorCode::kNone);
  const Cell abort = Write(S::kPrepareAbort);
  struct Row {
    TxnStatus state;
    Cell abort_retry, abort_current, commit_retry, commit_current;
  };
  const Row rows[] = {
      {S::kEmpty, Answer(pf), abort, Answer(pf), Answer(its)},
      {S::kOngoing, Answer(pf), abort, Answer(pf), Write(S::kPrepareCommit)},
      {S::kCompleteAbort, none, abort, Answer(its), Answer(its)},
      {S::kCompleteCommit, Answer(its), abort, none, Answer(its)},
      {S::kPrepareCommit, Answer(its), Answer(pf), Answer(cc), Answer(pf)},
      {S::kPrepareAbort, Answer(cc), Answer(pf), Answer(its), Answer(pf)},
  };
  for (const Row& r : rows) {
    const std::string what = TxnStatusName(r.state).data();
    auto md = [&] { return Loaded(r.state, 5, 2); };
    ExpectCell(md(), End(TxnResult::kAbort, 4, 2), r.abort_retry, (what + " abort retry").c_str());
    ExpectCell(md(), End(TxnResult::kAbort, 5, 2), r.abort_current,
               (what + " abort current").c_str());
    ExpectCell(md(), End(TxnResult::kCommit, 4, 2), r.commit_retry,
               (what + " commit retry").c_str());
    ExpectCell(md(), End(TxnResult::kCommit, 5, 2), r.commit_current,
               (what + " commit current").c_str());
    // Neither the current epoch nor one below it: fenced everywhere.
    for (int16_t epoch : {3, 6}) {
      for (TxnResult result : {TxnResult::kAbort, TxnResult::kCommit}) {
        ExpectCell(md(), End(result, epoch, 2), Answer(pf), (what + " other epoch").c_str());
      }
    }
  }
}

TEST(TxnEndTxnV2, RetryAnswersTheCurrentProducerIdAndEpoch) {
  TxnMetadata md = Loaded(S::kCompleteAbort, 5, 2);
  TxnOutcome out = md.EndTxn(End(TxnResult::kAbort, 4, 2));
  EXPECT_TRUE(out.IsAnswer(ErrorCode::kNone));
  EXPECT_EQ(out.producer_id, kPid);
  EXPECT_EQ(out.producer_epoch, 5);
}

TEST(TxnEndTxnV2, CommitBumpsTheEpochAndMarkersCarryTheBumpedOne) {
  TxnMetadata md = Loaded(S::kOngoing, 5, 2);
  TxnOutcome out = md.EndTxn(End(TxnResult::kCommit, 5, 2));
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.state, S::kPrepareCommit);
  EXPECT_EQ(out.transit.producer_epoch, 6);
  EXPECT_EQ(out.transit.last_producer_epoch, 5);
  EXPECT_EQ(out.transit.start_ms, kT0);
  EXPECT_EQ(out.transit.client_transaction_version, 2);
  Apply(md, out);
  EXPECT_EQ(md.MarkersToSend()->producer_epoch, 6);
  TxnOutcome complete = md.PrepareComplete(kNow);
  ASSERT_EQ(complete.step, TxnStep::kWrite);
  EXPECT_EQ(complete.producer_id, kPid);  // the EndTxn v5 answer
  EXPECT_EQ(complete.producer_epoch, 6);
  Apply(md, complete);
  // The client's retry (epoch 5) is answered without a write.
  EXPECT_TRUE(md.EndTxn(End(TxnResult::kCommit, 5, 2)).IsAnswer(ErrorCode::kNone));
}

TEST(TxnEndTxnV2, AbortWithoutATransactionStartsNowAndHasNoMarkers) {
  for (TxnStatus s : {S::kEmpty, S::kCompleteCommit, S::kCompleteAbort}) {
    TxnMetadata md = Loaded(s, 5, 2);
    TxnOutcome out = md.EndTxn(End(TxnResult::kAbort, 5, 2));
    ASSERT_EQ(out.step, TxnStep::kWrite);
    EXPECT_EQ(out.transit.state, S::kPrepareAbort);
    EXPECT_EQ(out.transit.start_ms, kNow);
    EXPECT_EQ(out.transit.producer_epoch, 6);
    Apply(md, out);
    EXPECT_TRUE(md.MarkersToSend()->partitions.empty());
    Apply(md, md.PrepareComplete(kNow));
    EXPECT_EQ(md.state(), S::kCompleteAbort);
  }
}

TEST(TxnEndTxnV2, PendingAndProducerIdChecks) {
  TxnMetadata md = Loaded(S::kOngoing, 5, 2);
  EXPECT_TRUE(
      md.EndTxn(End(TxnResult::kCommit, 5, 2, 999)).IsAnswer(ErrorCode::kInvalidProducerIdMapping));
  ASSERT_EQ(md.AddPartitions(kPid, 5, {kC}, 2, kNow).step, TxnStep::kWrite);
  // Pending first: the producer may already use an id that is only pending.
  EXPECT_TRUE(
      md.EndTxn(End(TxnResult::kCommit, 5, 2, 999)).IsAnswer(ErrorCode::kConcurrentTransactions));
}

TEST(TxnEndTxnV2, ServerAbortWithAnOldEpochIsFenced) {
  TxnMetadata md = Loaded(S::kOngoing, 5, 2);
  ASSERT_EQ(md.PrepareFence().step, TxnStep::kAbortAfterFence);
  EXPECT_TRUE(md.EndTxn(ServerAbort(4, 2)).IsAnswer(ErrorCode::kProducerFenced));
  // A client naming the fence's epoch is not the coordinator.
  EXPECT_TRUE(md.EndTxn(End(TxnResult::kAbort, 6, 2)).IsAnswer(ErrorCode::kProducerFenced));
  EXPECT_EQ(md.pending(), S::kPrepareEpochFence);
}

TEST(TxnEndTxnV2, EpochOverflowSwitchesToTheNextProducerId) {
  TxnMetadata md = Loaded(S::kOngoing, kMax - 1, 2);
  EndTxnArgs commit = End(TxnResult::kCommit, kMax - 1, 2);
  EXPECT_EQ(md.EndTxn(commit).step, TxnStep::kNeedProducerId);
  EXPECT_FALSE(md.pending());
  commit.fresh_producer_id = kFresh;
  TxnOutcome out = md.EndTxn(commit);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_id, kPid);
  EXPECT_EQ(out.transit.producer_epoch, kMax);
  EXPECT_EQ(out.transit.next_producer_id, kFresh);
  Apply(md, out);
  EXPECT_EQ(md.MarkersToSend()->producer_epoch, kMax);  // fences the old id's zombies
  TxnOutcome complete = md.PrepareComplete(kNow);
  ASSERT_EQ(complete.step, TxnStep::kWrite);
  EXPECT_EQ(complete.transit.producer_id, kFresh);
  EXPECT_EQ(complete.transit.prev_producer_id, kPid);
  EXPECT_EQ(complete.transit.producer_epoch, 0);
  EXPECT_EQ(complete.transit.last_producer_epoch, kMax - 1);
  EXPECT_EQ(complete.transit.next_producer_id, kNoProducerId);
  EXPECT_EQ(complete.producer_id, kFresh);
  EXPECT_EQ(complete.producer_epoch, 0);
  Apply(md, complete);
  // A retry under the old id and its last epoch is recognised.
  TxnOutcome retry = md.EndTxn(End(TxnResult::kCommit, kMax - 1, 2, kPid));
  EXPECT_TRUE(retry.IsAnswer(ErrorCode::kNone));
  EXPECT_EQ(retry.producer_id, kFresh);
  EXPECT_EQ(retry.producer_epoch, 0);
  EXPECT_TRUE(
      md.EndTxn(End(TxnResult::kAbort, kMax - 1, 2, kPid)).IsAnswer(ErrorCode::kInvalidTxnState));
  // Another old epoch is a wrong producer id.
  EXPECT_TRUE(md.EndTxn(End(TxnResult::kCommit, kMax - 2, 2, kPid))
                  .IsAnswer(ErrorCode::kInvalidProducerIdMapping));
  // The new id goes on.
  Apply(md, md.AddPartitions(kFresh, 0, {kA}, 2, kNow));
  EXPECT_EQ(md.EndTxn(End(TxnResult::kCommit, 0, 2, kFresh)).transit.producer_epoch, 1);
}

TEST(TxnEndTxnV2, AbortAtMaxEpochGoesThroughUnbumped) {
  TxnMetadata md = Loaded(S::kCompleteAbort, kMax, 2);
  EndTxnArgs abort = End(TxnResult::kAbort, kMax, 2);
  abort.fresh_producer_id = kFresh;
  TxnOutcome out = md.EndTxn(abort);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_epoch, kMax);
  EXPECT_EQ(out.transit.last_producer_epoch, kMax);
  Apply(md, out);
  Apply(md, md.PrepareComplete(kNow));
  EXPECT_EQ(md.producer_id(), kFresh);
  EXPECT_EQ(md.producer_epoch(), 0);
}

TEST(TxnEndTxnV2, CommitAtMaxEpochIsRefused) {
  // epoch+1 would wrap negative; Kafka's transition check throws.
  TxnMetadata md = Loaded(S::kOngoing, kMax, 2);
  EndTxnArgs commit = End(TxnResult::kCommit, kMax, 2);
  commit.fresh_producer_id = kFresh;
  EXPECT_TRUE(md.EndTxn(commit).IsAnswer(ErrorCode::kUnknownServerError));
  EXPECT_FALSE(md.pending());
}

// ---- PrepareComplete ----

TEST(TxnPrepareComplete, OnlyFromPrepareStatesWithNothingPending) {
  for (TxnStatus s : {S::kEmpty, S::kOngoing, S::kCompleteCommit, S::kCompleteAbort}) {
    EXPECT_TRUE(Loaded(s, 5).PrepareComplete(kNow).IsAnswer(ErrorCode::kInvalidTxnState));
  }
  TxnMetadata md = Loaded(S::kPrepareAbort, 5);  // as found on load
  TxnOutcome out = md.PrepareComplete(kNow);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.state, S::kCompleteAbort);
  EXPECT_TRUE(md.PrepareComplete(kNow).IsAnswer(ErrorCode::kConcurrentTransactions));
}

TEST(TxnPrepareComplete, Tv1KeepsTheProducerIdEvenWithANextOne) {
  TxnLogValue v = Loaded(S::kPrepareCommit, 5).Current().ToLogValue();
  v.next_producer_id = kFresh;
  TxnMetadata md = TxnMetadata::FromLogValue("txn", v);
  TxnOutcome out = md.PrepareComplete(kNow);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  EXPECT_EQ(out.transit.producer_id, kPid);
  EXPECT_EQ(out.transit.producer_epoch, 5);
  EXPECT_EQ(out.transit.next_producer_id, kNoProducerId);
}

TEST(TxnMarkers, PartitionsAreRemovedAsMarkersAreWritten) {
  TxnMetadata md = Loaded(S::kPrepareCommit, 5);
  EXPECT_TRUE(md.RemovePartition(kA));
  EXPECT_EQ(md.MarkersToSend()->partitions, (std::set<TopicPartition>{kB}));
  EXPECT_TRUE(md.RemovePartition(kB));
  EXPECT_TRUE(md.MarkersToSend()->partitions.empty());
  TxnMetadata ongoing = Loaded(S::kOngoing, 5);
  EXPECT_FALSE(ongoing.RemovePartition(kA));
  EXPECT_EQ(ongoing.partitions().size(), 2u);
}

// ---- Pending transitions, Complete, AbortPending ----

TEST(TxnPending, EveryWriteIsRefusedWhileOneIsPending) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  ASSERT_EQ(md.AddPartitions(kPid, 5, {kC}, 0, kNow).step, TxnStep::kWrite);
  const ErrorCode cc = ErrorCode::kConcurrentTransactions;
  EXPECT_TRUE(md.InitProducerId(kTimeout, std::nullopt, kNow).IsAnswer(cc));
  EXPECT_TRUE(md.AddPartitions(kPid, 5, {kA}, 0, kNow).IsAnswer(cc));
  EXPECT_TRUE(md.EndTxn(End(TxnResult::kAbort, 5, 0)).IsAnswer(cc));
  EXPECT_TRUE(md.EndTxn(End(TxnResult::kAbort, 5, 2)).IsAnswer(cc));
  EXPECT_TRUE(md.PrepareFence().IsAnswer(cc));
  EXPECT_TRUE(md.PrepareComplete(kNow).IsAnswer(cc));
  EXPECT_TRUE(md.PrepareDead().IsAnswer(cc));
  EXPECT_EQ(md.pending(), S::kOngoing);
}

TEST(TxnPending, AbortPendingLeavesTheCurrentValues) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  const TxnTransit before = md.Current();
  ASSERT_EQ(md.AddPartitions(kPid, 5, {kC}, 0, kNow).step, TxnStep::kWrite);
  md.AbortPending();
  EXPECT_FALSE(md.pending());
  EXPECT_EQ(md.Current(), before);
  EXPECT_FALSE(md.has_failed_epoch_fence());
}

TEST(TxnComplete, RefusesWhatIsNotThePendingTransition) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  const TxnTransit before = md.Current();
  TxnTransit t = md.Current();
  t.state = S::kPrepareCommit;
  EXPECT_FALSE(md.Complete(t).ok());  // nothing pending
  TxnOutcome add = md.AddPartitions(kPid, 5, {kC}, 0, kNow);
  ASSERT_EQ(add.step, TxnStep::kWrite);
  EXPECT_FALSE(md.Complete(t).ok());  // another state
  TxnTransit changed = add.transit;
  changed.producer_epoch = 6;
  EXPECT_FALSE(md.Complete(changed).ok());
  changed = add.transit;
  changed.partitions = {kC};  // drops a partition of the transaction
  EXPECT_FALSE(md.Complete(changed).ok());
  changed = add.transit;
  changed.timeout_ms = 1;
  EXPECT_FALSE(md.Complete(changed).ok());
  EXPECT_EQ(md.Current(), before);
  EXPECT_EQ(md.pending(), S::kOngoing);
  EXPECT_TRUE(md.Complete(add.transit).ok());
}

TEST(TxnComplete, KafkasChecksPerTargetState) {
  {  // Empty: same or next epoch (or a new id at 0), no partitions, no start.
    TxnMetadata md = Loaded(S::kCompleteCommit, 5);
    TxnOutcome out = md.InitProducerId(kTimeout, std::nullopt, kNow);
    TxnTransit t = out.transit;
    t.producer_epoch = 8;
    EXPECT_FALSE(md.Complete(t).ok());
    t = out.transit;
    t.start_ms = kNow;
    EXPECT_FALSE(md.Complete(t).ok());
    EXPECT_TRUE(md.Complete(out.transit).ok());
  }
  {  // PrepareX: same partitions and start time (TV1).
    TxnMetadata md = Loaded(S::kOngoing, 5);
    TxnOutcome out = md.EndTxn(End(TxnResult::kCommit, 5, 0));
    TxnTransit t = out.transit;
    t.partitions.insert(kC);
    EXPECT_FALSE(md.Complete(t).ok());
    t = out.transit;
    t.start_ms = kNow;
    EXPECT_FALSE(md.Complete(t).ok());
    EXPECT_TRUE(md.Complete(out.transit).ok());
  }
  {  // CompleteX: a start time.
    TxnMetadata md = Loaded(S::kPrepareAbort, 5);
    TxnOutcome out = md.PrepareComplete(kNow);
    TxnTransit t = out.transit;
    t.start_ms = -1;
    EXPECT_FALSE(md.Complete(t).ok());
    EXPECT_TRUE(md.Complete(out.transit).ok());
  }
}

TEST(TxnComplete, InvalidTransitionsAreRefusedNeverApplied) {
  // Prepare calls that Kafka would throw on leave nothing pending.
  for (TxnStatus s : {S::kOngoing, S::kPrepareCommit, S::kPrepareAbort}) {
    TxnMetadata md = Loaded(s, 5);
    EXPECT_TRUE(md.PrepareDead().IsAnswer(ErrorCode::kUnknownServerError)) << TxnStatusName(s);
    EXPECT_FALSE(md.pending());
  }
  for (TxnStatus s : {S::kEmpty, S::kPrepareCommit, S::kCompleteAbort}) {
    TxnMetadata md = Loaded(s, 5);
    EXPECT_TRUE(md.PrepareFence().IsAnswer(ErrorCode::kUnknownServerError));
    EXPECT_FALSE(md.pending());
  }
  TxnMetadata md = Loaded(S::kOngoing, 5);
  ASSERT_EQ(md.EndTxn(End(TxnResult::kAbort, 5, 0)).step, TxnStep::kWrite);
  TxnTransit jump = md.Current();
  jump.state = S::kCompleteAbort;  // skipping PrepareAbort
  EXPECT_FALSE(md.Complete(jump).ok());
  EXPECT_EQ(md.state(), S::kOngoing);
}

// ---- Timeouts, expiration ----

TEST(TxnTimeouts, OngoingPastItsTimeoutWithNothingPending) {
  TxnMetadata md = Loaded(S::kOngoing, 5);
  EXPECT_FALSE(md.TimedOut(kT0 + kTimeout));
  EXPECT_TRUE(md.TimedOut(kT0 + kTimeout + 1));
  for (TxnStatus s : kAllStates) {
    if (s != S::kOngoing) {
      EXPECT_FALSE(Loaded(s, 5).TimedOut(kT0 + 10 * kTimeout));
    }
  }
  // Fencing it: the abort follows.
  TxnOutcome fence = md.PrepareFence();
  ASSERT_EQ(fence.step, TxnStep::kAbortAfterFence);
  EXPECT_FALSE(md.TimedOut(kT0 + kTimeout + 1));
  Apply(md, md.EndTxn(ServerAbort(fence.transit.producer_epoch, 0)));
  EXPECT_EQ(md.state(), S::kPrepareAbort);
  // A two-phase-commit transaction (timeout INT32_MAX) never times out.
  TxnLogValue v = Loaded(S::kOngoing, 5).Current().ToLogValue();
  v.timeout_ms = INT32_MAX;
  EXPECT_FALSE(TxnMetadata::FromLogValue("txn", v).TimedOut(INT64_MAX / 2));
}

TEST(TxnExpiration, IdleIdsUntouchedForTheExpirationTime) {
  constexpr int64_t kExpiration = 7 * 24 * 3600 * 1000LL;
  const int64_t updated = kT0 + 10;
  for (TxnStatus s : kAllStates) {
    TxnMetadata md = Loaded(s, 5);
    EXPECT_FALSE(md.Expired(updated + kExpiration - 1, kExpiration));
    EXPECT_EQ(md.Expired(updated + kExpiration, kExpiration), IsExpirationAllowed(s))
        << TxnStatusName(s);
  }
  TxnMetadata md = Loaded(S::kEmpty, 5);
  ASSERT_EQ(md.InitProducerId(kTimeout, std::nullopt, kNow).step, TxnStep::kWrite);
  EXPECT_FALSE(md.Expired(updated + kExpiration, kExpiration));
}

TEST(TxnExpiration, DeadIsATombstoneRemovedOnlyWhenStillPending) {
  TxnMetadata md = Loaded(S::kCompleteCommit, 5);
  TxnOutcome dead = md.PrepareDead();
  ASSERT_EQ(dead.step, TxnStep::kWrite);
  EXPECT_EQ(dead.transit.state, S::kDead);
  EXPECT_EQ(dead.transit.producer_epoch, 5);
  EXPECT_EQ(md.pending(), S::kDead);
  EXPECT_TRUE(md.ReadyToRemove(dead.transit));
  TxnTransit other = dead.transit;
  other.producer_epoch = 6;
  EXPECT_FALSE(md.ReadyToRemove(other));
  EXPECT_FALSE(md.Complete(dead.transit).ok());  // removed, never applied
  md.AbortPending();
  EXPECT_FALSE(md.ReadyToRemove(dead.transit));
  EXPECT_EQ(md.state(), S::kCompleteCommit);
  // A new id (epoch -1) may expire too.
  EXPECT_EQ(TxnMetadata::New("t", kPid, kTimeout, kT0).PrepareDead().step, TxnStep::kWrite);
}

// ---- Loading and the log value ----

TEST(TxnLoad, FromALogValue) {
  TxnLogValue v;
  v.producer_id = kPid;
  v.producer_epoch = 9;
  v.timeout_ms = kTimeout;
  v.status = S::kPrepareAbort;
  v.partitions = {{"a", {0, 1}}, {"b", {0}}};
  v.start_ms = kT0;
  v.last_update_ms = kNow;
  v.previous_producer_id = 900;
  v.next_producer_id = kFresh;
  v.client_transaction_version = 2;
  TxnMetadata md = TxnMetadata::FromLogValue("txn", v);
  EXPECT_EQ(md.transactional_id(), "txn");
  EXPECT_EQ(md.producer_id(), kPid);
  EXPECT_EQ(md.prev_producer_id(), 900);
  EXPECT_EQ(md.next_producer_id(), kFresh);
  EXPECT_EQ(md.producer_epoch(), 9);
  EXPECT_EQ(md.last_producer_epoch(), -1);
  EXPECT_EQ(md.state(), S::kPrepareAbort);
  EXPECT_EQ(md.partitions(), (std::set<TopicPartition>{kA, kB, kC}));
  EXPECT_EQ(md.start_ms(), kT0);
  EXPECT_EQ(md.last_update_ms(), kNow);
  EXPECT_EQ(md.client_transaction_version(), 2);
  EXPECT_FALSE(md.pending());
  EXPECT_FALSE(md.has_failed_epoch_fence());
  // Partitions of an Empty value are ignored, as Kafka does.
  v.status = S::kEmpty;
  EXPECT_TRUE(TxnMetadata::FromLogValue("txn", v).partitions().empty());
}

TEST(TxnLoad, TransitRoundTripsThroughTheLogValue) {
  TxnMetadata md = Loaded(S::kOngoing, kMax - 1, 2);
  EndTxnArgs commit = End(TxnResult::kCommit, kMax - 1, 2);
  commit.fresh_producer_id = kFresh;
  TxnOutcome out = md.EndTxn(commit);
  ASSERT_EQ(out.step, TxnStep::kWrite);
  const TxnLogValue value = out.transit.ToLogValue();
  EXPECT_EQ(value.partitions, (std::map<std::string, std::vector<int32_t>>{{"a", {0, 1}}}));
  EXPECT_EQ(value.previous_producer_id, kPid);
  EXPECT_EQ(value.next_producer_id, kFresh);

  Result<TxnLogValue> v1 = DecodeTxnLogValue(EncodeTxnLogValue(value, kTxnLogValueV1));
  ASSERT_TRUE(v1.ok());
  TxnTransit expected = out.transit;
  expected.last_producer_epoch = kNoProducerEpoch;  // not persisted
  EXPECT_EQ(TxnMetadata::FromLogValue("txn", *v1).Current(), expected);

  // v0 has no tagged fields: prev/next ids and the client TV read back as defaults.
  Result<TxnLogValue> v0 = DecodeTxnLogValue(EncodeTxnLogValue(value, kTxnLogValueV0));
  ASSERT_TRUE(v0.ok());
  TxnMetadata loaded = TxnMetadata::FromLogValue("txn", *v0);
  EXPECT_EQ(loaded.prev_producer_id(), kNoProducerId);
  EXPECT_EQ(loaded.next_producer_id(), kNoProducerId);
  EXPECT_EQ(loaded.client_transaction_version(), 0);
  EXPECT_EQ(loaded.partitions(), out.transit.partitions);
}

TEST(TxnLoad, EmptyTransitIsWrittenWithoutPartitions) {
  TxnMetadata md = Loaded(S::kCompleteCommit, 5);
  TxnOutcome out = md.InitProducerId(kTimeout, std::nullopt, kNow);
  const TxnLogValue value = out.transit.ToLogValue();
  EXPECT_EQ(value.status, S::kEmpty);
  EXPECT_TRUE(value.partitions.empty());
  Result<TxnLogValue> back = DecodeTxnLogValue(EncodeTxnLogValue(value, kTxnLogValueV1));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, value);
}

}  // namespace
}  // namespace strata::coordinator
