#include "coordinator/txn_metadata.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;

bool IsPrepare(TxnStatus s) {
  return s == TxnStatus::kPrepareCommit || s == TxnStatus::kPrepareAbort;
}
bool IsComplete(TxnStatus s) {
  return s == TxnStatus::kCompleteCommit || s == TxnStatus::kCompleteAbort;
}

// Java's (short) (epoch + 1): MAX wraps to a negative epoch, which Prepare
// then refuses.
int16_t Bump(int16_t epoch) { return static_cast<int16_t>(epoch + 1); }

TxnOutcome NeedProducerId() { return TxnOutcome{.step = TxnStep::kNeedProducerId}; }

}  // namespace

bool IsEpochExhausted(int16_t epoch) { return epoch >= kMaxProducerEpoch - 1; }

bool IsValidPreviousState(TxnStatus from, TxnStatus to) {
  using S = TxnStatus;
  const bool idle = from == S::kEmpty || IsComplete(from);
  switch (to) {
    case S::kEmpty:
    case S::kDead:
      return idle;
    case S::kOngoing:
      return idle || from == S::kOngoing;
    case S::kPrepareCommit:
    case S::kPrepareEpochFence:
      return from == S::kOngoing;
    case S::kPrepareAbort:  // from idle states only for TV2's aborts without a transaction
      return idle || from == S::kOngoing || from == S::kPrepareEpochFence;
    case S::kCompleteCommit:
      return from == S::kPrepareCommit;
    case S::kCompleteAbort:
      return from == S::kPrepareAbort;
  }
  return false;
}

bool IsExpirationAllowed(TxnStatus status) {
  return status == TxnStatus::kEmpty || IsComplete(status);
}

TxnLogValue TxnTransit::ToLogValue() const {
  TxnLogValue v;
  v.producer_id = producer_id;
  v.producer_epoch = producer_epoch;
  v.timeout_ms = timeout_ms;
  v.status = state;
  for (const TopicPartition& tp : partitions) v.partitions[tp.topic].push_back(tp.partition);
  v.last_update_ms = last_update_ms;
  v.start_ms = start_ms;
  // Kafka 4.2 left these two out (KAFKA-20310); they are what lets a new
  // coordinator finish an epoch overflow and recognise a retry across it.
  v.previous_producer_id = prev_producer_id;
  v.next_producer_id = next_producer_id;
  v.client_transaction_version = client_transaction_version;
  return v;
}

TxnMetadata::TxnMetadata(std::string transactional_id, TxnTransit current)
    : transactional_id_(std::move(transactional_id)), cur_(std::move(current)) {}

TxnMetadata TxnMetadata::New(std::string transactional_id, int64_t producer_id, int32_t timeout_ms,
                             int64_t now_ms) {
  TxnTransit t;
  t.producer_id = producer_id;
  t.timeout_ms = timeout_ms;
  t.last_update_ms = now_ms;
  return TxnMetadata(std::move(transactional_id), std::move(t));
}

TxnMetadata TxnMetadata::FromLogValue(std::string transactional_id, const TxnLogValue& value) {
  TxnTransit t;
  t.producer_id = value.producer_id;
  t.prev_producer_id = value.previous_producer_id;
  t.next_producer_id = value.next_producer_id;
  t.producer_epoch = value.producer_epoch;
  t.timeout_ms = value.timeout_ms;
  t.state = value.status;
  if (value.status != TxnStatus::kEmpty) {  // Kafka ignores the partitions of Empty
    for (const auto& [topic, ids] : value.partitions) {
      for (int32_t id : ids) t.partitions.insert({topic, id});
    }
  }
  t.start_ms = value.start_ms;
  t.last_update_ms = value.last_update_ms;
  t.client_transaction_version = value.client_transaction_version;
  return TxnMetadata(std::move(transactional_id), std::move(t));
}

TxnTransit TxnMetadata::Current() const { return cur_; }

TxnTransit TxnMetadata::Next(TxnStatus state) const {
  TxnTransit t = cur_;
  t.state = state;
  t.prev_producer_id = cur_.producer_id;
  return t;
}

TxnOutcome TxnMetadata::Prepare(TxnTransit next) {
  const bool legal = !pending_ && next.producer_id >= 0 &&
                     (next.state == TxnStatus::kDead || next.producer_epoch >= 0) &&
                     IsValidPreviousState(cur_.state, next.state);
  if (!legal) return TxnOutcome::Answer(ErrorCode::kUnknownServerError);
  pending_ = next.state;
  return TxnOutcome{.step = TxnStep::kWrite, .transit = std::move(next)};
}

// ---- InitProducerId ----

TxnOutcome TxnMetadata::InitProducerId(int32_t timeout_ms,
                                       std::optional<ProducerIdAndEpoch> expected, int64_t now_ms,
                                       std::optional<int64_t> fresh_producer_id) {
  if (pending_) return TxnOutcome::Answer(ErrorCode::kConcurrentTransactions);
  // KIP-360: the expected producer id must be this id's, unless the id was
  // just made (epoch -1) or it is a retry across a producer id rotation.
  if (expected && cur_.producer_epoch != kNoProducerEpoch &&
      expected->producer_id != cur_.producer_id &&
      !(expected->producer_id == cur_.prev_producer_id && IsEpochExhausted(expected->epoch))) {
    return TxnOutcome::Answer(ErrorCode::kProducerFenced);
  }
  switch (cur_.state) {
    case TxnStatus::kPrepareCommit:
    case TxnStatus::kPrepareAbort:
      return TxnOutcome::Answer(ErrorCode::kConcurrentTransactions);
    case TxnStatus::kEmpty:
    case TxnStatus::kCompleteCommit:
    case TxnStatus::kCompleteAbort:
      if (IsEpochExhausted(cur_.producer_epoch) &&
          (!expected || expected->epoch == cur_.producer_epoch)) {
        if (!fresh_producer_id) return NeedProducerId();
        return RotateProducerId(*fresh_producer_id, timeout_ms, expected.has_value(), now_ms);
      }
      return IncrementEpoch(timeout_ms, expected ? std::optional(expected->epoch) : std::nullopt,
                            now_ms);
    case TxnStatus::kOngoing:
      // The epoch bump is never returned: the client gets
      // CONCURRENT_TRANSACTIONS and its retry bumps once more.
      return PrepareFence();
    case TxnStatus::kDead:
    case TxnStatus::kPrepareEpochFence:
      break;  // never a current state
  }
  return TxnOutcome::Answer(ErrorCode::kUnknownServerError);
}

TxnOutcome TxnMetadata::IncrementEpoch(int32_t timeout_ms, std::optional<int16_t> expected,
                                       int64_t now_ms) {
  // Kafka throws here (the retry of a bump to MAX-1 meets it), which the
  // client sees as UNKNOWN_SERVER_ERROR.
  if (IsEpochExhausted(cur_.producer_epoch)) {
    return TxnOutcome::Answer(ErrorCode::kUnknownServerError);
  }
  TxnTransit t = Next(TxnStatus::kEmpty);
  if (!expected) {
    t.producer_epoch = Bump(cur_.producer_epoch);
    t.last_producer_epoch = kNoProducerEpoch;
  } else if (cur_.producer_epoch == kNoProducerEpoch || *expected == cur_.producer_epoch) {
    t.producer_epoch = Bump(cur_.producer_epoch);
    t.last_producer_epoch = cur_.producer_epoch;
  } else if (*expected != cur_.last_producer_epoch) {
    return TxnOutcome::Answer(ErrorCode::kProducerFenced);
  }  // else: a retry of the last bump, whose answer was lost: the same epoch again
  t.timeout_ms = timeout_ms;
  t.partitions.clear();
  t.start_ms = -1;
  t.last_update_ms = now_ms;
  return Prepare(std::move(t));
}

TxnOutcome TxnMetadata::RotateProducerId(int64_t producer_id, int32_t timeout_ms,
                                         bool record_last_epoch, int64_t now_ms) {
  TxnTransit t = Next(TxnStatus::kEmpty);
  t.producer_id = producer_id;
  t.producer_epoch = 0;
  t.last_producer_epoch = record_last_epoch ? cur_.producer_epoch : kNoProducerEpoch;
  t.timeout_ms = timeout_ms;
  t.partitions.clear();
  t.start_ms = -1;
  t.last_update_ms = now_ms;
  return Prepare(std::move(t));
}

TxnOutcome TxnMetadata::PrepareFence() {
  if (pending_) return TxnOutcome::Answer(ErrorCode::kConcurrentTransactions);
  TxnTransit t = Next(TxnStatus::kPrepareEpochFence);
  // A fence whose write failed already bumped the epoch in memory; MAX is
  // never passed.
  if (!has_failed_epoch_fence_ && cur_.producer_epoch != kMaxProducerEpoch) {
    t.producer_epoch = Bump(cur_.producer_epoch);
  }
  TxnOutcome out = Prepare(std::move(t));
  if (out.step == TxnStep::kWrite) out.step = TxnStep::kAbortAfterFence;
  return out;
}

// ---- AddPartitionsToTxn ----

TxnOutcome TxnMetadata::AddPartitions(int64_t producer_id, int16_t producer_epoch,
                                      const std::set<TopicPartition>& partitions,
                                      int16_t client_transaction_version, int64_t now_ms) {
  // Pending first: across a TV2 epoch overflow the producer may already use
  // the producer id that is still only pending.
  if (pending_) return TxnOutcome::Answer(ErrorCode::kConcurrentTransactions);
  if (producer_id != cur_.producer_id) {
    return TxnOutcome::Answer(ErrorCode::kInvalidProducerIdMapping);
  }
  if (producer_epoch != cur_.producer_epoch) return TxnOutcome::Answer(ErrorCode::kProducerFenced);
  if (IsPrepare(cur_.state)) return TxnOutcome::Answer(ErrorCode::kConcurrentTransactions);
  if (cur_.state == TxnStatus::kOngoing &&
      std::includes(cur_.partitions.begin(), cur_.partitions.end(), partitions.begin(),
                    partitions.end())) {
    return TxnOutcome::Answer(ErrorCode::kNone);  // all there already: no write
  }
  TxnTransit t = Next(TxnStatus::kOngoing);
  if (cur_.state == TxnStatus::kEmpty || IsComplete(cur_.state)) t.start_ms = now_ms;
  t.partitions.insert(partitions.begin(), partitions.end());
  t.last_update_ms = now_ms;
  t.client_transaction_version = client_transaction_version;
  return Prepare(std::move(t));
}

std::map<TopicPartition, ErrorCode> TxnMetadata::VerifyPartitions(
    int64_t producer_id, int16_t producer_epoch, const std::set<TopicPartition>& partitions) const {
  // No pending check: the leader's append is verified again anyway.
  std::optional<ErrorCode> all;
  if (producer_id != cur_.producer_id) {
    all = ErrorCode::kInvalidProducerIdMapping;
  } else if (producer_epoch != cur_.producer_epoch) {
    all = ErrorCode::kProducerFenced;
  } else if (IsPrepare(cur_.state)) {
    all = ErrorCode::kConcurrentTransactions;
  }
  std::map<TopicPartition, ErrorCode> out;
  for (const TopicPartition& tp : partitions) {
    if (all) {
      out[tp] = *all;
    } else {
      out[tp] = cur_.partitions.count(tp) ? ErrorCode::kNone : ErrorCode::kTransactionAbortable;
    }
  }
  return out;
}

// ---- EndTxn ----

TxnOutcome TxnMetadata::EndTxn(const EndTxnArgs& args) {
  return SupportsEpochBump(args.transaction_version) ? EndTxnV2(args) : EndTxnV1(args);
}

TxnOutcome TxnMetadata::EndTxnV1(const EndTxnArgs& args) {
  if (args.producer_id != cur_.producer_id) {
    return TxnOutcome::Answer(ErrorCode::kInvalidProducerIdMapping);
  }
  // A client must match the epoch; the coordinator's fence carries a higher one.
  if ((args.from_client && args.producer_epoch != cur_.producer_epoch) ||
      args.producer_epoch < cur_.producer_epoch) {
    return TxnOutcome::Answer(ErrorCode::kProducerFenced);
  }
  const bool fence = pending_ == TxnStatus::kPrepareEpochFence;
  if (pending_ && !fence) return TxnOutcome::Answer(ErrorCode::kConcurrentTransactions);
  const bool commit = args.result == TxnResult::kCommit;
  const auto answer = [](bool ok, ErrorCode otherwise) {
    return TxnOutcome::Answer(ok ? ErrorCode::kNone : otherwise);
  };
  switch (cur_.state) {
    case TxnStatus::kOngoing: {
      const TxnStatus next = commit ? TxnStatus::kPrepareCommit : TxnStatus::kPrepareAbort;
      const bool fencing = fence && next == TxnStatus::kPrepareAbort;
      if (fencing) {  // the fence's bump takes effect now, before the write
        pending_.reset();
        cur_.producer_epoch = args.producer_epoch;
        cur_.last_producer_epoch = kNoProducerEpoch;
      }
      TxnOutcome out = PrepareAbortOrCommit(next, 0, kNoProducerId, args.now_ms, false);
      pending_is_v1_fence_ = fencing && out.step == TxnStep::kWrite;
      return out;
    }
    case TxnStatus::kCompleteCommit:
      return answer(commit, ErrorCode::kInvalidTxnState);
    case TxnStatus::kCompleteAbort:
      return answer(!commit, ErrorCode::kInvalidTxnState);
    case TxnStatus::kPrepareCommit:
      return TxnOutcome::Answer(commit ? ErrorCode::kConcurrentTransactions
                                       : ErrorCode::kInvalidTxnState);
    case TxnStatus::kPrepareAbort:
      return TxnOutcome::Answer(!commit ? ErrorCode::kConcurrentTransactions
                                        : ErrorCode::kInvalidTxnState);
    case TxnStatus::kEmpty:
      return TxnOutcome::Answer(ErrorCode::kInvalidTxnState);
    case TxnStatus::kDead:
    case TxnStatus::kPrepareEpochFence:
      break;
  }
  return TxnOutcome::Answer(ErrorCode::kUnknownServerError);
}

// Kafka's table for TV2 (Retry = epoch one below the current one, or the
// last epoch of the previous producer id after an overflow; Current = the
// current epoch; EB = prepare with an epoch bump; ITS = INVALID_TXN_STATE):
//                  abort Retry  abort Current  commit Retry  commit Current
//   Empty          PF           EB             PF            ITS
//   Ongoing        PF           EB             PF            EB
//   CompleteAbort  NONE         EB             ITS           ITS
//   CompleteCommit ITS          EB             NONE          ITS
//   PrepareCommit  ITS          PF             CONCURRENT    PF
//   PrepareAbort   CONCURRENT   PF             ITS           PF
TxnOutcome TxnMetadata::EndTxnV2(const EndTxnArgs& args) {
  const bool fence = pending_ == TxnStatus::kPrepareEpochFence;
  const int16_t epoch = cur_.producer_epoch;
  const bool retry_on_overflow = !fence && cur_.prev_producer_id == args.producer_id &&
                                 args.producer_epoch == kMaxProducerEpoch - 1 && epoch == 0;
  const bool retry_on_bump = !fence && epoch == args.producer_epoch + 1;
  const bool is_retry = retry_on_bump || retry_on_overflow;
  bool valid_epoch = args.producer_epoch == epoch;
  if (fence) {
    valid_epoch =
        (!args.from_client || args.producer_epoch == epoch) && args.producer_epoch >= epoch;
  } else if (IsPrepare(cur_.state)) {
    valid_epoch = retry_on_bump;
  } else if (IsComplete(cur_.state)) {
    valid_epoch = valid_epoch || is_retry;
  }
  if (pending_ && !fence) return TxnOutcome::Answer(ErrorCode::kConcurrentTransactions);
  if (args.producer_id != cur_.producer_id && !retry_on_overflow) {
    return TxnOutcome::Answer(ErrorCode::kInvalidProducerIdMapping);
  }
  if (!valid_epoch) return TxnOutcome::Answer(ErrorCode::kProducerFenced);

  const bool commit = args.result == TxnResult::kCommit;
  const TxnOutcome its = TxnOutcome::Answer(ErrorCode::kInvalidTxnState);
  TxnOutcome done = TxnOutcome::Answer(ErrorCode::kNone);  // a retry: the current id and epoch
  done.producer_id = cur_.producer_id;
  done.producer_epoch = epoch;
  switch (cur_.state) {
    case TxnStatus::kOngoing:
      return PrepareEndV2(args, commit ? TxnStatus::kPrepareCommit : TxnStatus::kPrepareAbort,
                          fence, false);
    case TxnStatus::kEmpty:
      return commit ? its : PrepareEndV2(args, TxnStatus::kPrepareAbort, fence, true);
    case TxnStatus::kCompleteCommit:
      if (commit) return is_retry ? done : its;
      return is_retry ? its : PrepareEndV2(args, TxnStatus::kPrepareAbort, fence, true);
    case TxnStatus::kCompleteAbort:
      if (commit) return its;
      return is_retry ? done : PrepareEndV2(args, TxnStatus::kPrepareAbort, fence, true);
    case TxnStatus::kPrepareCommit:
      return commit ? TxnOutcome::Answer(ErrorCode::kConcurrentTransactions) : its;
    case TxnStatus::kPrepareAbort:
      return !commit ? TxnOutcome::Answer(ErrorCode::kConcurrentTransactions) : its;
    case TxnStatus::kDead:
    case TxnStatus::kPrepareEpochFence:
      break;
  }
  return TxnOutcome::Answer(ErrorCode::kUnknownServerError);
}

TxnOutcome TxnMetadata::PrepareEndV2(const EndTxnArgs& args, TxnStatus next, bool fence,
                                     bool empty_abort) {
  // The bump reaches MAX-1 or MAX: the transaction completes under a new
  // producer id. A fence does not allocate one.
  int64_t next_producer_id = kNoProducerId;
  if (!fence && IsEpochExhausted(cur_.producer_epoch)) {
    if (!args.fresh_producer_id) return NeedProducerId();
    next_producer_id = *args.fresh_producer_id;
  }
  // The fence's own bump is dropped: the abort's TV2 bump is the only one.
  if (fence && next == TxnStatus::kPrepareAbort) pending_.reset();
  return PrepareAbortOrCommit(next, args.transaction_version, next_producer_id, args.now_ms,
                              empty_abort);
}

TxnOutcome TxnMetadata::PrepareAbortOrCommit(TxnStatus next, int16_t transaction_version,
                                             int64_t next_producer_id, int64_t now_ms,
                                             bool empty_abort) {
  TxnTransit t = Next(next);
  if (SupportsEpochBump(transaction_version)) {
    // At MAX (a bug or a TV1 fence) an abort still goes through, unbumped,
    // so the id can recover.
    if (!(cur_.producer_epoch == kMaxProducerEpoch && next == TxnStatus::kPrepareAbort)) {
      t.producer_epoch = Bump(cur_.producer_epoch);
    }
    t.last_producer_epoch = cur_.producer_epoch;
  }
  // A TV2 abort without a transaction has no start time; now stands in.
  t.start_ms = empty_abort ? now_ms : cur_.start_ms;
  t.next_producer_id = next_producer_id;
  t.last_update_ms = now_ms;
  t.client_transaction_version = transaction_version;
  return Prepare(std::move(t));
}

// ---- Completion, expiration ----

TxnOutcome TxnMetadata::PrepareComplete(int64_t now_ms) {
  if (pending_) return TxnOutcome::Answer(ErrorCode::kConcurrentTransactions);
  if (!IsPrepare(cur_.state)) return TxnOutcome::Answer(ErrorCode::kInvalidTxnState);
  has_failed_epoch_fence_ = false;  // PrepareX is in the log: the fence is done
  TxnTransit t = Next(cur_.state == TxnStatus::kPrepareCommit ? TxnStatus::kCompleteCommit
                                                              : TxnStatus::kCompleteAbort);
  if (SupportsEpochBump(cur_.client_transaction_version) &&
      cur_.next_producer_id != kNoProducerId) {
    // Epoch overflow: the next transaction runs under the new id. The last
    // epoch stays MAX-1, the last one the client saw.
    t.producer_id = cur_.next_producer_id;
    t.producer_epoch = 0;
  }
  t.next_producer_id = kNoProducerId;
  t.partitions.clear();
  t.last_update_ms = now_ms;
  TxnOutcome out = Prepare(std::move(t));
  out.producer_id = out.transit.producer_id;
  out.producer_epoch = out.transit.producer_epoch;
  return out;
}

TxnOutcome TxnMetadata::PrepareDead() {
  if (pending_) return TxnOutcome::Answer(ErrorCode::kConcurrentTransactions);
  TxnTransit t = Next(TxnStatus::kDead);
  t.partitions.clear();
  return Prepare(std::move(t));
}

bool TxnMetadata::ReadyToRemove(const TxnTransit& dead) const {
  return pending_ == TxnStatus::kDead && cur_.producer_epoch == dead.producer_epoch;
}

// Kafka's validProducerEpoch: a TV2 PrepareX bumped the epoch (the transit's
// last epoch is the current one) and an overflowing CompleteX switched ids
// (the transit's previous id is the current one).
bool TxnMetadata::ValidEpochForCompletion(const TxnTransit& t) const {
  const bool v2 = SupportsEpochBump(t.client_transaction_version);
  if (v2 && IsComplete(t.state) && t.producer_epoch == 0) {
    return t.last_producer_epoch == cur_.last_producer_epoch &&
           t.prev_producer_id == cur_.producer_id;
  }
  if (v2 && IsPrepare(t.state)) {
    return t.last_producer_epoch == cur_.producer_epoch && t.producer_id == cur_.producer_id;
  }
  return t.producer_epoch == cur_.producer_epoch && t.producer_id == cur_.producer_id;
}

// Kafka's completeTransitionTo checks, per target state.
bool TxnMetadata::ValidCompletion(const TxnTransit& t) const {
  const bool same_timeout = t.timeout_ms == cur_.timeout_ms;
  switch (t.state) {
    case TxnStatus::kEmpty: {
      const bool bumped = t.producer_epoch == Bump(cur_.producer_epoch) ||
                          (t.producer_epoch == 0 && t.producer_id != cur_.producer_id);
      return (t.producer_epoch == cur_.producer_epoch || bumped) && t.partitions.empty() &&
             t.start_ms == -1;
    }
    case TxnStatus::kOngoing:
      return ValidEpochForCompletion(t) && same_timeout &&
             std::includes(t.partitions.begin(), t.partitions.end(), cur_.partitions.begin(),
                           cur_.partitions.end());
    case TxnStatus::kPrepareCommit:
    case TxnStatus::kPrepareAbort: {
      const bool empty_abort = t.state == TxnStatus::kPrepareAbort &&
                               SupportsEpochBump(t.client_transaction_version) &&
                               IsExpirationAllowed(cur_.state);
      return ValidEpochForCompletion(t) && t.partitions == cur_.partitions && same_timeout &&
             (t.start_ms == cur_.start_ms || empty_abort);
    }
    case TxnStatus::kCompleteCommit:
    case TxnStatus::kCompleteAbort:
      return ValidEpochForCompletion(t) && same_timeout && t.start_ms != -1;
    case TxnStatus::kPrepareEpochFence:  // only ever pending, then replaced by PrepareAbort
    case TxnStatus::kDead:               // removed from the cache, never applied
      return false;
  }
  return false;
}

Status TxnMetadata::Complete(const TxnTransit& transit) {
  if (!pending_ || *pending_ != transit.state || !ValidCompletion(transit)) {
    return MakeError(
        Errc::kInvalidTxnState,
        fmt::format("transactional id '{}': cannot complete {} from {} (pending {})",
                    transactional_id_, TxnStatusName(transit.state), TxnStatusName(cur_.state),
                    pending_ ? TxnStatusName(*pending_) : "none"));
  }
  cur_ = transit;
  pending_.reset();
  pending_is_v1_fence_ = false;
  return Status::Ok();
}

void TxnMetadata::AbortPending() {
  if (pending_is_v1_fence_) has_failed_epoch_fence_ = true;
  pending_.reset();
  pending_is_v1_fence_ = false;
}

std::optional<TxnMarkers> TxnMetadata::MarkersToSend() const {
  if (!IsPrepare(cur_.state)) return std::nullopt;
  const TxnResult result =
      cur_.state == TxnStatus::kPrepareCommit ? TxnResult::kCommit : TxnResult::kAbort;
  return TxnMarkers{cur_.producer_id, cur_.producer_epoch, result, cur_.partitions,
                    cur_.client_transaction_version};
}

bool TxnMetadata::RemovePartition(const TopicPartition& tp) {
  if (!IsPrepare(cur_.state)) return false;
  cur_.partitions.erase(tp);
  return true;
}

bool TxnMetadata::TimedOut(int64_t now_ms) const {
  return cur_.state == TxnStatus::kOngoing && !pending_ && cur_.timeout_ms != INT32_MAX &&
         cur_.start_ms + cur_.timeout_ms < now_ms;
}

bool TxnMetadata::Expired(int64_t now_ms, int64_t expiration_ms) const {
  return IsExpirationAllowed(cur_.state) && !pending_ &&
         cur_.last_update_ms <= now_ms - expiration_ms;
}

}  // namespace strata::coordinator
