#include "broker/replica_reconciler.h"

#include <algorithm>

#include "broker/logger.h"
#include "cluster/partition_leadership.h"

namespace strata::broker {

// A replica the view places on this broker.
struct ReplicaReconciler::Wanted {
  const cluster::TopicEntry* topic;
  cluster::PartitionRecord state;
  int64_t create_revision = 0;  // the partition record's; 0 for a topic without them
};

namespace {

bool HasReplica(const cluster::PartitionRecord& r, cluster::NodeId node) {
  return std::find(r.replicas.begin(), r.replicas.end(), node) != r.replicas.end();
}

}  // namespace

ReplicaReconciler::ReplicaReconciler(cluster::MetadataView& view, cluster::NodeId self,
                                     Clock* clock, PartitionManager& partitions, TopicInfos& infos,
                                     Host& host)
    : view_(view),
      self_(self),
      clock_(clock),
      partitions_(partitions),
      infos_(infos),
      host_(host) {}

ReplicaReconciler::WantedMap ReplicaReconciler::WantedReplicas(
    const std::vector<cluster::TopicEntry>& topics) const {
  WantedMap wanted;
  for (const auto& t : topics) {
    auto records = view_.Partitions(cluster::UuidToBase64(t.record.id));
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
      if (HasReplica(state, self_)) {
        wanted.emplace(TopicPartition{t.record.name, p}, Wanted{&t, std::move(state), created});
      }
    }
  }
  return wanted;
}

Status ReplicaReconciler::Pass() {
  if (host_.RefreshDynamicConfigs()) info_revisions_.clear();  // every topic applied again
  const std::vector<cluster::TopicEntry> topics = view_.Topics();
  const WantedMap wanted = WantedReplicas(topics);
  RemoveUnwanted(topics, wanted);
  ApplyTopicChanges(topics);

  Status result = Status::Ok();
  const int64_t lost_before = lost_before_.load();
  int held = 0;
  for (const auto& [tp, want] : wanted) {
    auto info = infos_.Get(tp.topic);
    if (auto open = partitions_.Get(tp)) {
      ApplyRecord(*info, open, want.state);
      continue;
    }
    if (lost_before > 0 && want.create_revision > 0 &&
        cluster::CountsOnLostData(want.state, want.create_revision, self_, lost_before,
                                  cluster::RemoteStorageEnabled(want.topic->record))) {
      ++held;  // opened once the controller's write that forgets it comes
      continue;
    }
    Status st = OpenReplica(*info, tp.partition, want.state);
    if (!st.ok() && result.ok()) result = std::move(st);
  }
  if (held > 0) {
    Log()->info(
        "new log directory: {} replicas wait for the controller to forget the data they lost "
        "before they open",
        held);
  }
  return result;
}

void ReplicaReconciler::RemoveUnwanted(const std::vector<cluster::TopicEntry>& topics,
                                       const WantedMap& wanted) {
  std::unordered_map<std::string, std::string> topic_ids;  // name -> base64 id
  for (const auto& t : topics) topic_ids[t.record.name] = cluster::UuidToBase64(t.record.id);
  for (const auto& partition : partitions_.All()) {
    auto id = topic_ids.find(partition->tp().topic);
    bool topic_gone = id == topic_ids.end() || id->second != partition->topic_id();
    if (!topic_gone && wanted.contains(partition->tp())) continue;
    RemoveReplica(partition, topic_gone);
  }
}

void ReplicaReconciler::RemoveReplica(const std::shared_ptr<Partition>& partition,
                                      bool topic_deleted) {
  const TopicPartition& tp = partition->tp();
  partitions_.Unpublish(tp);
  const bool led = partition->leader() == self_;
  if (led) NotifyLeadership(tp, false);
  // The remote data is the partition's, not this replica's: it goes with
  // the topic, removed once, by the broker that led the partition last.
  host_.Release(tp, /*delete_remote=*/topic_deleted && led);
  Status st = partitions_.DeleteData(*partition);
  if (!st.ok()) {
    Log()->error("{}", st.error().message);
    return;
  }
  Log()->info("removed replica {} ({})", tp.ToString(),
              topic_deleted ? "topic deleted" : "no longer placed here");
}

void ReplicaReconciler::ApplyTopicChanges(const std::vector<cluster::TopicEntry>& topics) {
  std::unordered_map<std::string, bool> present;
  for (const auto& t : topics) {
    present[t.record.name] = true;
    auto rev = info_revisions_.find(t.record.name);
    if (rev != info_revisions_.end() && rev->second == t.mod_revision) continue;
    auto info = infos_.Publish(t.record);
    auto hosted = partitions_.OfTopic(t.record.name, t.record.partitions);
    partitions_.ApplyLogConfig(hosted, info->log_config);
    for (const auto& partition : hosted) host_.UpdateTiering(*info, partition);
    info_revisions_[t.record.name] = t.mod_revision;
  }
  for (auto it = info_revisions_.begin(); it != info_revisions_.end();) {
    if (present.contains(it->first)) {
      ++it;
      continue;
    }
    infos_.Forget(it->first);
    it = info_revisions_.erase(it);
  }
}

void ReplicaReconciler::ApplyRecord(const TopicInfo& info, const std::shared_ptr<Partition>& open,
                                    const cluster::PartitionRecord& state) {
  const bool led = open->leader() == self_;
  const cluster::LeaderEpoch epoch = open->leader_epoch();
  open->Apply(state, clock_->MonotonicMs());
  const bool leads = open->leader() == self_;
  // An acks=all produce waiting on a deposed leadership learns it here.
  if (led && (!leads || epoch != open->leader_epoch())) open->Wake();
  if (leads) open->MaybeAdvanceHighWatermark(info.min_insync_replicas);  // the ISR may have shrunk
  if (led != leads) {
    Log()->info("{}: leader {} at epoch {}", open->tp().ToString(), open->leader().value(),
                open->leader_epoch().value());
    host_.UpdateTiering(info, open);
    NotifyLeadership(open->tp(), leads);
  } else if (led && epoch != open->leader_epoch()) {
    // A new leadership of this broker (its lease lapsed and it was elected
    // again, or replicas were removed): another leader may have written in
    // between, so whatever was built on the old one (the coordinators'
    // state) is dropped and loaded again.
    Log()->info("{}: leader again at epoch {}", open->tp().ToString(),
                open->leader_epoch().value());
    host_.UpdateTiering(info, open);
    NotifyLeadership(open->tp(), false);
    NotifyLeadership(open->tp(), true);
  }
  host_.SyncFetcher(info, open);
}

Status ReplicaReconciler::OpenReplica(const TopicInfo& info, int32_t p,
                                      const cluster::PartitionRecord& state) {
  auto opened = partitions_.Open(
      info.record, p, state, info.log_config,
      [&](const std::shared_ptr<Partition>& partition) { host_.UpdateTiering(info, partition); });
  if (!opened.ok()) return opened.take_error();
  if (state.leader == self_) NotifyLeadership((*opened)->tp(), true);
  host_.SyncFetcher(info, *opened);
  return Status::Ok();
}

void ReplicaReconciler::SetLeadershipListener(LeadershipListener listener) {
  leadership_listener_ = std::move(listener);
  for (const auto& partition : partitions_.Led()) leadership_listener_(partition->tp(), true);
}

}  // namespace strata::broker
