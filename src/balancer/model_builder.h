#pragma once
// BuildModel: the ClusterModel of one balancing cycle, from the cluster's
// topology (what the metadata view says of brokers and partitions) and the
// load window. It decides each broker's status for the planner:
//   - registered and active with a sample newer than stale_after_ms: active;
//     without one: stale (keeps its replicas, receives none);
//   - standby (holds nothing) and draining (scale-in: everything moves off)
//     as the broker's role says (cluster::ScalingRoles::Effective: its
//     registration as scaling changed it);
//   - fenced, in controlled shutdown, or gone for less than the failure
//     timeout (the longer shutdown grace for one that left cleanly): stale;
//   - gone for longer: dead (its replicas are re-placed), but only while at
//     most max_failed_brokers are; past that nobody is declared dead and the
//     model says why (too many failures at once is no time to move data).
//
// Thread-safety: a pure function.
#include <cstdint>
#include <string>
#include <vector>

#include "balancer/cluster_model.h"
#include "balancer/load_window.h"

namespace strata::balancer {

struct BrokerTopology {
  NodeId id{-1};
  std::string rack;
  bool registered = true;  // false: known but gone (its lease expired)
  bool standby = false;    // its role now (ScalingRoles::Effective)
  bool draining = false;
  bool fenced = false;        // fenced or in controlled shutdown
  int64_t gone_since_ms = 0;  // when it was first seen gone
  BrokerCapacity capacity;
  bool left_cleanly = false;  // gone by a clean shutdown: expected back
};

struct PartitionTopology {
  std::string topic;
  int32_t partition = 0;
  std::vector<NodeId> replicas;
  NodeId leader{-1};
  std::vector<NodeId> isr;
  bool reassigning = false;
};

struct ModelOptions {
  int64_t now_ms = 0;
  int64_t stale_after_ms = 60'000;
  int64_t failure_timeout_ms = 60'000;
  // Instead of failure_timeout_ms for a broker that left by a clean
  // shutdown (a rolling restart), when longer.
  int64_t shutdown_grace_ms = 600'000;
  int32_t max_failed_brokers = 1;
};

// How long `b` may be gone before it is declared dead.
int64_t FailureTimeoutOf(const BrokerTopology& b, const ModelOptions& options);

struct BuiltModel {
  ClusterModel model;
  std::vector<NodeId> dead;  // declared dead this cycle
  std::vector<NodeId> gone;  // gone, not (yet) declared dead
  std::string note;          // why nothing was declared dead, if so
};

BuiltModel BuildModel(const std::vector<BrokerTopology>& brokers,
                      const std::vector<PartitionTopology>& partitions, const LoadWindow& load,
                      const ModelOptions& options);

}  // namespace strata::balancer
