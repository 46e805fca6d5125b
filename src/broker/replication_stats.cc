// TopicManager's replication figures for /metrics (Kafka's ReplicaManager
// metrics): under-replicated and under-min-ISR partitions, follower lags.
#include <algorithm>

#include "broker/topic_manager.h"

namespace strata::broker {

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
