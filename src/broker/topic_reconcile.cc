// TopicManager's reconciliation: the local replicas follow the watched
// metadata view. One pass compares the replicas placed on this broker with
// the open ones, removes what is no longer placed here, publishes changed
// topic records and opens what is new; leadership changes reach the open
// partitions as their records change.
#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "broker/local_replicas.h"
#include "broker/logger.h"
#include "broker/topic_manager.h"
#include "broker/topic_validation.h"
#include "cluster/partition_leadership.h"

namespace strata::broker {

namespace {

// A tiered partition's replicas never copy what remote storage holds.
bool Tiered(const TopicInfo& info) {
  return info.log_config.remote_storage_enable && !info.log_config.compacted;
}

// A replica the view places on this broker.
struct WantedReplica {
  const cluster::TopicEntry* topic;
  cluster::PartitionRecord state;
  int64_t create_revision = 0;  // the partition record's; 0 for a topic without them
};

bool HasReplica(const cluster::PartitionRecord& r, cluster::NodeId node) {
  return std::find(r.replicas.begin(), r.replicas.end(), node) != r.replicas.end();
}

}  // namespace

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

void TopicManager::StopReconciler() {
  if (reconciler_) reconciler_->Stop();
}

// Installs the dynamic broker configs of the view; true when they changed
// (every topic's effective configs may have).
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

Status TopicManager::ReconcileNow() {
  std::lock_guard admin(admin_mu_);
  return ReconcileLocked();
}

Status TopicManager::ApplyDynamicBrokerConfigs() {
  std::lock_guard admin(admin_mu_);
  return ReconcileLocked();
}

Status TopicManager::ReconcileLocked() {
  cluster::MetadataView& view = metadata_.view();
  if (RefreshDynamicConfigs()) info_revisions_.clear();  // every topic applied again
  const std::vector<cluster::TopicEntry> topics = view.Topics();
  std::unordered_map<std::string, const cluster::TopicEntry*> by_name;
  std::unordered_map<TopicPartition, WantedReplica, TopicPartitionHash> wanted;
  for (const auto& t : topics) {
    by_name[t.record.name] = &t;
    auto records = view.Partitions(cluster::UuidToBase64(t.record.id));
    for (int32_t p = 0; p < t.record.partitions; ++p) {
      cluster::PartitionRecord state;
      int64_t created = 0;
      auto it = records.find(p);
      if (it != records.end()) {
        state = it->second.record;
        created = it->second.create_revision;
      } else {  // a topic made before partition records: this broker's
        state.replicas = state.isr = {self_};
        state.leader = self_;
      }
      if (HasReplica(state, self_))
        wanted.emplace(TopicPartition{t.record.name, p},
                       WantedReplica{&t, std::move(state), created});
    }
  }

  // Removals first: a re-created topic reuses its partitions' directories.
  std::vector<std::pair<std::shared_ptr<Partition>, bool>> removed;
  {
    std::shared_lock lock(mu_);
    for (const auto& [tp, partition] : partitions_) {
      auto t = by_name.find(tp.topic);
      bool topic_gone = t == by_name.end() ||
                        cluster::UuidToBase64(t->second->record.id) != partition->topic_id();
      if (!topic_gone && wanted.contains(tp)) continue;
      removed.emplace_back(partition, topic_gone);
    }
  }
  for (auto& [partition, topic_gone] : removed) RemoveReplica(partition, topic_gone);

  for (const auto& t : topics) {
    auto rev = info_revisions_.find(t.record.name);
    if (rev != info_revisions_.end() && rev->second == t.mod_revision) continue;
    ApplyTopicChange(t.record);
    info_revisions_[t.record.name] = t.mod_revision;
  }
  for (auto it = info_revisions_.begin(); it != info_revisions_.end();) {
    if (by_name.contains(it->first)) {
      ++it;
      continue;
    }
    std::unique_lock lock(mu_);
    infos_.erase(it->first);
    it = info_revisions_.erase(it);
  }

  Status result = Status::Ok();
  const int64_t lost_before = lost_before_.load();
  int held = 0;
  for (auto& [tp, want] : wanted) {
    auto info = GetTopicInfo(tp.topic);
    auto open = GetPartition(tp);
    if (!open && lost_before > 0 && want.create_revision > 0 &&
        cluster::CountsOnLostData(want.state, want.create_revision, self_, lost_before,
                                  cluster::RemoteStorageEnabled(want.topic->record))) {
      ++held;  // opened once the controller's write that forgets it comes
      continue;
    }
    if (open) {
      bool led = open->leader() == self_;
      cluster::LeaderEpoch epoch = open->leader_epoch();
      open->Apply(want.state, clock_->MonotonicMs());
      if (led && (open->leader() != self_ || epoch != open->leader_epoch())) Wake(tp);
      if (open->leader() == self_) AdvanceHighWatermark(*open);  // the ISR may have shrunk
      if (led != (open->leader() == self_)) {
        Log()->info("{}: leader {} at epoch {}", tp.ToString(), open->leader().value(),
                    open->leader_epoch().value());
        UpdateTiering(want.topic->record, open, info->log_config);
        NotifyLeadership(tp, !led);
      } else if (led && epoch != open->leader_epoch()) {
        UpdateTiering(want.topic->record, open, info->log_config);  // a new leadership
      }
      fetchers_->Sync(open, Tiered(*info), FollowerThrottled(open));
      continue;
    }
    Status st = OpenReplica(want.topic->record, tp.partition, want.state, info->log_config);
    if (!st.ok() && result.ok()) result = std::move(st);
    if (st.ok() && want.state.leader == self_) NotifyLeadership(tp, true);
    if (st.ok()) {
      if (auto opened = GetPartition(tp)) {
        fetchers_->Sync(opened, Tiered(*info), FollowerThrottled(opened));
      }
    }
  }
  if (held > 0) {
    Log()->info(
        "new log directory: {} replicas wait for the controller to forget the data they lost "
        "before they open",
        held);
  }
  return result;
}

Status TopicManager::OpenReplica(const cluster::TopicRecord& topic, int32_t p,
                                 const cluster::PartitionRecord& state,
                                 const storage::LogConfig& config) {
  TopicPartition tp{topic.name, p};
  auto claimed = ClaimPartitionDir(PartitionDir(tp), cluster::UuidToBase64(topic.id), env_);
  if (!claimed.ok()) {
    return MakeError(claimed.error().code,
                     fmt::format("claiming {}: {}", tp.ToString(), claimed.error().message));
  }
  if (*claimed) {
    Log()->warn(
        "{}: its directory held the data of an older topic of that name (deleted while "
        "this broker was down); that data is deleted",
        tp.ToString());
  }
  auto opened = storage::Log::Open(PartitionDir(tp), config, clock_, env_);
  if (!opened.ok()) {
    return MakeError(opened.error().code,
                     fmt::format("opening log {}: {}", tp.ToString(), opened.error().message));
  }
  std::shared_ptr<storage::Log> log = std::move(opened).value();
  auto mark = checkpointed_marks_.find({tp.topic, tp.partition});
  auto partition = std::make_shared<Partition>(
      tp, cluster::UuidToBase64(topic.id), log, state, self_, clock_->MonotonicMs(),
      mark == checkpointed_marks_.end() ? Offset(0) : Offset(mark->second));
  partition->SetWakeListener(wake_listener_);
  if (cleaner_) cleaner_->Register(tp, log);
  UpdateTiering(topic, partition, config);
  std::unique_lock lock(mu_);
  partitions_[tp] = std::move(partition);
  return Status::Ok();
}

void TopicManager::RemoveReplica(const std::shared_ptr<Partition>& partition, bool topic_deleted) {
  const TopicPartition& tp = partition->tp();
  {
    std::unique_lock lock(mu_);
    partitions_.erase(tp);
  }
  partition->MarkRemoved();
  Wake(tp);
  if (partition->leader() == self_) NotifyLeadership(tp, false);
  fetchers_->Stop(tp);
  if (cleaner_) cleaner_->Unregister(tp);
  if (remote_) {
    // The remote data is the partition's, not this replica's: it goes with
    // the topic, removed once, by the broker that led the partition last.
    bool delete_remote = topic_deleted && partition->leader() == self_;
    remote_->RemovePartition(tp, delete_remote);
  }
  Status st = partition->log()->Delete();
  if (!st.ok()) {
    Log()->error("deleting log {}: {}", partition->log()->dir().string(), st.error().message);
    return;
  }
  Log()->info("removed replica {} ({})", tp.ToString(),
              topic_deleted ? "topic deleted" : "no longer placed here");
}

void TopicManager::SetLeadershipListener(LeadershipListener listener) {
  std::lock_guard admin(admin_mu_);
  leadership_listener_ = std::move(listener);
  std::vector<TopicPartition> led;
  {
    std::shared_lock lock(mu_);
    for (const auto& [tp, partition] : partitions_) {
      if (partition->leader() == self_) led.push_back(tp);
    }
  }
  for (const auto& tp : led) leadership_listener_(tp, true);
}

void TopicManager::NotifyLeadership(const TopicPartition& tp, bool leader) {
  if (leadership_listener_) leadership_listener_(tp, leader);
}

void TopicManager::ApplyTopicChange(const cluster::TopicRecord& topic) {
  PublishTopicInfo(topic);
  storage::LogConfig log_config = ResolveLogConfig(config_, topic.configs);
  std::vector<std::shared_ptr<Partition>> hosted;
  {
    std::shared_lock lock(mu_);
    for (int32_t p = 0; p < topic.partitions; ++p) {
      auto it = partitions_.find({topic.name, p});
      if (it != partitions_.end()) hosted.push_back(it->second);
    }
  }
  for (const auto& partition : hosted) {
    partition->log()->UpdateConfig(log_config);
    UpdateTiering(topic, partition, log_config);
  }
  if (cleaner_ && log_config.compacted) cleaner_->Wake();
}

}  // namespace strata::broker
