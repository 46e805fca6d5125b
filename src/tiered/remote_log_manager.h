#pragma once
// RemoteLogManager: tiered storage (KIP-405) for the broker's partitions with
// remote.storage.enable. It
//  - uploads every rolled segment (a scan thread queues new rolled segments
//    within scan_interval_ms; a copier pool uploads them, one partition's
//    segments in parallel once its backlog exceeds parallel_lag_segments,
//    always committed to the manifest in offset order),
//  - keeps a per-partition manifest.json (RemoteManifest) in the store,
//  - tells the Log how far it is copied (so local retention deletes only
//    uploaded segments),
//  - expires remote segments by retention.ms / retention.bytes over local +
//    remote (DELETE_STARTED -> objects deleted -> DELETE_FINISHED), moving the
//    log start offset, and
//  - serves reads below the local log start from remote storage (blocking:
//    callers run them on reader_pool()), the .log objects through an on-disk
//    chunk cache with read-ahead (RemoteChunkCache).
// When the store is down uploads back off and resume in order; nothing is
// deleted locally that is not COPY_FINISHED.
//
// Thread-safety: every public method is safe from any thread. One mutex per
// partition guards its manifest and queues; the partition map has its own.
#include <asio/thread_pool.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/result.h"
#include "base/topic_partition.h"
#include "cluster/metadata_store.h"
#include "storage/log.h"
#include "tiered/circuit_breaker.h"
#include "tiered/remote_chunk_cache.h"
#include "tiered/remote_manifest.h"
#include "tiered/remote_stack.h"
#include "tiered/remote_storage.h"
#include "tiered/resilient_storage.h"

namespace strata::tiered {

struct RemoteLogManagerOptions {
  int copier_threads = 2;                 // remote.log.manager.copier.thread.pool.size
  int reader_threads = 2;                 // remote.log.reader.threads
  int parallel_lag_segments = 4;          // strata.remote.upload.parallel.lag.segments
  int64_t retention_interval_ms = 30000;  // remote.log.manager.task.interval.ms
  // Rolls wake the scan at once (Log::SetRollListener); this poll only paces
  // retries after failures and catches anything missed.
  int64_t scan_interval_ms = 1000;
  int64_t retry_backoff_ms = 500;  // after a failed upload or manifest write (doubles)
  int64_t max_retry_backoff_ms = 5000;
  bool register_metrics = true;  // export gauges/counters to metrics::Global()
  // On-disk chunk cache of remote .log objects (RemoteChunkCache).
  uint64_t cache_bytes = uint64_t{1} << 30;        // strata.remote.cache.bytes; 0: no cache
  uint64_t cache_chunk_bytes = uint64_t{4} << 20;  // strata.remote.cache.chunk.bytes
  int readahead_chunks = 2;                        // strata.remote.cache.readahead.chunks
  std::string cache_dir;                           // strata.remote.cache.dir; empty: no cache
};

// Identifies a tiered partition.
struct RemotePartitionId {
  std::string topic;
  int32_t partition = 0;
  std::string topic_id;  // base64 text form
  TopicPartition tp() const { return {topic, partition}; }
  std::string name() const { return tp().ToString(); }  // for log lines
};

// Per-partition numbers for metrics and tests.
struct RemotePartitionStats {
  bool manifest_loaded = false;
  int64_t remote_log_start = -1;
  int64_t remote_log_end = -1;
  int64_t lag_segments = 0;  // rolled but not COPY_FINISHED
  int64_t lag_bytes = 0;
  int64_t lag_seconds = 0;  // age of the oldest rolled, un-uploaded segment's newest record
  int64_t remote_segments = 0;
  int64_t remote_bytes = 0;
};

struct RemoteLogCounters {
  uint64_t uploads = 0;          // segments COPY_FINISHED
  uint64_t upload_failures = 0;  // failed upload attempts (retried)
  uint64_t bytes_uploaded = 0;   // .log bytes of finished uploads
  uint64_t manifest_writes = 0;
  uint64_t manifest_write_failures = 0;
  uint64_t remote_reads = 0;
  uint64_t remote_read_failures = 0;
  uint64_t remote_read_bytes = 0;
  uint64_t segments_expired = 0;  // remote segments DELETE_FINISHED
};

class RemoteLogManager {
 public:
  // `storage.storage` is the store used; its layer pointers (breaker, retry,
  // hedge) may be null (tests pass a bare backend).
  RemoteLogManager(RemoteLogManagerOptions options, ResilientStorage storage, Clock* clock);
  ~RemoteLogManager();

  // Opens `uri` wrapped as `stack` says: the standard decorator stack
  // (MakeResilientStorage) with its settings, plus test fault injection.
  static Result<std::unique_ptr<RemoteLogManager>> Open(const std::string& uri,
                                                        const std::string& user,
                                                        RemoteLogManagerOptions options,
                                                        RemoteStackOptions stack, Clock* clock);

  // Where the remote log offsets of each partition are also kept (optional;
  // call before AddPartition).
  void AttachMetadataStore(cluster::MetadataStore* store) { metadata_ = store; }

  void Start();  // starts the scan and copier threads
  void Stop();   // waits for in-flight uploads; idempotent

  // Registers (or re-configures) a tiered partition. The manifest is loaded
  // by the scan thread (retried while the store is down). `committed_end`
  // (the leader's high watermark) bounds what is uploaded: only rolled
  // segments wholly below it, so remote storage never holds a record a new
  // leader may not have; empty: the log end (one broker). `leader_epoch`
  // is this broker's leadership (-1: a single broker): it writes
  // manifest-<epoch>.json and saves the offsets in the metadata store under
  // that epoch, after taking the remote log over from the previous leader
  // (ClaimRemoteLog); once a newer leader has, it stops. Registering again
  // with another epoch takes it over again.
  void AddPartition(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                    const storage::LogConfig& config, std::function<int64_t()> committed_end = {},
                    int32_t leader_epoch = -1);
  // Registers (or re-configures) a partition this broker follows, for reads
  // only (KIP-392: consumers may fetch from a follower): it never uploads,
  // writes a manifest, saves offsets or deletes anything. Its log start and
  // remote end follow the offsets the leader saved in the metadata store,
  // and Read loads the manifest those offsets name (the current leader's)
  // again whenever they moved. A leader registered here stops tiering and
  // only reads; AddPartition later takes the partition over again.
  void AddReader(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                 const storage::LogConfig& config);
  // Stops tiering the partition; with delete_remote its remote directory is
  // removed (topic deletion) in the background: the directory is first
  // recorded as pending in the metadata store, and retried every retention
  // interval until the store answers, so an outage leaves no orphans.
  void RemovePartition(const TopicPartition& tp, bool delete_remote);
  // Tries every pending remote directory deletion once; returns how many
  // are still pending.
  size_t DeletePendingDirsOnce();
  size_t pending_dir_count() const;
  // Deletes the remote directories of partitions [0, partitions) of a
  // deleted topic, now, on the calling thread (the controller's cleaner);
  // idempotent. Stops at the first failure, which it returns.
  Status DeleteTopicData(const std::string& topic, const std::string& topic_id_base64,
                         int32_t partitions);
  bool IsTiered(const TopicPartition& tp) const;
  // Registered by AddReader (and not taken over since).
  bool IsReader(const TopicPartition& tp) const;

  // The partition's log start offset: the first remote offset when remote
  // segments exist, else `local_start`.
  int64_t LogStartOffset(const TopicPartition& tp, int64_t local_start) const;
  // Last offset in remote storage (ListOffsets -5); -1 when none.
  int64_t RemoteLogEndOffset(const TopicPartition& tp) const;
  // DeleteRecords: the partition's log start becomes at least `offset` at once
  // (LogStartOffset), and remote segments wholly below it are deleted soon on
  // the reader pool (DELETE_STARTED -> objects deleted -> DELETE_FINISHED;
  // retried by the retention task if the store is down). kNotFound if the
  // partition is not tiered.
  Status DeleteRecordsBefore(const TopicPartition& tp, int64_t offset);
  // Blocking read of whole batches at `offset` from remote storage. Errors:
  // kNotFound (not tiered / no remote segment holds it), kUnavailable when the
  // store's breaker is open, other store errors.
  Result<Bytes> Read(const TopicPartition& tp, int64_t offset, int32_t max_bytes);
  asio::thread_pool& reader_pool() { return reader_pool_; }

  // One round of queueing + dispatching (the scan thread's work); for tests.
  void ScanOnce();
  // One round of remote retention; returns remote segments expired.
  int EnforceRetentionOnce();
  // Blocks until every rolled segment of every partition is COPY_FINISHED
  // or `timeout_ms` passes; returns whether all were.
  bool WaitForUploads(int64_t timeout_ms);

  RemotePartitionStats PartitionStats(const TopicPartition& tp) const;
  // The partitions this broker tiers (readers left out: they upload nothing).
  std::vector<std::pair<TopicPartition, RemotePartitionStats>> AllPartitionStats() const;
  RemoteLogCounters counters() const;
  BreakerState breaker_state() const;
  ResilienceCounters resilience_counters() const;
  RemoteStorage& store() { return *layers_.storage; }
  ChunkCacheCounters cache_counters() const { return cache_->counters(); }
  RemoteChunkCache& cache() { return *cache_; }

 private:
  struct TieredPartition;
  struct Inflight;
  std::shared_ptr<TieredPartition> FindPartition(const TopicPartition& tp) const;
  void Register(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                const storage::LogConfig& config, std::function<int64_t()> committed_end,
                int32_t leader_epoch, bool reader);
  // Reader: the offsets the leader saved, for LogStartOffset (scan thread).
  void FollowSavedOffsets(TieredPartition& p);
  // Reader: loads the manifest the saved offsets name when they moved since
  // the read view was loaded, or `force`d (a read's thread; never takes p.mu).
  Status RefreshReadView(TieredPartition& p, bool force);
  // Read's work against the partition's read view.
  Result<Bytes> ReadFromView(TieredPartition& p, int64_t offset, int32_t max_bytes);
  std::vector<std::shared_ptr<TieredPartition>> Partitions() const;
  void ScanPartition(const std::shared_ptr<TieredPartition>& p);
  bool LoadManifestLocked(TieredPartition& p);
  // Publishes the loaded manifest's offsets to the read view and the atomics,
  // and saves them (SaveOffsetsLocked).
  void PublishOffsetsLocked(TieredPartition& p);
  // Once the manifest is written (not dirty), saves its offsets (with the
  // DeleteRecords floor and the leader epoch) in the metadata store when
  // they changed; only then may local retention drop what they cover.
  void SaveOffsetsLocked(TieredPartition& p);
  cluster::RemoteLogOffsets OffsetsLocked(const TieredPartition& p) const;
  void FenceLocked(TieredPartition& p, const std::string& why);
  // True (and fenced from then on) once a leader of a newer epoch took the
  // remote log over.
  bool SupersededLocked(TieredPartition& p);
  // Takes the remote log over for p's leader epoch: writes the loaded
  // manifest under its name and claims the saved offsets.
  bool ClaimLocked(TieredPartition& p, const std::optional<cluster::RemoteLogOffsets>& seen);
  Status WriteManifestLocked(TieredPartition& p);
  // Completes the producer state of a log started at its leader's active
  // segment from the remote snapshot below its start, once uploaded
  // (remote_producer_state.cc).
  void RestoreProducerStateLocked(TieredPartition& p);
  void QueueRolledLocked(TieredPartition& p);
  void CommitLocked(TieredPartition& p);
  void DispatchLocked(const std::shared_ptr<TieredPartition>& p);
  void RunUpload(std::shared_ptr<TieredPartition> p, int64_t base);
  int ExpirePartition(TieredPartition& p);
  bool DeleteSegmentLocked(TieredPartition& p, RemoteSegment& seg);
  void ScanLoop();
  void RequestScan();
  // Backs the partition off after a failure (exponential, capped); true when
  // the failure is worth logging (the first, then every 20th).
  bool BackOffLocked(TieredPartition& p);
  void RegisterMetrics();
  void RegisterCacheMetrics();  // after RegisterMetrics (uses metrics_hook_)

  struct MetricsHook;
  RemoteLogManagerOptions options_;
  cluster::MetadataStore* metadata_ = nullptr;
  mutable std::mutex deletions_mu_;  // guards pending_dirs_ (never held across store calls)
  std::set<std::string> pending_dirs_;
  std::mutex deletion_pass_mu_;  // one DeletePendingDirsOnce at a time
  ResilientStorage layers_;      // layers_.storage is the store; the rest are for counters
  Clock* clock_;

  mutable std::mutex map_mu_;
  std::map<TopicPartition, std::shared_ptr<TieredPartition>> partitions_;

  // Copier pool: a plain queue of upload jobs.
  std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> copiers_;
  std::thread scanner_;
  std::mutex scan_mu_;
  std::condition_variable scan_cv_;
  bool stopping_ = false;        // guarded by pool_mu_ and scan_mu_ (set under both)
  bool scan_requested_ = false;  // guarded by scan_mu_: a log rolled
  bool started_ = false;
  asio::thread_pool reader_pool_;
  // DeleteRecords and topic deletion: their store calls can block for as long
  // as the store is slow or down, which must not hold threads fetches need.
  asio::thread_pool deletion_pool_;

  std::atomic<uint64_t> uploads_{0}, upload_failures_{0}, bytes_uploaded_{0};
  std::atomic<uint64_t> manifest_writes_{0}, manifest_write_failures_{0};
  std::atomic<uint64_t> reads_{0}, read_failures_{0}, read_bytes_{0}, expired_{0};
  // strata_remote_read_seconds: one remote read (index and data), cache
  // hits included; owned by the process-wide registry.
  metrics::Histogram& read_seconds_ = metrics::Global().GetHistogram(
      "strata_remote_read_seconds",
      "Time to serve one fetch from remote storage (chunk-cache hits included)", {},
      metrics::LatencyBuckets());
  std::shared_ptr<MetricsHook> metrics_hook_;
  // Declared after layers_: destroyed first, so read-ahead never outlives the store.
  std::unique_ptr<RemoteChunkCache> cache_;
};

}  // namespace strata::tiered
