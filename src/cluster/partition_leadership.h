#pragma once
// Leader election for one partition, as the controller decides it when
// brokers come and go: pure functions, so the rules are tested without a
// cluster. A leader must be a live broker in the ISR (only an in-sync
// replica has every acknowledged record; there is no unclean election
// until replicas carry the "contiguous with remote" flag). Each change of
// leader bumps the leader epoch and the partition epoch.
#include <functional>
#include <optional>

#include "cluster/records.h"

namespace strata::cluster {

// `live(id)`: the broker is registered and not fenced. `restarted(id)`: it
// registered again (a new broker epoch) since the controller last looked,
// so it must take its leadership anew, at a new epoch.
// Returns the new record, or nullopt when nothing changes.
std::optional<PartitionRecord> ElectLeader(const PartitionRecord& current,
                                           const std::function<bool(NodeId)>& live,
                                           const std::function<bool(NodeId)>& restarted);

}  // namespace strata::cluster
