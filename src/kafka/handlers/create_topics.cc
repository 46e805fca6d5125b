// CreateTopics (19): validated creation (names, partitions, replication
// factor, configs), validate_only, manual replica assignments, and the
// v5+ echo of the resulting configs.
#include "protocol/messages/create_topics.h"

#include <set>

#include "coordinator/group_coordinator.h"
#include "coordinator/txn_log.h"
#include "kafka/authorization.h"
#include "kafka/config_entries.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "kafka/topic_creation.h"
#include "kafka/txn_routing.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using protocol::CreateTopicsRequest;
using protocol::CreateTopicsResponse;
using protocol::ErrorCode;

void SetError(CreateTopicsResponse::Topic& out, ErrorCode code, std::string message) {
  out.error_code = Code(code);
  out.error_message = std::move(message);
}

void CreateOne(BrokerContext& ctx, CreateTopicsRequest::Topic& in, bool validate_only,
               CreateTopicsResponse::Topic& out) {
  const bool offsets = in.name == coordinator::kOffsetsTopic;
  if ((offsets || in.name == coordinator::kTransactionStateTopic) && !validate_only) {
    // Made with the offsets.topic.* or transaction.state.log.* settings,
    // whoever asks (a broker's FindCoordinator forwards this).
    if (ctx.topics.GetTopicInfo(in.name)) {
      SetError(out, ErrorCode::kTopicAlreadyExists, "Topic '" + in.name + "' already exists.");
      return;
    }
    const ErrorCode made = offsets ? EnsureOffsetsTopic(ctx) : EnsureTransactionTopic(ctx);
    if (made != ErrorCode::kNone) SetError(out, made, "cannot create " + in.name);
    if (auto info = ctx.topics.GetTopicInfo(in.name)) {
      out.topic_id = info->record.id;
      out.num_partitions = info->record.partitions;
      out.replication_factor = info->record.replication_factor;
    }
    return;
  }
  std::map<std::string, std::string> configs;
  for (const auto& c : in.configs) {
    if (!c.value) {
      SetError(out, ErrorCode::kInvalidConfig,
               "Null value not supported for topic config " + c.name);
      return;
    }
    configs[c.name] = *c.value;
  }
  int32_t partitions = in.num_partitions;
  int16_t rf = in.replication_factor;
  cluster::ReplicaAssignment manual;
  if (!in.assignments.empty()) {
    if (partitions != -1 || rf != -1) {
      SetError(out, ErrorCode::kInvalidRequest,
               "Both numPartitions or replicationFactor and replicasAssignments were set.");
      return;
    }
    partitions = static_cast<int32_t>(in.assignments.size());
    rf = static_cast<int16_t>(in.assignments.front().broker_ids.size());
    // Kafka lists them by partition index; any order on the wire.
    manual.resize(in.assignments.size());
    for (const auto& a : in.assignments) {
      if (a.partition_index < 0 || a.partition_index >= partitions ||
          !manual[static_cast<size_t>(a.partition_index)].empty()) {
        SetError(out, ErrorCode::kInvalidReplicaAssignment,
                 "Partitions should be a consecutive 0-based integer sequence.");
        return;
      }
      for (int32_t b : a.broker_ids) manual[static_cast<size_t>(a.partition_index)].emplace_back(b);
    }
  }
  auto result = CreateTopicChecked(ctx, in.name, partitions, rf, configs, validate_only,
                                   manual.empty() ? nullptr : &manual);
  if (result.error != ErrorCode::kNone) {
    SetError(out, result.error, result.message);
    return;
  }
  out.topic_id = result.id;
  out.num_partitions = result.partitions;
  out.replication_factor = result.replication_factor;
  out.configs.emplace();
  for (const auto& e : TopicConfigEntries(ctx.config, configs)) {
    out.configs->push_back(
        {e.name, e.value, e.read_only, static_cast<int8_t>(e.source), e.sensitive});
  }
}

}  // namespace

HandlerResult HandleCreateTopics(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(CreateTopicsRequest req, DecodeRequest<CreateTopicsRequest>(request));
  std::map<std::string, int> seen;
  for (const auto& t : req.topics) ++seen[t.name];
  CreateTopicsResponse resp;
  // CREATE on the cluster covers every topic; otherwise CREATE on each.
  const bool cluster_create =
      AuthorizedOnCluster(ctx, request, security::AclOperation::kCreate, false);
  for (auto& topic : req.topics) {
    auto& out = resp.topics.emplace_back();
    out.name = topic.name;
    if (seen[topic.name] > 1) {
      SetError(out, ErrorCode::kInvalidRequest, "Duplicate topic name in the request.");
      continue;
    }
    if (!cluster_create && !Authorized(ctx, request, security::AclOperation::kCreate,
                                       security::ResourceType::kTopic, topic.name)) {
      SetError(out, ErrorCode::kTopicAuthorizationFailed,
               "Authorization failed: not allowed to create topic " + topic.name);
      continue;
    }
    CreateOne(ctx, topic, req.validate_only, out);
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult CreateTopicsControllerUnavailable(net::Request& request, ErrorCode code,
                                                const std::string& message) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<CreateTopicsRequest>(request));
  CreateTopicsResponse resp;
  for (const auto& t : req.topics) {
    auto& out = resp.topics.emplace_back();
    out.name = t.name;
    SetError(out, code, message);
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
