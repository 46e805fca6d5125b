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
                              LeaderEpoch leader_epoch) override;
  Result<AppendResult> AppendAsFollower(MutableByteView batches,
                                        const std::vector<BatchInfo>& infos) override;
  Status TruncateTo(int64_t offset) override;
  Status TruncateFullyAndStartAt(int64_t offset,
                                 LeaderEpoch leader_epoch = kNoLeaderEpoch) override;
  Result<ReadResult> Read(int64_t offset, int32_t max_bytes, int64_t max_offset,
                          bool min_one_batch) const override;
  Result<RegionReadResult> ReadRegion(int64_t offset, int32_t max_bytes, int64_t max_offset,
                                      bool min_one_batch) const override;
  int64_t log_start_offset() const override { return log_start_.load(); }
  int64_t log_end_offset() const override { return leo_.load(); }
  std::optional<TimestampOffset> OffsetForTimestamp(int64_t ts) const override;
  TimestampOffset MaxTimestamp() const override;
  std::pair<LeaderEpoch, int64_t> EndOffsetForEpoch(LeaderEpoch epoch) const override;
  LeaderEpoch latest_epoch() const override;
  Status DeleteRecordsBefore(int64_t offset) override;
  Result<int> EnforceRetention() override;
  void UpdateConfig(const LogConfig& config) override;
  Status Flush() override;
  Result<bool> FlushIfDue() override;
  Status Close() override;
  Status Delete() override;
  std::filesystem::path dir() const override { return dir_; }
  int64_t size_bytes() const override;
  int64_t ApproximateBytesBetween(int64_t from, int64_t to) const override;
  int segment_count() const override;
  CleaningEstimate EstimateCleaning(int64_t now) const override;
  Result<CleaningResult> Clean(OffsetMap& map, int64_t now) override;
  int64_t cleaner_checkpoint() const override { return cleaner_checkpoint_.load(); }
  std::vector<SegmentSummary> RolledSegments() const override;
  int64_t active_segment_base_offset() const override;
  int64_t producer_state_gap() const override { return producer_state_gap_.load(); }
  Status MergeProducerSnapshot(ByteView snapshot, int64_t snapshot_offset) override;
  Status Roll() override;
  void SetRemoteCopiedOffset(int64_t offset) override;
  void SetRollListener(std::function<void()> listener) override;
  std::vector<std::pair<LeaderEpoch, int64_t>> LeaderEpochEntries() const override;

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
  using SegmentMap = std::map<int64_t, std::shared_ptr<Segment>>;

  LogImpl(std::filesystem::path dir, const LogConfig& config, Clock* clock, Env* env);

  // What Read and ReadRegion return: a span of one segment's .log (empty
  // when there is nothing to read).
  struct ReadSpan {
    std::shared_ptr<Segment> segment;
    uint64_t start = 0, end = 0;
    int64_t log_start_offset = 0, log_end_offset = 0;
  };
  Result<ReadSpan> Locate(int64_t offset, int32_t max_bytes, int64_t max_offset,
                          bool min_one_batch) const;

  // log_load.cc
  Status LoadLocked();
  Status RemoveStrayFiles();
  Status OpenSegments();
  Status RecoverSegments(bool clean);
  Status FixLogStartAfterLoad();
  Status LoadProducerState();
  Status CompleteInterruptedSwaps();
  Status CompleteSwap(int64_t base);
  void LoadCleanerCheckpoint();

  // log_impl.cc
  Status SplitBatches(MutableByteView batches, const std::vector<BatchInfo>& infos,
                      std::vector<MutableByteView>* views,
                      std::vector<protocol::BatchHeader>* headers) const;
  Result<std::optional<AppendResult>> AssignOffsets(std::vector<protocol::BatchHeader>* headers,
                                                    ProducerStateManager::Staged* staged) const;
  void StampBatches(const std::vector<MutableByteView>& views,
                    std::vector<protocol::BatchHeader>* headers, LeaderEpoch leader_epoch,
                    int64_t now) const;
  bool ShouldRoll(int64_t append_bytes, int64_t max_offset, int64_t now) const;
  // log_replica.cc: one run of replicated batches that fits a segment.
  Result<AppendResult> AppendRunAsFollowerLocked(MutableByteView batches,
                                                 const std::vector<BatchInfo>& infos);
  Status RollLocked();
  Status FlushLocked();
  Status MaybeFlushLocked(int64_t records, int64_t now);

  // log_replica.cc: TruncateFullyAndStartAt of an empty log at an offset
  // below its end (the batch fetched next brings its epoch).
  Status RestartEmptyLowerLocked(int64_t offset);
  // log_retention.cc
  Result<int> DeleteSegmentsBelowLocked(int64_t offset);
  Status DeleteFirstSegmentLocked(const char* reason);
  Status MoveLogStartLocked(int64_t offset);
  Result<int> EnforceSizeAndTimeLocked(int64_t now);
  bool DeletableByRetentionLocked() const;

  // cleaner_log.cc
  CleaningEstimate PlanCleaningLocked(int64_t now, CleanPassInput* input) const;
  int64_t CompactionDelayLocked(int64_t first_dirty, int64_t now) const;
  Result<CleaningResult> RunPass(CleanPass& pass);
  Result<bool> SwapInCleaned(const SegmentGroup& group, int64_t base);
  Status SwapFilesLocked(const SegmentGroup& group, int64_t base);
  int64_t ProducerLastOffset(int64_t producer_id) const;

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
  std::atomic<int64_t> log_start_{0};
  std::atomic<int64_t> leo_{0};
  ProducerStateManager producers_;
  std::atomic<int64_t> producer_state_gap_{-1};  // see Log::producer_state_gap
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
  std::atomic<int64_t> cleaner_checkpoint_{-1};
  // CleaningResult::earliest_delete_horizon of the last pass (in memory: after
  // a restart the next pass that covers the tombstones finds it again).
  std::atomic<int64_t> earliest_delete_horizon_{-1};
  int swap_crash_step_ = -1;  // InjectSwapCrashForTest
  // Tiered storage: offsets below this are in remote storage (-1: none).
  std::atomic<int64_t> remote_copied_{-1};
};

}  // namespace strata::storage
