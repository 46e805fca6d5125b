#pragma once
// RemoteLogManager's per-partition state, shared by remote_log_manager.cc and
// remote_log_copier.cc (private to them).
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "cluster/metadata_store.h"
#include "storage/log.h"
#include "tiered/remote_log_manager.h"
#include "tiered/remote_manifest.h"

namespace strata::tiered {

struct RemoteLogManager::Inflight {
  storage::SegmentSummary local;
  bool done = false;
};

// One tiered partition. Guarded by `mu` unless said otherwise; `mu` is held
// across store calls (manifest writes, deletions), so what reads need has
// its own locks.
struct RemoteLogManager::TieredPartition {
  RemotePartitionId id;
  std::string dir;  // the partition's directory in the store (set once)
  std::mutex mu;
  std::shared_ptr<storage::Log> log;
  storage::LogConfig config;
  std::function<int64_t()> committed_end;  // AddPartition's; empty: the log end
  // This broker's leadership the uploads are for (-1: a single broker):
  // names the manifest it writes and fences the offsets it saves.
  int32_t leader_epoch = -1;
  // A leader of a newer epoch took the remote log over: nothing more is
  // uploaded, written or deleted for this leadership.
  bool fenced = false;
  // Registered by AddReader: a follower's replica, read only (written under
  // `mu`; reads check it without).
  std::atomic<bool> reader{false};
  std::atomic<bool> loaded{false};  // manifest read from the store (read unlocked by Read)
  bool removed = false;
  bool manifest_dirty = false;  // in-memory manifest not yet written
  RemoteManifest manifest;
  int64_t next_to_queue = 0;  // rolled segments from this base offset are not queued yet
  std::deque<storage::SegmentSummary> pending;  // queued, oldest first
  std::map<int64_t, Inflight> inflight;         // dispatched, by base offset
  int64_t backoff_until_ms = 0;
  int64_t load_failures = 0;
  int64_t consecutive_failures = 0;
  // A copy of the manifest for Read, republished (PublishOffsetsLocked) on
  // every change; null until the manifest is loaded. Guarded by view_mu.
  std::mutex view_mu;
  std::shared_ptr<const RemoteManifest> read_view;
  // Reader: the saved offsets whose manifest read_view is (guarded by
  // view_mu); refresh_mu serialises the loads (RefreshReadView).
  std::optional<cluster::RemoteLogOffsets> view_offsets;
  std::mutex refresh_mu;
  // Remote .index objects of recently read segments (by uuid, oldest first
  // in index_lru), so a sequential consumer does one Get per fetch.
  // Guarded by index_mu.
  static constexpr size_t kCachedIndexes = 16;
  std::mutex index_mu;
  std::map<std::string, std::shared_ptr<const Bytes>> index_cache;
  std::deque<std::string> index_lru;
  // Copies of the manifest's remote log start / end offsets, readable without
  // `mu` (network threads ask for them; `mu` may be held across store I/O).
  // Until the manifest is loaded they hold what the metadata store saved, so
  // a broker restarted while the store is down still knows that offsets
  // below the local log start exist (reads of them fail as retriable).
  std::atomic<int64_t> remote_start{-1};
  std::atomic<int64_t> remote_end{-1};
  // The log start set by DeleteRecords (-1: none). Offsets below it are gone
  // even while their remote segment awaits deletion. Saved with the offsets.
  std::atomic<int64_t> delete_floor{-1};
  // What the metadata store holds for this partition (saved when it changes).
  cluster::RemoteLogOffsets saved_offsets;
};

// Scrape-time callbacks reach the manager through this hook, which the
// destructor clears (the registry has no unregister).
struct RemoteLogManager::MetricsHook {
  std::mutex mu;
  RemoteLogManager* rlm = nullptr;
};

}  // namespace strata::tiered
