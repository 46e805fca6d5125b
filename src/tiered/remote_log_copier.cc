// RemoteLogManager, continued: manifest loading, queueing and uploading of
// rolled segments, the in-order commit, and remote retention.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "base/log.h"
#include "tiered/logger.h"
#include "tiered/remote_log_manager.h"
#include "tiered/remote_log_partition.h"
#include "tiered/segment_uploader.h"

namespace strata::tiered {

namespace {
using S = RemoteSegmentState;
}  // namespace

void RemoteLogManager::ScanOnce() {
  for (const auto& p : Partitions()) ScanPartition(p);
}

void RemoteLogManager::ScanPartition(const std::shared_ptr<TieredPartition>& p) {
  std::lock_guard lock(p->mu);
  if (p->removed || !p->log || p->fenced) return;
  if (p->reader) {
    FollowSavedOffsets(*p);
    return;
  }
  if (!p->loaded && !LoadManifestLocked(*p)) return;
  if (p->manifest_dirty) {
    // A failed manifest write is retried here, no sooner than its backoff.
    if (clock_->MonotonicMs() < p->backoff_until_ms) return;
    if (!WriteManifestLocked(*p).ok()) return;
  }
  SaveOffsetsLocked(*p);  // retries a failed save
  if (SupersededLocked(*p)) return;
  RestoreProducerStateLocked(*p);
  QueueRolledLocked(*p);
  CommitLocked(*p);
  DispatchLocked(p);
}

// Reads the manifest the metadata store's offsets name (the last leader's;
// manifest.json on a single broker; none = nothing uploaded yet), and in a
// cluster takes the remote log over for this leadership. Segments it lists
// as COPY_FINISHED are never uploaded again; COPY_STARTED ones are redone
// under the same uuid (Put overwrites) by the same leadership, and retired
// by a new one (its segments may have other boundaries).
bool RemoteLogManager::LoadManifestLocked(TieredPartition& p) {
  if (SupersededLocked(p)) return false;
  std::optional<cluster::RemoteLogOffsets> seen;
  if (metadata_ != nullptr) seen = metadata_->GetRemoteLogOffsets(p.id.topic_id, p.id.partition);
  const int32_t writer = seen ? seen->leader_epoch : -1;
  auto data = store().Get(p.dir + "/" + ManifestName(writer));
  RemoteManifest manifest;
  if (data.ok()) {
    auto parsed = RemoteManifest::Parse(*data);
    if (!parsed.ok()) {
      Log()->error("{}: bad remote manifest, tiering paused: {}", p.id.name(),
                   parsed.error().message);
      return false;
    }
    manifest = std::move(parsed).value();
  } else if (data.error().code != Errc::kNotFound || (seen && seen->end >= 0)) {
    // Missing while the metadata store says segments exist: never start
    // over (that would upload everything again and lose the list).
    if (p.load_failures++ % 50 == 0) {
      Log()->warn("{}: cannot read remote manifest {}: {}", p.id.name(), ManifestName(writer),
                  data.error().message);
    }
    return false;
  }
  p.manifest = std::move(manifest);
  p.saved_offsets = seen.value_or(cluster::RemoteLogOffsets{});
  if (p.leader_epoch >= 0 && writer != p.leader_epoch && !ClaimLocked(p, seen)) return false;
  // Uploaded (or expired) offsets are not queued again; replaced ones are.
  p.next_to_queue = 0;
  for (const RemoteSegment& s : p.manifest.segments()) {
    if (s.state != S::kCopyStarted && !s.replaced) {
      p.next_to_queue = std::max(p.next_to_queue, s.end_offset + 1);
    }
  }
  // Local retention may drop what the metadata store records as remote (the
  // manifest alone without one); PublishOffsetsLocked saves the rest.
  int64_t end = p.manifest.remote_log_end_offset();
  int64_t copied = metadata_ == nullptr ? end : p.saved_offsets.end;
  if (copied >= 0) p.log->SetRemoteCopiedOffset(copied + 1);
  p.loaded = true;
  PublishOffsetsLocked(p);
  Log()->info("{}: remote manifest loaded: {} segments, remote offsets [{}, {}]", p.id.name(),
              p.manifest.segments().size(), p.manifest.remote_log_start_offset(), end);
  return true;
}

bool RemoteLogManager::SupersededLocked(TieredPartition& p) {
  if (p.fenced) return true;
  if (metadata_ == nullptr || p.leader_epoch < 0) return false;
  // The metadata view shows a takeover soon after it happened; the fence
  // itself is the epoch check of every save (SetRemoteLogOffsets).
  auto seen = metadata_->GetRemoteLogOffsets(p.id.topic_id, p.id.partition);
  if (seen && seen->leader_epoch > p.leader_epoch) {
    FenceLocked(p, fmt::format("leader epoch {} has it", seen->leader_epoch));
  }
  return p.fenced;
}

bool RemoteLogManager::ClaimLocked(TieredPartition& p,
                                   const std::optional<cluster::RemoteLogOffsets>& seen) {
  // The previous leader's half-done uploads are its own boundaries: retired
  // (their objects deleted by the retention task), uploaded again as ours.
  for (RemoteSegment& s : p.manifest.segments()) {
    if (s.state == S::kCopyStarted) {
      s.state = S::kDeleteStarted;
      s.replaced = true;
    }
  }
  p.manifest.set_leader_epoch(p.leader_epoch);
  Bytes data = p.manifest.Serialize();
  manifest_writes_.fetch_add(1);
  Status st = store().Put(p.dir + "/" + ManifestName(p.leader_epoch), PutSource::Memory(data));
  if (st.ok() && metadata_ != nullptr) {
    cluster::RemoteLogOffsets claimed = OffsetsLocked(p);
    if (seen) claimed.log_start = std::max(claimed.log_start, seen->log_start);
    st = metadata_->ClaimRemoteLog(p.id.topic_id, p.id.partition, seen, claimed);
    if (st.ok()) {
      p.delete_floor.store(claimed.log_start);
      p.saved_offsets = claimed;
      Log()->info("{}: remote log taken over at leader epoch {} (from {})", p.id.name(),
                  p.leader_epoch, seen ? seen->leader_epoch : -1);
      return true;
    }
    if (st.error().code == Errc::kFenced) {
      FenceLocked(p, st.error().message);
      return false;
    }
  } else if (!st.ok()) {
    manifest_write_failures_.fetch_add(1);
  }
  if (p.load_failures++ % 50 == 0) {
    Log()->warn("{}: taking the remote log over at leader epoch {} (will retry): {}", p.id.name(),
                p.leader_epoch, st.ok() ? "" : st.error().message);
  }
  return false;
}

Status RemoteLogManager::WriteManifestLocked(TieredPartition& p) {
  if (p.fenced) return MakeError(Errc::kFenced, p.id.name() + ": a newer leader tiers it");
  p.manifest_dirty = true;  // until the Put succeeds
  PublishOffsetsLocked(p);  // reads only
  p.manifest.set_leader_epoch(p.leader_epoch);
  Bytes data = p.manifest.Serialize();
  manifest_writes_.fetch_add(1);
  Status st = store().Put(p.dir + "/" + ManifestName(p.leader_epoch), PutSource::Memory(data));
  if (!st.ok()) {
    manifest_write_failures_.fetch_add(1);
    p.manifest_dirty = true;
    if (BackOffLocked(p)) {
      Log()->warn("{}: writing remote manifest failed (will retry): {}", p.id.name(),
                  st.error().message);
    }
    return st;
  }
  p.manifest_dirty = false;
  p.consecutive_failures = 0;
  // Saved in the metadata store only once the manifest is durable: every
  // replica deletes below the saved end, so it must never run ahead of what
  // a new leader would find in the store.
  PublishOffsetsLocked(p);
  int64_t end = p.manifest.remote_log_end_offset();
  // Without a metadata store the manifest is the only record: local
  // retention may drop what it lists.
  if (metadata_ == nullptr && end >= 0) p.log->SetRemoteCopiedOffset(end + 1);
  return Status::Ok();
}

void RemoteLogManager::QueueRolledLocked(TieredPartition& p) {
  // A rolled segment is queued once it is wholly committed (below the high
  // watermark; on one broker that is the log end, so at once): what remote
  // storage holds, every in-sync replica has, whoever leads next.
  const int64_t committed =
      p.committed_end ? p.committed_end() : std::numeric_limits<int64_t>::max();
  for (storage::SegmentSummary& s : p.log->RolledSegments()) {
    // Skipped only when wholly uploaded: a new leader's segment may start
    // below the remote end and go past it (replicas roll at their own
    // times); it is uploaded whole, overlapping with identical bytes.
    if (s.end_offset < p.next_to_queue) continue;
    if (s.end_offset >= committed) break;  // in offset order: the rest are above too
    p.next_to_queue = s.end_offset + 1;
    p.pending.push_back(std::move(s));
  }
}

// Marks the uploaded prefix of the in-flight segments COPY_FINISHED, in
// offset order, and persists the manifest.
void RemoteLogManager::CommitLocked(TieredPartition& p) {
  bool changed = false;
  while (!p.inflight.empty() && p.inflight.begin()->second.done) {
    // A failed upload goes back to `pending`: segments after it wait, or the
    // copied offset would pass it and local retention delete it un-uploaded.
    if (!p.pending.empty() && p.pending.front().base_offset < p.inflight.begin()->first) break;
    const storage::SegmentSummary& local = p.inflight.begin()->second.local;
    RemoteSegment* e = p.manifest.Find(local.base_offset, local.end_offset);
    if (e != nullptr && e->state == S::kCopyStarted) {
      e->state = S::kCopyFinished;
      // Deleted by the retention task once this manifest is written.
      if (int n = p.manifest.RetireCoveredBy(*e); n > 0) {
        Log()->info("{}: remote segment {}-{} replaces {} shorter one(s)", p.id.name(),
                    e->base_offset, e->end_offset, n);
      }
      uploads_.fetch_add(1);
      bytes_uploaded_.fetch_add(uint64_t(e->size));
      changed = true;
    }
    p.inflight.erase(p.inflight.begin());
  }
  if (!changed) return;
  p.manifest_dirty = true;
  // While backing off after a failure the write waits for ScanPartition, so
  // a failing store sees one manifest write per backoff period.
  if (clock_->MonotonicMs() < p.backoff_until_ms) return;
  // On failure WriteManifestLocked counts it (manifest_write_failures), logs
  // it rate-limited (BackOffLocked: the first, then every 20th in a row),
  // keeps the manifest dirty and backs off; ScanPartition retries. Until a
  // write succeeds local retention keeps the segments (the copied offset only
  // moves after a successful write).
  (void)WriteManifestLocked(p);
}

void RemoteLogManager::DispatchLocked(const std::shared_ptr<TieredPartition>& p) {
  if (p->fenced || p->manifest_dirty || clock_->MonotonicMs() < p->backoff_until_ms) return;
  int running = 0;
  for (const auto& [base, f] : p->inflight) running += f.done ? 0 : 1;
  const bool lagging =
      int64_t(p->pending.size()) + running > int64_t(options_.parallel_lag_segments);
  const int allowed = lagging ? std::max(options_.copier_threads, 1) : 1;
  while (running < allowed && !p->pending.empty()) {
    const storage::SegmentSummary& s = p->pending.front();
    RemoteSegment* e = p->manifest.Find(s.base_offset, s.end_offset);
    if (e != nullptr && e->state != S::kCopyStarted) {  // already uploaded (or expiring)
      p->pending.pop_front();
      continue;
    }
    if (e == nullptr) {
      p->manifest.Insert(RemoteSegment{s.base_offset, s.end_offset, s.size, s.max_timestamp,
                                       RandomUuidBase64(), S::kCopyStarted, false});
      // COPY_STARTED is durable before any object is written.
      if (!WriteManifestLocked(*p).ok()) return;
    }
    const int64_t base = s.base_offset;  // `s` is pending.front(): read before pop
    p->inflight[base] = Inflight{s, false};
    p->pending.pop_front();
    ++running;
    {
      std::lock_guard lock(pool_mu_);
      if (stopping_) return;
      jobs_.push_back([this, p, base] { RunUpload(p, base); });
    }
    pool_cv_.notify_one();
  }
}

void RemoteLogManager::RunUpload(std::shared_ptr<TieredPartition> p, int64_t base) {
  storage::SegmentSummary local;
  RemoteSegment seg;
  std::shared_ptr<storage::Log> log;
  std::string dir;
  {
    std::lock_guard lock(p->mu);
    auto it = p->inflight.find(base);
    if (p->removed || it == p->inflight.end()) return;
    RemoteSegment* e = p->manifest.Find(base, it->second.local.end_offset);
    if (e == nullptr) return;
    local = it->second.local;
    seg = *e;
    log = p->log;
    dir = p->dir;
  }
  Status st = UploadSegment(store(), dir, local, log->LeaderEpochEntries(), &seg);
  std::lock_guard lock(p->mu);
  if (p->removed || p->fenced) return;
  auto it = p->inflight.find(base);
  if (it == p->inflight.end()) return;
  if (st.ok()) {
    p->consecutive_failures = 0;
    it->second.done = true;
    if (RemoteSegment* e = p->manifest.Find(base, local.end_offset)) {
      e->has_snapshot = seg.has_snapshot;
    }
  } else if (st.error().code == Errc::kNotFound) {
    // DeleteRecords removed the local segment first: nothing to tier.
    Log()->warn("{}: segment {} vanished before upload", p->id.name(), base);
    p->inflight.erase(it);
    std::erase_if(p->manifest.segments(), [&](const RemoteSegment& x) {
      return x.uuid == seg.uuid && x.state == S::kCopyStarted;
    });
    p->manifest_dirty = true;
  } else {
    upload_failures_.fetch_add(1);
    if (BackOffLocked(*p)) {
      Log()->warn("{}: upload of segment {} failed (will retry, {} failures in a row): {}",
                  p->id.name(), base, p->consecutive_failures, st.error().message);
    }
    auto at = std::find_if(p->pending.begin(), p->pending.end(),
                           [&](const storage::SegmentSummary& x) { return x.base_offset > base; });
    p->pending.insert(at, it->second.local);
    p->inflight.erase(it);
  }
  CommitLocked(*p);
  DispatchLocked(p);
}

bool RemoteLogManager::BackOffLocked(TieredPartition& p) {
  const int64_t n = ++p.consecutive_failures;
  int64_t delay = options_.retry_backoff_ms << std::min<int64_t>(n - 1, 10);
  delay = std::min(delay, options_.max_retry_backoff_ms);
  p.backoff_until_ms = clock_->MonotonicMs() + delay;
  return n == 1 || n % 20 == 0;
}

bool RemoteLogManager::WaitForUploads(int64_t timeout_ms) {
  const int64_t deadline = clock_->MonotonicMs() + timeout_ms;
  for (;;) {
    bool all = true;
    for (const auto& p : Partitions()) {
      std::lock_guard lock(p->mu);
      if (p->removed || !p->log || p->fenced || p->reader) continue;
      auto rolled = p->log->RolledSegments();
      // Only committed segments are uploaded (QueueRolledLocked).
      const int64_t committed =
          p->committed_end ? p->committed_end() : std::numeric_limits<int64_t>::max();
      while (!rolled.empty() && rolled.back().end_offset >= committed) rolled.pop_back();
      int64_t end = p->manifest.remote_log_end_offset();
      if (!p->loaded || p->manifest_dirty || !p->inflight.empty() || !p->pending.empty() ||
          (!rolled.empty() && rolled.back().end_offset > end)) {
        all = false;
      }
    }
    if (all) return true;
    if (clock_->MonotonicMs() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace strata::tiered
