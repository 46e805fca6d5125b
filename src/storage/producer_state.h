#pragma once
// ProducerStateManager: per-producer-id idempotence and transaction state
// (epoch, the last 5 batches' sequence/offset ranges, the open transaction,
// the coordinator epoch of the last marker), the partition's transactions
// that bound its last stable offset (TxnTracker), and its persistence as
// Kafka producer snapshots, <dir>/<20-digit offset>.snapshot, in
// ProducerStateManager's format version 1:
//   version int16 = 1 | crc uint32 (CRC-32C of everything after it) |
//   entries int32 count, then per producer:
//     producerId int64 | epoch int16 | lastSequence int32 | lastOffset int64 |
//     offsetDelta int32 | timestamp int64 | coordinatorEpoch int32 |
//     currentTxnFirstOffset int64
// A snapshot named N holds the state after every batch below offset N. As in
// Kafka only each producer's LAST batch is persisted; the older retry window
// is rebuilt by replaying the batches after the snapshot.
//
// Thread-safety: none; the owning Log's mutex serialises all calls.
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "base/env.h"
#include "base/offset.h"
#include "base/result.h"
#include "protocol/control_record.h"
#include "protocol/record_batch.h"
#include "storage/append_origin.h"
#include "storage/txn_tracker.h"
#include "storage/txn_verification.h"

namespace strata::storage {

inline constexpr std::string_view kSnapshotSuffix = ".snapshot";

// One appended batch as the producer state sees it.
struct ProducerBatch {
  int64_t producer_id = -1;
  int16_t epoch = -1;
  int32_t first_seq = -1;
  int32_t last_seq = -1;
  Offset first_offset = kNoOffset;
  Offset last_offset = kNoOffset;
  int64_t max_timestamp = -1;
  bool transactional = false;
  bool control = false;
  // A control batch's end-transaction marker (read from its record).
  std::optional<protocol::TxnMarker> marker;
  // BatchInfo::txn_verification_guard of a leader's append.
  uint64_t verification_guard = 0;
  // BatchInfo::marker_transaction_version of a leader's append.
  int16_t marker_transaction_version = 0;

  static ProducerBatch FromHeader(const protocol::BatchHeader& h);
};

struct ProducerBatchMeta {
  int32_t first_seq = -1;
  int32_t last_seq = -1;
  Offset first_offset = kNoOffset;
  Offset last_offset = kNoOffset;
  int64_t timestamp = -1;
};

struct ProducerEntry {
  static constexpr size_t kMaxBatches = 5;  // Kafka's retry window
  int16_t epoch = -1;
  std::deque<ProducerBatchMeta> batches;  // oldest first
  int32_t coordinator_epoch = -1;
  int64_t last_timestamp = -1;
  Offset current_txn_first_offset = kNoOffset;
};

class ProducerStateManager {
 public:
  // What an append that is being validated changes.
  struct Staged {
    std::map<int64_t, ProducerEntry> entries;  // the producers it touches, as they become
    std::map<Offset, int64_t> started;         // transactions it opens: first offset -> producer
    std::vector<CompletedTxn> completed;       // transactions its markers end
    std::vector<int64_t> ended;                // producers it wrote markers or verified data of
  };

  // The original batch if `b` retries one of its producer's last 5 batches
  // (same epoch, same first and last sequence).
  std::optional<ProducerBatchMeta> FindDuplicate(const ProducerBatch& b) const;
  // Checks `b` against the committed state overlaid with `staged` and, when
  // acceptable, records it in `staged`. Client and coordinator origins get
  // kInvalidProducerEpoch for an old epoch, kInvalidTxnState for a
  // non-transactional batch while the producer's transaction is open and
  // kTxnCoordinatorFenced for a marker from an older coordinator; clients
  // also kOutOfOrderSequence for a gap or a new epoch not starting at 0.
  // The replication origin is never refused.
  Status Validate(const ProducerBatch& b, AppendOrigin origin, Staged* staged) const;
  // Makes the staged state the committed one; returns the transactions the
  // append completed, each with its last stable offset, in offset order.
  std::vector<CompletedTxn> Commit(Staged&& staged);
  // Validate with the replication origin, then Commit.
  std::vector<CompletedTxn> Replay(const ProducerBatch& b);

  // The partition's transactions that hold back its last stable offset.
  const TxnTracker& txns() const { return txns_; }

  // KIP-890 (Log::StartTxnVerification): a new guard for the producer, and
  // whether it has a transaction open at `epoch` already. A marker of the
  // producer, or the append that opens its transaction, ends the guard.
  TxnVerification StartVerification(int64_t producer_id, int16_t epoch, int64_t now_ms);
  // Kafka's removeExpiredProducers (producer.id.expiration.ms): forgets the
  // producers without an open transaction whose last batch is older than
  // `expiration_ms` at `now_ms`, and the guards taken that long ago (a
  // produce refused after its verification never ends its guard).
  // Returns how many producers went.
  size_t RemoveExpired(int64_t now_ms, int64_t expiration_ms);
  // The high watermark moved: completed transactions below it stop
  // holding back the last stable offset.
  void OnHighWatermark(Offset hw) { txns_.OnHighWatermark(hw); }

  // Writes <dir>/<offset>.snapshot (tmp + fsync + rename).
  Status WriteSnapshot(const std::filesystem::path& dir, Offset offset,
                       Env* env = Env::Default()) const;
  // Replaces the state with the newest readable snapshot at or below
  // `max_offset`, returning its offset; nullopt (empty state) when none.
  // Unreadable snapshots are deleted with a warning.
  Result<std::optional<Offset>> LoadNewestSnapshot(const std::filesystem::path& dir,
                                                   Offset max_offset, Env* env = Env::Default());
  // Snapshot offsets in `dir`, ascending.
  static std::vector<Offset> ListSnapshots(const std::filesystem::path& dir);
  // Deletes snapshots above `max_offset`, below `min_offset`, and all but the
  // `keep` newest.
  static Status PruneSnapshots(const std::filesystem::path& dir, Offset min_offset,
                               Offset max_offset, size_t keep, Env* env = Env::Default());

  // Encoding, exposed for tests.
  Bytes EncodeSnapshot() const;
  Status DecodeSnapshot(ByteView data);

  void Clear() {
    producers_.clear();
    verifications_.clear();
    txns_.Clear();
  }
  // Takes every producer of `older` (a snapshot from before this state
  // began) that this state does not know; returns how many. What is known
  // here is newer.
  size_t MergeOlder(const ProducerStateManager& older);
  const ProducerEntry* Get(int64_t producer_id) const;
  // Every producer's entry, in no set order.
  const std::unordered_map<int64_t, ProducerEntry>& entries() const { return producers_; }
  size_t size() const { return producers_.size(); }

 private:
  Status CheckEpoch(const ProducerBatch& b, const ProducerEntry& current) const;
  Status CheckSequence(const ProducerBatch& b, const ProducerEntry& current) const;
  // Applies a data batch, or a marker, to `entry`; records in `staged` a
  // transaction that starts or completes.
  static void ApplyData(const ProducerBatch& b, ProducerEntry* entry, Staged* staged);
  static void ApplyMarker(const ProducerBatch& b, ProducerEntry* entry, Staged* staged);
  // The open transactions of the producers' entries (after a snapshot load).
  void RebuildOpenTxns();

  std::unordered_map<int64_t, ProducerEntry> producers_;
  TxnTracker txns_;
  // KIP-890 guards by producer id: in memory only (a leader that restarts
  // asks the coordinator again).
  struct Verification {
    uint64_t guard = 0;
    int16_t epoch = -1;
    int64_t taken_ms = 0;
  };
  std::unordered_map<int64_t, Verification> verifications_;
  uint64_t next_guard_ = 0;
};

}  // namespace strata::storage
