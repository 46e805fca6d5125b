#pragma once
// Replica placement for new topics and partitions, as Kafka's rack-aware
// assignment does it: leaders go round-robin over the brokers from a random
// start, each partition's followers follow its leader at a shift that grows
// every full round (so replica sets differ between rounds), and with racks
// the brokers are interleaved rack by rack and a replica prefers a rack (then
// a broker) the partition does not use yet. Manual assignments
// (--replica-assignment) are checked against the same broker list.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "cluster/types.h"

namespace strata::cluster {

struct PlacementBroker {
  NodeId id;
  std::string rack;  // empty: none
};

// replicas[p] lists partition (first_partition + p)'s replicas; the first is
// its preferred leader.
using ReplicaAssignment = std::vector<std::vector<NodeId>>;

struct PlacementRequest {
  int32_t partitions = 1;
  int16_t replication_factor = 1;
  // Where the round-robin starts and how far followers are shifted; random
  // in the broker, fixed in tests.
  uint32_t start_index = 0;
  uint32_t replica_shift = 0;
  // The index of the first partition placed (CreatePartitions places the
  // new ones after the existing).
  int32_t first_partition = 0;
};

// kInvalidArgument (INVALID_REPLICATION_FACTOR) when the factor exceeds the
// brokers. Brokers without a rack count as one rack of their own.
Result<ReplicaAssignment> PlaceReplicas(std::span<const PlacementBroker> brokers,
                                        const PlacementRequest& request);

// Checks a manual assignment: every id a listed broker, no id twice in a
// partition, every partition the same replication factor (kInvalidArgument
// with Kafka's message otherwise).
Status ValidateAssignment(std::span<const PlacementBroker> brokers,
                          const ReplicaAssignment& assignment);

}  // namespace strata::cluster
