#include "broker/replication_throttles.h"

#include <algorithm>

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

ReplicationThrottles::ReplicationThrottles(const config::BrokerConfig& config, const Clock* clock)
    : config_(config),
      leader_(std::make_shared<replication::ReplicationThrottle>(clock)),
      follower_(std::make_shared<replication::ReplicationThrottle>(clock)) {
  Refresh();
}

void ReplicationThrottles::Refresh() {
  leader_->SetRate(ThrottleRate(config_, "leader.replication.throttled.rate"));
  follower_->SetRate(ThrottleRate(config_, "follower.replication.throttled.rate"));
}

bool ReplicationThrottles::Throttled(const std::map<std::string, std::string>& topic_configs,
                                     const char* list_config, int32_t partition,
                                     cluster::NodeId named, const std::vector<cluster::NodeId>& isr,
                                     cluster::NodeId replica) {
  auto list = topic_configs.find(list_config);
  if (list == topic_configs.end() ||
      !replication::ThrottledReplicasContain(list->second, partition, named)) {
    return false;
  }
  return std::find(isr.begin(), isr.end(), replica) == isr.end();
}

}  // namespace strata::broker
