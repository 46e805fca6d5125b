#pragma once
// ScalingRoles: which brokers the autobalancer's scaling has turned from
// their registered role (design section 7, docs/balancer.md "Scaling").
// A broker registers active or standby (strata.broker.standby); scaling
// activates standby brokers when load is high and drains active ones back
// to standby when it is low. The roles are kept in the cluster-wide dynamic
// broker configs (configs/brokers/default), so they survive a controller
// change, every broker reads them from its metadata view, and an operator
// sees (and may set) them with kafka-configs --entity-default:
//   strata.balancer.scaling.activated  registered standby, now active
//   strata.balancer.scaling.draining   being emptied; no new replicas
//   strata.balancer.scaling.retired    registered active, drained: standby
//
// Thread-safety: a value type.
#include <map>
#include <set>
#include <string>

#include "cluster/records.h"
#include "cluster/types.h"

namespace strata::cluster {

inline constexpr const char* kScalingActivatedKey = "strata.balancer.scaling.activated";
inline constexpr const char* kScalingDrainingKey = "strata.balancer.scaling.draining";
inline constexpr const char* kScalingRetiredKey = "strata.balancer.scaling.retired";

struct ScalingRoles {
  std::set<NodeId> activated;
  std::set<NodeId> draining;
  std::set<NodeId> retired;

  // From the cluster-wide dynamic configs (ids that do not parse are
  // left out).
  static ScalingRoles FromConfigs(const std::map<std::string, std::string>& configs);
  // Writes the three keys into `configs` (an empty set removes its key).
  void ToConfigs(std::map<std::string, std::string>& configs) const;

  // The role a broker registered in `registration` plays now: draining
  // brokers are kDraining, activated standby brokers kActive, retired
  // active ones kStandby; fenced and shutting-down states stay as they are.
  BrokerState Effective(const BrokerRegistration& registration) const;

  bool operator==(const ScalingRoles&) const = default;
};

}  // namespace strata::cluster
