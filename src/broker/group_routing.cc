#include "broker/group_routing.h"

#include "coordinator/group_coordinator.h"

namespace strata::broker {

LiveBroker GroupCoordinatorBroker(const BrokerContext& ctx, const std::string& group_id) {
  LiveBroker none;
  auto info = ctx.topics.GetTopicInfo(coordinator::kOffsetsTopic);
  if (!info || ctx.group_coordinator == nullptr) return none;
  int32_t p = ctx.group_coordinator->PartitionFor(group_id);
  std::vector<LiveBroker> live = LiveBrokers(ctx);
  std::vector<PartitionState> states = PartitionStates(ctx, info->record, live);
  if (p < 0 || static_cast<size_t>(p) >= states.size()) return none;
  int32_t leader = states[static_cast<size_t>(p)].leader;
  for (const auto& b : live) {
    if (b.node_id == leader) return b;
  }
  return none;
}

protocol::ErrorCode GroupCoordinatorError(const BrokerContext& ctx, const std::string& group_id) {
  if (ctx.group_coordinator == nullptr) return protocol::ErrorCode::kCoordinatorNotAvailable;
  int32_t p = ctx.group_coordinator->PartitionFor(group_id);
  LeaderLookup leader = ctx.topics.LeaderPartition({coordinator::kOffsetsTopic, p}, -1);
  return leader.error == protocol::ErrorCode::kNone ? protocol::ErrorCode::kNone
                                                    : protocol::ErrorCode::kNotCoordinator;
}

}  // namespace strata::broker
