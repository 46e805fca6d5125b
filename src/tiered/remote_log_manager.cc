#include "tiered/remote_log_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <asio/post.hpp>

#include "base/log.h"
#include "base/metrics.h"
#include "tiered/logger.h"
#include "tiered/remote_copier.h"
#include "tiered/remote_retention.h"
#include "tiered/segment_uploader.h"

namespace strata::tiered {

namespace {
using S = RemoteSegmentState;
}  // namespace

// Scrape-time callbacks reach the manager through this hook, which the
// destructor clears (the registry has no unregister).
struct RemoteLogManager::MetricsHook {
  std::mutex mu;
  RemoteLogManager* rlm = nullptr;
};

RemoteLogManager::RemoteLogManager(RemoteLogManagerOptions options, ResilientStorage storage,
                                   Clock* clock)
    : options_(options),
      layers_(std::move(storage)),
      copy_quota_(options.copy_max_bytes_per_second, options.copy_quota_windows,
                  std::chrono::milliseconds(options.copy_quota_window_ms)),
      ctx_{layers_.storage.get(), nullptr, clock, &options_, &counters_, &copy_quota_},
      copier_(std::make_unique<RemoteCopier>(ctx_)),
      retention_(std::make_unique<RemoteRetention>(ctx_)),
      reader_pool_(static_cast<size_t>(std::max(options.reader_threads, 1))),
      read_budget_(std::max<uint64_t>(options.fetch_max_bytes, 1)) {
  RemoteChunkCacheOptions co;
  co.dir = options_.cache_dir;
  co.capacity_bytes = options_.cache_dir.empty() ? 0 : options_.cache_bytes;
  co.chunk_bytes = options_.cache_chunk_bytes;
  co.readahead_chunks = options_.readahead_chunks;
  cache_ = std::make_unique<RemoteChunkCache>(co);
  Status st = cache_->Open();  // on failure reads bypass the cache
  if (!st.ok()) Log()->warn("remote chunk cache disabled: {}", st.error().message);
}

RemoteLogManager::~RemoteLogManager() {
  Stop();
  if (metrics_hook_) {
    std::lock_guard lock(metrics_hook_->mu);
    metrics_hook_->rlm = nullptr;
  }
  reader_pool_.join();
  retention_.reset();  // joins its deletion thread while the partitions still exist
}

void RemoteLogManager::Start() {
  if (started_) return;
  started_ = true;
  retention_->LoadPending();
  if (options_.register_metrics) {
    RegisterMetrics();
    RegisterCacheMetrics();
  }
  copier_->Start();
  scanner_ = std::thread([this] { ScanLoop(); });
}

void RemoteLogManager::Stop() {
  {
    std::lock_guard lock(scan_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  scan_cv_.notify_all();
  for (const auto& p : Partitions()) {
    std::lock_guard lock(p->mu);
    if (p->log) p->log->SetRollListener({});  // the logs may outlive this manager
  }
  if (scanner_.joinable()) scanner_.join();
  copier_->Stop();
}

void RemoteLogManager::ScanLoop() {
  int64_t next_retention = ctx_.clock->MonotonicMs() + options_.retention_interval_ms;
  for (;;) {
    ScanOnce();
    if (ctx_.clock->MonotonicMs() >= next_retention) {
      EnforceRetentionOnce();
      DeletePendingDirsOnce();
      next_retention = ctx_.clock->MonotonicMs() + options_.retention_interval_ms;
    }
    std::unique_lock lock(scan_mu_);
    scan_cv_.wait_for(lock, std::chrono::milliseconds(options_.scan_interval_ms),
                      [this] { return stopping_ || scan_requested_; });
    if (stopping_) return;
    scan_requested_ = false;
  }
}

void RemoteLogManager::RequestScan() {
  {
    std::lock_guard lock(scan_mu_);
    scan_requested_ = true;
  }
  scan_cv_.notify_all();
}

void RemoteLogManager::ScanOnce() {
  for (const auto& p : Partitions()) ScanPartition(p);
}

void RemoteLogManager::ScanPartition(const std::shared_ptr<TieredPartition>& p) {
  std::lock_guard lock(p->mu);
  if (p->removed || !p->log || p->fenced) return;
  if (p->reader) {
    p->FollowSavedOffsets();
    return;
  }
  if (!p->loaded && !p->LoadManifestLocked()) return;
  if (!p->WriteIfDirtyLocked()) return;  // a failed manifest write is retried here
  p->SaveOffsetsLocked();                // retries a failed save
  if (p->SupersededLocked()) return;
  p->RestoreProducerStateLocked();
  copier_->CopyLocked(p);
}

bool RemoteLogManager::WaitForUploads(int64_t timeout_ms) {
  const int64_t deadline = ctx_.clock->MonotonicMs() + timeout_ms;
  for (;;) {
    bool all = true;
    for (const auto& p : Partitions()) {
      std::lock_guard lock(p->mu);
      all = all && RemoteCopier::UploadsDoneLocked(*p);
    }
    if (all) return true;
    if (ctx_.clock->MonotonicMs() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int RemoteLogManager::EnforceRetentionOnce() {
  int expired = 0;
  for (const auto& p : Partitions()) expired += retention_->Expire(*p);
  return expired;
}

Status RemoteLogManager::DeleteRecordsBefore(const TopicPartition& tp, Offset offset) {
  auto p = FindPartition(tp);
  if (!p) return MakeError(Errc::kNotFound, tp.ToString() + " is not tiered");
  Offset prev = p->delete_floor.load();
  while (offset > prev && !p->delete_floor.compare_exchange_weak(prev, offset)) {
  }
  retention_->ExpireSoon(std::move(p));  // off the caller's (network) thread
  return Status::Ok();
}

size_t RemoteLogManager::DeletePendingDirsOnce() { return retention_->DeletePendingDirsOnce(); }

size_t RemoteLogManager::pending_dir_count() const { return retention_->pending_dir_count(); }

Status RemoteLogManager::DeleteTopicData(const std::string& topic,
                                         const std::string& topic_id_base64, int32_t partitions) {
  return retention_->DeleteTopicData(topic, topic_id_base64, partitions);
}

void RemoteLogManager::AddPartition(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                                    const storage::LogConfig& config,
                                    std::function<Offset()> committed_end,
                                    LeaderEpoch leader_epoch) {
  Register(id, std::move(log), config, std::move(committed_end), leader_epoch, /*reader=*/false);
}

void RemoteLogManager::AddReader(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                                 const storage::LogConfig& config) {
  Register(id, std::move(log), config, {}, kNoLeaderEpoch, /*reader=*/true);
}

void RemoteLogManager::Register(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                                const storage::LogConfig& config,
                                std::function<Offset()> committed_end, LeaderEpoch leader_epoch,
                                bool reader) {
  std::lock_guard lock(map_mu_);
  auto& slot = partitions_[id.tp()];
  if (!slot) slot = std::make_shared<TieredPartition>(id, ctx_);
  // A reader uploads nothing: its rolls need no scan.
  log->SetRollListener(reader ? std::function<void()>{} : [this] { RequestScan(); });
  std::lock_guard plock(slot->mu);
  slot->ConfigureLocked(std::move(log), config, std::move(committed_end), leader_epoch, reader);
}

void RemoteLogManager::RemovePartition(const TopicPartition& tp, bool delete_remote) {
  std::shared_ptr<TieredPartition> p;
  {
    std::lock_guard lock(map_mu_);
    auto it = partitions_.find(tp);
    if (it == partitions_.end()) return;
    p = std::move(it->second);
    partitions_.erase(it);
  }
  {
    std::lock_guard lock(p->mu);
    p->removed = true;
    if (p->log) p->log->SetRollListener({});
    p->log.reset();
  }
  if (delete_remote) retention_->DeleteDirSoon(p->dir);
}

bool RemoteLogManager::IsTiered(const TopicPartition& tp) const {
  return FindPartition(tp) != nullptr;
}

bool RemoteLogManager::IsReader(const TopicPartition& tp) const {
  auto p = FindPartition(tp);
  return p != nullptr && p->reader.load();
}

std::shared_ptr<TieredPartition> RemoteLogManager::FindPartition(const TopicPartition& tp) const {
  std::lock_guard lock(map_mu_);
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<TieredPartition>> RemoteLogManager::Partitions() const {
  std::lock_guard lock(map_mu_);
  std::vector<std::shared_ptr<TieredPartition>> out;
  for (const auto& [k, p] : partitions_) out.push_back(p);
  return out;
}

Offset RemoteLogManager::LogStartOffset(const TopicPartition& tp, Offset local_start) const {
  auto p = FindPartition(tp);
  if (!p) return local_start;
  Offset remote = p->remote_start.load();
  Offset floor = p->delete_floor.load();
  // What the metadata store says was uploaded counts at once: a replica
  // that just became leader (and started its log at the active segment)
  // loads the manifest at its next scan, and until then its own figures
  // may predate the upload that made it contiguous.
  if (ctx_.metadata != nullptr) {
    if (auto saved = ctx_.metadata->GetRemoteLogOffsets(p->id.topic_id, p->id.partition)) {
      const Offset saved_start(saved->start);
      if (saved_start >= 0_o) {
        remote = remote >= 0_o ? std::min(remote, saved_start) : saved_start;
      }
      floor = std::max(floor, Offset(saved->log_start));
    }
  }
  Offset start = remote >= 0_o ? std::min(remote, local_start) : local_start;
  return std::max(start, floor);  // DeleteRecords inside a remote segment
}

Offset RemoteLogManager::RemoteLogEndOffset(const TopicPartition& tp) const {
  auto p = FindPartition(tp);
  return p ? p->remote_end.load() : kNoOffset;
}

Result<Bytes> RemoteLogManager::Read(const TopicPartition& tp, Offset offset, int32_t max_bytes) {
  STRATA_ASSIGN_OR_RETURN(RemoteRange range, ReadRange(tp, offset, max_bytes, kNoOffset));
  return range.Gather();
}

Result<RemoteRange> RemoteLogManager::ReadRange(const TopicPartition& tp, Offset offset,
                                                int32_t max_bytes, Offset below) {
  auto p = FindPartition(tp);
  if (!p) return MakeError(Errc::kNotFound, tp.ToString() + " is not tiered");
  if (!p->reader.load()) {
    // A new leadership reads its manifest at its first scan: until then a
    // read is retried by the client, not answered out of range.
    if (!p->loaded.load()) {
      return MakeError(Errc::kUnavailable, tp.ToString() + ": the remote log is being loaded");
    }
    return ReadFromView(*p, offset, max_bytes, below);
  }
  Status fresh = p->RefreshReadView(/*force=*/false);
  if (!fresh.ok()) return fresh.take_error();
  auto data = ReadFromView(*p, offset, max_bytes, below);
  if (data.ok() || data.error().code != Errc::kNotFound) return data;
  // The leader may have replaced the segment (a longer upload covering it)
  // and deleted its objects without moving the saved offsets: load its
  // manifest again once.
  fresh = p->RefreshReadView(/*force=*/true);
  if (!fresh.ok()) return fresh.take_error();
  return ReadFromView(*p, offset, max_bytes, below);
}

Result<RemoteRange> RemoteLogManager::ReadFromView(TieredPartition& p, Offset offset,
                                                   int32_t max_bytes, Offset below) {
  const std::string name = p.id.name();
  // Never takes p.mu: uploads, manifest writes and deletions hold it across
  // store calls, and a read must not wait for them (cached chunks are served
  // even while the store hangs).
  std::shared_ptr<const RemoteManifest> view = p.ReadView();
  if (!view) return MakeError(Errc::kUnavailable, name + ": remote manifest not loaded");
  const RemoteSegment* found = view->FindReadable(offset);
  if (found == nullptr) {
    return MakeError(Errc::kNotFound, fmt::format("{}: no remote segment holds {}", name, offset));
  }
  const RemoteSegment seg = *found;
  // A read from the segment's first offset starts at its first byte and
  // needs no index: a sequential consumer's reads mostly start there, and
  // would otherwise wait a round trip for each segment's .index.
  static const auto kNoIndex = std::make_shared<const Bytes>();
  std::shared_ptr<const Bytes> index =
      offset <= seg.base_offset ? kNoIndex : p.CachedIndex(seg.uuid);
  counters_.reads.fetch_add(1);
  const auto started = std::chrono::steady_clock::now();
  if (!index) {
    auto fetched = store().Get(RemoteObjectPath(p.dir, seg, kRemoteIndexExt));
    if (!fetched.ok()) {
      counters_.read_failures.fetch_add(1);
      return fetched.take_error();
    }
    index = std::make_shared<const Bytes>(std::move(fetched).value());
    p.CacheIndex(seg.uuid, index);
  }
  // The next segment's start is fetched while this read is: a consumer's
  // next fetch, right after this one, finds it under way or done.
  PrefetchNextSegment(
      p, *view, seg,
      IndexPositionFor(*index, seg.base_offset, offset) + uint64_t(std::max(max_bytes, 0)));
  auto data =
      ReadRemoteBatches(store(), cache_.get(), p.dir, seg, *index, offset, max_bytes, below);
  if (!data.ok()) {
    counters_.read_failures.fetch_add(1);
    return data;
  }
  counters_.read_bytes.fetch_add(data->size());
  counters_.read_rate.Record(data->size(), RealMs());
  read_seconds_.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return data;
}

void RemoteLogManager::PrefetchNextSegment(TieredPartition& p, const RemoteManifest& view,
                                           const RemoteSegment& seg, uint64_t read_end) {
  if (!cache_->enabled()) return;
  const uint64_t chunks = uint64_t(std::max(options_.readahead_chunks, 1));
  // Only near the end: the chunk cache's own read-ahead covers the rest.
  if (uint64_t(seg.size) > read_end + chunks * options_.cache_chunk_bytes) return;
  const RemoteSegment* next = view.FindReadable(seg.end_offset + 1);
  if (next == nullptr || next->uuid == seg.uuid) return;
  // Only its .log: the next read starts at its first offset, which needs no
  // index.
  cache_->Prefetch(store(), RemoteObjectPath(p.dir, *next, kRemoteLogExt), uint64_t(next->size), 0,
                   chunks);
}

Result<std::vector<storage::AbortedTxn>> RemoteLogManager::AbortedTransactions(
    const TopicPartition& tp, Offset from, Offset upper) {
  auto p = FindPartition(tp);
  if (!p) return MakeError(Errc::kNotFound, tp.ToString() + " is not tiered");
  std::shared_ptr<const RemoteManifest> view = p->ReadView();
  if (!view) return MakeError(Errc::kUnavailable, p->id.name() + ": remote manifest not loaded");
  std::vector<storage::AbortedTxn> aborted;
  for (const RemoteSegment& seg : view->segments()) {
    // Past `upper` too, until an entry completes the search (Kafka's rule):
    // a marker may lie beyond the bound of the read.
    if (seg.state != RemoteSegmentState::kCopyFinished || seg.end_offset < from) continue;
    if (!seg.has_txn_index) continue;
    const std::string key = seg.uuid + "." + kRemoteTxnIndexExt;
    std::shared_ptr<const Bytes> bytes = p->CachedIndex(key);
    if (!bytes) {
      auto fetched = store().Get(RemoteObjectPath(p->dir, seg, kRemoteTxnIndexExt));
      if (!fetched.ok()) return fetched.take_error();
      bytes = std::make_shared<const Bytes>(std::move(fetched).value());
      p->CacheIndex(key, bytes);
    }
    STRATA_ASSIGN_OR_RETURN(auto entries, storage::DecodeAbortedTxns(*bytes, seg.base_offset));
    storage::AbortedTxnSearch found = storage::CollectAbortedTxns(entries, from, upper);
    aborted.insert(aborted.end(), found.aborted.begin(), found.aborted.end());
    if (found.complete) break;
  }
  return aborted;
}

RemotePartitionStats RemoteLogManager::PartitionStats(const TopicPartition& tp) const {
  RemotePartitionStats st;
  auto p = FindPartition(tp);
  if (!p) return st;
  if (p->reader) {
    // What the leader saved, and whether a read loaded its manifest yet.
    st.manifest_loaded = p->ReadView() != nullptr;
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
  const int64_t now = ctx_.clock->NowMs();
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
  c.uploads = counters_.uploads.load();
  c.upload_failures = counters_.upload_failures.load();
  c.bytes_uploaded = counters_.bytes_uploaded.load();
  c.copy_throttle_ms = counters_.copy_throttle_ms.load();
  c.manifest_writes = counters_.manifest_writes.load();
  c.manifest_write_failures = counters_.manifest_write_failures.load();
  c.remote_reads = counters_.reads.load();
  c.remote_read_failures = counters_.read_failures.load();
  c.remote_read_bytes = counters_.read_bytes.load();
  c.segments_expired = counters_.expired.load();
  const int64_t now = RealMs();
  c.upload_bytes_per_second = counters_.upload_rate.BytesPerSecond(now);
  c.read_bytes_per_second = counters_.read_rate.BytesPerSecond(now);
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
  reg.SetCounterFunc("strata_remote_upload_throttle_seconds_total",
                     "Time uploads waited for remote.log.manager.copy.max.bytes.per.second", {},
                     scalar([](M& m) { return m.counters().copy_throttle_ms / 1000.0; }));
  reg.SetCounterFunc("strata_remote_manifest_write_failures_total",
                     "Failed manifest writes (retried with backoff)", {},
                     scalar([](M& m) { return m.counters().manifest_write_failures; }));
  reg.SetCounterFunc("strata_remote_reads_total", "Fetches served from remote storage", {},
                     scalar([](M& m) { return m.counters().remote_reads; }));
  reg.SetGauge("strata_remote_fetch_bytes_in_flight",
               "Bytes reserved by remote reads in flight (bound: strata.remote.fetch.max.bytes)",
               {}, scalar([](M& m) { return m.read_budget().in_use(); }));
  reg.SetCounterFunc("strata_remote_fetch_budget_waits_total",
                     "Fetches that waited for strata.remote.fetch.max.bytes", {},
                     scalar([](M& m) { return m.read_budget().waits(); }));
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

void RemoteLogManager::RegisterCacheMetrics() {
  auto hook = metrics_hook_;
  auto gauge = [hook](uint64_t (*get)(const ChunkCacheCounters&)) {
    return [hook, get]() {
      std::lock_guard lock(hook->mu);
      return hook->rlm ? double(get(hook->rlm->cache_counters())) : 0.0;
    };
  };
  using C = ChunkCacheCounters;
  auto& reg = metrics::Global();
  reg.SetCounterFunc("strata_remote_cache_hits_total",
                     "Remote chunk reads served without a store Get", {},
                     gauge([](const C& c) { return c.hits; }));
  reg.SetCounterFunc("strata_remote_cache_misses_total",
                     "Remote chunk reads fetched from the store", {},
                     gauge([](const C& c) { return c.misses; }));
  reg.SetGauge("strata_remote_cache_bytes", "Bytes in the on-disk remote chunk cache", {},
               gauge([](const C& c) { return c.current_bytes; }));
  reg.SetCounterFunc("strata_remote_cache_evictions_total", "Chunks evicted from the remote cache",
                     {}, gauge([](const C& c) { return c.evictions; }));
  reg.SetCounterFunc("strata_remote_cache_readahead_total", "Read-ahead chunk fetches started", {},
                     gauge([](const C& c) { return c.readahead_fetches; }));
  reg.SetCounterFunc("strata_remote_cache_readahead_failures_total",
                     "Read-ahead chunk fetches that failed", {},
                     gauge([](const C& c) { return c.readahead_failures; }));
  reg.SetCounterFunc("strata_remote_cache_writes_skipped_total",
                     "Fetched chunks served but not cached: the low-priority writer was behind", {},
                     gauge([](const C& c) { return c.writes_skipped; }));
}

}  // namespace strata::tiered
