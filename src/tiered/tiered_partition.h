#pragma once
// TieredPartition: one partition's remote log as this broker sees it. The
// manifest (loaded from the store, taken over for this broker's leadership,
// written back), the offsets saved in the metadata store (what every
// replica may delete locally below), the fence that stops a deposed leader,
// and the read view that fetches use without waiting for uploads.
// RemoteCopier uploads into it, RemoteRetention expires from it, and
// RemoteLogManager registers it and reads through it.
//
// Thread-safety: fields are guarded by `mu` unless said otherwise, and
// methods named *Locked need it held. `mu` is held across store calls
// (manifest writes, uploads' commits, deletions), so what reads need has
// its own locks (view_mu, index_mu) and atomics.
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/offset.h"
#include "base/result.h"
#include "base/topic_partition.h"
#include "cluster/metadata_store.h"
#include "storage/log.h"
#include "tiered/remote_manifest.h"
#include "tiered/tier_context.h"

namespace strata::tiered {

// Identifies a tiered partition.
struct RemotePartitionId {
  std::string topic;
  int32_t partition = 0;
  std::string topic_id;  // base64 text form
  TopicPartition tp() const { return {topic, partition}; }
  std::string name() const { return tp().ToString(); }  // for log lines
};

class TieredPartition {
 public:
  // A segment handed to the copier pool.
  struct Inflight {
    storage::SegmentSummary local;
    bool done = false;
  };

  // Reads the offsets the metadata store saved (so a broker restarted while
  // the store is down knows what is remote before the manifest loads).
  TieredPartition(const RemotePartitionId& id, const TierContext& ctx);
  TieredPartition(const TieredPartition&) = delete;
  TieredPartition& operator=(const TieredPartition&) = delete;

  // Points the partition at `log` for `leader_epoch` (none: a single broker)
  // or, with `reader`, as a follower's read-only replica. A new leadership
  // or role takes the remote log over again: the manifest is loaded and
  // claimed anew, and uploads of the old one find nothing to finish.
  void ConfigureLocked(std::shared_ptr<storage::Log> new_log, const storage::LogConfig& new_config,
                       std::function<Offset()> new_committed_end, LeaderEpoch new_leader_epoch,
                       bool as_reader);

  // Reads the manifest the metadata store's offsets name (the last leader's;
  // none = nothing uploaded yet) and, in a cluster, takes the remote log
  // over for this leadership. False while it cannot (retried by the scan).
  bool LoadManifestLocked();
  // True (and fenced from then on) once a leader of a newer epoch took the
  // remote log over: nothing more is uploaded, written or deleted.
  bool SupersededLocked();
  void FenceLocked(const std::string& why);
  // Writes the manifest under this leadership's name; on success publishes
  // and saves its offsets. On failure it stays dirty and backs off.
  Status WriteManifestLocked();
  // Writes the manifest if a change to it is not written yet, no sooner than
  // the backoff after a failure ends; true when it is written.
  bool WriteIfDirtyLocked();
  // Publishes the manifest's offsets to the read view and the atomics, and
  // saves them (SaveOffsetsLocked).
  void PublishOffsetsLocked();
  // Once the manifest is written (not dirty), saves its offsets (with the
  // DeleteRecords floor and the leader epoch) in the metadata store when
  // they changed; only then may local retention drop what they cover.
  void SaveOffsetsLocked();
  // Backs off after a failure (exponential, capped); true when the failure
  // is worth logging (the first, then every 20th in a row).
  bool BackOffLocked();
  // Completes the producer state of a log started at its leader's active
  // segment from the remote snapshot below its start, once uploaded.
  void RestoreProducerStateLocked();
  // The offset below which rolled segments may be uploaded: the leader's
  // high watermark (the log end on a single broker).
  Offset CommittedEndLocked() const;

  // Reader: takes the offsets the leader saved (for LogStartOffset).
  void FollowSavedOffsets();
  // Reader: loads the manifest the saved offsets name when they moved since
  // the read view was loaded, or when `force`d. Never takes `mu`.
  Status RefreshReadView(bool force);
  // The manifest reads use (null until loaded). Never takes `mu`.
  std::shared_ptr<const RemoteManifest> ReadView() const;
  // The remote .index objects of recently read segments, by uuid.
  std::shared_ptr<const Bytes> CachedIndex(const std::string& uuid) const;
  void CacheIndex(const std::string& uuid, std::shared_ptr<const Bytes> index);

  const RemotePartitionId id;
  const std::string dir;  // the partition's directory in the store
  std::mutex mu;
  std::shared_ptr<storage::Log> log;
  storage::LogConfig config;
  // This broker's leadership the uploads are for (kNoLeaderEpoch: a single
  // broker): names the manifest it writes and fences the offsets it saves.
  LeaderEpoch leader_epoch = kNoLeaderEpoch;
  bool fenced = false;
  // Registered by AddReader (written under `mu`; read without it).
  std::atomic<bool> reader{false};
  std::atomic<bool> loaded{false};  // manifest read from the store
  bool removed = false;
  bool manifest_dirty = false;  // in-memory manifest not yet written
  RemoteManifest manifest;
  Offset next_to_queue = 0_o;  // rolled segments from this base offset are not queued yet
  std::deque<storage::SegmentSummary> pending;  // queued for upload, oldest first
  std::map<Offset, Inflight> inflight;          // dispatched, by base offset
  int64_t backoff_until_ms = 0;
  int64_t load_failures = 0;  // rate-limits load, claim and restore warnings
  int64_t consecutive_failures = 0;
  // Copies of the manifest's remote log start / end offsets, readable
  // without `mu`. Until the manifest is loaded they hold what the metadata
  // store saved.
  std::atomic<Offset> remote_start{kNoOffset};
  std::atomic<Offset> remote_end{kNoOffset};
  // The log start set by DeleteRecords (kNoOffset: none). Offsets below it
  // are gone even while their remote segment awaits deletion. Saved with the
  // offsets.
  std::atomic<Offset> delete_floor{kNoOffset};

 private:
  // Takes the remote log over for this leadership: writes the loaded
  // manifest under its name and claims the saved offsets.
  bool ClaimLocked(const std::optional<cluster::RemoteLogOffsets>& seen);
  cluster::RemoteLogOffsets OffsetsLocked() const;
  std::optional<cluster::RemoteLogOffsets> SavedOffsets() const;

  const TierContext& ctx_;
  std::function<Offset()> committed_end_;  // empty: the log end
  // What the metadata store holds for this partition (saved when it changes).
  cluster::RemoteLogOffsets saved_offsets_;
  // A copy of the manifest for reads, republished on every change; for a
  // reader, the saved offsets it was loaded for. Guarded by view_mu_;
  // refresh_mu_ serialises a reader's loads.
  mutable std::mutex view_mu_;
  std::shared_ptr<const RemoteManifest> read_view_;
  std::optional<cluster::RemoteLogOffsets> view_offsets_;
  std::mutex refresh_mu_;
  // So a sequential consumer does one Get per fetch. Guarded by index_mu_.
  static constexpr size_t kCachedIndexes = 16;
  mutable std::mutex index_mu_;
  std::map<std::string, std::shared_ptr<const Bytes>> index_cache_;
  std::deque<std::string> index_lru_;
};

}  // namespace strata::tiered
