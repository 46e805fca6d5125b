#pragma once
// TxnCoordinator: Kafka's transaction coordinator for the transactional ids
// of the __transaction_state partitions this broker leads. It keeps one
// TxnMetadata per id, loaded from its partition when the partition's
// leadership comes here (the partition's leader epoch is the coordinator
// epoch, carried by every marker), and turns each request into TxnMetadata's
// two-phase transitions: the record is appended (CoordinatorLog), the
// caller waits until it is committed, then calls Finish, and only then does
// the transition take effect and the request get its answer. A transaction
// being committed or aborted is held in PrepareCommit/PrepareAbort until the
// caller has written its markers to every partition (Markers,
// MarkerWritten), then CompleteTransaction writes its end. An id left idle
// past transactional.id.expiration.ms gets a tombstone (ExpireIds) and
// leaves the table once that is committed.
//
// No network and no waiting here: handlers wait for commits, and the marker
// channel sends the markers.
//
// Thread-safety: every method is safe from any thread. Each id has its own
// mutex; the table's mutex is never held while waiting for an id's.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "base/topic_partition.h"
#include "coordinator/coordinator_log.h"
#include "coordinator/txn_metadata.h"
#include "protocol/error_code.h"

namespace strata::coordinator {

struct TxnCoordinatorConfig {
  int32_t max_timeout_ms = 900000;  // transaction.max.timeout.ms
  // __transaction_state value version: 1 (flexible, with the tagged producer
  // ids) once transaction.version >= 1, else 0.
  int16_t value_version = 1;
  // transaction.version a server-initiated abort runs under.
  int16_t transaction_version = 0;
};

// A record a request needs committed before it is answered: the caller
// waits until `appended` is below its partition's high watermark (or the
// leadership that wrote it is gone), then calls Finish.
struct TxnWrite {
  std::string transactional_id;
  int32_t partition = 0;
  int32_t coordinator_epoch = 0;
  TxnTransit transit;
  CoordinatorLog::LastAppend appended;
};

// What a request gets: an answer, now or (with `write`) once the write is
// committed and Finish says it took effect.
struct TxnReply {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  int64_t producer_id = kNoProducerId;
  int16_t producer_epoch = kNoProducerEpoch;
  std::optional<TxnWrite> write;
};

// ListTransactions' filters, all of which an id must pass (Kafka's
// TransactionStateManager.listTransactionStates).
struct TxnListFilter {
  // nullopt: any state. A set, even an empty one (every name asked for was
  // unknown), lets only its states through.
  std::optional<std::set<TxnStatus>> states;
  std::set<int64_t> producer_ids;  // empty: any
  // >= 0: only ids whose start is more than this long ago. As in Kafka, an id
  // with no transaction (start -1) always passes.
  int64_t min_duration_ms = -1;
  // Empty: any id; else whether the whole id matches (the handler compiles
  // the pattern, so the coordinator needs no regex engine).
  std::function<bool(const std::string&)> id_matches;
};

// One id in a ListTransactions answer.
struct TxnListing {
  std::string transactional_id;
  int64_t producer_id = kNoProducerId;
  TxnStatus state = TxnStatus::kEmpty;
  bool operator==(const TxnListing&) const = default;
};

// COORDINATOR_LOAD_IN_PROGRESS (and nothing listed) while a partition loads.
struct TxnList {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::vector<TxnListing> transactions;  // sorted by transactional id
};

// The transactions of this coordinator, for its metrics.
struct TxnStats {
  int64_t open = 0;                   // Ongoing, PrepareCommit or PrepareAbort
  int64_t oldest_open_start_ms = -1;  // the earliest start among those; -1: none open
  // Transactions ended here since start: CompleteCommit, or CompleteAbort
  // (aborts of timed-out and fenced transactions included), took effect.
  int64_t committed = 0;
  int64_t aborted = 0;
};

class TxnCoordinator {
 public:
  // `new_producer_id` allocates a producer id (a new transactional id, or one
  // whose epoch ran out).
  using ProducerIdSource = std::function<Result<int64_t>()>;
  TxnCoordinator(TxnCoordinatorConfig config, std::unique_ptr<CoordinatorLog> log,
                 ProducerIdSource new_producer_id, Clock* clock);

  int32_t PartitionFor(const std::string& transactional_id) const;
  // Takes over partition `p` at `coordinator_epoch`: replays it. Returns the
  // ids found committing or aborting, whose markers must be written again.
  Result<std::vector<std::string>> LoadPartition(int32_t p, int32_t coordinator_epoch);
  // Gives `p` up: its ids leave, and writes of it in flight come to nothing.
  void UnloadPartition(int32_t p);
  // NONE, COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR for `id`.
  protocol::ErrorCode Serves(const std::string& transactional_id) const;
  // The coordinator epoch of a loaded partition, or nullopt.
  std::optional<int32_t> CoordinatorEpoch(int32_t p) const;

  // --- requests (the handler has checked the id is not empty)
  TxnReply InitProducerId(const std::string& transactional_id, int32_t timeout_ms,
                          std::optional<ProducerIdAndEpoch> expected);
  TxnReply AddPartitions(const std::string& transactional_id, int64_t producer_id,
                         int16_t producer_epoch, const std::set<TopicPartition>& partitions,
                         int16_t client_transaction_version);
  // Every partition's answer (KIP-890 verification); no write.
  std::map<TopicPartition, protocol::ErrorCode> VerifyPartitions(
      const std::string& transactional_id, int64_t producer_id, int16_t producer_epoch,
      const std::set<TopicPartition>& partitions) const;
  TxnReply EndTxn(const std::string& transactional_id, int64_t producer_id, int16_t producer_epoch,
                  TxnResult result, int16_t client_transaction_version);

  // `write` is committed (or, `committed` false, will never be): applies it,
  // or drops it. NONE when it took effect; NOT_COORDINATOR when the
  // partition moved meanwhile; COORDINATOR_NOT_AVAILABLE when it failed.
  protocol::ErrorCode Finish(const TxnWrite& write, bool committed);

  // Fences and aborts, as the coordinator, every transaction of a loaded
  // partition open past its timeout (Kafka's abortTimedOutTransactions):
  // one reply per abort written, to be seen through like a request's, after
  // which its markers are written.
  std::vector<TxnReply> AbortTimedOut();
  // Expires, as the coordinator, every id of a loaded partition that may
  // expire (Kafka's removeExpiredTransactionalIds): Empty, CompleteCommit or
  // CompleteAbort, nothing pending, untouched for `expiration_ms`. One reply
  // per tombstone written, to be seen through like a request's; its Finish
  // removes the id, unless the id was used meanwhile.
  std::vector<TxnReply> ExpireIds(int64_t expiration_ms);

  // --- markers of a transaction being committed or aborted
  std::optional<TxnMarkers> Markers(const std::string& transactional_id) const;
  // `tp`'s marker is written. True once every partition has its marker.
  // Ignored unless the id is still ending the transaction `sent` describes
  // (producer id, epoch, result) under `coordinator_epoch`: an answer for a
  // transaction a reload has replaced must not strike a newer one's partition.
  bool MarkerWritten(const std::string& transactional_id, const TopicPartition& tp,
                     const TxnMarkers& sent, int32_t coordinator_epoch);
  // Writes the end (CompleteCommit/CompleteAbort) once every marker is
  // written; nullopt when there is nothing to complete.
  std::optional<TxnWrite> CompleteTransaction(const std::string& transactional_id);

  // A copy of an id's state, for tests and DescribeTransactions.
  std::optional<TxnTransit> Describe(const std::string& transactional_id) const;
  // The ids of the loaded partitions that pass `filter` (Dead ones never do),
  // for ListTransactions.
  TxnList List(const TxnListFilter& filter) const;
  // Open transactions of the loaded partitions and the ends counted so far.
  TxnStats Stats() const;

 private:
  struct Entry {
    std::mutex mu;
    int32_t partition = 0;
    TxnMetadata md;
    std::optional<TxnTransit> completion;  // CompleteX, written once the markers are
    explicit Entry(TxnMetadata m) : md(std::move(m)) {}
  };
  struct Partition {
    enum class State : uint8_t { kLoading, kLoaded } state = State::kLoading;
    int32_t coordinator_epoch = 0;
  };

  using Entries = std::vector<std::pair<std::string, std::shared_ptr<Entry>>>;

  std::shared_ptr<Entry> Find(const std::string& transactional_id) const;
  // The ids of the loaded partitions.
  Entries LoadedEntries() const;
  // Finish of a committed tombstone, `entry` locked by the caller.
  protocol::ErrorCode RemoveExpired(const TxnWrite& write, const std::shared_ptr<Entry>& entry);
  // Appends `transit` for `entry` (locked by the caller): the write, or the
  // reply's error with the pending transition dropped.
  TxnReply Write(const std::string& id, Entry& entry, const TxnTransit& transit);
  TxnReply Apply(const std::string& id, Entry& entry, TxnOutcome outcome,
                 protocol::ErrorCode after_write);
  TxnReply FenceThenAbort(const std::string& id, Entry& entry, const TxnOutcome& fence);
  std::optional<int32_t> LoadedEpoch(int32_t p) const;
  int64_t Now() const { return clock_->NowMs(); }

  const TxnCoordinatorConfig config_;
  std::unique_ptr<CoordinatorLog> log_;
  ProducerIdSource new_producer_id_;
  Clock* clock_;
  mutable std::mutex mu_;  // the two tables below
  std::unordered_map<std::string, std::shared_ptr<Entry>> ids_;
  std::map<int32_t, Partition> partitions_;
  // Ends that took effect here (TxnStats).
  std::atomic<int64_t> committed_{0};
  std::atomic<int64_t> aborted_{0};
};

}  // namespace strata::coordinator
