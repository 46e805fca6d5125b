#include "kafka/topic_creation.h"

#include <fmt/format.h>

#include "broker/topic_validation.h"
#include "kafka/cluster_state.h"
#include "kafka/error_mapping.h"

namespace strata::kafka {

using protocol::ErrorCode;

namespace {
constexpr int32_t kMaxPartitions = 100000;
}  // namespace

TopicCreationResult CreateTopicChecked(BrokerContext& ctx, const std::string& name,
                                       int32_t num_partitions, int16_t replication_factor,
                                       const std::map<std::string, std::string>& configs,
                                       bool validate_only,
                                       const cluster::ReplicaAssignment* manual) {
  TopicCreationResult r;
  if (auto reason = broker::InvalidTopicNameReason(name)) {
    r.error = ErrorCode::kInvalidTopicException;
    r.message = *reason;
    return r;
  }
  if (num_partitions == -1)
    num_partitions = static_cast<int32_t>(ctx.config.GetLong("num.partitions"));
  if (replication_factor == -1) {
    replication_factor = static_cast<int16_t>(ctx.config.GetLong("default.replication.factor"));
  }
  r.partitions = num_partitions;
  r.replication_factor = replication_factor;
  if (num_partitions <= 0 || num_partitions > kMaxPartitions) {
    r.error = ErrorCode::kInvalidPartitions;
    r.message = fmt::format("Number of partitions must be larger than 0 (and at most {}), got {}",
                            kMaxPartitions, num_partitions);
    return r;
  }
  if (replication_factor <= 0) {
    r.error = ErrorCode::kInvalidReplicationFactor;
    r.message = "Replication factor must be larger than 0.";
    return r;
  }
  cluster::ReplicaAssignment replicas;
  if (manual != nullptr) {
    Status valid = cluster::ValidateAssignment(PlacementBrokers(ctx), *manual);
    if (!valid.ok()) {
      r.error = ErrorCode::kInvalidReplicaAssignment;
      r.message = valid.error().message;
      return r;
    }
    replicas = *manual;
  } else {
    const size_t brokers = PlacementBrokers(ctx).size();
    if (static_cast<size_t>(replication_factor) > brokers) {
      r.error = ErrorCode::kInvalidReplicationFactor;
      r.message = fmt::format(
          "Unable to replicate the partition {} time(s): The target replication "
          "factor of {} cannot be reached because only {} broker(s) are registered.",
          replication_factor, replication_factor, brokers);
      return r;
    }
  }
  if (auto reason = broker::InvalidTopicConfigReason(configs)) {
    r.error = ErrorCode::kInvalidConfig;
    r.message = *reason;
    return r;
  }
  if (auto reason = broker::InvalidTieringReason(ctx.config, configs)) {
    r.error = ErrorCode::kInvalidConfig;
    r.message = *reason;
    return r;
  }
  if (ctx.topics.GetTopicInfo(name)) {
    r.error = ErrorCode::kTopicAlreadyExists;
    r.message = "Topic '" + name + "' already exists.";
    return r;
  }
  if (validate_only) return r;
  if (replicas.empty()) {
    auto placed = PlaceNewReplicas(ctx, num_partitions, replication_factor, 0);
    if (!placed.ok()) {
      r.error = ErrorCode::kInvalidReplicationFactor;
      r.message = placed.error().message;
      return r;
    }
    replicas = std::move(*placed);
  }
  cluster::TopicRecord record;
  record.name = name;
  record.partitions = num_partitions;
  record.replication_factor = replication_factor;
  record.configs = configs;
  auto created = ctx.topics.CreateTopic(std::move(record), std::move(replicas));
  if (!created.ok()) {
    r.error = TopicWriteErrorCode(created.error().code);
    r.message = created.error().message;
    return r;
  }
  r.id = created->id;
  return r;
}

}  // namespace strata::kafka
