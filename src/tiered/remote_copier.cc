#include "tiered/remote_copier.h"

#include <algorithm>
#include <chrono>

#include "base/log.h"
#include "tiered/logger.h"
#include "tiered/segment_uploader.h"

namespace strata::tiered {

namespace {
using S = RemoteSegmentState;

}  // namespace

RemoteCopier::RemoteCopier(const TierContext& ctx) : ctx_(ctx) {}

RemoteCopier::~RemoteCopier() { Stop(); }

void RemoteCopier::Start() {
  for (int i = 0; i < std::max(ctx_.options->copier_threads, 1); ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        std::function<void()> job;
        {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
          if (stopping_) return;
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
      }
    });
  }
}

void RemoteCopier::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    jobs_.clear();
  }
  cv_.notify_all();
  quota_cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void RemoteCopier::CopyLocked(const std::shared_ptr<TieredPartition>& p) {
  // A commit whose manifest write failed or waited out a backoff is
  // written first, no sooner than the backoff ends: nothing is dispatched
  // over a manifest that is not durable.
  if (!p->WriteIfDirtyLocked()) return;
  QueueRolledLocked(*p);
  CommitLocked(*p);
  DispatchLocked(p);
}

void RemoteCopier::QueueRolledLocked(TieredPartition& p) {
  // What remote storage holds, every in-sync replica has, whoever leads
  // next: on one broker the committed end is the log end, so at once.
  const Offset committed = p.CommittedEndLocked();
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

void RemoteCopier::CommitLocked(TieredPartition& p) {
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
      ctx_.counters->uploads.fetch_add(1);
      ctx_.counters->bytes_uploaded.fetch_add(uint64_t(e->size));
      ctx_.counters->upload_rate.Record(uint64_t(e->size), RealMs());
      changed = true;
    }
    p.inflight.erase(p.inflight.begin());
  }
  if (!changed) return;
  p.manifest_dirty = true;
  // While backing off after a failure the write waits for the next scan, so
  // a failing store sees one manifest write per backoff period. A failed
  // write keeps the manifest dirty and backs off; until one succeeds local
  // retention keeps the segments (the copied offset moves only after it).
  if (ctx_.clock->MonotonicMs() < p.backoff_until_ms) return;
  (void)p.WriteManifestLocked();
}

void RemoteCopier::DispatchLocked(const std::shared_ptr<TieredPartition>& p) {
  if (p->fenced || p->manifest_dirty || ctx_.clock->MonotonicMs() < p->backoff_until_ms) return;
  int running = 0;
  for (const auto& [base, f] : p->inflight) running += f.done ? 0 : 1;
  const bool lagging =
      int64_t(p->pending.size()) + running > int64_t(ctx_.options->parallel_lag_segments);
  const int allowed = lagging ? std::max(ctx_.options->copier_threads, 1) : 1;
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
      if (!p->WriteManifestLocked().ok()) return;
    }
    const Offset base = s.base_offset;  // `s` is pending.front(): read before pop
    p->inflight[base] = TieredPartition::Inflight{s, false};
    p->pending.pop_front();
    ++running;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      jobs_.push_back([this, p, base] { RunUpload(p, base); });
    }
    cv_.notify_one();
  }
}

void RemoteCopier::RunUpload(const std::shared_ptr<TieredPartition>& p, Offset base) {
  storage::SegmentSummary local;
  RemoteSegment seg;
  std::shared_ptr<storage::Log> log;
  {
    std::lock_guard lock(p->mu);
    auto it = p->inflight.find(base);
    if (p->removed || it == p->inflight.end()) return;
    RemoteSegment* e = p->manifest.Find(base, it->second.local.end_offset);
    if (e == nullptr) return;
    local = it->second.local;
    seg = *e;
    log = p->log;
  }
  // Dropped like a queued job when stopped: the segment stays COPY_STARTED.
  if (!WaitForCopyQuota()) return;
  Status st = UploadSegment(*ctx_.store, p->dir, local, log->LeaderEpochEntries(), &seg);
  if (st.ok() && ctx_.copy_quota != nullptr) ctx_.copy_quota->Record(local.size, RealMs());
  std::lock_guard lock(p->mu);
  if (p->removed || p->fenced) return;
  auto it = p->inflight.find(base);
  if (it == p->inflight.end()) return;
  if (st.ok()) {
    p->consecutive_failures = 0;
    it->second.done = true;
    if (RemoteSegment* e = p->manifest.Find(base, local.end_offset)) {
      e->has_snapshot = seg.has_snapshot;
      e->has_txn_index = seg.has_txn_index;
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
    ctx_.counters->upload_failures.fetch_add(1);
    if (p->BackOffLocked()) {
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

bool RemoteCopier::WaitForCopyQuota() {
  if (ctx_.copy_quota == nullptr || ctx_.copy_quota->unlimited()) return true;
  for (;;) {
    const std::chrono::milliseconds wait = ctx_.copy_quota->ThrottleTime(RealMs());
    if (wait.count() <= 0) return true;
    // In steps: another copier may have used the quota meanwhile.
    const auto step = std::min(wait, std::chrono::milliseconds(1000));
    ctx_.counters->copy_throttle_ms.fetch_add(uint64_t(step.count()));
    std::unique_lock lock(mu_);
    if (quota_cv_.wait_for(lock, step, [this] { return stopping_; })) return false;
  }
}

bool RemoteCopier::UploadsDoneLocked(TieredPartition& p) {
  if (p.removed || !p.log || p.fenced || p.reader) return true;
  auto rolled = p.log->RolledSegments();
  const Offset committed = p.CommittedEndLocked();  // only these are uploaded
  while (!rolled.empty() && rolled.back().end_offset >= committed) rolled.pop_back();
  const Offset end = p.manifest.remote_log_end_offset();
  return p.loaded && !p.manifest_dirty && p.inflight.empty() && p.pending.empty() &&
         (rolled.empty() || rolled.back().end_offset <= end);
}

}  // namespace strata::tiered
