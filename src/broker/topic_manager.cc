#include "broker/topic_manager.h"

#include <fmt/format.h>

#include "base/log.h"
#include "broker/remote_stack_config.h"
#include "broker/topic_validation.h"

namespace strata::broker {

namespace {

auto Log() { return log::Get("broker"); }

storage::CleanerConfig CleanerConfigFrom(const config::BrokerConfig& config) {
  storage::CleanerConfig c;
  c.threads = static_cast<int>(config.GetLong("log.cleaner.threads"));
  c.backoff_ms = config.GetLong("log.cleaner.backoff.ms");
  c.dedupe_buffer_bytes = config.GetLong("log.cleaner.dedupe.buffer.size");
  return c;
}

}  // namespace

TopicManager::TopicManager(const config::BrokerConfig& config, cluster::MetadataStore& store,
                           Clock* clock)
    : config_(config), store_(store), clock_(clock) {
  if (config_.GetBool("log.cleaner.enable")) {
    cleaner_ = std::make_unique<storage::LogCleaner>(CleanerConfigFrom(config_), clock_);
  }
  DiskHighMarkOptions hm;
  hm.log_dir = config_.log_dir();
  hm.max_bytes = config_.GetLong("strata.log.dir.high.mark.bytes");
  hm.max_percent = static_cast<int>(config_.GetLong("strata.log.dir.high.mark.percent"));
  high_mark_ = std::make_unique<DiskHighMark>(hm, clock_, [this] { return TotalLogBytes(); });
}

int64_t TopicManager::TotalLogBytes() const {
  std::shared_lock lock(mu_);
  int64_t total = 0;
  for (const auto& [tp, log] : logs_) total += log->size_bytes();
  return total;
}

TopicManager::~TopicManager() {
  if (cleaner_) cleaner_->Stop();
}

std::filesystem::path TopicManager::PartitionDir(const TopicPartition& tp) const {
  return std::filesystem::path(config_.log_dir()) / tp.ToString();
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
  if (o.cache_dir.empty()) {
    o.cache_dir = (std::filesystem::path(config_.log_dir()) / ".remote-cache").string();
  }
  auto opened = tiered::RemoteLogManager::Open(uri, config_.Get("strata.remote.storage.user"), o,
                                               RemoteStackOptionsFrom(config_), clock_);
  if (!opened.ok()) {
    return MakeError(opened.error().code,
                     fmt::format("remote storage {}: {}", uri, opened.error().message));
  }
  remote_ = std::move(opened).value();
  remote_->AttachMetadataStore(&store_);
  Log()->info("tiered storage enabled: {}", uri);
  return Status::Ok();
}

void TopicManager::UpdateTiering(const cluster::TopicRecord& topic, int32_t partition,
                                 const std::shared_ptr<storage::Log>& log,
                                 const storage::LogConfig& config) {
  if (!remote_) return;
  TopicPartition tp{topic.name, partition};
  if (config.remote_storage_enable) {
    remote_->AddPartition({topic.name, partition, cluster::UuidToBase64(topic.id)}, log, config);
  } else if (remote_->IsTiered(tp.ToString())) {
    remote_->RemovePartition(tp.ToString(), /*delete_remote=*/false);
  }
}

int64_t TopicManager::LogStartOffset(const TopicPartition& tp, const storage::Log& log) const {
  int64_t local = log.log_start_offset();
  return remote_ ? remote_->LogStartOffset(tp.ToString(), local) : local;
}

Status TopicManager::Start() {
  STRATA_RETURN_IF_ERROR(StartRemote());
  for (const auto& topic : store_.ListTopics()) {
    STRATA_RETURN_IF_ERROR(OpenPartitions(topic, 0, topic.partitions));
  }
  Log()->info("opened {} partition logs", logs_.size());
  if (cleaner_) cleaner_->Start();
  if (remote_) remote_->Start();
  return Status::Ok();
}

void TopicManager::Shutdown() {
  // Closing a log aborts a pass running on it, so stop the threads last.
  if (cleaner_) cleaner_->RequestStop();
  if (remote_) remote_->Stop();  // uploads read the logs: stop them first
  {
    std::unique_lock lock(mu_);
    for (auto& [tp, log] : logs_) {
      Status st = log->Close();
      if (!st.ok()) Log()->error("closing {}: {}", tp.ToString(), st.error().message);
    }
    logs_.clear();
  }
  if (cleaner_) cleaner_->Stop();
}

void TopicManager::PublishTopicInfo(const cluster::TopicRecord& record) {
  auto info = std::make_shared<TopicInfo>();
  info->record = record;
  info->log_config = ResolveLogConfig(config_, record.configs);
  info->min_insync_replicas = static_cast<int32_t>(config::ToLong(EffectiveTopicConfig(
      config_, record.configs, *config::FindTopicConfig("min.insync.replicas"))));
  std::unique_lock lock(mu_);
  infos_[record.name] = std::move(info);
}

std::shared_ptr<const TopicInfo> TopicManager::GetTopicInfo(const std::string& name) const {
  std::shared_lock lock(mu_);
  auto it = infos_.find(name);
  return it == infos_.end() ? nullptr : it->second;
}

Status TopicManager::OpenPartitions(const cluster::TopicRecord& topic, int32_t from, int32_t to) {
  storage::LogConfig log_config = ResolveLogConfig(config_, topic.configs);
  for (int32_t p = from; p < to; ++p) {
    TopicPartition tp{topic.name, p};
    auto opened = storage::Log::Open(PartitionDir(tp), log_config, clock_);
    if (!opened.ok()) {
      return MakeError(opened.error().code,
                       fmt::format("opening log {}: {}", tp.ToString(), opened.error().message));
    }
    std::shared_ptr<storage::Log> log = std::move(opened).value();
    if (cleaner_) cleaner_->Register(tp.ToString(), log);
    UpdateTiering(topic, p, log, log_config);
    std::unique_lock lock(mu_);
    logs_[tp] = std::move(log);
  }
  cluster::TopicRecord published = topic;
  published.partitions = to;
  PublishTopicInfo(published);
  return Status::Ok();
}

Result<cluster::TopicRecord> TopicManager::CreateTopic(cluster::TopicRecord topic) {
  std::lock_guard admin(admin_mu_);
  STRATA_ASSIGN_OR_RETURN(cluster::TopicRecord created, store_.CreateTopic(std::move(topic)));
  Status st = OpenPartitions(created, 0, created.partitions);
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
  auto topic = store_.GetTopic(name);
  if (!topic) return MakeError(Errc::kNotFound, "topic '" + name + "' not found");
  STRATA_RETURN_IF_ERROR(store_.DeleteTopic(name));
  std::vector<std::shared_ptr<storage::Log>> removed;
  {
    std::unique_lock lock(mu_);
    for (int32_t p = 0; p < topic->partitions; ++p) {
      auto it = logs_.find({name, p});
      if (it == logs_.end()) continue;
      if (cleaner_) cleaner_->Unregister(it->first.ToString());
      removed.push_back(std::move(it->second));
      logs_.erase(it);
    }
    infos_.erase(name);
  }
  if (remote_) {  // outside mu_: deleting the remote copies may take a while
    for (int32_t p = 0; p < topic->partitions; ++p) {
      remote_->RemovePartition(TopicPartition{name, p}.ToString(), /*delete_remote=*/true);
    }
  }
  for (auto& log : removed) {
    Status st = log->Delete();
    if (!st.ok()) Log()->error("deleting log {}: {}", log->dir().string(), st.error().message);
  }
  Log()->info("deleted topic {}", name);
  return Status::Ok();
}

Status TopicManager::AddPartitions(const std::string& name, int32_t total) {
  std::lock_guard admin(admin_mu_);
  auto topic = store_.GetTopic(name);
  if (!topic) return MakeError(Errc::kNotFound, "topic '" + name + "' not found");
  STRATA_RETURN_IF_ERROR(store_.SetPartitionCount(name, total));
  int32_t old = topic->partitions;
  topic->partitions = total;
  Log()->info("topic {}: partitions {} -> {}", name, old, total);
  return OpenPartitions(*topic, old, total);
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
  auto topic = store_.GetTopic(name);
  if (!topic) return MakeError(Errc::kNotFound, "topic '" + name + "' not found");
  storage::LogConfig log_config = ResolveLogConfig(config_, topic->configs);
  PublishTopicInfo(*topic);
  std::shared_lock lock(mu_);
  for (int32_t p = 0; p < topic->partitions; ++p) {
    auto it = logs_.find({name, p});
    if (it == logs_.end()) continue;
    it->second->UpdateConfig(log_config);
    UpdateTiering(*topic, p, it->second, log_config);
  }
  if (cleaner_ && log_config.compacted) cleaner_->Wake();
  return Status::Ok();
}

std::shared_ptr<storage::Log> TopicManager::GetLog(const TopicPartition& tp) const {
  std::shared_lock lock(mu_);
  auto it = logs_.find(tp);
  return it == logs_.end() ? nullptr : it->second;
}

std::optional<cluster::TopicRecord> TopicManager::GetTopic(const std::string& name) const {
  return store_.GetTopic(name);
}

std::vector<cluster::TopicRecord> TopicManager::ListTopics() const { return store_.ListTopics(); }

int TopicManager::EnforceRetention() {
  std::vector<std::pair<TopicPartition, std::shared_ptr<storage::Log>>> logs;
  {
    std::shared_lock lock(mu_);
    logs.assign(logs_.begin(), logs_.end());
  }
  int deleted = 0;
  for (auto& [tp, log] : logs) {
    auto n = log->EnforceRetention();
    if (!n.ok()) {
      Log()->warn("retention on {} failed: {}", tp.ToString(), n.error().message);
      continue;
    }
    deleted += n.value();
  }
  return deleted;
}

void TopicManager::FlushDue() {
  std::vector<std::shared_ptr<storage::Log>> logs;
  {
    std::shared_lock lock(mu_);
    for (auto& [_, log] : logs_) logs.push_back(log);
  }
  for (auto& log : logs) {
    auto flushed = log->FlushIfDue();
    if (!flushed.ok()) {
      Log()->warn("flush {} failed: {}", log->dir().string(), flushed.error().message);
    }
  }
}

}  // namespace strata::broker
