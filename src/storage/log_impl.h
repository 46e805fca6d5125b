#pragma once
// LogImpl: the Log implementation. Owns the ordered map of segments (the last
// one is active), the log start / end offsets, producer state, the leader
// epoch cache and the flush policy. Its methods are split by concern:
//   log_impl.cc        append, read, roll, flush, close
//   log_load.cc        Open: segment loading, recovery, producer state rebuild
//   log_retention.cc   retention, DeleteRecords, segment deletion
//   log_timestamps.cc  ListOffsets by timestamp / max timestamp
//   cleaner_log.cc     compaction: the cleanable range, a cleaning pass and
//                      the crash-safe segment swap (swap recovery: log_load.cc)
//
// Thread-safety: one mutex guards all state. Read holds it only to pick the
// segment and the index position; it then preads without it (bytes below a
// size observed under the lock never change, and a segment's fds outlive its
// deletion while a reader holds its shared_ptr). The offsets are atomics so
// that their getters need no lock. A cleaning pass holds clean_mu_ (one
// pass per log) and takes mu_ only to plan and to swap segments in.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "storage/cleaner_pass.h"
#include "storage/leader_epoch_cache.h"
#include "storage/log.h"
#include "storage/producer_state.h"
#include "storage/segment.h"

namespace strata::storage {

class LogImpl final : public Log {
 public:
  // Snapshots kept besides those Kafka would need (newest first).
  static constexpr size_t kKeptSnapshots = 3;

  static Result<std::unique_ptr<LogImpl>> Load(const std::filesystem::path& dir,
                                               const LogConfig& config, Clock* clock, Env* env);
  // Does not flush or mark a clean shutdown: an un-Closed log is recovered
  // like a crash on the next Open.
  ~LogImpl() override = default;

  Result<AppendResult> Append(MutableByteView batches, const std::vector<BatchInfo>& infos,
                              LeaderEpoch leader_epoch, AppendOrigin origin) override;
  Result<AppendResult> AppendAsFollower(MutableByteView batches,
                                        const std::vector<BatchInfo>& infos) override;
  TxnVerification StartTxnVerification(int64_t producer_id, int16_t producer_epoch) override;
  size_t ExpireProducers(int64_t expiration_ms) override;
  Status TruncateTo(Offset offset) override;
  Status TruncateFullyAndStartAt(Offset offset, LeaderEpoch leader_epoch = kNoLeaderEpoch) override;
  Result<ReadResult> Read(Offset offset, int32_t max_bytes, Offset max_offset,
                          bool min_one_batch) const override;
  Result<RegionReadResult> ReadRegion(Offset offset, int32_t max_bytes, Offset max_offset,
                                      bool min_one_batch) const override;
  Offset log_start_offset() const override { return log_start_.load(); }
  Offset log_end_offset() const override { return leo_.load(); }
  void SetHighWatermark(Offset high_watermark) override;
  Offset last_stable_offset() const override { return lso_.load(); }
  std::vector<AbortedTxn> AbortedTransactions(Offset from, Offset upper) const override;
  std::vector<ProducerView> ActiveProducers() const override;
  std::optional<TimestampOffset> OffsetForTimestamp(int64_t ts) const override;
  TimestampOffset MaxTimestamp() const override;
  std::pair<LeaderEpoch, Offset> EndOffsetForEpoch(LeaderEpoch epoch) const override;
  LeaderEpoch latest_epoch() const override;
  Status DeleteRecordsBefore(Offset offset) override;
  Result<int> EnforceRetention() override;
  void UpdateConfig(const LogConfig& config) override;
  Status Flush() override;
  Result<bool> FlushIfDue() override;
  Status Close() override;
  Status Delete() override;
  std::filesystem::path dir() const override { return dir_; }
  int64_t size_bytes() const override;
  int64_t ApproximateBytesBetween(Offset from, Offset to) const override;
  int segment_count() const override;
  CleaningEstimate EstimateCleaning(int64_t now) const override;
  Result<CleaningResult> Clean(OffsetMap& map, int64_t now) override;
  Offset cleaner_checkpoint() const override { return cleaner_checkpoint_.load(); }
  std::vector<SegmentSummary> RolledSegments() const override;
  Offset active_segment_base_offset() const override;
  Offset producer_state_gap() const override { return producer_state_gap_.load(); }
  Status MergeProducerSnapshot(ByteView snapshot, Offset snapshot_offset) override;
  Status Roll() override;
  void SetRemoteCopiedOffset(Offset offset) override;
  void SetRollListener(std::function<void()> listener) override;
  std::vector<std::pair<LeaderEpoch, Offset>> LeaderEpochEntries() const override;

  // Steps of the compaction swap, for crash tests.
  enum class SwapStep {
    kCleanedWritten = 0,  // <base>.*.cleaned complete
    kRenamedToSwap,       // <base>.*.swap, old segments untouched
    kFirstOldDeleted,     // the first replaced segment renamed to .deleted
    kAllOldDeleted,       // every replaced segment renamed to .deleted
    kSwapLive,            // .swap renamed to the live names, .deleted files remain
  };
  // Test hook: the next swap stops right after `step` as if the process had
  // died there (files are left as they are; the object must be discarded
  // without Close()).
  void InjectSwapCrashForTest(SwapStep step) {
    std::lock_guard lock(mu_);
    swap_crash_step_ = static_cast<int>(step);
  }

 private:
  using SegmentMap = std::map<Offset, std::shared_ptr<Segment>>;

  LogImpl(std::filesystem::path dir, const LogConfig& config, Clock* clock, Env* env);

  // What Read and ReadRegion return: a span of one segment's .log (empty
  // when there is nothing to read).
  struct ReadSpan {
    std::shared_ptr<Segment> segment;
    uint64_t start = 0, end = 0;
    Offset log_start_offset, log_end_offset;
  };
  Result<ReadSpan> Locate(Offset offset, int32_t max_bytes, Offset max_offset,
                          bool min_one_batch) const;

  // log_load.cc
  Status LoadLocked();
  Status RemoveStrayFiles();
  Status OpenSegments();
  Status RecoverSegments(bool clean);
  Status FixLogStartAfterLoad();
  Status LoadProducerState();
  Status CompleteInterruptedSwaps();
  Status CompleteSwap(Offset base);
  void LoadCleanerCheckpoint();

  // log_impl.cc
  Status SplitBatches(MutableByteView batches, const std::vector<BatchInfo>& infos,
                      std::vector<MutableByteView>* views,
                      std::vector<protocol::BatchHeader>* headers) const;
  Result<std::optional<AppendResult>> AssignOffsets(const std::vector<MutableByteView>& views,
                                                    std::vector<protocol::BatchHeader>* headers,
                                                    const std::vector<BatchInfo>& infos,
                                                    AppendOrigin origin,
                                                    ProducerStateManager::Staged* staged) const;
  void StampBatches(const std::vector<MutableByteView>& views,
                    std::vector<protocol::BatchHeader>* headers, LeaderEpoch leader_epoch,
                    int64_t now) const;
  bool ShouldRoll(int64_t append_bytes, Offset max_offset, int64_t now) const;
  // log_replica.cc: one run of replicated batches that fits a segment.
  Result<AppendResult> AppendRunAsFollowerLocked(MutableByteView batches,
                                                 const std::vector<BatchInfo>& infos);
  Status RollLocked();
  Status FlushLocked();
  // log_txn.cc: transactions.
  // The producer state's view of the batch at `batch` (its marker parsed
  // when it is a control batch).
  static Result<ProducerBatch> ProducerBatchOf(const protocol::BatchHeader& header, ByteView batch);
  // Adds the aborted ones of `completed` to `segment`'s .txnindex (where
  // their markers are). A failed write keeps every later producer snapshot
  // from being written, so the next Open replays the marker and rebuilds
  // the entry.
  Status IndexAbortedLocked(Segment& segment, const std::vector<CompletedTxn>& completed);
  // The producer snapshot at `offset`, unless an index entry was lost.
  Status WriteProducerSnapshotLocked(Offset offset);
  void UpdateLastStableOffsetLocked();
  Status MaybeFlushLocked(int64_t records, int64_t now);

  // log_replica.cc: TruncateFullyAndStartAt of an empty log at an offset
  // below its end (the batch fetched next brings its epoch).
  Status RestartEmptyLowerLocked(Offset offset);
  // log_retention.cc
  Result<int> DeleteSegmentsBelowLocked(Offset offset);
  Status DeleteFirstSegmentLocked(const char* reason);
  Status MoveLogStartLocked(Offset offset);
  Result<int> EnforceSizeAndTimeLocked(int64_t now);
  bool DeletableByRetentionLocked() const;

  // cleaner_log.cc
  CleaningEstimate PlanCleaningLocked(int64_t now, CleanPassInput* input) const;
  int64_t CompactionDelayLocked(Offset first_dirty, int64_t now) const;
  Result<CleaningResult> RunPass(CleanPass& pass);
  Result<bool> SwapInCleaned(const SegmentGroup& group, const CleanedGroup& cleaned);
  Status SwapFilesLocked(const SegmentGroup& group, Offset base);
  // <base>.txnindex.cleaned: the aborted transactions the pass kept.
  Status WriteCleanedTxnIndexLocked(const CleanedGroup& cleaned);
  // What of producer `producer_id` the cleaner must keep (CleanPassHooks).
  struct ProducerLast {
    Offset last_data_offset = kNoOffset;
    int16_t epoch = -1;
  };
  std::optional<ProducerLast> LastOfProducer(int64_t producer_id) const;

  Segment& active() const { return *segments_.rbegin()->second; }
  int64_t segment_bytes_limit() const;

  const std::filesystem::path dir_;
  const std::string label_;  // dir name, for log lines
  Clock* const clock_;
  // Every checkpoint, snapshot, marker, removal and directory sync of the log
  // goes through it; segment data is written through storage::File, whose
  // descriptor sendfile(2) needs.
  Env* const env_;
  mutable std::mutex mu_;
  LogConfig config_;
  SegmentMap segments_;
  std::atomic<Offset> log_start_{Offset(0)};
  std::atomic<Offset> leo_{Offset(0)};
  ProducerStateManager producers_;
  Offset high_watermark_{0};                           // as the partition last told it; under mu_
  std::atomic<Offset> lso_{Offset(0)};                 // see last_stable_offset
  bool txn_index_lost_ = false;                        // see IndexAbortedLocked
  std::atomic<Offset> producer_state_gap_{kNoOffset};  // see Log::producer_state_gap
  LeaderEpochCache epochs_;
  std::function<void()> roll_listener_;
  int64_t unflushed_records_ = 0;
  int64_t last_flush_ms_ = 0;
  bool closed_ = false;
  bool io_failed_ = false;  // a write failed half-way; the next Open must recover
  bool fresh_ = false;      // Open found no segment (for the open log line)
  std::string producer_load_note_;
  // Compaction.
  std::mutex clean_mu_;                     // held for a whole cleaning pass
  std::atomic<bool> stop_cleaning_{false};  // set by Close/Delete to abort a pass
  std::atomic<Offset> cleaner_checkpoint_{kNoOffset};
  // CleaningResult::earliest_delete_horizon of the last pass (in memory: after
  // a restart the next pass that covers the tombstones finds it again).
  std::atomic<int64_t> earliest_delete_horizon_{-1};
  int swap_crash_step_ = -1;  // InjectSwapCrashForTest
  // Tiered storage: offsets below this are in remote storage (kNoOffset: none).
  std::atomic<Offset> remote_copied_{kNoOffset};
};

}  // namespace strata::storage
