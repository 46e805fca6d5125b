#include "broker/topic_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "base/log.h"
#include "broker/local_replicas.h"
#include "broker/logger.h"
#include "broker/remote_stack_config.h"
#include "broker/topic_validation.h"

namespace strata::broker {

namespace {

storage::CleanerConfig CleanerConfigFrom(const config::BrokerConfig& config) {
  storage::CleanerConfig c;
  c.threads = static_cast<int>(config.GetLong("log.cleaner.threads"));
  c.backoff_ms = config.GetLong("log.cleaner.backoff.ms");
  c.dedupe_buffer_bytes = config.GetLong("log.cleaner.dedupe.buffer.size");
  return c;
}

}  // namespace

TopicManager::TopicManager(const config::BrokerConfig& config, cluster::Metadata& metadata,
                           Clock* clock, Env* env)
    : config_(config),
      metadata_(metadata),
      store_(metadata),
      self_(config.node_id()),
      cluster_metadata_(config.Get("strata.metadata.backend") == "etcd"),
      clock_(clock),
      env_(env),
      infos_(config),
      throttles_(config, clock) {
  if (config_.GetBool("log.cleaner.enable")) {
    cleaner_ = std::make_unique<storage::LogCleaner>(CleanerConfigFrom(config_), clock_);
  }
  partitions_ =
      std::make_unique<PartitionManager>(config_.log_dir(), self_, clock_, env_, cleaner_.get());
  DiskHighMarkOptions hm;
  hm.log_dir = config_.log_dir();
  hm.max_bytes = config_.GetLong("strata.log.dir.high.mark.bytes");
  hm.max_percent = static_cast<int>(config_.GetLong("strata.log.dir.high.mark.percent"));
  high_mark_ = std::make_unique<DiskHighMark>(hm, clock_, [this] { return TotalLogBytes(); });
  PeerLivenessOptions liveness;
  liveness.enabled = cluster_metadata_ && config_.GetBool("strata.broker.liveness.probe.enable");
  peers_ = std::make_unique<PeerLiveness>(metadata_, self_, liveness);
  fetchers_ = std::make_unique<ReplicaFetchers>(
      config_, metadata_.view(), self_, throttles_.follower(),
      [peers = peers_.get()](cluster::NodeId leader) { peers->Suspect(leader); });
  IsrUpdater::Host& host = *this;  // a private base: converted here
  isr_ = std::make_unique<IsrUpdater>(host, config_, metadata_, clock_, *peers_, progress_);
  ReplicaReconciler::Host& replica_host = *this;
  replicas_ = std::make_unique<ReplicaReconciler>(metadata_.view(), self_, clock_, *partitions_,
                                                  infos_, replica_host);
}

TopicManager::~TopicManager() {
  if (reconciler_) reconciler_->Stop();
  if (isr_) isr_->Stop();
  fetchers_->Shutdown();
  if (cleaner_) cleaner_->Stop();
}

Status TopicManager::StartRemote() {
  if (!config_.GetBool("remote.log.storage.system.enable")) return Status::Ok();
  const std::string& uri = config_.Get("strata.remote.storage.uri");
  if (uri.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     "remote.log.storage.system.enable needs strata.remote.storage.uri");
  }
  tiered::RemoteLogManagerOptions o;
  o.copier_threads =
      static_cast<int>(config_.GetLong("remote.log.manager.copier.thread.pool.size"));
  o.reader_threads = static_cast<int>(config_.GetLong("remote.log.reader.threads"));
  o.parallel_lag_segments =
      static_cast<int>(config_.GetLong("strata.remote.upload.parallel.lag.segments"));
  o.retention_interval_ms = config_.GetLong("remote.log.manager.task.interval.ms");
  o.cache_bytes = static_cast<uint64_t>(config_.GetLong("strata.remote.cache.bytes"));
  o.cache_chunk_bytes = static_cast<uint64_t>(config_.GetLong("strata.remote.cache.chunk.bytes"));
  o.readahead_chunks = static_cast<int>(config_.GetLong("strata.remote.cache.readahead.chunks"));
  o.cache_dir = config_.Get("strata.remote.cache.dir");
  o.fetch_max_bytes = static_cast<uint64_t>(config_.GetLong("strata.remote.fetch.max.bytes"));
  const int64_t copy_cap = config_.GetLong("remote.log.manager.copy.max.bytes.per.second");
  o.copy_max_bytes_per_second =
      copy_cap == std::numeric_limits<int64_t>::max() ? 0 : static_cast<uint64_t>(copy_cap);
  o.copy_quota_windows =
      static_cast<int>(config_.GetLong("remote.log.manager.copy.quota.window.num"));
  o.copy_quota_window_ms =
      config_.GetLong("remote.log.manager.copy.quota.window.size.seconds") * 1000;
  if (o.cache_dir.empty()) {
    o.cache_dir = (std::filesystem::path(config_.log_dir()) / ".remote-cache").string();
  }
  auto opened = tiered::RemoteLogManager::Open(uri, o, RemoteStackOptionsFrom(config_), clock_);
  if (!opened.ok()) {
    return MakeError(opened.error().code,
                     fmt::format("remote storage {}: {}", uri, opened.error().message));
  }
  remote_ = std::move(opened).value();
  remote_->AttachMetadataStore(&store_);
  Log()->info("tiered storage enabled: {}", uri);
  return Status::Ok();
}

void TopicManager::UpdateTiering(const TopicInfo& info,
                                 const std::shared_ptr<Partition>& partition) {
  if (!remote_) return;
  const TopicPartition& tp = partition->tp();
  const tiered::RemotePartitionId id{tp.topic, tp.partition, partition->topic_id()};
  // Only the leader uploads and applies remote retention, and only what is
  // committed and decided (below its last stable offset, as Kafka's
  // RemoteLogManager copies).
  if (info.log_config.remote_storage_enable && partition->leader() == self_) {
    std::weak_ptr<Partition> weak = partition;
    // In a cluster each leadership writes its own manifest and fences the
    // ones before it (RemoteLogManager::AddPartition).
    const cluster::LeaderEpoch epoch =
        cluster_metadata_ ? partition->leader_epoch() : cluster::kNoLeaderEpoch;
    remote_->AddPartition(
        id, partition->log(), info.log_config,
        [this, weak]() -> Offset {
          auto p = weak.lock();
          if (!p) return Offset(0);
          HighWatermark(*p);  // moved first, as far as the ISR allows
          return p->last_stable_offset();
        },
        epoch);
  } else if (info.log_config.remote_storage_enable && cluster_metadata_) {
    // A follower's replica: consumers may read from it (KIP-392), below its
    // local log start from the leader's remote log, which it never changes.
    remote_->AddReader(id, partition->log(), info.log_config);
  } else if (remote_->IsTiered(tp)) {
    remote_->RemovePartition(tp, /*delete_remote=*/false);
  }
}

void TopicManager::SyncFetcher(const TopicInfo& info, const std::shared_ptr<Partition>& partition) {
  fetchers_->Sync(partition, info.tiered(), FollowerThrottled(partition));
}

void TopicManager::Release(const TopicPartition& tp, bool delete_remote) {
  fetchers_->Stop(tp);
  if (remote_) remote_->RemovePartition(tp, delete_remote);
}

// Installs the dynamic broker configs of the view; true when they changed.
bool TopicManager::RefreshDynamicConfigs() {
  config::BrokerConfig::DynamicConfigs now;
  now.broker = metadata_.BrokerConfigs(std::to_string(self_.value()));
  now.cluster_default = metadata_.BrokerConfigs(kDefaultBrokerEntity);
  auto current = config_.Dynamic();
  if (current->broker == now.broker && current->cluster_default == now.cluster_default) {
    return false;
  }
  Log()->info("dynamic broker configs: {} for this broker, {} cluster-wide", now.broker.size(),
              now.cluster_default.size());
  config_.SetDynamic(std::move(now));
  throttles_.Refresh();
  return true;
}

Offset TopicManager::LogStartOffset(const TopicPartition& tp, const storage::Log& log) const {
  Offset local = log.log_start_offset();
  return remote_ ? remote_->LogStartOffset(tp, local) : local;
}

Status TopicManager::Start() {
  STRATA_RETURN_IF_ERROR(StartRemote());
  partitions_->LoadCheckpointedMarks();
  {
    std::lock_guard admin(admin_mu_);
    STRATA_RETURN_IF_ERROR(ReconcileLocked());
    partitions_->DeleteStrayDirs();
  }
  Log()->info("opened {} partition logs", partitions_->size());
  if (cleaner_) cleaner_->Start();
  if (remote_) remote_->Start();
  StartReconciler();
  isr_->Start();
  return Status::Ok();
}

void TopicManager::StartReconciler() {
  reconciler_ = std::make_unique<Reconciler>(
      metadata_.view(),
      std::vector<std::string>{metadata_.keys().TopicsPrefix(), metadata_.keys().PartitionsPrefix(),
                               metadata_.keys().BrokerConfig("")},
      [this] {
        std::lock_guard admin(admin_mu_);
        return ReconcileLocked();
      });
  reconciler_->Start();
}

Status TopicManager::ReconcileNow() {
  std::lock_guard admin(admin_mu_);
  return ReconcileLocked();
}

Status TopicManager::ApplyDynamicBrokerConfigs() {
  std::lock_guard admin(admin_mu_);
  return ReconcileLocked();
}

void TopicManager::SetLeadershipListener(LeadershipListener listener) {
  std::lock_guard admin(admin_mu_);
  replicas_->SetLeadershipListener(std::move(listener));
}

void TopicManager::Shutdown() {
  if (reconciler_) reconciler_->Stop();
  if (isr_) isr_->Stop();
  fetchers_->Shutdown();  // they append to the logs: stop them first
  Status marks = CheckpointHighWatermarks();
  if (!marks.ok()) Log()->warn("checkpointing high watermarks: {}", marks.error().message);
  // Closing a log aborts a pass running on it, so stop the threads last.
  if (cleaner_) cleaner_->RequestStop();
  if (remote_) remote_->Stop();  // uploads read the logs: stop them first
  partitions_->CloseAll();
  if (cleaner_) cleaner_->Stop();
}

Offset TopicManager::HighWatermark(Partition& partition) const {
  partition.MaybeAdvanceHighWatermark(infos_.MinInsyncReplicas(partition.tp().topic));
  return partition.high_watermark();
}

std::shared_ptr<const TopicInfo> TopicManager::GetTopicInfo(const std::string& name) const {
  return infos_.Get(name);
}

Result<cluster::TopicRecord> TopicManager::CreateTopic(cluster::TopicRecord topic,
                                                       cluster::ReplicaAssignment replicas) {
  std::lock_guard admin(admin_mu_);
  STRATA_ASSIGN_OR_RETURN(cluster::TopicRecord created,
                          store_.CreateTopic(std::move(topic), std::move(replicas)));
  Status st = ReconcileLocked();
  if (!st.ok()) {
    Log()->error("topic {} created but its logs failed to open: {}", created.name,
                 st.error().message);
    return st.take_error();
  }
  Log()->info("created topic {} with {} partitions", created.name, created.partitions);
  return created;
}

Status TopicManager::DeleteTopic(const std::string& name) {
  std::lock_guard admin(admin_mu_);
  STRATA_RETURN_IF_ERROR(store_.DeleteTopic(name));
  Log()->info("deleted topic {}", name);
  return ReconcileLocked();
}

Status TopicManager::AddPartitions(const std::string& name, int32_t total,
                                   cluster::ReplicaAssignment replicas) {
  std::lock_guard admin(admin_mu_);
  auto topic = store_.GetTopic(name);
  if (!topic) return MakeError(Errc::kNotFound, "topic '" + name + "' not found");
  STRATA_RETURN_IF_ERROR(store_.SetPartitionCount(name, total, std::move(replicas)));
  Log()->info("topic {}: partitions {} -> {}", name, topic->partitions, total);
  return ReconcileLocked();
}

Status TopicManager::SetTopicConfigs(const std::string& name,
                                     std::map<std::string, std::string> configs) {
  return UpdateTopicConfigs(name, [&](std::map<std::string, std::string>& current) {
    current = configs;
    return Status::Ok();
  });
}

Status TopicManager::UpdateTopicConfigs(const std::string& name,
                                        const cluster::MetadataStore::ConfigMutation& mutate) {
  std::lock_guard admin(admin_mu_);
  STRATA_RETURN_IF_ERROR(store_.UpdateTopicConfigs(name, mutate));
  return ReconcileLocked();
}

std::shared_ptr<Partition> TopicManager::GetPartition(const TopicPartition& tp) const {
  return partitions_->Get(tp);
}

std::vector<std::shared_ptr<Partition>> TopicManager::LocalPartitions() const {
  return partitions_->All();
}

std::shared_ptr<storage::Log> TopicManager::GetLog(const TopicPartition& tp) const {
  auto partition = GetPartition(tp);
  return partition ? partition->log() : nullptr;
}

LeaderLookup TopicManager::LeaderPartition(const TopicPartition& tp,
                                           int32_t current_leader_epoch) const {
  auto info = GetTopicInfo(tp.topic);
  bool exists = info && tp.partition >= 0 && tp.partition < info->record.partitions;
  return CheckLeader(tp, exists, exists ? GetPartition(tp) : nullptr, self_, fenced_.load(),
                     current_leader_epoch);
}

LeaderLookup TopicManager::ReplicaPartition(const TopicPartition& tp,
                                            int32_t current_leader_epoch) const {
  auto info = GetTopicInfo(tp.topic);
  bool exists = info && tp.partition >= 0 && tp.partition < info->record.partitions;
  return CheckReplica(tp, exists, exists ? GetPartition(tp) : nullptr, self_, fenced_.load(),
                      current_leader_epoch);
}

std::optional<cluster::TopicRecord> TopicManager::GetTopic(const std::string& name) const {
  return store_.GetTopic(name);
}

std::vector<cluster::TopicRecord> TopicManager::ListTopics() const { return store_.ListTopics(); }

int TopicManager::EnforceRetention() {
  const auto hosted = partitions_->All();
  if (remote_) FollowSharedRemoteEnd();
  int deleted = 0;
  for (const auto& partition : hosted) {
    auto n = partition->log()->EnforceRetention();
    if (!n.ok()) {
      Log()->warn("retention on {} failed: {}", partition->tp().ToString(), n.error().message);
      continue;
    }
    deleted += n.value();
  }
  return deleted;
}

void TopicManager::SetInterBrokerSecurity(net::ClientSecurity security) {
  fetchers_->SetSecurity(std::move(security));
}

size_t TopicManager::ExpireProducers(int64_t expiration_ms) {
  size_t expired = 0;
  for (const auto& partition : partitions_->All()) {
    expired += partition->log()->ExpireProducers(expiration_ms);
  }
  return expired;
}

void TopicManager::FollowSharedRemoteEnd() {
  for (const auto& p : LocalPartitions()) {
    if (p->leader() == self_) continue;
    auto info = GetTopicInfo(p->tp().topic);
    if (!info || !info->log_config.remote_storage_enable) continue;
    // The leader saves the remote end only once its manifest is durable:
    // below it this replica's data is in remote storage, byte for byte
    // (both are below the high watermark).
    auto offsets = store_.GetRemoteLogOffsets(p->topic_id(), p->tp().partition);
    if (offsets && offsets->end >= 0) p->log()->SetRemoteCopiedOffset(Offset(offsets->end + 1));
  }
}

void TopicManager::FlushDue() {
  for (const auto& partition : partitions_->All()) {
    const auto& log = partition->log();
    auto flushed = log->FlushIfDue();
    if (!flushed.ok()) {
      Log()->warn("flush {} failed: {}", log->dir().string(), flushed.error().message);
    }
  }
}

// IsrUpdater::Host

Offset TopicManager::ContiguityBound(const Partition& p) const {
  auto info = GetTopicInfo(p.tp().topic);
  if (!remote_ || !info || !info->log_config.remote_storage_enable) {
    return Offset::Max();  // nothing remote to join up with
  }
  // Offsets below the partition's log start are gone everywhere; up to the
  // remote end they are in remote storage. Only the end saved in the
  // metadata store counts: it names a durable manifest, which a successor
  // finds. This leader's own uploads are not there until that manifest is
  // written and the end saved; a replica counted contiguous earlier, and
  // the old replicas of a move deleted on that basis, would leave offsets
  // held nowhere if the new leader took over first (it retires uploads the
  // manifest it finds does not list as finished).
  Offset remote_end = kNoOffset;
  if (auto saved = store_.GetRemoteLogOffsets(p.topic_id(), p.tp().partition)) {
    remote_end = Offset(saved->end);
  }
  return std::max(LogStartOffset(p.tp(), *p.log()), remote_end + 1);
}

bool TopicManager::ReplicaThrottled(const Partition& p, const char* list_config,
                                    cluster::NodeId named, cluster::NodeId replica) const {
  auto info = GetTopicInfo(p.tp().topic);
  return info && ReplicationThrottles::Throttled(info->record.configs, list_config,
                                                 p.tp().partition, named, p.state().isr, replica);
}

std::function<bool()> TopicManager::FollowerThrottled(const std::shared_ptr<Partition>& p) const {
  std::weak_ptr<Partition> weak = p;
  return [this, weak] {
    auto partition = weak.lock();
    return partition &&
           ReplicaThrottled(*partition, "follower.replication.throttled.replicas", self_, self_);
  };
}

// Kafka ReplicaManager's figures for /metrics.
TopicManager::ReplicationStats TopicManager::replication_stats() const {
  ReplicationStats out;
  for (const auto& p : LocalPartitions()) {
    cluster::PartitionRecord state = p->state();
    if (state.leader != self_) {
      if (state.leader != cluster::kNoNode)
        out.max_follower_lag = std::max(out.max_follower_lag, p->follower_lag());
      continue;
    }
    if (state.isr.size() < state.replicas.size()) out.under_replicated++;
    if (!state.non_contiguous.empty()) out.non_contiguous++;
    auto info = GetTopicInfo(p->tp().topic);
    if (info && static_cast<int>(state.isr.size()) < info->min_insync_replicas) out.under_min_isr++;
  }
  out.followed = static_cast<int64_t>(fetchers_->followed());
  out.fetched_bytes = fetchers_->bytes_fetched();
  out.isr_shrinks = isr_->shrinks();
  out.isr_expands = isr_->expands();
  return out;
}

std::vector<std::pair<TopicPartition, int64_t>> TopicManager::FollowerLags() const {
  std::vector<std::pair<TopicPartition, int64_t>> out;
  for (const auto& p : LocalPartitions()) {
    const cluster::NodeId leader = p->leader();
    if (leader != self_ && leader != cluster::kNoNode) out.push_back({p->tp(), p->follower_lag()});
  }
  return out;
}

std::vector<TopicManager::FollowerTimeLag> TopicManager::FollowerTimeLags() const {
  std::vector<FollowerTimeLag> out;
  const int64_t now = clock_->MonotonicMs();
  for (const auto& p : LocalPartitions()) {
    if (p->leader() != self_) continue;
    for (cluster::NodeId r : p->state().replicas) {
      if (r == self_) continue;
      if (auto f = p->Follower(r)) {
        out.push_back({p->tp(), r, std::max<int64_t>(0, now - f->last_caught_up_ms)});
      }
    }
  }
  return out;
}

}  // namespace strata::broker
