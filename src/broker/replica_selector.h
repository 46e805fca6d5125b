#pragma once
// The replica a consumer should fetch from (KIP-392, Kafka's ReplicaSelector
// as ReplicaManager.findPreferredReadReplica drives it): the leader answers a
// consumer's fetch with a preferred read replica, and no records, when its
// `replica.selector.class` picks a follower for the client's rack.
//
// Pure functions over plain values: the fetch handler gathers what the
// leader knows of its followers and what the metadata view says of their
// brokers.
#include <optional>
#include <string>
#include <vector>

#include "base/offset.h"
#include "base/result.h"
#include "cluster/types.h"

namespace strata::broker {

// What `replica.selector.class` names.
enum class ReplicaSelectorKind {
  kLeaderOnly,  // unset: consumers fetch from the leader (Kafka's default)
  kRackAware,   // org.apache.kafka.common.replica.RackAwareReplicaSelector
};

inline constexpr const char* kRackAwareReplicaSelector =
    "org.apache.kafka.common.replica.RackAwareReplicaSelector";

// kInvalidArgument for a class Strata does not implement.
Result<ReplicaSelectorKind> ParseReplicaSelector(const std::string& class_name);

// A follower as the leader sees it.
struct ReadReplicaCandidate {
  cluster::NodeId id{-1};
  std::string rack;               // its broker's broker.rack; empty: none
  bool alive = false;             // registered, neither fenced nor shutting down
  bool in_isr = false;            // in the partition record's ISR
  Offset log_start_offset = kNoOffset;  // the first offset it can serve
  Offset log_end_offset = kNoOffset;    // as its last fetch said; kNoOffset: not fetched yet
  int64_t since_caught_up_ms = 0;
};

struct ReadReplicaQuery {
  std::string client_rack;  // the Fetch request's rack_id (v11+)
  Offset fetch_offset;
  std::string leader_rack;  // this broker's broker.rack
  std::vector<ReadReplicaCandidate> followers;
};

// The follower the client should fetch from, or nullopt for the leader.
// Kafka's rules: only live ISR members whose log holds `fetch_offset` are
// candidates; RackAwareReplicaSelector keeps those in the client's rack,
// prefers the leader when it is in that rack too, and otherwise takes the
// most caught-up one (largest log end, then most recently caught up, then
// the largest id, as ReplicaView.comparator).
std::optional<cluster::NodeId> SelectReadReplica(ReplicaSelectorKind kind,
                                                 const ReadReplicaQuery& query);

}  // namespace strata::broker
