// RemoteLogManager, continued: remote retention (retention.ms/bytes over
// local + remote), stats and metrics export.
#include <fmt/format.h>

#include <algorithm>
#include <asio/post.hpp>

#include "base/log.h"
#include "base/metrics.h"
#include "tiered/logger.h"
#include "tiered/remote_log_manager.h"
#include "tiered/remote_log_partition.h"
#include "tiered/segment_uploader.h"

namespace strata::tiered {

namespace {
using S = RemoteSegmentState;
}  // namespace

Status RemoteLogManager::DeleteRecordsBefore(const TopicPartition& tp, int64_t offset) {
  auto p = FindPartition(tp);
  if (!p) return MakeError(Errc::kNotFound, tp.ToString() + " is not tiered");
  int64_t prev = p->delete_floor.load();
  while (offset > prev && !p->delete_floor.compare_exchange_weak(prev, offset)) {
  }
  // Deleting needs the partition mutex, which uploads hold across store I/O:
  // do it off the caller's (network) thread.
  asio::post(deletion_pool_, [this, p] { ExpirePartition(*p); });
  return Status::Ok();
}

int RemoteLogManager::EnforceRetentionOnce() {
  int expired = 0;
  for (const auto& p : Partitions()) expired += ExpirePartition(*p);
  return expired;
}

// DELETE_STARTED (durable) -> objects deleted -> DELETE_FINISHED. Returns
// false (entry stays DELETE_STARTED, retried next round) on failure.
bool RemoteLogManager::DeleteSegmentLocked(TieredPartition& p, RemoteSegment& seg) {
  if (seg.state != S::kDeleteStarted) {
    seg.state = S::kDeleteStarted;
    if (!WriteManifestLocked(p).ok()) return false;
  }
  Status st = DeleteRemoteSegment(store(), p.dir, seg);
  if (!st.ok()) {
    Log()->warn("{}: deleting remote segment {} failed (will retry): {}", p.id.name(),
                seg.base_offset, st.error().message);
    return false;
  }
  seg.state = S::kDeleteFinished;
  if (!seg.replaced) expired_.fetch_add(1);
  Log()->info("{}: remote segment {}-{} deleted ({})", p.id.name(), seg.base_offset, seg.end_offset,
              seg.replaced ? "replaced" : "expired");
  return true;
}

int RemoteLogManager::ExpirePartition(TieredPartition& p) {
  std::lock_guard lock(p.mu);
  // A deposed leader must not delete what its successor's manifest lists,
  // nor a reader anything.
  if (p.removed || !p.log || !p.loaded || p.reader || SupersededLocked(p)) return 0;
  // DELETE_FINISHED entries stay listed for one round, then go (pruning only
  // here: the loops below hold references into the list).
  if (p.manifest.PruneDeleted() > 0) p.manifest_dirty = true;
  if (p.manifest_dirty && !WriteManifestLocked(p).ok()) return 0;
  int expired = 0;
  int64_t moved_to = -1;
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
  const storage::LogConfig& c = p.config;
  // DeleteRecords: segments wholly below the new log start go whatever the
  // cleanup policy says.
  const int64_t floor = p.delete_floor.load();
  const int64_t now = clock_->NowMs();
  const int64_t remote_end = p.manifest.remote_log_end_offset();
  // Total size = remote segments + local bytes not in remote storage.
  int64_t overlap = 0;
  for (const auto& s : p.log->RolledSegments()) {
    if (s.end_offset <= remote_end) overlap += s.size;
  }
  int64_t total = p.manifest.remote_bytes() + p.log->size_bytes() - overlap;
  for (RemoteSegment& s : p.manifest.segments()) {
    if (s.state != S::kCopyFinished) continue;
    bool by_time = c.cleanup_delete && c.retention_ms >= 0 && s.max_timestamp >= 0 &&
                   now - s.max_timestamp > c.retention_ms;
    bool by_size =
        c.cleanup_delete && c.retention_bytes >= 0 && total - s.size >= c.retention_bytes;
    bool deleted_records = floor >= 0 && s.end_offset < floor;
    if (!by_time && !by_size && !deleted_records) break;
    if (!DeleteSegmentLocked(p, s)) break;
    ++expired;
    total -= s.size;
    moved_to = std::max(moved_to, s.end_offset + 1);
  }
  if (replaced && expired == 0) (void)WriteManifestLocked(p);
  if (expired > 0) {
    (void)WriteManifestLocked(p);
    int64_t start = p.manifest.remote_log_start_offset();
    if (start < 0) start = moved_to;
    // Local copies of expired offsets go too, so the log start moves up.
    int64_t target = std::min(start, p.log->log_end_offset());
    if (target > p.log->log_start_offset()) {
      Status st = p.log->DeleteRecordsBefore(target);
      if (!st.ok()) Log()->warn("{}: moving log start: {}", p.id.name(), st.error().message);
    }
  }
  PublishOffsetsLocked(p);  // saves a moved DeleteRecords floor too
  return expired;
}

RemotePartitionStats RemoteLogManager::PartitionStats(const TopicPartition& tp) const {
  RemotePartitionStats st;
  auto p = FindPartition(tp);
  if (!p) return st;
  if (p->reader) {
    // What the leader saved, and whether a read loaded its manifest yet.
    std::lock_guard lock(p->view_mu);
    st.manifest_loaded = p->read_view != nullptr;
    st.remote_log_start = p->remote_start.load();
    st.remote_log_end = p->remote_end.load();
    return st;
  }
  std::lock_guard lock(p->mu);
  st.manifest_loaded = p->loaded;
  st.remote_log_start = p->manifest.remote_log_start_offset();
  st.remote_log_end = p->manifest.remote_log_end_offset();
  st.remote_bytes = p->manifest.remote_bytes();
  for (const auto& s : p->manifest.segments()) st.remote_segments += s.state == S::kCopyFinished;
  if (!p->log) return st;
  const int64_t now = clock_->NowMs();
  int64_t oldest_ts = -1;
  for (const auto& s : p->log->RolledSegments()) {
    if (s.end_offset <= st.remote_log_end) continue;
    ++st.lag_segments;
    st.lag_bytes += s.size;
    if (oldest_ts < 0) oldest_ts = s.max_timestamp;
  }
  if (oldest_ts >= 0) st.lag_seconds = std::max<int64_t>(0, (now - oldest_ts) / 1000);
  return st;
}

std::vector<std::pair<TopicPartition, RemotePartitionStats>> RemoteLogManager::AllPartitionStats()
    const {
  std::vector<std::pair<TopicPartition, RemotePartitionStats>> out;
  for (const auto& p : Partitions()) {
    if (!p->reader) out.emplace_back(p->id.tp(), PartitionStats(p->id.tp()));
  }
  return out;
}

RemoteLogCounters RemoteLogManager::counters() const {
  RemoteLogCounters c;
  c.uploads = uploads_.load();
  c.upload_failures = upload_failures_.load();
  c.bytes_uploaded = bytes_uploaded_.load();
  c.manifest_writes = manifest_writes_.load();
  c.manifest_write_failures = manifest_write_failures_.load();
  c.remote_reads = reads_.load();
  c.remote_read_failures = read_failures_.load();
  c.remote_read_bytes = read_bytes_.load();
  c.segments_expired = expired_.load();
  return c;
}

BreakerState RemoteLogManager::breaker_state() const {
  return layers_.breaker ? layers_.breaker->state() : BreakerState::kClosed;
}

ResilienceCounters RemoteLogManager::resilience_counters() const { return layers_.counters(); }

void RemoteLogManager::RegisterMetrics() {
  metrics_hook_ = std::make_shared<MetricsHook>();
  metrics_hook_->rlm = this;
  auto hook = metrics_hook_;
  using Values = std::vector<std::pair<metrics::Labels, double>>;
  // Per-partition lag families.
  auto family = [hook](auto field) {
    return [hook, field]() {
      Values out;
      std::lock_guard lock(hook->mu);
      if (!hook->rlm) return out;
      for (const auto& [tp, st] : hook->rlm->AllPartitionStats()) {
        out.push_back({{{"partition", tp.ToString()}}, double(field(st))});
      }
      return out;
    };
  };
  auto& reg = metrics::Global();
  reg.SetGaugeFamily("strata_remote_upload_lag_segments",
                     "Rolled segments not yet in remote storage",
                     family([](const RemotePartitionStats& s) { return s.lag_segments; }));
  reg.SetGaugeFamily("strata_remote_upload_lag_bytes", "Bytes of rolled segments not yet uploaded",
                     family([](const RemotePartitionStats& s) { return s.lag_bytes; }));
  reg.SetGaugeFamily("strata_remote_upload_lag_seconds",
                     "Age of the oldest un-uploaded rolled segment",
                     family([](const RemotePartitionStats& s) { return s.lag_seconds; }));
  reg.SetGaugeFamily("strata_remote_log_bytes", "Bytes in remote storage",
                     family([](const RemotePartitionStats& s) { return s.remote_bytes; }));
  // Manager-wide values (counters exported as gauges over the atomics).
  auto scalar = [hook](auto get) {
    return [hook, get]() {
      std::lock_guard lock(hook->mu);
      return hook->rlm ? double(get(*hook->rlm)) : 0.0;
    };
  };
  using M = RemoteLogManager;
  reg.SetCounterFunc("strata_remote_uploads_total", "Segments uploaded", {},
                     scalar([](M& m) { return m.counters().uploads; }));
  reg.SetCounterFunc("strata_remote_upload_failures_total", "Failed upload attempts", {},
                     scalar([](M& m) { return m.counters().upload_failures; }));
  reg.SetCounterFunc("strata_remote_uploaded_bytes_total", "Segment bytes uploaded", {},
                     scalar([](M& m) { return m.counters().bytes_uploaded; }));
  reg.SetCounterFunc("strata_remote_manifest_write_failures_total",
                     "Failed manifest writes (retried with backoff)", {},
                     scalar([](M& m) { return m.counters().manifest_write_failures; }));
  reg.SetCounterFunc("strata_remote_reads_total", "Fetches served from remote storage", {},
                     scalar([](M& m) { return m.counters().remote_reads; }));
  reg.SetCounterFunc("strata_remote_read_failures_total", "Remote reads that failed", {},
                     scalar([](M& m) { return m.counters().remote_read_failures; }));
  reg.SetCounterFunc("strata_remote_segments_expired_total", "Remote segments deleted by retention",
                     {}, scalar([](M& m) { return m.counters().segments_expired; }));
  reg.SetGauge("strata_remote_pending_dir_deletions",
               "Remote directories of deleted topics not yet removed", {},
               scalar([](M& m) { return m.pending_dir_count(); }));
  reg.SetGauge("strata_remote_breaker_state",
               "Remote storage breaker: 0 closed, 1 open, 2 half-open", {},
               scalar([](M& m) { return int(m.breaker_state()); }));
  const std::pair<const char*, uint64_t (*)(const ResilienceCounters&)> decorators[] = {
      {"retry_calls", [](const ResilienceCounters& c) { return c.retry.calls; }},
      {"retry_attempts", [](const ResilienceCounters& c) { return c.retry.attempts; }},
      {"retry_retries", [](const ResilienceCounters& c) { return c.retry.retries; }},
      {"retry_failures", [](const ResilienceCounters& c) { return c.retry.failures; }},
      {"retry_exhausted", [](const ResilienceCounters& c) { return c.retry.exhausted; }},
      {"hedge_reads", [](const ResilienceCounters& c) { return c.hedge.reads; }},
      {"hedge_fired", [](const ResilienceCounters& c) { return c.hedge.hedges_fired; }},
      {"hedge_won", [](const ResilienceCounters& c) { return c.hedge.hedges_won; }},
      {"breaker_calls", [](const ResilienceCounters& c) { return c.breaker.calls; }},
      {"breaker_failures", [](const ResilienceCounters& c) { return c.breaker.failures; }},
      {"breaker_rejected", [](const ResilienceCounters& c) { return c.breaker.rejected; }},
      {"breaker_opened", [](const ResilienceCounters& c) { return c.breaker.opened; }},
  };
  for (const auto& [name, get] : decorators) {
    auto fn = get;
    reg.SetCounterFunc(fmt::format("strata_remote_storage_{}_total", name),
                       "RemoteStorage decorator counter", {},
                       scalar([fn](M& m) { return fn(m.resilience_counters()); }));
  }
}

}  // namespace strata::tiered
