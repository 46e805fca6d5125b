// CreatePartitions (37): grows a topic's partition count, placing the new
// partitions as topic creation does (or as the request's assignments say).
#include "protocol/messages/create_partitions.h"

#include <fmt/format.h>

#include "kafka/authorization.h"
#include "kafka/cluster_state.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using protocol::CreatePartitionsRequest;
using protocol::CreatePartitionsResponse;
using protocol::ErrorCode;

void GrowOne(BrokerContext& ctx, const CreatePartitionsRequest::Topic& in, bool validate_only,
             CreatePartitionsResponse::TopicResult& out) {
  auto info = ctx.topics.GetTopicInfo(in.name);
  auto fail = [&](ErrorCode code, std::string message) {
    out.error_code = Code(code);
    out.error_message = std::move(message);
  };
  if (!info)
    return fail(ErrorCode::kUnknownTopicOrPartition, "The topic '" + in.name + "' does not exist.");
  int32_t current = info->record.partitions;
  if (in.count < current) {
    return fail(
        ErrorCode::kInvalidPartitions,
        fmt::format("Topic currently has {} partitions, which is higher than the requested {}.",
                    current, in.count));
  }
  if (in.count == current) {
    return fail(ErrorCode::kInvalidPartitions,
                fmt::format("Topic already has {} partitions.", current));
  }
  cluster::ReplicaAssignment replicas;
  if (in.assignments) {
    if (static_cast<int32_t>(in.assignments->size()) != in.count - current) {
      return fail(ErrorCode::kInvalidReplicaAssignment,
                  "Increasing the number of partitions needs one assignment per new partition.");
    }
    for (const auto& a : *in.assignments) {
      auto& ids = replicas.emplace_back();
      for (int32_t b : a.broker_ids) ids.emplace_back(b);
    }
    Status valid = cluster::ValidateAssignment(PlacementBrokers(ctx), replicas);
    if (!valid.ok()) return fail(ErrorCode::kInvalidReplicaAssignment, valid.error().message);
  } else {
    auto placed =
        PlaceNewReplicas(ctx, in.count - current, info->record.replication_factor, current);
    if (!placed.ok()) return fail(ErrorCode::kInvalidReplicationFactor, placed.error().message);
    replicas = std::move(*placed);
  }
  if (validate_only) return;
  Status st = ctx.topics.AddPartitions(in.name, in.count, std::move(replicas));
  if (!st.ok()) {
    fail(TopicWriteErrorCode(st.error().code), st.error().message);
  }
}

}  // namespace

HandlerResult HandleCreatePartitions(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(CreatePartitionsRequest req,
                          DecodeRequest<CreatePartitionsRequest>(request));
  CreatePartitionsResponse resp;
  for (const auto& topic : req.topics) {
    auto& out = resp.results.emplace_back();
    out.name = topic.name;
    if (!Authorized(ctx, request, security::AclOperation::kAlter, security::ResourceType::kTopic,
                    topic.name)) {
      out.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
      out.error_message = "Authorization failed.";
      continue;
    }
    GrowOne(ctx, topic, req.validate_only, out);
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult CreatePartitionsControllerUnavailable(net::Request& request, ErrorCode code,
                                                    const std::string& message) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<CreatePartitionsRequest>(request));
  CreatePartitionsResponse resp;
  for (const auto& t : req.topics) resp.results.push_back({t.name, Code(code), message});
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
