#pragma once
// What the classes that tier partitions share: the store, the metadata
// store the remote offsets are saved in, the clock, the manager's options
// and its counters. Owned by RemoteLogManager, which outlives them all.
#include <atomic>
#include <cstdint>
#include <string>

#include "base/clock.h"
#include "cluster/metadata_store.h"
#include "tiered/copy_quota.h"
#include "tiered/rate_meter.h"
#include "tiered/remote_storage.h"

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
  // remote.log.manager.copy.max.bytes.per.second (0: no cap) and its quota
  // windows (remote.log.manager.copy.quota.window.num|size.seconds).
  uint64_t copy_max_bytes_per_second = 0;
  int copy_quota_windows = 11;
  int64_t copy_quota_window_ms = 1000;
  std::string store_uri;  // what the store was opened from (set by RemoteLogManager::Open)
  // strata.remote.fetch.max.bytes: remote read bytes in flight at once.
  uint64_t fetch_max_bytes = uint64_t{128} << 20;
};

// RemoteLogManager's counters (exported as metrics), bumped by whichever
// class did the work.
struct TierCounters {
  std::atomic<uint64_t> uploads{0};           // segments COPY_FINISHED
  std::atomic<uint64_t> upload_failures{0};   // failed upload attempts (retried)
  std::atomic<uint64_t> bytes_uploaded{0};    // .log bytes of finished uploads
  std::atomic<uint64_t> copy_throttle_ms{0};  // uploads held back by the copy quota
  std::atomic<uint64_t> manifest_writes{0};
  std::atomic<uint64_t> manifest_write_failures{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> read_failures{0};
  std::atomic<uint64_t> read_bytes{0};
  std::atomic<uint64_t> expired{0};  // remote segments DELETE_FINISHED by retention
  // Recent throughput, for the admin API (the totals above are Prometheus').
  RateMeter upload_rate{10, std::chrono::milliseconds(1000)};
  RateMeter read_rate{10, std::chrono::milliseconds(1000)};
};

// The real clock's milliseconds: meters and quotas pace real transfers,
// whatever clock a test gives the rest.
inline int64_t RealMs() { return Clock::Real()->MonotonicMs(); }

struct TierContext {
  RemoteStorage* store = nullptr;
  // Where every replica sees the remote offsets (null: a single broker,
  // the manifest is the only record).
  cluster::MetadataStore* metadata = nullptr;
  Clock* clock = nullptr;
  const RemoteLogManagerOptions* options = nullptr;
  TierCounters* counters = nullptr;
  CopyQuota* copy_quota = nullptr;
};

}  // namespace strata::tiered
