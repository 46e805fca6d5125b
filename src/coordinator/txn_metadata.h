#pragma once
// TxnMetadata: the transaction coordinator's state of one transactional id
// and the rules that move it, after Kafka's TransactionMetadata,
// TransactionState and the per-request checks of TransactionCoordinator
// (4.2): which request may do what in which state, with which producer id
// and epoch, and what gets written to __transaction_state.
//
// A transition is two-phase. A Prepare call checks a request against the
// current values and, when it needs a write, returns the new values as a
// TxnTransit and records its state as pending. The caller appends
// transit.ToLogValue(); once the append is committed it calls
// Complete(transit), if it failed AbortPending(). While a transition is
// pending every request is answered CONCURRENT_TRANSACTIONS (the fencing
// abort of an InitProducerId or a timeout excepted), so at most one write per
// id is in flight.
//
// The life of a transaction:
//   InitProducerId  Empty/CompleteX -> Empty (epoch+1, or a new producer id)
//                   Ongoing -> fence, abort; the client retries
//   AddPartitions   Empty/CompleteX/Ongoing -> Ongoing (partitions added)
//   EndTxn          Ongoing -> PrepareCommit/PrepareAbort
//                   (TV2 also Empty/CompleteX -> PrepareAbort; +1 epoch)
//   PrepareComplete PrepareX -> CompleteX (once every marker is written)
//   PrepareDead     Empty/CompleteX -> removed (a tombstone)
//
// Pure logic: no I/O, no clock, no logging, no lock. The coordinator guards
// each TxnMetadata with a mutex of its own and holds it across a Prepare call
// and the follow-up the outcome asks for (PrepareFence and its EndTxn).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "base/result.h"
#include "base/topic_partition.h"
#include "coordinator/txn_records.h"
#include "protocol/error_code.h"

namespace strata::coordinator {

inline constexpr int64_t kNoProducerId = -1;
inline constexpr int16_t kNoProducerEpoch = -1;
inline constexpr int16_t kMaxProducerEpoch = INT16_MAX;

// Epochs at or past MAX-1 are exhausted: the last value is kept for fencing,
// so the coordinator can always fence a producer at MAX-1.
bool IsEpochExhausted(int16_t epoch);
// Kafka's TransactionVersion as a client used it: 0 and 1 are the classic
// protocol, 2 (KIP-890 part 2, EndTxn v5) bumps the epoch at every EndTxn.
inline bool SupportsEpochBump(int16_t transaction_version) { return transaction_version >= 2; }
// TransactionState.validPreviousStates: whether `to` may follow `from`.
bool IsValidPreviousState(TxnStatus from, TxnStatus to);
// Empty, CompleteCommit, CompleteAbort: states an id may expire in.
bool IsExpirationAllowed(TxnStatus status);

enum class TxnResult : uint8_t { kAbort = 0, kCommit = 1 };

// The values a transition writes (Kafka's TxnTransitMetadata).
struct TxnTransit {
  int64_t producer_id = kNoProducerId;
  int64_t prev_producer_id = kNoProducerId;  // the producer id before this transition
  int64_t next_producer_id = kNoProducerId;  // TV2: the id to switch to at CompleteX
  int16_t producer_epoch = kNoProducerEpoch;
  int16_t last_producer_epoch = kNoProducerEpoch;  // not persisted
  int32_t timeout_ms = 0;
  TxnStatus state = TxnStatus::kEmpty;
  std::set<TopicPartition> partitions;
  int64_t start_ms = -1;
  int64_t last_update_ms = -1;
  int16_t client_transaction_version = 0;

  // The __transaction_state value of this transit (partitions grouped by
  // topic; prev/next producer ids go in tagged fields, so a v0 value loses
  // them). A Dead transit is written as a tombstone instead.
  TxnLogValue ToLogValue() const;
  bool operator==(const TxnTransit&) const = default;
};

// What a Prepare call asks its caller to do.
enum class TxnStep : uint8_t {
  // Answer now with `error` (and, for EndTxn v5 retries, the producer id and
  // epoch); nothing is pending.
  kAnswer,
  // Append `transit`; once committed call Complete(transit), else
  // AbortPending(). What to answer after the write is said at each call.
  kWrite,
  // Nothing is pending: allocate a producer id and call again with it
  // (InitProducerId past the last epoch, TV2 EndTxn bumping into it).
  kNeedProducerId,
  // PrepareEpochFence is pending: abort the ongoing transaction at once, as
  // the server, with EndTxn(kAbort, transit.producer_id,
  // transit.producer_epoch, from_client=false, the finalized TV), under the
  // same lock. Should that be refused, AbortPending().
  kAbortAfterFence,
};

struct TxnOutcome {
  TxnStep step = TxnStep::kAnswer;
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  int64_t producer_id = kNoProducerId;
  int16_t producer_epoch = kNoProducerEpoch;
  TxnTransit transit;  // kWrite, kAbortAfterFence

  static TxnOutcome Answer(protocol::ErrorCode error) { return TxnOutcome{.error = error}; }
  bool IsAnswer(protocol::ErrorCode e) const { return step == TxnStep::kAnswer && error == e; }
};

// A producer id and epoch a client already holds (InitProducerId v3+).
struct ProducerIdAndEpoch {
  int64_t producer_id = kNoProducerId;
  int16_t epoch = kNoProducerEpoch;
};

struct EndTxnArgs {
  int64_t producer_id = kNoProducerId;
  int16_t producer_epoch = kNoProducerEpoch;
  TxnResult result = TxnResult::kAbort;
  // False for the coordinator's own aborts (fencing, timeouts): they may
  // carry an epoch above the current one.
  bool from_client = true;
  // The client's TV (2 for EndTxn v5, else 0) or, server-initiated, the
  // finalized transaction.version.
  int16_t transaction_version = 0;
  int64_t now_ms = 0;
  std::optional<int64_t> fresh_producer_id;  // after kNeedProducerId
};

// The markers a PrepareCommit/PrepareAbort transaction needs written.
struct TxnMarkers {
  int64_t producer_id = kNoProducerId;
  int16_t producer_epoch = kNoProducerEpoch;
  TxnResult result = TxnResult::kAbort;
  std::set<TopicPartition> partitions;
  int16_t transaction_version = 0;  // the transaction's (from EndTxn)
};

class TxnMetadata {
 public:
  // A transactional id seen for the first time: Empty, epoch -1 (the first
  // InitProducerId makes it 0), TV 0.
  static TxnMetadata New(std::string transactional_id, int64_t producer_id, int32_t timeout_ms,
                         int64_t now_ms);
  // An id loaded from its latest __transaction_state value. The last epoch is
  // not persisted and reads back as -1.
  static TxnMetadata FromLogValue(std::string transactional_id, const TxnLogValue& value);

  // InitProducerId for this id; the caller has checked the id is not empty
  // and the timeout is in (0, transaction.max.timeout.ms]; `expected` is
  // nullopt unless the request names a producer id and epoch (v3+, not -1/-1).
  // kWrite (Empty):
  // answer transit's producer id and epoch once committed. kAbortAfterFence:
  // answer the abort's error, or CONCURRENT_TRANSACTIONS if it had none.
  TxnOutcome InitProducerId(int32_t timeout_ms, std::optional<ProducerIdAndEpoch> expected,
                            int64_t now_ms, std::optional<int64_t> fresh_producer_id = {});
  // AddPartitionsToTxn (and AddOffsetsToTxn with the offsets partition).
  // kWrite (Ongoing): answer NONE once committed.
  TxnOutcome AddPartitions(int64_t producer_id, int16_t producer_epoch,
                           const std::set<TopicPartition>& partitions,
                           int16_t client_transaction_version, int64_t now_ms);
  // AddPartitionsToTxn with VerifyOnly (KIP-890 part 1): never writes. Every
  // partition gets the same error, or NONE if in the transaction and
  // TRANSACTION_ABORTABLE if not.
  std::map<TopicPartition, protocol::ErrorCode> VerifyPartitions(
      int64_t producer_id, int16_t producer_epoch,
      const std::set<TopicPartition>& partitions) const;
  // EndTxn, from a client or the coordinator. kWrite (PrepareX): once
  // committed, Complete(transit), then PrepareComplete. (The handler maps
  // PRODUCER_FENCED to INVALID_PRODUCER_EPOCH for EndTxn v0-1.)
  TxnOutcome EndTxn(const EndTxnArgs& args);
  // Fencing a timed-out transaction (Ongoing): kAbortAfterFence.
  TxnOutcome PrepareFence();
  // PrepareCommit/PrepareAbort -> CompleteCommit/CompleteAbort, prepared as
  // soon as PrepareX is committed (or found on load). kWrite: the EndTxn
  // answer is NONE with (TV2) transit's producer id and epoch, also in the
  // outcome's producer_id and producer_epoch; send
  // MarkersToSend() and write the transit once all are written.
  TxnOutcome PrepareComplete(int64_t now_ms);
  // Expiration: kWrite of a tombstone; remove the id once it is committed if
  // ReadyToRemove(transit), else AbortPending().
  TxnOutcome PrepareDead();

  // Applies a committed transit. Refused (nothing changes) when it is not
  // the pending transition or breaks Kafka's completion checks.
  Status Complete(const TxnTransit& transit);
  // The pending write failed. A failed TV1 fencing abort leaves its epoch
  // bump in memory and marks it, so the next fence does not bump again.
  void AbortPending();
  bool ReadyToRemove(const TxnTransit& dead) const;

  // The markers to write while in PrepareCommit/PrepareAbort: the current
  // producer id and epoch (TV2: the bumped one) and remaining partitions.
  std::optional<TxnMarkers> MarkersToSend() const;
  // A partition's marker is written; false outside PrepareX.
  bool RemovePartition(const TopicPartition& tp);

  // Ongoing, nothing pending, and older than its timeout (2PC ids, with the
  // INT32_MAX timeout, never time out).
  bool TimedOut(int64_t now_ms) const;
  // Expirable state, nothing pending, untouched for `expiration_ms`.
  bool Expired(int64_t now_ms, int64_t expiration_ms) const;

  // The current values as a transit (Kafka's prepareNoTransit).
  TxnTransit Current() const;
  const std::string& transactional_id() const { return transactional_id_; }
  int64_t producer_id() const { return cur_.producer_id; }
  int64_t prev_producer_id() const { return cur_.prev_producer_id; }
  int64_t next_producer_id() const { return cur_.next_producer_id; }
  int16_t producer_epoch() const { return cur_.producer_epoch; }
  int16_t last_producer_epoch() const { return cur_.last_producer_epoch; }
  int32_t timeout_ms() const { return cur_.timeout_ms; }
  TxnStatus state() const { return cur_.state; }
  const std::set<TopicPartition>& partitions() const { return cur_.partitions; }
  int64_t start_ms() const { return cur_.start_ms; }
  int64_t last_update_ms() const { return cur_.last_update_ms; }
  int16_t client_transaction_version() const { return cur_.client_transaction_version; }
  const std::optional<TxnStatus>& pending() const { return pending_; }
  bool has_failed_epoch_fence() const { return has_failed_epoch_fence_; }

 private:
  TxnMetadata(std::string transactional_id, TxnTransit current);

  // Kafka's prepareTransitionTo: checks `next` (pending, ids, the valid
  // previous states) and makes it pending; UNKNOWN_SERVER_ERROR, nothing
  // changed, where Kafka throws IllegalStateException.
  TxnOutcome Prepare(TxnTransit next);
  TxnTransit Next(TxnStatus state) const;
  TxnOutcome IncrementEpoch(int32_t timeout_ms, std::optional<int16_t> expected, int64_t now_ms);
  TxnOutcome RotateProducerId(int64_t producer_id, int32_t timeout_ms, bool record_last_epoch,
                              int64_t now_ms);
  TxnOutcome EndTxnV1(const EndTxnArgs& args);
  TxnOutcome EndTxnV2(const EndTxnArgs& args);
  TxnOutcome PrepareEndV2(const EndTxnArgs& args, TxnStatus next, bool fence, bool empty_abort);
  TxnOutcome PrepareAbortOrCommit(TxnStatus next, int16_t transaction_version,
                                  int64_t next_producer_id, int64_t now_ms, bool empty_abort);
  bool ValidEpochForCompletion(const TxnTransit& t) const;
  bool ValidCompletion(const TxnTransit& t) const;

  std::string transactional_id_;
  TxnTransit cur_;
  std::optional<TxnStatus> pending_;
  // The pending write is a TV1 abort that fenced the epoch in memory.
  bool pending_is_v1_fence_ = false;
  bool has_failed_epoch_fence_ = false;
};

}  // namespace strata::coordinator
