#pragma once
// ReplicationThrottles: Kafka's replication quotas as kafka-reassign-
// partitions --throttle sets them. The broker configs
// leader.replication.throttled.rate and follower.replication.throttled.rate
// give each side of this broker a byte rate (dynamic broker config, then the
// cluster default, then server.properties); the topic configs leader/
// follower.replication.throttled.replicas name the replicas they apply to
// ("partition:broker,..." or "*"). As in Kafka, a replica in the ISR is never
// throttled: throttles slow down copies, not replication.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cluster/types.h"
#include "config/broker_config.h"
#include "replication/replication_throttle.h"

namespace strata::broker {

class ReplicationThrottles {
 public:
  ReplicationThrottles(const config::BrokerConfig& config, const Clock* clock);

  // Takes the current rates (a dynamic config may have changed them).
  void Refresh();

  // Whether `replica` of `partition` is throttled on the side whose
  // throttled-replicas topic config is `list_config`, for the replica
  // `named` there (the leader names followers, a follower itself): named
  // replicas outside the ISR are.
  static bool Throttled(const std::map<std::string, std::string>& topic_configs,
                        const char* list_config, int32_t partition, cluster::NodeId named,
                        const std::vector<cluster::NodeId>& isr, cluster::NodeId replica);

  replication::ReplicationThrottle& leader() { return *leader_; }
  // Shared with the replica fetchers, which record what they append.
  const std::shared_ptr<replication::ReplicationThrottle>& follower() const { return follower_; }

 private:
  const config::BrokerConfig& config_;
  std::shared_ptr<replication::ReplicationThrottle> leader_;
  std::shared_ptr<replication::ReplicationThrottle> follower_;
};

}  // namespace strata::broker
