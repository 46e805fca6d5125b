#include "kafka/coordinator_topic.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "kafka/controller_forwarding.h"

namespace strata::kafka {

protocol::ErrorCode EnsureCoordinatorTopic(BrokerContext& ctx, const CoordinatorTopicSpec& spec) {
  if (ctx.topics.GetTopicInfo(spec.name)) return protocol::ErrorCode::kNone;
  if (ctx.forwarder != nullptr && !ctx.forwarder->IsActiveController()) {
    ctx.forwarder->RequestTopicCreation(spec.name);
    return protocol::ErrorCode::kCoordinatorNotAvailable;
  }
  // Capped at the brokers that can hold a replica now (one, with embedded
  // metadata), so coordinators work on a single broker and on a cluster
  // still being started.
  const auto placeable = static_cast<int16_t>(std::max<size_t>(PlacementBrokers(ctx).size(), 1));
  const int16_t rf = std::min(spec.replication_factor, placeable);
  if (rf < spec.replication_factor) {
    log::Get("coordinator")
        ->warn("creating {} with {} replicas: {}={} but only {} brokers can hold one now",
               spec.name, rf, spec.replication_factor_key, spec.replication_factor, placeable);
  }
  auto placed = PlaceNewReplicas(ctx, spec.partitions, rf, 0);
  if (!placed.ok()) {
    log::Get("coordinator")->warn("cannot create {}: {}", spec.name, placed.error().message);
    return protocol::ErrorCode::kCoordinatorNotAvailable;
  }
  cluster::TopicRecord record;
  record.name = spec.name;
  record.partitions = spec.partitions;
  record.replication_factor = rf;
  record.internal = true;
  record.configs = spec.configs;
  record.configs["cleanup.policy"] = "compact";
  if (spec.min_insync_replicas > 0) {
    record.configs["min.insync.replicas"] =
        std::to_string(std::min<int32_t>(spec.min_insync_replicas, rf));
  }
  auto created = ctx.topics.CreateTopic(std::move(record), std::move(*placed));
  if (!created.ok() && created.error().code != Errc::kAlreadyExists) {
    log::Get("coordinator")->warn("cannot create {}: {}", spec.name, created.error().message);
    return protocol::ErrorCode::kCoordinatorNotAvailable;
  }
  return protocol::ErrorCode::kNone;
}

LiveBroker CoordinatorTopicLeader(const BrokerContext& ctx, const std::string& topic,
                                  int32_t partition, std::string_view listener) {
  LiveBroker none;
  auto info = ctx.topics.GetTopicInfo(topic);
  if (!info || partition < 0 || partition >= info->record.partitions) return none;
  std::vector<LiveBroker> live = LiveBrokers(ctx, listener);
  const cluster::NodeId leader = PartitionStateOf(ctx, info->record, partition, live).leader();
  for (const auto& b : live) {
    if (b.node_id == leader.value()) return b;
  }
  return none;
}

std::unique_ptr<coordinator::CoordinatorLog> MakeCoordinatorLog(broker::TopicManager& topics,
                                                                const std::string& topic,
                                                                int32_t partitions, Clock* clock) {
  broker::TopicManager* hosted = &topics;
  return std::make_unique<coordinator::CoordinatorLog>(
      topic, partitions,
      [hosted, topic](int32_t p) {
        return hosted->GetLog({topic, p});
      },
      [hosted, topic](int32_t p, MutableByteView batch,
                      const std::vector<storage::BatchInfo>& infos)
          -> Result<coordinator::CoordinatorLog::Appended> {
        auto partition = hosted->GetPartition({topic, p});
        auto info = hosted->GetTopicInfo(topic);
        if (!partition || !info) {
          return MakeError(Errc::kUnavailable, fmt::format("{}-{} is not hosted here", topic, p));
        }
        // Transactional offsets carry no sequence: the coordinator's origin.
        const auto origin = !infos.empty() && infos[0].transactional
                                ? storage::AppendOrigin::kCoordinator
                                : storage::AppendOrigin::kClient;
        STRATA_ASSIGN_OR_RETURN(
            auto appended,
            partition->AppendAsLeader(batch, infos, info->min_insync_replicas, origin));
        return coordinator::CoordinatorLog::Appended{appended.appended.last_offset,
                                                     appended.leader_epoch.value()};
      },
      clock);
}

asio::awaitable<CommitOutcome> AwaitCoordinatorAppend(BrokerContext& ctx, const std::string& topic,
                                                      int32_t partition, Offset last_offset,
                                                      int32_t leader_epoch,
                                                      std::chrono::milliseconds timeout) {
  std::shared_ptr<broker::Partition> hosted = ctx.topics.GetPartition({topic, partition});
  auto info = ctx.topics.GetTopicInfo(topic);
  if (!hosted || !info) co_return CommitOutcome::kDeposed;
  // With no follower fetching (one replica, or followers out of the ISR) no
  // fetch moves the mark: the write itself may.
  hosted->MaybeAdvanceHighWatermark(info->min_insync_replicas);
  std::vector<CommitWait> waits(1);
  waits[0] = {hosted, last_offset, cluster::NodeId(ctx.config.node_id()),
              cluster::LeaderEpoch(leader_epoch)};
  const std::vector<CommitOutcome> outcome = co_await AwaitCommitted(ctx, waits, timeout);
  co_return outcome[0];
}

}  // namespace strata::kafka
