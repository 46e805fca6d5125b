// TopicManager's replication throttles: Kafka's replication quotas as
// kafka-reassign-partitions --throttle sets them. The broker configs
// leader.replication.throttled.rate and follower.replication.throttled.rate
// give each side of this broker a byte rate; the topic configs
// leader/follower.replication.throttled.replicas name the replicas it
// applies to ("partition:broker,..." or "*"). As in Kafka, a replica in the
// ISR is never throttled: throttles slow down copies, not replication.
#include <algorithm>
#include <limits>

#include "broker/topic_manager.h"

namespace strata::broker {

namespace {

int64_t ThrottleRate(const config::BrokerConfig& config, const std::string& name) {
  auto dynamic = config.Dynamic();
  for (const auto* level : {&dynamic->broker, &dynamic->cluster_default}) {
    auto it = level->find(name);
    if (it == level->end()) continue;
    try {
      return std::stoll(it->second);
    } catch (const std::exception&) {  // validated when set; an old record may not be
      return replication::kUnthrottled;
    }
  }
  return config.GetLong(name);
}

}  // namespace

void TopicManager::RefreshReplicationThrottles() {
  leader_throttle_->SetRate(ThrottleRate(config_, "leader.replication.throttled.rate"));
  follower_throttle_->SetRate(ThrottleRate(config_, "follower.replication.throttled.rate"));
}

bool TopicManager::ReplicaThrottled(const Partition& p, const char* list_config,
                                    cluster::NodeId named, cluster::NodeId replica) const {
  auto info = GetTopicInfo(p.tp().topic);
  if (!info) return false;
  auto list = info->record.configs.find(list_config);
  if (list == info->record.configs.end() ||
      !replication::ThrottledReplicasContain(list->second, p.tp().partition, named.value())) {
    return false;
  }
  const std::vector<cluster::NodeId> isr = p.state().isr;
  return std::find(isr.begin(), isr.end(), replica) == isr.end();
}

std::function<bool()> TopicManager::FollowerThrottled(const std::shared_ptr<Partition>& p) const {
  std::weak_ptr<Partition> weak = p;
  return [this, weak] {
    auto partition = weak.lock();
    return partition &&
           ReplicaThrottled(*partition, "follower.replication.throttled.replicas", self_, self_);
  };
}

}  // namespace strata::broker
