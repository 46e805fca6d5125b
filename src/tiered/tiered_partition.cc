#include "tiered/tiered_partition.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "tiered/logger.h"

namespace strata::tiered {

namespace {
using S = RemoteSegmentState;
}  // namespace

TieredPartition::TieredPartition(const RemotePartitionId& id, const TierContext& ctx)
    : id(id), dir(RemotePartitionDir(id.topic, id.partition, id.topic_id)), ctx_(ctx) {
  if (auto saved = SavedOffsets()) {
    saved_offsets_ = *saved;
    remote_start.store(Offset(saved->start));
    remote_end.store(Offset(saved->end));
    delete_floor.store(Offset(saved->log_start));
  }
}

void TieredPartition::ConfigureLocked(std::shared_ptr<storage::Log> new_log,
                                      const storage::LogConfig& new_config,
                                      std::function<Offset()> new_committed_end,
                                      LeaderEpoch new_leader_epoch, bool as_reader) {
  if (log && log != new_log) log->SetRollListener({});
  log = std::move(new_log);
  config = new_config;
  committed_end_ = std::move(new_committed_end);
  if (leader_epoch == new_leader_epoch && reader == as_reader) return;
  // A reader keeps the read view it has until a read finds it stale.
  leader_epoch = new_leader_epoch;
  reader = as_reader;
  fenced = false;
  loaded = false;
  manifest_dirty = false;
  pending.clear();
  inflight.clear();
  if (!as_reader) {
    std::lock_guard view(view_mu_);
    view_offsets_.reset();
  }
}

std::optional<cluster::RemoteLogOffsets> TieredPartition::SavedOffsets() const {
  if (ctx_.metadata == nullptr) return std::nullopt;
  return ctx_.metadata->GetRemoteLogOffsets(id.topic_id, id.partition);
}

// Segments the manifest lists as COPY_FINISHED are never uploaded again;
// COPY_STARTED ones are redone under the same uuid (Put overwrites) by the
// same leadership, and retired by a new one (its segments may have other
// boundaries).
bool TieredPartition::LoadManifestLocked() {
  if (SupersededLocked()) return false;
  std::optional<cluster::RemoteLogOffsets> seen = SavedOffsets();
  const LeaderEpoch writer = seen ? seen->leader_epoch : kNoLeaderEpoch;
  auto data = ctx_.store->Get(dir + "/" + ManifestName(writer));
  RemoteManifest loaded_manifest;
  if (data.ok()) {
    auto parsed = RemoteManifest::Parse(*data);
    if (!parsed.ok()) {
      Log()->error("{}: bad remote manifest, tiering paused: {}", id.name(),
                   parsed.error().message);
      return false;
    }
    loaded_manifest = std::move(parsed).value();
  } else if (data.error().code != Errc::kNotFound || (seen && seen->end >= 0)) {
    // Missing while the metadata store says segments exist: never start
    // over (that would upload everything again and lose the list).
    if (load_failures++ % 50 == 0) {
      Log()->warn("{}: cannot read remote manifest {}: {}", id.name(), ManifestName(writer),
                  data.error().message);
    }
    return false;
  }
  manifest = std::move(loaded_manifest);
  saved_offsets_ = seen.value_or(cluster::RemoteLogOffsets{});
  if (leader_epoch != kNoLeaderEpoch && writer != leader_epoch && !ClaimLocked(seen)) return false;
  // Uploaded (or expired) offsets are not queued again; replaced ones are.
  next_to_queue = 0_o;
  for (const RemoteSegment& s : manifest.segments()) {
    if (s.state != S::kCopyStarted && !s.replaced) {
      next_to_queue = std::max(next_to_queue, s.end_offset + 1);
    }
  }
  // Local retention may drop what the metadata store records as remote (the
  // manifest alone without one); PublishOffsetsLocked saves the rest.
  const Offset end = manifest.remote_log_end_offset();
  const Offset copied = ctx_.metadata == nullptr ? end : Offset(saved_offsets_.end);
  if (copied >= 0_o) log->SetRemoteCopiedOffset(copied + 1);
  loaded = true;
  PublishOffsetsLocked();
  Log()->info("{}: remote manifest loaded: {} segments, remote offsets [{}, {}]", id.name(),
              manifest.segments().size(), manifest.remote_log_start_offset(), end);
  return true;
}

bool TieredPartition::SupersededLocked() {
  if (fenced) return true;
  if (ctx_.metadata == nullptr || leader_epoch == kNoLeaderEpoch) return false;
  // The metadata view shows a takeover soon after it happened; the fence
  // itself is the epoch check of every save (SetRemoteLogOffsets).
  auto seen = SavedOffsets();
  if (seen && seen->leader_epoch > leader_epoch) {
    FenceLocked(fmt::format("leader epoch {} has it", seen->leader_epoch));
  }
  return fenced;
}

bool TieredPartition::ClaimLocked(const std::optional<cluster::RemoteLogOffsets>& seen) {
  // The previous leader's half-done uploads are its own boundaries: retired
  // (their objects deleted by the retention task), uploaded again as ours.
  for (RemoteSegment& s : manifest.segments()) {
    if (s.state == S::kCopyStarted) {
      s.state = S::kDeleteStarted;
      s.replaced = true;
    }
  }
  manifest.set_leader_epoch(leader_epoch);
  Bytes data = manifest.Serialize();
  ctx_.counters->manifest_writes.fetch_add(1);
  Status st = ctx_.store->Put(dir + "/" + ManifestName(leader_epoch), PutSource::Memory(data));
  if (st.ok() && ctx_.metadata != nullptr) {
    cluster::RemoteLogOffsets claimed = OffsetsLocked();
    if (seen) claimed.log_start = std::max(claimed.log_start, seen->log_start);
    st = ctx_.metadata->ClaimRemoteLog(id.topic_id, id.partition, seen, claimed);
    if (st.ok()) {
      delete_floor.store(Offset(claimed.log_start));
      saved_offsets_ = claimed;
      Log()->info("{}: remote log taken over at leader epoch {} (from {})", id.name(), leader_epoch,
                  seen ? seen->leader_epoch : kNoLeaderEpoch);
      return true;
    }
    if (st.error().code == Errc::kFenced) {
      FenceLocked(st.error().message);
      return false;
    }
  } else if (!st.ok()) {
    ctx_.counters->manifest_write_failures.fetch_add(1);
  }
  if (load_failures++ % 50 == 0) {
    Log()->warn("{}: taking the remote log over at leader epoch {} (will retry): {}", id.name(),
                leader_epoch, st.ok() ? "" : st.error().message);
  }
  return false;
}

Status TieredPartition::WriteManifestLocked() {
  if (fenced) return MakeError(Errc::kFenced, id.name() + ": a newer leader tiers it");
  manifest_dirty = true;   // until the Put succeeds
  PublishOffsetsLocked();  // reads only
  manifest.set_leader_epoch(leader_epoch);
  Bytes data = manifest.Serialize();
  ctx_.counters->manifest_writes.fetch_add(1);
  Status st = ctx_.store->Put(dir + "/" + ManifestName(leader_epoch), PutSource::Memory(data));
  if (!st.ok()) {
    ctx_.counters->manifest_write_failures.fetch_add(1);
    if (BackOffLocked()) {
      Log()->warn("{}: writing remote manifest failed (will retry): {}", id.name(),
                  st.error().message);
    }
    return st;
  }
  manifest_dirty = false;
  consecutive_failures = 0;
  // Saved in the metadata store only once the manifest is durable: every
  // replica deletes below the saved end, so it must never run ahead of what
  // a new leader would find in the store.
  PublishOffsetsLocked();
  const Offset end = manifest.remote_log_end_offset();
  // Without a metadata store the manifest is the only record: local
  // retention may drop what it lists.
  if (ctx_.metadata == nullptr && end >= 0_o) log->SetRemoteCopiedOffset(end + 1);
  return Status::Ok();
}

bool TieredPartition::WriteIfDirtyLocked() {
  if (!manifest_dirty) return true;
  if (ctx_.clock->MonotonicMs() < backoff_until_ms) return false;
  return WriteManifestLocked().ok();
}

void TieredPartition::PublishOffsetsLocked() {
  if (!loaded) return;
  auto view = std::make_shared<const RemoteManifest>(manifest);
  {
    std::lock_guard lock(view_mu_);
    read_view_ = std::move(view);
  }
  remote_start.store(manifest.remote_log_start_offset());
  remote_end.store(manifest.remote_log_end_offset());
  // Reads see a change at once (a segment being deleted is hidden before
  // its manifest write); the metadata store only what a durable manifest
  // says.
  SaveOffsetsLocked();
}

cluster::RemoteLogOffsets TieredPartition::OffsetsLocked() const {
  return {manifest.remote_log_start_offset().value(), manifest.remote_log_end_offset().value(),
          delete_floor.load().value(), leader_epoch};
}

void TieredPartition::SaveOffsetsLocked() {
  if (!loaded || manifest_dirty || fenced || reader) return;
  const cluster::RemoteLogOffsets now = OffsetsLocked();
  if (ctx_.metadata == nullptr || now == saved_offsets_) return;
  Status st = ctx_.metadata->SetRemoteLogOffsets(id.topic_id, id.partition, now);
  if (st.ok()) {
    saved_offsets_ = now;
    // Every replica deletes local data below the saved end (followers read
    // it from the metadata store), the leader too: only what a successor
    // would find through the store may go.
    if (now.end >= 0) log->SetRemoteCopiedOffset(Offset(now.end) + 1);
  } else if (st.error().code == Errc::kFenced) {
    FenceLocked(st.error().message);
  } else {
    Log()->warn("{}: saving remote log offsets: {}", id.name(), st.error().message);
  }
}

void TieredPartition::FenceLocked(const std::string& why) {
  if (fenced) return;
  fenced = true;
  Log()->warn("{}: stopped tiering for leader epoch {}: {}", id.name(), leader_epoch, why);
}

bool TieredPartition::BackOffLocked() {
  const int64_t n = ++consecutive_failures;
  int64_t delay = ctx_.options->retry_backoff_ms << std::min<int64_t>(n - 1, 10);
  delay = std::min(delay, ctx_.options->max_retry_backoff_ms);
  backoff_until_ms = ctx_.clock->MonotonicMs() + delay;
  return n == 1 || n % 20 == 0;
}

Offset TieredPartition::CommittedEndLocked() const {
  return committed_end_ ? committed_end_() : Offset::Max();
}

// A replica that started its log at its leader's active segment (active-
// segment sync) knows only the producers that wrote from there on. Once it
// leads and the remote segment holding the offset just below its start is
// uploaded (by the leader that had it), that segment's producer snapshot
// completes the state, so a retry of a batch written before the move is
// still recognised as a duplicate.
void TieredPartition::RestoreProducerStateLocked() {
  const Offset gap = log->producer_state_gap();
  if (gap <= 0_o) return;
  const RemoteSegment* seg = manifest.FindReadable(gap - 1);
  // Not uploaded yet (the next scan looks again), or past what this log
  // holds (it cannot be: a leader holds everything uploaded).
  if (seg == nullptr || seg->end_offset + 1 > log->log_end_offset()) return;
  if (!seg->has_snapshot) {
    if (load_failures++ % 100 == 0) {
      Log()->warn(
          "{}: the remote segment {}-{} has no producer snapshot: producers that wrote "
          "only below offset {} stay unknown here",
          id.name(), seg->base_offset, seg->end_offset, gap);
    }
    return;
  }
  auto data = ctx_.store->Get(RemoteObjectPath(dir, *seg, kRemoteSnapshotExt));
  if (!data.ok()) {
    if (load_failures++ % 20 == 0) {
      Log()->warn("{}: reading the producer snapshot of remote segment {}-{}: {}", id.name(),
                  seg->base_offset, seg->end_offset, data.error().message);
    }
    return;
  }
  Status merged = log->MergeProducerSnapshot(*data, seg->end_offset + 1);
  if (!merged.ok()) {
    Log()->warn("{}: restoring producer state below {}: {}", id.name(), gap,
                merged.error().message);
  }
}

void TieredPartition::FollowSavedOffsets() {
  auto saved = SavedOffsets();
  if (!saved) return;
  remote_start.store(Offset(saved->start));
  remote_end.store(Offset(saved->end));
  delete_floor.store(Offset(saved->log_start));
}

Status TieredPartition::RefreshReadView(bool force) {
  std::lock_guard refresh(refresh_mu_);
  std::optional<cluster::RemoteLogOffsets> saved = SavedOffsets();
  if (!saved || saved->end < 0) {
    return MakeError(Errc::kNotFound, id.name() + ": nothing in remote storage yet");
  }
  if (!force) {
    std::lock_guard lock(view_mu_);
    if (read_view_ && view_offsets_ == saved) return Status::Ok();
  }
  // The leader saves the offsets only once the manifest they name is
  // durable, and a new leader writes its manifest before claiming them: a
  // missing manifest is a store problem, retriable.
  const std::string name = ManifestName(saved->leader_epoch);
  auto data = ctx_.store->Get(dir + "/" + name);
  if (!data.ok()) {
    return MakeError(
        data.error().code == Errc::kNotFound ? Errc::kUnavailable : data.error().code,
        fmt::format("{}: reading remote manifest {}: {}", id.name(), name, data.error().message));
  }
  auto parsed = RemoteManifest::Parse(*data);
  if (!parsed.ok()) {
    return MakeError(Errc::kUnavailable, fmt::format("{}: bad remote manifest {}: {}", id.name(),
                                                     name, parsed.error().message));
  }
  auto view = std::make_shared<const RemoteManifest>(std::move(parsed).value());
  std::lock_guard lock(view_mu_);
  read_view_ = std::move(view);
  view_offsets_ = saved;
  return Status::Ok();
}

std::shared_ptr<const RemoteManifest> TieredPartition::ReadView() const {
  std::lock_guard lock(view_mu_);
  return read_view_;
}

std::shared_ptr<const Bytes> TieredPartition::CachedIndex(const std::string& uuid) const {
  std::lock_guard lock(index_mu_);
  auto it = index_cache_.find(uuid);
  return it == index_cache_.end() ? nullptr : it->second;
}

void TieredPartition::CacheIndex(const std::string& uuid, std::shared_ptr<const Bytes> index) {
  std::lock_guard lock(index_mu_);
  if (!index_cache_.emplace(uuid, std::move(index)).second) return;
  index_lru_.push_back(uuid);
  if (index_lru_.size() > kCachedIndexes) {
    index_cache_.erase(index_lru_.front());
    index_lru_.pop_front();
  }
}

}  // namespace strata::tiered
