#include "tiered/remote_retention.h"

#include <algorithm>
#include <asio/post.hpp>

#include "base/log.h"
#include "tiered/logger.h"
#include "tiered/segment_uploader.h"

namespace strata::tiered {

namespace {
using S = RemoteSegmentState;
}  // namespace

RemoteRetention::RemoteRetention(const TierContext& ctx) : ctx_(ctx) {}

RemoteRetention::~RemoteRetention() { pool_.join(); }

void RemoteRetention::LoadPending() {
  if (ctx_.metadata == nullptr) return;
  std::lock_guard lock(dirs_mu_);
  for (auto& dir : ctx_.metadata->PendingRemoteDeletions()) pending_dirs_.insert(dir);
}

void RemoteRetention::ExpireSoon(std::shared_ptr<TieredPartition> p) {
  // Deleting needs the partition mutex, which uploads hold across store I/O.
  asio::post(pool_, [this, p = std::move(p)] { Expire(*p); });
}

bool RemoteRetention::DeleteSegmentLocked(TieredPartition& p, RemoteSegment& seg) {
  if (seg.state != S::kDeleteStarted) {
    seg.state = S::kDeleteStarted;
    if (!p.WriteManifestLocked().ok()) return false;
  }
  Status st = DeleteRemoteSegment(*ctx_.store, p.dir, seg);
  if (!st.ok()) {
    Log()->warn("{}: deleting remote segment {} failed (will retry): {}", p.id.name(),
                seg.base_offset, st.error().message);
    return false;
  }
  seg.state = S::kDeleteFinished;
  if (!seg.replaced) ctx_.counters->expired.fetch_add(1);
  Log()->info("{}: remote segment {}-{} deleted ({})", p.id.name(), seg.base_offset, seg.end_offset,
              seg.replaced ? "replaced" : "expired");
  return true;
}

bool RemoteRetention::ExpiresLocked(const TieredPartition& p, const RemoteSegment& s, int64_t total,
                                    int64_t now) const {
  const storage::LogConfig& c = p.config;
  const bool by_time = c.cleanup_delete && c.retention_ms >= 0 && s.max_timestamp >= 0 &&
                       now - s.max_timestamp > c.retention_ms;
  const bool by_size =
      c.cleanup_delete && c.retention_bytes >= 0 && total - s.size >= c.retention_bytes;
  // DeleteRecords: segments wholly below the new log start go whatever the
  // cleanup policy says.
  const Offset floor = p.delete_floor.load();
  const bool deleted_records = floor >= 0_o && s.end_offset < floor;
  return by_time || by_size || deleted_records;
}

int RemoteRetention::Expire(TieredPartition& p) {
  std::lock_guard lock(p.mu);
  // A deposed leader must not delete what its successor's manifest lists,
  // nor a reader anything.
  if (p.removed || !p.log || !p.loaded || p.reader || p.SupersededLocked()) return 0;
  // DELETE_FINISHED entries stay listed for one round, then go (pruning only
  // here: the loops below hold references into the list).
  if (p.manifest.PruneDeleted() > 0) p.manifest_dirty = true;
  if (p.manifest_dirty && !p.WriteManifestLocked().ok()) return 0;
  int expired = 0;
  Offset moved_to = kNoOffset;
  // Finish deletions an earlier round (or a crash) left half-done, and
  // delete replaced segments (whose offsets are still held elsewhere).
  bool replaced = false;
  for (RemoteSegment& s : p.manifest.segments()) {
    if (s.state == S::kDeleteStarted && DeleteSegmentLocked(p, s)) {
      replaced = replaced || s.replaced;
      if (s.replaced) continue;
      ++expired;
      moved_to = std::max(moved_to, s.end_offset + 1);
    }
  }
  // Total size = remote segments + local bytes not in remote storage.
  const Offset remote_end = p.manifest.remote_log_end_offset();
  int64_t overlap = 0;
  for (const auto& s : p.log->RolledSegments()) {
    if (s.end_offset <= remote_end) overlap += s.size;
  }
  int64_t total = p.manifest.remote_bytes() + p.log->size_bytes() - overlap;
  const int64_t now = ctx_.clock->NowMs();
  for (RemoteSegment& s : p.manifest.segments()) {
    if (s.state != S::kCopyFinished) continue;
    if (!ExpiresLocked(p, s, total, now) || !DeleteSegmentLocked(p, s)) break;
    ++expired;
    total -= s.size;
    moved_to = std::max(moved_to, s.end_offset + 1);
  }
  if (replaced && expired == 0) (void)p.WriteManifestLocked();
  if (expired > 0) {
    (void)p.WriteManifestLocked();
    MoveLogStartLocked(p, moved_to);
  }
  p.PublishOffsetsLocked();  // saves a moved DeleteRecords floor too
  return expired;
}

void RemoteRetention::MoveLogStartLocked(TieredPartition& p, Offset moved_to) {
  Offset start = p.manifest.remote_log_start_offset();
  if (start < 0_o) start = moved_to;
  const Offset target = std::min(start, p.log->log_end_offset());
  if (target <= p.log->log_start_offset()) return;
  Status st = p.log->DeleteRecordsBefore(target);
  if (!st.ok()) Log()->warn("{}: moving log start: {}", p.id.name(), st.error().message);
}

void RemoteRetention::DeleteDirSoon(const std::string& dir) {
  {
    std::lock_guard lock(dirs_mu_);
    pending_dirs_.insert(dir);
  }
  if (ctx_.metadata != nullptr) {
    Status st = ctx_.metadata->AddPendingRemoteDeletion(dir);
    if (!st.ok()) Log()->warn("recording remote deletion of {}: {}", dir, st.error().message);
  }
  asio::post(pool_, [this] { DeletePendingDirsOnce(); });
}

size_t RemoteRetention::DeletePendingDirsOnce() {
  std::lock_guard pass(pass_mu_);
  std::vector<std::string> dirs;
  {
    std::lock_guard lock(dirs_mu_);
    dirs.assign(pending_dirs_.begin(), pending_dirs_.end());
  }
  for (const std::string& dir : dirs) {
    Status st = ctx_.store->Delete(dir, /*recursive=*/true);
    if (!st.ok()) {
      Log()->warn("deleting remote {} failed (will retry): {}", dir, st.error().message);
      continue;
    }
    Log()->info("deleted remote {}", dir);
    if (ctx_.metadata != nullptr) {
      Status forgot = ctx_.metadata->RemovePendingRemoteDeletion(dir);
      if (!forgot.ok()) Log()->warn("forgetting remote deletion: {}", forgot.error().message);
    }
    std::lock_guard lock(dirs_mu_);
    pending_dirs_.erase(dir);
  }
  return pending_dir_count();
}

size_t RemoteRetention::pending_dir_count() const {
  std::lock_guard lock(dirs_mu_);
  return pending_dirs_.size();
}

Status RemoteRetention::DeleteTopicData(const std::string& topic,
                                        const std::string& topic_id_base64, int32_t partitions) {
  for (int32_t p = 0; p < partitions; ++p) {
    const std::string dir = RemotePartitionDir(topic, p, topic_id_base64);
    Status st = ctx_.store->Delete(dir, /*recursive=*/true);
    if (!st.ok()) return MakeError(st.error().code, dir + ": " + st.error().message);
  }
  return Status::Ok();
}

}  // namespace strata::tiered
