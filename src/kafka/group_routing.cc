#include "kafka/group_routing.h"

#include "base/log.h"
#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/coordinator_topic.h"

namespace strata::kafka {

protocol::ErrorCode EnsureOffsetsTopic(BrokerContext& ctx) {
  CoordinatorTopicSpec spec;
  spec.name = coordinator::kOffsetsTopic;
  spec.partitions = static_cast<int32_t>(ctx.config.GetLong("offsets.topic.num.partitions"));
  spec.replication_factor =
      static_cast<int16_t>(ctx.config.GetLong("offsets.topic.replication.factor"));
  spec.replication_factor_key = "offsets.topic.replication.factor";
  spec.configs = {{"segment.bytes", ctx.config.Get("offsets.topic.segment.bytes")}};
  return EnsureCoordinatorTopic(ctx, spec);
}

LiveBroker GroupCoordinatorBroker(const BrokerContext& ctx, const std::string& group_id,
                                  std::string_view listener) {
  if (ctx.group_coordinator == nullptr) return LiveBroker{};
  return CoordinatorTopicLeader(ctx, coordinator::kOffsetsTopic,
                                ctx.group_coordinator->PartitionFor(group_id), listener);
}

protocol::ErrorCode GroupRequestError(const BrokerContext& ctx, const net::Request& request,
                                      security::AclOperation op, const std::string& group_id) {
  if (!Authorized(ctx, request, op, security::ResourceType::kGroup, group_id)) {
    return protocol::ErrorCode::kGroupAuthorizationFailed;
  }
  return GroupCoordinatorError(ctx, group_id);
}

protocol::ErrorCode GroupCoordinatorError(const BrokerContext& ctx, const std::string& group_id) {
  if (ctx.group_coordinator == nullptr) return protocol::ErrorCode::kCoordinatorNotAvailable;
  int32_t p = ctx.group_coordinator->PartitionFor(group_id);
  broker::LeaderLookup leader = ctx.topics.LeaderPartition({coordinator::kOffsetsTopic, p}, -1);
  if (leader.error != protocol::ErrorCode::kNone) return protocol::ErrorCode::kNotCoordinator;
  // Led here: served once loaded. Until the coordinator has heard of the
  // leadership the client waits on this broker, as for a load in progress.
  const protocol::ErrorCode served = ctx.group_coordinator->Serves(group_id);
  return served == protocol::ErrorCode::kNotCoordinator
             ? protocol::ErrorCode::kCoordinatorLoadInProgress
             : served;
}

asio::awaitable<protocol::ErrorCode> AwaitGroupWrites(BrokerContext& ctx,
                                                      const std::string& group_id) {
  const int32_t p = ctx.group_coordinator->PartitionFor(group_id);
  auto last = ctx.group_coordinator->LastAppended(p);
  if (!last) co_return protocol::ErrorCode::kNone;  // nothing written here
  const auto timeout = std::chrono::milliseconds(ctx.config.GetLong("offsets.commit.timeout.ms"));
  const CommitOutcome outcome = co_await AwaitCoordinatorAppend(
      ctx, coordinator::kOffsetsTopic, p, last->last_offset, last->leader_epoch, timeout);
  switch (outcome) {
    case CommitOutcome::kCommitted:
      co_return protocol::ErrorCode::kNone;
    case CommitOutcome::kDeposed:
      co_return protocol::ErrorCode::kNotCoordinator;
    case CommitOutcome::kTimedOut:
      log::Get("coordinator")
          ->warn("group {}: the ISR of {}-{} did not confirm offset {} within {} ms", group_id,
                 coordinator::kOffsetsTopic, p, last->last_offset, timeout.count());
      co_return protocol::ErrorCode::kCoordinatorNotAvailable;
  }
  co_return protocol::ErrorCode::kNone;
}

}  // namespace strata::kafka
