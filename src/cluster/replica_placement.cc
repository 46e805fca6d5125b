#include "cluster/replica_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace strata::cluster {

namespace {

// The i-th follower position after `first` at `shift`: never `first` itself.
size_t FollowerIndex(size_t first, size_t shift, size_t i, size_t n) {
  return (first + 1 + (shift + i) % (n - 1)) % n;
}

// Brokers ordered so that consecutive ones are on different racks (one per
// rack in turn, racks and brokers in id order), which spreads leaders over
// racks too.
std::vector<PlacementBroker> InterleaveRacks(std::span<const PlacementBroker> brokers) {
  std::map<std::string, std::vector<PlacementBroker>> by_rack;
  for (const auto& b : brokers) by_rack[b.rack].push_back(b);
  for (auto& [_, list] : by_rack) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  }
  std::vector<PlacementBroker> out;
  for (size_t round = 0; out.size() < brokers.size(); ++round) {
    for (auto& [_, list] : by_rack) {
      if (round < list.size()) out.push_back(list[round]);
    }
  }
  return out;
}

std::vector<NodeId> PlaceOne(const std::vector<PlacementBroker>& ring, size_t first, size_t shift,
                             int16_t rf, size_t racks) {
  const size_t n = ring.size();
  std::vector<NodeId> replicas{ring[first].id};
  std::set<std::string> used_racks{ring[first].rack};
  std::set<NodeId> used{ring[first].id};
  // Prefer an unused rack, then any unused broker; the walk visits every
  // other broker once per n - 1 steps, so it ends.
  for (size_t step = 0; replicas.size() < static_cast<size_t>(rf); ++step) {
    const PlacementBroker& b = ring[FollowerIndex(first, shift, step, n)];
    bool rack_ok = !used_racks.contains(b.rack) || used_racks.size() == racks ||
                   step >= (n - 1) * 2;  // racks cannot all differ: any rack
    if (!rack_ok || used.contains(b.id)) continue;
    replicas.push_back(b.id);
    used.insert(b.id);
    used_racks.insert(b.rack);
  }
  return replicas;
}

}  // namespace

Result<ReplicaAssignment> PlaceReplicas(std::span<const PlacementBroker> brokers,
                                        const PlacementRequest& request) {
  if (request.replication_factor <= 0) {
    return MakeError(Errc::kInvalidArgument, "Replication factor must be larger than 0.");
  }
  if (static_cast<size_t>(request.replication_factor) > brokers.size()) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("Replication factor: {} larger than available brokers: {}.",
                                 request.replication_factor, brokers.size()));
  }
  std::vector<PlacementBroker> ring = InterleaveRacks(brokers);
  std::set<std::string> racks;
  for (const auto& b : ring) racks.insert(b.rack);
  const size_t n = ring.size();
  size_t start = request.start_index % n;
  size_t shift = n > 1 ? request.replica_shift % (n - 1) : 0;
  ReplicaAssignment out;
  out.reserve(static_cast<size_t>(request.partitions));
  for (int32_t i = 0; i < request.partitions; ++i) {
    auto p = static_cast<size_t>(request.first_partition + i);
    if (p > 0 && p % n == 0) ++shift;  // a new round: other follower sets
    size_t first = (p + start) % n;
    if (n == 1) {
      out.push_back({ring[0].id});
      continue;
    }
    out.push_back(PlaceOne(ring, first, shift, request.replication_factor, racks.size()));
  }
  return out;
}

Status ValidateAssignment(std::span<const PlacementBroker> brokers,
                          const ReplicaAssignment& assignment) {
  if (assignment.empty()) return MakeError(Errc::kInvalidArgument, "No replica assignment given.");
  const size_t rf = assignment.front().size();
  for (size_t p = 0; p < assignment.size(); ++p) {
    const auto& replicas = assignment[p];
    if (replicas.empty()) {
      return MakeError(Errc::kInvalidArgument,
                       fmt::format("Partition {} has an empty replica assignment.", p));
    }
    if (replicas.size() != rf) {
      return MakeError(Errc::kInvalidArgument,
                       "All partitions should have the same number of replicas.");
    }
    std::set<NodeId> seen;
    for (NodeId id : replicas) {
      if (!seen.insert(id).second) {
        return MakeError(Errc::kInvalidArgument,
                         fmt::format("Duplicate replica assignment for partition {}: broker {}.", p,
                                     id.value()));
      }
      bool known = std::any_of(brokers.begin(), brokers.end(),
                               [&](const PlacementBroker& b) { return b.id == id; });
      if (!known) {
        return MakeError(
            Errc::kInvalidArgument,
            fmt::format("Unknown broker id {} in the replica assignment.", id.value()));
      }
    }
  }
  return Status::Ok();
}

}  // namespace strata::cluster
