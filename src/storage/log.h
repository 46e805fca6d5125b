#pragma once
// Log: one partition's segmented log in Kafka's on-disk layout
// (<dir>/<20-digit base offset>.log/.index/.timeindex, leader-epoch-checkpoint,
// <offset>.snapshot producer state). Owns offset assignment, producer
// idempotence checks, rolling, indexes, retention, and crash recovery.
//
// Thread-safety: every public method is safe to call from any thread; an
// internal mutex serialises appends, reads take it only briefly to pick the
// segment and then read file ranges (bytes below the log end never change).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/file_region.h"
#include "base/ids.h"
#include "base/offset.h"
#include "base/result.h"
#include "storage/append_origin.h"
#include "storage/txn_index.h"
#include "storage/txn_verification.h"

namespace strata::storage {

// Topic-level settings the log obeys (Kafka topic config names in comments).
struct LogConfig {
  int64_t segment_bytes = 1073741824;         // segment.bytes
  int64_t segment_ms = 604800000;             // segment.ms
  int64_t segment_index_bytes = 10485760;     // segment.index.bytes
  int32_t index_interval_bytes = 4096;        // index.interval.bytes
  int64_t retention_ms = 604800000;           // retention.ms (-1 = forever)
  int64_t retention_bytes = -1;               // retention.bytes (-1 = unlimited)
  int64_t flush_messages = INT64_MAX;         // flush.messages
  int64_t flush_ms = INT64_MAX;               // flush.ms
  int32_t max_message_bytes = 1048588;        // max.message.bytes
  bool message_timestamp_log_append = false;  // message.timestamp.type=LogAppendTime
  // How far a CreateTime record's timestamp may lie before or after the
  // broker's clock (message.timestamp.before/after.max.ms).
  int64_t message_timestamp_before_max_ms = INT64_MAX;
  int64_t message_timestamp_after_max_ms = 3600000;
  bool cleanup_delete = true;                 // cleanup.policy contains "delete"
  // Compaction (cleanup.policy contains "compact"); see cleaner.h. The
  // produce path must reject records without a key when `compacted`
  // (INVALID_RECORD, as Kafka does).
  bool compacted = false;
  int64_t delete_retention_ms = 86400000;     // delete.retention.ms
  double min_cleanable_dirty_ratio = 0.5;     // min.cleanable.dirty.ratio
  int64_t min_compaction_lag_ms = 0;          // min.compaction.lag.ms
  int64_t max_compaction_lag_ms = INT64_MAX;  // max.compaction.lag.ms
  // Tiered storage (KIP-405). When set, retention of local segments follows
  // local.retention.* and only deletes segments below the remote copied
  // offset (SetRemoteCopiedOffset); retention.* is enforced by the remote
  // log manager over local + remote.
  bool remote_storage_enable = false;  // remote.storage.enable
  int64_t local_retention_ms = -2;     // local.retention.ms (-2 = retention.ms)
  int64_t local_retention_bytes = -2;  // local.retention.bytes (-2 = retention.bytes)
};

// A non-active (rolled, immutable) segment, for tiered storage uploads.
struct SegmentSummary {
  Offset base_offset;
  Offset end_offset;  // last offset stored (next offset - 1)
  int64_t size = 0;
  int64_t max_timestamp = -1;
  std::filesystem::path log_path;  // <dir>/<base>.log
};

// What the caller knows about the batches it hands to Append (from
// protocol::ValidateBatches); the log trusts these values.
struct BatchInfo {
  int32_t size = 0;          // bytes of this batch within the buffer
  int32_t record_count = 0;  // lastOffsetDelta + 1
  int64_t max_timestamp = -1;
  int32_t offset_delta_of_max_timestamp = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  bool transactional = false;
  // KIP-890: the guard StartTxnVerification gave for this producer, once the
  // transaction coordinator confirmed the partition is in its ongoing
  // transaction; 0 when no verification was done (then none is required).
  uint64_t txn_verification_guard = 0;
  // A marker's transaction version (WriteTxnMarkers v2). From 2 the
  // coordinator bumps the epoch before writing markers, so a marker must
  // carry a newer epoch than the transaction's data (an equal one is a late
  // or repeated marker).
  int16_t marker_transaction_version = 0;
};

// One producer's state in a partition, as DescribeProducers reports it.
struct ProducerView {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t last_sequence = -1;
  int64_t last_timestamp = -1;
  int32_t coordinator_epoch = -1;
  Offset current_txn_start_offset = kNoOffset;  // its open transaction's first offset
};

struct AppendResult {
  Offset base_offset = kNoOffset;  // offset of the first record appended
  Offset last_offset = kNoOffset;
  int64_t log_append_time = -1;  // -1 unless LogAppendTime
  Offset log_start_offset;
  bool duplicate = false;  // an idempotent retry: offsets are the original ones
};

// Bytes read from the log: whole batches, first one containing the fetch offset.
struct ReadResult {
  Bytes records;
  Offset log_start_offset;
  Offset log_end_offset;
};

// ReadResult's zero-copy form (Log::ReadRegion).
struct RegionReadResult {
  FileRegion region;  // length 0 when there is nothing to read
  Offset log_start_offset;
  Offset log_end_offset;
};

struct TimestampOffset {
  int64_t timestamp = -1;
  Offset offset = kNoOffset;
};

class OffsetMap;  // storage/cleaner_offset_map.h

// How much of a log the cleaner could compact now (Kafka's LogToClean).
// Byte counts are whole segments, as in Kafka: the segment holding the first
// dirty offset counts as both clean and cleanable.
struct CleaningEstimate {
  bool compacted = false;           // cleanup.policy contains "compact"
  Offset first_dirty_offset;        // the cleaner checkpoint, within [log start, log end]
  Offset first_uncleanable_offset;  // the dirty section is [first dirty, this)
  int64_t clean_bytes = 0;          // segments below the first dirty offset
  int64_t cleanable_bytes = 0;      // segments in the dirty section
  int64_t compaction_delay_ms = 0;  // > 0: max.compaction.lag.ms is overdue by this much
  double min_dirty_ratio = 0.5;     // the log's min.cleanable.dirty.ratio
  // A kept tombstone's delete horizon has passed: worth a pass even with
  // nothing dirty, or an idle topic would keep its tombstones for ever.
  bool tombstones_expired = false;

  double dirty_ratio() const {
    int64_t total = clean_bytes + cleanable_bytes;
    return total == 0 ? 0.0 : double(cleanable_bytes) / double(total);
  }
  // Kafka's choice: dirty enough, or holding records past max.compaction.lag.ms.
  bool ShouldClean() const {
    return compacted && ((cleanable_bytes > 0 &&
                          (compaction_delay_ms > 0 || dirty_ratio() >= min_dirty_ratio)) ||
                         tombstones_expired);
  }
};

// What one cleaning pass did (counters for the cleaner's metrics).
struct CleaningResult {
  Offset first_dirty_offset;   // where the dirty section started
  Offset end_offset;           // the new cleaner checkpoint (first offset not cleaned)
  int64_t bytes_read = 0;      // segment bytes read while rewriting (map building excluded)
  int64_t bytes_written = 0;   // bytes of the cleaned segments
  int64_t map_bytes_read = 0;  // dirty-section bytes read to build the offset map
  int64_t records_read = 0;
  int64_t records_retained = 0;
  int segments_cleaned = 0;  // old segments replaced
  int segments_written = 0;  // cleaned segments swapped in
  int groups_skipped = 0;    // groups not swapped (their segments were deleted meanwhile)
  bool map_full = false;     // the offset map filled before the dirty section's end
  // The earliest delete horizon of the tombstones the cleaned section still
  // holds (-1: none): once it passes, a pass removes them (KIP-534).
  int64_t earliest_delete_horizon = -1;
  int64_t duration_ms = 0;
};

class Log {
 public:
  virtual ~Log() = default;

  // Opens or creates the log in `dir` (named <topic>-<partition>), running
  // recovery: segments past the last clean shutdown are scanned batch by batch,
  // a torn or corrupt tail is truncated (logged), bad indexes are rebuilt, and
  // producer state is reloaded from the newest snapshot plus the tail.
  // Checkpoints, snapshots and markers are written through `env` (tests pass
  // a FaultInjectingEnv to fill the disk).
  static Result<std::unique_ptr<Log>> Open(const std::filesystem::path& dir,
                                           const LogConfig& config, Clock* clock,
                                           Env* env = Env::Default());

  // Appends one or more validated batches (`batches` holds them back to back;
  // `infos` describes each). Assigns offsets, stamps `leader_epoch`, applies
  // LogAppendTime if configured, checks producer sequences (a duplicate of one
  // of the last 5 batches returns the original offsets with duplicate=true and
  // writes nothing), rolls segments and maintains indexes. `origin` is
  // kClient for a producer's batches, kCoordinator for end-transaction
  // markers and the group coordinator's transactional writes (no sequence or
  // duplicate checks). A marker that aborts a transaction adds it to the
  // segment's .txnindex. Errors: kOutOfOrderSequence, kInvalidProducerEpoch,
  // kUnknownProducerId, kInvalidTxnState, kTxnCoordinatorFenced, kCorrupt (a
  // malformed marker), kIoError.
  virtual Result<AppendResult> Append(MutableByteView batches, const std::vector<BatchInfo>& infos,
                                      LeaderEpoch leader_epoch,
                                      AppendOrigin origin = AppendOrigin::kClient) = 0;

  // KIP-890: before a leader asks the transaction coordinator whether a
  // producer's transactional batch belongs to its ongoing transaction, it
  // takes a guard here. A marker of that producer (its transaction ended)
  // voids the guard, so the append, once verified, is refused
  // (kInvalidTxnState) if it would open a transaction the coordinator no
  // longer has: no late write starts a transaction that nothing ends.
  virtual TxnVerification StartTxnVerification(int64_t producer_id, int16_t producer_epoch) = 0;

  // Forgets producers idle for producer.id.expiration.ms without an open
  // transaction, and verification guards that old (Kafka's
  // removeExpiredProducers); returns how many producers went.
  virtual size_t ExpireProducers(int64_t expiration_ms) = 0;

  // A follower's append: batches exactly as the leader wrote them (offsets,
  // leader epochs, timestamps kept; the caller checked their CRCs). Base
  // offsets must be at or above the log end and ascending (compaction on the
  // leader leaves gaps). The leader-epoch history follows the batches' epochs
  // and producer state is replayed without checks, as Kafka's replication
  // origin does, so this replica can lead with the same idempotence state.
  virtual Result<AppendResult> AppendAsFollower(MutableByteView batches,
                                                const std::vector<BatchInfo>& infos) = 0;
  // Removes everything at or above `offset` (rounded down to the start of
  // the batch holding it): the tail a follower has and the leader does not
  // (KIP-101). Leader-epoch entries and producer state follow; readers must
  // not be reading above the offset (consumers never read above the high
  // watermark, which a truncation never passes). kOutOfRange below the log
  // start.
  virtual Status TruncateTo(Offset offset) = 0;
  // Empties the log and starts it at `offset`, above its end: a follower
  // whose whole log is below the leader's log start (Kafka's
  // truncateFullyAndStartAt). An empty log may also start lower: the
  // leader's log start fell inside a batch (DeleteRecords), and a follower
  // that started there must take the whole batch, from its base offset. Leader epochs and producer
  // state go with the records; the follower learns them again from what it fetches. With
  // `leader_epoch` >= 0 the epoch history starts with that epoch at
  // `offset` (the epoch of the leader's records there), so this replica can
  // tell a follower whose history reaches `offset` that it agrees.
  virtual Status TruncateFullyAndStartAt(Offset offset,
                                         LeaderEpoch leader_epoch = kNoLeaderEpoch) = 0;

  // Reads from `offset` up to `max_bytes` of whole batches, never past
  // `max_offset` (exclusive; the high watermark). When `min_one_batch` the
  // first batch is returned even if bigger than max_bytes. Returns kOutOfRange
  // when offset < log start or offset > log end.
  virtual Result<ReadResult> Read(Offset offset, int32_t max_bytes, Offset max_offset,
                                  bool min_one_batch) const = 0;

  // The same batches as Read, left in their segment file: the fetch path
  // sends them with sendfile(2). `records` stays empty.
  virtual Result<RegionReadResult> ReadRegion(Offset offset, int32_t max_bytes, Offset max_offset,
                                              bool min_one_batch) const = 0;

  virtual Offset log_start_offset() const = 0;
  virtual Offset log_end_offset() const = 0;  // next offset to be assigned

  // --- Transactions ---
  // The partition's high watermark, told by its Partition whenever it moves:
  // transactions completed below it stop holding back the last stable offset.
  virtual void SetHighWatermark(Offset high_watermark) = 0;
  // Kafka's last stable offset: below it every transaction is decided and
  // its marker committed, and a read_committed consumer reads no further.
  // min(first offset of an open or uncommitted-complete transaction, high
  // watermark).
  virtual Offset last_stable_offset() const = 0;
  // The aborted transactions a read of [from, upper) must tell a
  // read_committed consumer about (Kafka's collectAbortedTransactions): from
  // the segment holding `from` on, until an entry's last stable offset
  // reaches `upper`. Over-reporting is harmless; none is ever left out.
  virtual std::vector<AbortedTxn> AbortedTransactions(Offset from, Offset upper) const = 0;
  // Every producer this replica has state for (Kafka's DescribeProducers).
  virtual std::vector<ProducerView> ActiveProducers() const = 0;

  // Earliest offset whose timestamp >= ts (ListOffsets by time); nullopt when none.
  virtual std::optional<TimestampOffset> OffsetForTimestamp(int64_t ts) const = 0;
  // Largest timestamp in the log and the offset carrying it (ListOffsets -3).
  virtual TimestampOffset MaxTimestamp() const = 0;

  // OffsetForLeaderEpoch: {epoch, end offset} of the largest epoch <= `epoch`
  // from leader-epoch-checkpoint; {kNoLeaderEpoch, kNoOffset} when unknown.
  virtual std::pair<LeaderEpoch, Offset> EndOffsetForEpoch(LeaderEpoch epoch) const = 0;
  virtual LeaderEpoch latest_epoch() const = 0;

  // DeleteRecords: moves the log start offset up (persisted), deleting whole
  // segments below it. kOutOfRange if offset > log end.
  virtual Status DeleteRecordsBefore(Offset offset) = 0;

  // Applies retention.ms / retention.bytes and segment.ms rolling; returns the
  // number of segments deleted. Never deletes the active segment.
  virtual Result<int> EnforceRetention() = 0;

  virtual void UpdateConfig(const LogConfig& config) = 0;

  // fsyncs what was appended (also done per flush.messages/flush.ms).
  virtual Status Flush() = 0;
  // Flushes when there is unflushed data and flush.ms has passed since the
  // last flush (the periodic check for logs that stopped receiving appends).
  virtual Result<bool> FlushIfDue() = 0;  // true when it flushed
  // Flushes, writes a producer snapshot and marks a clean shutdown.
  virtual Status Close() = 0;
  // Closes and removes the directory (topic deletion).
  virtual Status Delete() = 0;

  virtual std::filesystem::path dir() const = 0;
  virtual int64_t size_bytes() const = 0;
  // About how many bytes of the local log hold offsets [from, to): whole
  // segments exactly, a segment partly in range by its share of offsets
  // (progress estimates, not accounting).
  virtual int64_t ApproximateBytesBetween(Offset from, Offset to) const {
    (void)from;
    (void)to;
    return 0;
  }
  virtual int segment_count() const = 0;

  // --- Log compaction, driven by storage::LogCleaner (cleaner.h). ---
  // The cleanable section at time `now` (ms). Cheap: no record is read.
  virtual CleaningEstimate EstimateCleaning(int64_t now) const = 0;
  // One cleaning pass (Kafka's Cleaner.doClean): dedupes the dirty section
  // into `map`, rewrites the non-active segments from the log start up to
  // where the map reached, swaps them in crash-safely and advances the
  // cleaner checkpoint. Runs without the log's mutex except for the swaps;
  // appends and reads continue meanwhile. kUnavailable when another pass is
  // running on this log, kShuttingDown when the log is closed or deleted
  // during the pass, kCorrupt for unreadable batches.
  virtual Result<CleaningResult> Clean(OffsetMap& map, int64_t now) = 0;
  // The persisted cleaner checkpoint (first dirty offset); kNoOffset when none.
  virtual Offset cleaner_checkpoint() const = 0;

  // --- Tiered storage, driven by tiered::RemoteLogManager. ---
  // Rolled segments (every one but the active), oldest first.
  virtual std::vector<SegmentSummary> RolledSegments() const { return {}; }
  // Offsets below `offset` are copied to remote storage (COPY_FINISHED), so
  // local retention may delete segments wholly below it. Only moves up.
  virtual void SetRemoteCopiedOffset(Offset offset) { (void)offset; }
  // The base offset of the active segment: where a new replica of a tiered
  // partition starts its log (the records below are, or will be, in remote
  // storage).
  virtual Offset active_segment_base_offset() const { return log_start_offset(); }
  // Rolls the active segment now if it holds records (so it is uploaded
  // and a new replica starting at the next one copies nothing of it).
  virtual Status Roll() { return Status::Ok(); }
  // After TruncateFullyAndStartAt with a leader epoch (a replica started at
  // its leader's active segment): the offset its producer state starts at,
  // kNoOffset when it is complete. Persisted until MergeProducerSnapshot.
  virtual Offset producer_state_gap() const { return kNoOffset; }
  // Completes the producer state with a snapshot (Kafka's format) taken at
  // `snapshot_offset`, which must lie in [producer_state_gap(), log end]:
  // producers this log does not know are taken from it. The state is
  // snapshotted at the log end and the gap cleared. kInvalidArgument
  // outside that range or without a gap.
  virtual Status MergeProducerSnapshot(ByteView snapshot, Offset snapshot_offset) {
    (void)snapshot;
    (void)snapshot_offset;
    return Status::Ok();
  }
  // The leader-epoch entries (epoch, start offset) known to the log.
  virtual std::vector<std::pair<LeaderEpoch, Offset>> LeaderEpochEntries() const { return {}; }
  // Called (under the log's lock: keep it short, never call back into the
  // log) after each roll, so uploads start at once instead of at the next
  // poll. Replaces the previous listener; an empty function removes it.
  virtual void SetRollListener(std::function<void()> listener) { (void)listener; }
};

}  // namespace strata::storage
