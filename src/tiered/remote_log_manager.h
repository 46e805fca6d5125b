#pragma once
// RemoteLogManager: tiered storage (KIP-405) for the broker's partitions with
// remote.storage.enable; what the rest of the broker calls. It keeps one
// TieredPartition per registered partition (its manifest, saved offsets and
// read view) and runs a scan thread that loads manifests, takes remote logs
// over for new leaderships and hands rolled segments to the RemoteCopier
// (uploads) and, every retention interval, partitions to the
// RemoteRetention (expiry, DeleteRecords, deleted topics). It serves reads
// below the local log start from remote storage (blocking: callers run them
// on reader_pool()), the .log objects through an on-disk chunk cache with
// read-ahead (RemoteChunkCache). When the store is down uploads back off
// and resume in order; nothing is deleted locally that is not COPY_FINISHED
// and saved where every replica sees it.
//
// Thread-safety: every public method is safe from any thread. One mutex per
// partition guards its manifest and queues; the partition map has its own.
#include <asio/thread_pool.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
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
#include "tiered/read_budget.h"
#include "tiered/remote_chunk_cache.h"
#include "tiered/remote_manifest.h"
#include "tiered/remote_stack.h"
#include "tiered/remote_storage.h"
#include "tiered/resilient_storage.h"
#include "tiered/tier_context.h"
#include "tiered/tiered_partition.h"

namespace strata::tiered {

class RemoteCopier;
class RemoteRetention;

// Per-partition numbers for metrics and tests.
struct RemotePartitionStats {
  bool manifest_loaded = false;
  Offset remote_log_start = kNoOffset;
  Offset remote_log_end = kNoOffset;
  int64_t lag_segments = 0;  // rolled but not COPY_FINISHED
  int64_t lag_bytes = 0;
  int64_t lag_seconds = 0;  // age of the oldest rolled, un-uploaded segment's newest record
  int64_t remote_segments = 0;
  int64_t remote_bytes = 0;
};

struct RemoteLogCounters {
  uint64_t uploads = 0;           // segments COPY_FINISHED
  uint64_t upload_failures = 0;   // failed upload attempts (retried)
  uint64_t bytes_uploaded = 0;    // .log bytes of finished uploads
  uint64_t copy_throttle_ms = 0;  // time uploads waited for the copy quota
  uint64_t manifest_writes = 0;
  uint64_t manifest_write_failures = 0;
  uint64_t remote_reads = 0;
  uint64_t remote_read_failures = 0;
  uint64_t remote_read_bytes = 0;
  uint64_t segments_expired = 0;       // remote segments DELETE_FINISHED
  double upload_bytes_per_second = 0;  // over the last 10 s
  double read_bytes_per_second = 0;
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
                                                        RemoteLogManagerOptions options,
                                                        RemoteStackOptions stack, Clock* clock);

  // Where the remote log offsets of each partition are also kept (optional;
  // call before AddPartition).
  void AttachMetadataStore(cluster::MetadataStore* store) { ctx_.metadata = store; }

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
                    const storage::LogConfig& config, std::function<Offset()> committed_end = {},
                    LeaderEpoch leader_epoch = kNoLeaderEpoch);
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
  Offset LogStartOffset(const TopicPartition& tp, Offset local_start) const;
  // Last offset in remote storage (ListOffsets -5); kNoOffset when none.
  Offset RemoteLogEndOffset(const TopicPartition& tp) const;
  // DeleteRecords: the partition's log start becomes at least `offset` at once
  // (LogStartOffset), and remote segments wholly below it are deleted soon on
  // the reader pool (DELETE_STARTED -> objects deleted -> DELETE_FINISHED;
  // retried by the retention task if the store is down). kNotFound if the
  // partition is not tiered.
  Status DeleteRecordsBefore(const TopicPartition& tp, Offset offset);
  // Blocking read of whole batches at `offset` from remote storage. Errors:
  // kNotFound (not tiered / no remote segment holds it), kUnavailable when the
  // store's breaker is open, other store errors.
  Result<Bytes> Read(const TopicPartition& tp, Offset offset, int32_t max_bytes);
  // The same batches as regions of the cached or fetched chunks (no copy),
  // ending before the first batch that reaches `below` (kNoOffset: no bound).
  Result<RemoteRange> ReadRange(const TopicPartition& tp, Offset offset, int32_t max_bytes,
                                Offset below);
  // Blocking: the aborted transactions the remote segments hold for a
  // read_committed read of [from, upper) (Kafka's
  // RemoteLogManager.collectAbortedTransactions over the remote part; the
  // caller adds the local log's). Errors as Read.
  Result<std::vector<storage::AbortedTxn>> AbortedTransactions(const TopicPartition& tp,
                                                               Offset from, Offset upper);
  asio::thread_pool& reader_pool() { return reader_pool_; }
  ReadBudget& read_budget() { return read_budget_; }

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
  const std::string& store_uri() const { return options_.store_uri; }
  ResilienceCounters resilience_counters() const;
  RemoteStorage& store() { return *layers_.storage; }
  ChunkCacheCounters cache_counters() const { return cache_->counters(); }
  RemoteChunkCache& cache() { return *cache_; }

 private:
  struct MetricsHook;
  std::shared_ptr<TieredPartition> FindPartition(const TopicPartition& tp) const;
  std::vector<std::shared_ptr<TieredPartition>> Partitions() const;
  void Register(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                const storage::LogConfig& config, std::function<Offset()> committed_end,
                LeaderEpoch leader_epoch, bool reader);
  void ScanPartition(const std::shared_ptr<TieredPartition>& p);
  void ScanLoop();
  void RequestScan();
  // Read's work against the partition's read view.
  Result<RemoteRange> ReadFromView(TieredPartition& p, Offset offset, int32_t max_bytes,
                                   Offset below);
  // A read that may reach within the read-ahead of `seg`'s end (read_end:
  // the .log position it can reach) fetches the next segment's
  // first chunks in the background, while it runs: a consumer crossing
  // segments does not wait.
  void PrefetchNextSegment(TieredPartition& p, const RemoteManifest& view, const RemoteSegment& seg,
                           uint64_t read_end);
  void RegisterMetrics();
  void RegisterCacheMetrics();  // after RegisterMetrics (uses metrics_hook_)

  RemoteLogManagerOptions options_;
  ResilientStorage layers_;  // layers_.storage is the store; the rest are for counters
  TierCounters counters_;
  CopyQuota copy_quota_;
  TierContext ctx_;  // over the members above (and the metadata store)
  // Declared after ctx_: stopped and destroyed before what it points to.
  std::unique_ptr<RemoteCopier> copier_;
  std::unique_ptr<RemoteRetention> retention_;

  mutable std::mutex map_mu_;
  std::map<TopicPartition, std::shared_ptr<TieredPartition>> partitions_;

  std::thread scanner_;
  std::mutex scan_mu_;
  std::condition_variable scan_cv_;
  bool stopping_ = false;        // guarded by scan_mu_
  bool scan_requested_ = false;  // guarded by scan_mu_: a log rolled
  bool started_ = false;
  asio::thread_pool reader_pool_;
  ReadBudget read_budget_;

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
