#pragma once
// DecideScaling: whether the cluster needs another broker or can give one
// back (design section 7, issue "Scaling"). Utilization is the cluster's
// load as a share of what its active brokers declared
// (strata.broker.capacity.*): for each declared dimension (network in,
// network out, CPU, disk) the sum of the brokers' loads over the sum of
// their capacities, and the highest of those. Above the scale-out threshold
// for `sustain_ms` a standby broker is activated (or a drain is called off);
// below the scale-in threshold for as long, the least needed active broker
// is drained: everything moves off, and once it holds nothing it is back to
// standby. A scale-in never leaves fewer active brokers than
// min_active_brokers or than the largest replication factor, never happens
// while a broker is gone, stale or already draining, and never when the
// brokers left would be above the scale-out threshold (no flapping).
//
// Thread-safety: a pure function of the model, the roles and the timers in
// `state`, which it updates.
#include <cstdint>
#include <optional>
#include <string>

#include "balancer/cluster_model.h"
#include "cluster/scaling_roles.h"

namespace strata::balancer {

struct ScalingOptions {
  bool enabled = false;
  double scale_out_threshold = 0.8;
  double scale_in_threshold = 0.3;
  int64_t sustain_ms = 300'000;
  int32_t min_active_brokers = 3;
};

// The timers between cycles; in memory (a new controller starts them over,
// which only delays a decision).
struct ScalingTimers {
  std::optional<int64_t> above_since_ms;  // above the scale-out threshold since
  std::optional<int64_t> below_since_ms;  // below the scale-in threshold since
  std::optional<int64_t> last_wanted_ms;  // the last "no standby broker" event
};

enum class ScalingEvent {
  kNone,
  kScaleOut,       // a standby broker activated
  kDrainCanceled,  // load rose while a broker drained: it stays active
  kStandbyWanted,  // scale-out needed but no standby broker is registered
  kDrainStarted,   // a broker is being emptied
  kScaleIn,        // a drained broker holds nothing: back to standby
};
const char* ScalingEventName(ScalingEvent e);

struct ScalingDecision {
  ScalingEvent event = ScalingEvent::kNone;
  cluster::NodeId broker{-1};
  cluster::ScalingRoles roles;  // the roles after the decision
  double utilization = 0;       // -1: no capacity declared
  std::string dimension;        // the most utilized dimension
  std::string reason;           // with figures, for the log and the audit
};

// The cluster's utilization over its active (and stale) brokers; -1 when
// none declared a capacity. `dimension` names the highest.
double Utilization(const ClusterModel& model, std::string* dimension);

ScalingDecision DecideScaling(const ClusterModel& model, const cluster::ScalingRoles& roles,
                              ScalingTimers& timers, const ScalingOptions& options, int64_t now_ms);

}  // namespace strata::balancer
