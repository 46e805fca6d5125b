#include "tiered/remote_log_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <asio/post.hpp>

#include "base/log.h"
#include "base/metrics.h"
#include "tiered/logger.h"
#include "tiered/remote_log_partition.h"
#include "tiered/segment_uploader.h"

namespace strata::tiered {

namespace {
using S = RemoteSegmentState;
}  // namespace

RemoteLogManager::RemoteLogManager(RemoteLogManagerOptions options, ResilientStorage storage,
                                   Clock* clock)
    : options_(options),
      layers_(std::move(storage)),
      clock_(clock),
      reader_pool_(static_cast<size_t>(std::max(options.reader_threads, 1))),
      deletion_pool_(1) {
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
  deletion_pool_.join();
}

void RemoteLogManager::Start() {
  if (started_) return;
  started_ = true;
  if (metadata_ != nullptr) {
    std::lock_guard lock(deletions_mu_);
    for (auto& dir : metadata_->PendingRemoteDeletions()) pending_dirs_.insert(dir);
  }
  if (options_.register_metrics) {
    RegisterMetrics();
    RegisterCacheMetrics();
  }
  for (int i = 0; i < std::max(options_.copier_threads, 1); ++i) {
    copiers_.emplace_back([this] {
      for (;;) {
        std::function<void()> job;
        {
          std::unique_lock lock(pool_mu_);
          pool_cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
          if (stopping_) return;
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
      }
    });
  }
  scanner_ = std::thread([this] { ScanLoop(); });
}

void RemoteLogManager::Stop() {
  {
    std::scoped_lock lock(pool_mu_, scan_mu_);
    if (stopping_) return;
    stopping_ = true;
    jobs_.clear();  // their segments stay COPY_STARTED and are redone after restart
  }
  pool_cv_.notify_all();
  scan_cv_.notify_all();
  for (const auto& p : Partitions()) {
    std::lock_guard lock(p->mu);
    if (p->log) p->log->SetRollListener({});  // the logs may outlive this manager
  }
  if (scanner_.joinable()) scanner_.join();
  for (auto& t : copiers_) {
    if (t.joinable()) t.join();
  }
}

void RemoteLogManager::ScanLoop() {
  int64_t next_retention = clock_->MonotonicMs() + options_.retention_interval_ms;
  for (;;) {
    ScanOnce();
    if (clock_->MonotonicMs() >= next_retention) {
      EnforceRetentionOnce();
      DeletePendingDirsOnce();
      next_retention = clock_->MonotonicMs() + options_.retention_interval_ms;
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

void RemoteLogManager::AddPartition(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                                    const storage::LogConfig& config,
                                    std::function<int64_t()> committed_end, int32_t leader_epoch) {
  Register(id, std::move(log), config, std::move(committed_end), leader_epoch, /*reader=*/false);
}

void RemoteLogManager::AddReader(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                                 const storage::LogConfig& config) {
  Register(id, std::move(log), config, {}, /*leader_epoch=*/-1, /*reader=*/true);
}

void RemoteLogManager::Register(const RemotePartitionId& id, std::shared_ptr<storage::Log> log,
                                const storage::LogConfig& config,
                                std::function<int64_t()> committed_end, int32_t leader_epoch,
                                bool reader) {
  std::lock_guard lock(map_mu_);
  auto& slot = partitions_[id.tp()];
  // A reader uploads nothing: its rolls need no scan.
  log->SetRollListener(reader ? std::function<void()>{} : [this] { RequestScan(); });
  if (slot) {
    std::lock_guard plock(slot->mu);
    if (slot->log && slot->log != log) slot->log->SetRollListener({});
    slot->log = std::move(log);
    slot->config = config;
    slot->committed_end = std::move(committed_end);
    if (slot->leader_epoch != leader_epoch || slot->reader != reader) {
      // A new leadership takes the remote log over again (load and claim);
      // uploads still running for the old one find nothing to finish. A
      // reader keeps the read view it has until a read finds it stale.
      slot->leader_epoch = leader_epoch;
      slot->reader = reader;
      slot->fenced = false;
      slot->loaded = false;
      slot->manifest_dirty = false;
      slot->pending.clear();
      slot->inflight.clear();
      if (!reader) {
        std::lock_guard view(slot->view_mu);
        slot->view_offsets.reset();
      }
    }
    return;
  }
  slot = std::make_shared<TieredPartition>();
  slot->id = id;
  slot->dir = RemotePartitionDir(id.topic, id.partition, id.topic_id);
  slot->log = std::move(log);
  slot->config = config;
  slot->committed_end = std::move(committed_end);
  slot->leader_epoch = leader_epoch;
  slot->reader = reader;
  if (metadata_ == nullptr) return;
  if (auto saved = metadata_->GetRemoteLogOffsets(id.topic_id, id.partition)) {
    slot->saved_offsets = *saved;
    slot->remote_start.store(saved->start);
    slot->remote_end.store(saved->end);
    slot->delete_floor.store(saved->log_start);
  }
}

void RemoteLogManager::FollowSavedOffsets(TieredPartition& p) {
  if (metadata_ == nullptr) return;
  auto saved = metadata_->GetRemoteLogOffsets(p.id.topic_id, p.id.partition);
  if (!saved) return;
  p.remote_start.store(saved->start);
  p.remote_end.store(saved->end);
  p.delete_floor.store(saved->log_start);
}

Status RemoteLogManager::RefreshReadView(TieredPartition& p, bool force) {
  std::lock_guard refresh(p.refresh_mu);
  std::optional<cluster::RemoteLogOffsets> saved;
  if (metadata_ != nullptr) saved = metadata_->GetRemoteLogOffsets(p.id.topic_id, p.id.partition);
  if (!saved || saved->end < 0) {
    return MakeError(Errc::kNotFound, p.id.name() + ": nothing in remote storage yet");
  }
  if (!force) {
    std::lock_guard lock(p.view_mu);
    if (p.read_view && p.view_offsets == saved) return Status::Ok();
  }
  // The leader saves the offsets only once the manifest they name is
  // durable, and a new leader writes its manifest before claiming them: a
  // missing manifest is a store problem, retriable.
  const std::string name = ManifestName(saved->leader_epoch);
  auto data = store().Get(p.dir + "/" + name);
  if (!data.ok()) {
    return MakeError(
        data.error().code == Errc::kNotFound ? Errc::kUnavailable : data.error().code,
        fmt::format("{}: reading remote manifest {}: {}", p.id.name(), name, data.error().message));
  }
  auto parsed = RemoteManifest::Parse(*data);
  if (!parsed.ok()) {
    return MakeError(Errc::kUnavailable, fmt::format("{}: bad remote manifest {}: {}", p.id.name(),
                                                     name, parsed.error().message));
  }
  auto view = std::make_shared<const RemoteManifest>(std::move(parsed).value());
  std::lock_guard lock(p.view_mu);
  p.read_view = std::move(view);
  p.view_offsets = saved;
  return Status::Ok();
}

void RemoteLogManager::PublishOffsetsLocked(TieredPartition& p) {
  if (!p.loaded) return;
  auto view = std::make_shared<const RemoteManifest>(p.manifest);
  {
    std::lock_guard lock(p.view_mu);
    p.read_view = std::move(view);
  }
  p.remote_start.store(p.manifest.remote_log_start_offset());
  p.remote_end.store(p.manifest.remote_log_end_offset());
  // Reads see a change at once (a segment being deleted is hidden before
  // its manifest write); the metadata store only what a durable manifest
  // says.
  SaveOffsetsLocked(p);
}

cluster::RemoteLogOffsets RemoteLogManager::OffsetsLocked(const TieredPartition& p) const {
  return {p.manifest.remote_log_start_offset(), p.manifest.remote_log_end_offset(),
          p.delete_floor.load(), p.leader_epoch};
}

void RemoteLogManager::SaveOffsetsLocked(TieredPartition& p) {
  if (!p.loaded || p.manifest_dirty || p.fenced || p.reader) return;
  const cluster::RemoteLogOffsets now = OffsetsLocked(p);
  if (metadata_ == nullptr || now == p.saved_offsets) return;
  Status st = metadata_->SetRemoteLogOffsets(p.id.topic_id, p.id.partition, now);
  if (st.ok()) {
    p.saved_offsets = now;
    // Every replica deletes local data below the saved end (followers read
    // it from the metadata store), the leader too: only what a successor
    // would find through the store may go.
    if (now.end >= 0) p.log->SetRemoteCopiedOffset(now.end + 1);
  } else if (st.error().code == Errc::kFenced) {
    FenceLocked(p, st.error().message);
  } else {
    Log()->warn("{}: saving remote log offsets: {}", p.id.name(), st.error().message);
  }
}

void RemoteLogManager::FenceLocked(TieredPartition& p, const std::string& why) {
  if (p.fenced) return;
  p.fenced = true;
  Log()->warn("{}: stopped tiering for leader epoch {}: {}", p.id.name(), p.leader_epoch, why);
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
  std::string dir;
  {
    std::lock_guard lock(p->mu);
    p->removed = true;
    if (p->log) p->log->SetRollListener({});
    p->log.reset();
    dir = p->dir;
  }
  if (!delete_remote) return;
  {
    std::lock_guard lock(deletions_mu_);
    pending_dirs_.insert(dir);
  }
  if (metadata_ != nullptr) {
    Status st = metadata_->AddPendingRemoteDeletion(dir);
    if (!st.ok()) Log()->warn("recording remote deletion of {}: {}", dir, st.error().message);
  }
  // Off the caller's (network) thread: the store may be slow or down.
  asio::post(deletion_pool_, [this] { DeletePendingDirsOnce(); });
}

size_t RemoteLogManager::DeletePendingDirsOnce() {
  std::lock_guard pass(deletion_pass_mu_);
  std::vector<std::string> dirs;
  {
    std::lock_guard lock(deletions_mu_);
    dirs.assign(pending_dirs_.begin(), pending_dirs_.end());
  }
  for (const std::string& dir : dirs) {
    Status st = store().Delete(dir, /*recursive=*/true);
    if (!st.ok()) {
      Log()->warn("deleting remote {} failed (will retry): {}", dir, st.error().message);
      continue;
    }
    Log()->info("deleted remote {}", dir);
    if (metadata_ != nullptr) {
      Status forgot = metadata_->RemovePendingRemoteDeletion(dir);
      if (!forgot.ok()) Log()->warn("forgetting remote deletion: {}", forgot.error().message);
    }
    std::lock_guard lock(deletions_mu_);
    pending_dirs_.erase(dir);
  }
  return pending_dir_count();
}

Status RemoteLogManager::DeleteTopicData(const std::string& topic,
                                         const std::string& topic_id_base64, int32_t partitions) {
  for (int32_t p = 0; p < partitions; ++p) {
    std::string dir = RemotePartitionDir(topic, p, topic_id_base64);
    Status st = store().Delete(dir, /*recursive=*/true);
    if (!st.ok()) return MakeError(st.error().code, dir + ": " + st.error().message);
  }
  return Status::Ok();
}

size_t RemoteLogManager::pending_dir_count() const {
  std::lock_guard lock(deletions_mu_);
  return pending_dirs_.size();
}

bool RemoteLogManager::IsTiered(const TopicPartition& tp) const {
  return FindPartition(tp) != nullptr;
}

bool RemoteLogManager::IsReader(const TopicPartition& tp) const {
  auto p = FindPartition(tp);
  return p != nullptr && p->reader.load();
}

std::shared_ptr<RemoteLogManager::TieredPartition> RemoteLogManager::FindPartition(
    const TopicPartition& tp) const {
  std::lock_guard lock(map_mu_);
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<RemoteLogManager::TieredPartition>> RemoteLogManager::Partitions()
    const {
  std::lock_guard lock(map_mu_);
  std::vector<std::shared_ptr<TieredPartition>> out;
  for (const auto& [k, p] : partitions_) out.push_back(p);
  return out;
}

int64_t RemoteLogManager::LogStartOffset(const TopicPartition& tp, int64_t local_start) const {
  auto p = FindPartition(tp);
  if (!p) return local_start;
  int64_t remote = p->remote_start.load();
  int64_t floor = p->delete_floor.load();
  // What the metadata store says was uploaded counts at once: a replica
  // that just became leader (and started its log at the active segment)
  // loads the manifest at its next scan, and until then its own figures
  // may predate the upload that made it contiguous.
  if (metadata_ != nullptr) {
    if (auto saved = metadata_->GetRemoteLogOffsets(p->id.topic_id, p->id.partition)) {
      if (saved->start >= 0) remote = remote >= 0 ? std::min(remote, saved->start) : saved->start;
      floor = std::max(floor, saved->log_start);
    }
  }
  int64_t start = remote >= 0 ? std::min(remote, local_start) : local_start;
  return std::max(start, floor);  // DeleteRecords inside a remote segment
}

int64_t RemoteLogManager::RemoteLogEndOffset(const TopicPartition& tp) const {
  auto p = FindPartition(tp);
  return p ? p->remote_end.load() : -1;
}

Result<Bytes> RemoteLogManager::Read(const TopicPartition& tp, int64_t offset, int32_t max_bytes) {
  auto p = FindPartition(tp);
  if (!p) return MakeError(Errc::kNotFound, tp.ToString() + " is not tiered");
  if (!p->reader.load()) {
    // A new leadership reads its manifest at its first scan: until then a
    // read is retried by the client, not answered out of range.
    if (!p->loaded.load()) {
      return MakeError(Errc::kUnavailable, tp.ToString() + ": the remote log is being loaded");
    }
    return ReadFromView(*p, offset, max_bytes);
  }
  Status fresh = RefreshReadView(*p, /*force=*/false);
  if (!fresh.ok()) return fresh.take_error();
  auto data = ReadFromView(*p, offset, max_bytes);
  if (data.ok() || data.error().code != Errc::kNotFound) return data;
  // The leader may have replaced the segment (a longer upload covering it)
  // and deleted its objects without moving the saved offsets: load its
  // manifest again once.
  fresh = RefreshReadView(*p, /*force=*/true);
  if (!fresh.ok()) return fresh.take_error();
  return ReadFromView(*p, offset, max_bytes);
}

Result<Bytes> RemoteLogManager::ReadFromView(TieredPartition& p, int64_t offset,
                                             int32_t max_bytes) {
  const std::string name = p.id.name();
  // Never takes p.mu: uploads, manifest writes and deletions hold it across
  // store calls, and a read must not wait for them (cached chunks are served
  // even while the store hangs).
  std::shared_ptr<const RemoteManifest> view;
  {
    std::lock_guard lock(p.view_mu);
    view = p.read_view;
  }
  if (!view) return MakeError(Errc::kUnavailable, name + ": remote manifest not loaded");
  const RemoteSegment* found = view->FindReadable(offset);
  if (found == nullptr) {
    return MakeError(Errc::kNotFound, fmt::format("{}: no remote segment holds {}", name, offset));
  }
  const RemoteSegment seg = *found;
  const std::string& dir = p.dir;
  std::shared_ptr<const Bytes> index;
  {
    std::lock_guard lock(p.index_mu);
    auto it = p.index_cache.find(seg.uuid);
    if (it != p.index_cache.end()) index = it->second;
  }
  reads_.fetch_add(1);
  const auto started = std::chrono::steady_clock::now();
  if (!index) {
    auto fetched = store().Get(RemoteObjectPath(dir, seg, kRemoteIndexExt));
    if (!fetched.ok()) {
      read_failures_.fetch_add(1);
      return fetched.take_error();
    }
    index = std::make_shared<const Bytes>(std::move(fetched).value());
    std::lock_guard lock(p.index_mu);
    if (p.index_cache.emplace(seg.uuid, index).second) {
      p.index_lru.push_back(seg.uuid);
      if (p.index_lru.size() > TieredPartition::kCachedIndexes) {
        p.index_cache.erase(p.index_lru.front());
        p.index_lru.pop_front();
      }
    }
  }
  auto data =
      ReadRemoteSegmentWithIndex(store(), cache_.get(), dir, seg, *index, offset, max_bytes);
  if (!data.ok()) {
    read_failures_.fetch_add(1);
    return data;
  }
  read_bytes_.fetch_add(data->size());
  read_seconds_.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return data;
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
}

}  // namespace strata::tiered
