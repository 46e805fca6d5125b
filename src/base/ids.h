#pragma once
// The id types every layer shares. Each is a StrongId so that ids and epochs
// of different kinds never mix; -1 is Kafka's "none" for node ids and leader
// epochs. The integer appears only at the edges (wire, JSON, files).
#include <cstdint>

#include "base/strong_id.h"

namespace strata {

// A broker's node.id.
using NodeId = StrongId<struct NodeIdTag, int32_t>;
inline constexpr NodeId kNoNode{-1};
// Bumped at every leader change of a partition (Kafka's leader epoch);
// stamped on every batch a leader appends.
using LeaderEpoch = StrongId<struct LeaderEpochTag, int32_t>;
inline constexpr LeaderEpoch kNoLeaderEpoch{-1};
// Bumped at every change of a partition record (ISR, replicas, leader):
// AlterPartition's PartitionEpoch, the expected version of a CAS.
using PartitionEpoch = StrongId<struct PartitionEpochTag, int32_t>;
// Grows at every registration of a broker: the etcd revision that created
// its registration key, so a re-registered broker always has a higher one.
using BrokerEpoch = StrongId<struct BrokerEpochTag, int64_t>;

}  // namespace strata
