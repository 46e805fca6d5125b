#include "kafka/group_routing.h"

#include <algorithm>

#include "base/log.h"
#include "coordinator/group_coordinator.h"
#include "kafka/commit_wait.h"
#include "kafka/controller_forwarding.h"

namespace strata::kafka {

protocol::ErrorCode EnsureOffsetsTopic(BrokerContext& ctx) {
  if (ctx.topics.GetTopicInfo(coordinator::kOffsetsTopic)) return protocol::ErrorCode::kNone;
  if (ctx.forwarder != nullptr && !ctx.forwarder->IsActiveController()) {
    ctx.forwarder->RequestTopicCreation(coordinator::kOffsetsTopic);
    return protocol::ErrorCode::kCoordinatorNotAvailable;
  }
  const auto partitions = static_cast<int32_t>(ctx.config.GetLong("offsets.topic.num.partitions"));
  const auto wanted = static_cast<int16_t>(ctx.config.GetLong("offsets.topic.replication.factor"));
  // Capped at the brokers that can hold a replica now (one, with embedded
  // metadata), so groups work on a single broker and on a cluster still
  // being started; said in the log, as the factor stays what it was made with.
  const auto placeable = static_cast<int16_t>(std::max<size_t>(PlacementBrokers(ctx).size(), 1));
  const int16_t rf = std::min(wanted, placeable);
  if (rf < wanted) {
    log::Get("coordinator")
        ->warn(
            "creating {} with {} replicas: offsets.topic.replication.factor={} but only {} "
            "brokers can hold one now",
            coordinator::kOffsetsTopic, rf, wanted, placeable);
  }
  auto placed = PlaceNewReplicas(ctx, partitions, rf, 0);
  if (!placed.ok()) {
    log::Get("coordinator")
        ->warn("cannot create {}: {}", coordinator::kOffsetsTopic, placed.error().message);
    return protocol::ErrorCode::kCoordinatorNotAvailable;
  }
  cluster::TopicRecord record;
  record.name = coordinator::kOffsetsTopic;
  record.partitions = partitions;
  record.replication_factor = rf;
  record.internal = true;
  record.configs = {{"cleanup.policy", "compact"},
                    {"segment.bytes", ctx.config.Get("offsets.topic.segment.bytes")}};
  auto created = ctx.topics.CreateTopic(std::move(record), std::move(*placed));
  if (!created.ok() && created.error().code != Errc::kAlreadyExists) {
    log::Get("coordinator")
        ->warn("cannot create {}: {}", coordinator::kOffsetsTopic, created.error().message);
    return protocol::ErrorCode::kCoordinatorNotAvailable;
  }
  return protocol::ErrorCode::kNone;
}

LiveBroker GroupCoordinatorBroker(const BrokerContext& ctx, const std::string& group_id) {
  LiveBroker none;
  auto info = ctx.topics.GetTopicInfo(coordinator::kOffsetsTopic);
  if (!info || ctx.group_coordinator == nullptr) return none;
  int32_t p = ctx.group_coordinator->PartitionFor(group_id);
  if (p < 0 || p >= info->record.partitions) return none;
  std::vector<LiveBroker> live = LiveBrokers(ctx);
  const cluster::NodeId leader = PartitionStateOf(ctx, info->record, p, live).leader();
  for (const auto& b : live) {
    if (b.node_id == leader.value()) return b;
  }
  return none;
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
  std::shared_ptr<broker::Partition> partition =
      ctx.topics.GetPartition({coordinator::kOffsetsTopic, p});
  auto info = ctx.topics.GetTopicInfo(coordinator::kOffsetsTopic);
  if (!last) co_return protocol::ErrorCode::kNone;  // nothing written here
  if (!partition || !info) co_return protocol::ErrorCode::kNotCoordinator;
  // With no follower fetching (one replica, or followers out of the ISR) no
  // fetch moves the mark: the write itself may.
  partition->MaybeAdvanceHighWatermark(info->min_insync_replicas);
  std::vector<CommitWait> waits(1);
  waits[0] = {partition, last->last_offset, cluster::NodeId(ctx.config.node_id()),
              cluster::LeaderEpoch(last->leader_epoch)};
  const auto timeout = std::chrono::milliseconds(ctx.config.GetLong("offsets.commit.timeout.ms"));
  const std::vector<CommitOutcome> outcome = co_await AwaitCommitted(ctx, waits, timeout);
  switch (outcome[0]) {
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
