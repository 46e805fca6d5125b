#pragma once
// BalancerThrottle: the replication throttle of the balancer's moves, set
// as kafka-reassign-partitions --throttle sets one, with Kafka's config
// names: leader.replication.throttled.rate and
// follower.replication.throttled.rate on every broker a move touches, and
// "partition:broker" entries in the topics' leader.replication.throttled.
// replicas (the current replicas, which serve the copy) and follower.
// replication.throttled.replicas (the new ones). Clear() takes off exactly
// what Set() added: a rate an operator had set stays, and so do entries
// already listed.
//
// Thread-safety: none; the balancer's thread owns it for one execution.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "balancer/planner.h"
#include "base/result.h"
#include "cluster/metadata.h"

namespace strata::balancer {

class BalancerThrottle {
 public:
  explicit BalancerThrottle(cluster::Metadata& metadata) : metadata_(metadata) {}

  Status Set(const std::vector<balancer::Move>& moves, int64_t bytes_per_sec);
  // Best effort: what fails to come off is logged.
  Status Clear();

 private:
  struct Added {
    bool broker;         // a broker's config (entity) or a topic's (name)
    std::string entity;  // node id or topic name
    std::string key;
    std::string value;  // the rate, or one "partition:broker" entry
  };
  cluster::Metadata& metadata_;
  std::vector<Added> added_;
};

}  // namespace strata::balancer
