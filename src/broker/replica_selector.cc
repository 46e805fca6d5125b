#include "broker/replica_selector.h"

#include <tuple>

namespace strata::broker {

Result<ReplicaSelectorKind> ParseReplicaSelector(const std::string& class_name) {
  if (class_name.empty()) return ReplicaSelectorKind::kLeaderOnly;
  if (class_name == kRackAwareReplicaSelector) return ReplicaSelectorKind::kRackAware;
  return MakeError(Errc::kInvalidArgument, std::string("replica.selector.class: ") + class_name +
                                               " is not supported (empty, or " +
                                               kRackAwareReplicaSelector + ")");
}

std::optional<cluster::NodeId> SelectReadReplica(ReplicaSelectorKind kind,
                                                 const ReadReplicaQuery& query) {
  if (kind != ReplicaSelectorKind::kRackAware || query.client_rack.empty()) return std::nullopt;
  if (query.leader_rack == query.client_rack) return std::nullopt;  // the leader is as near
  const ReadReplicaCandidate* best = nullptr;
  auto rank = [](const ReadReplicaCandidate& c) {
    return std::make_tuple(c.log_end_offset, -c.since_caught_up_ms, c.id.value());
  };
  for (const ReadReplicaCandidate& c : query.followers) {
    // Kafka leaves out replicas outside the ISR (they may lag for ever), the
    // ones without a live broker, and those whose log does not hold the
    // offset.
    if (!c.in_isr || !c.alive || c.rack != query.client_rack) continue;
    if (c.log_end_offset < query.fetch_offset || c.log_start_offset > query.fetch_offset) continue;
    if (best == nullptr || rank(c) > rank(*best)) best = &c;
  }
  if (best == nullptr) return std::nullopt;
  return best->id;
}

}  // namespace strata::broker
