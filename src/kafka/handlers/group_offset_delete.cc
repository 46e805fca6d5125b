// OffsetDelete (47): removes committed offsets of topics the group does not
// subscribe to. Unknown topics/partitions are answered here
// (UNKNOWN_TOPIC_OR_PARTITION); a group-level error replaces the whole answer,
// as in Kafka.
#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/messages/offset_delete.h"

namespace strata::kafka {

HandlerResult HandleOffsetDelete(BrokerContext& ctx, net::Request& request) {
  using protocol::OffsetDeleteRequest;
  using protocol::OffsetDeleteResponse;
  STRATA_ASSIGN_OR_RETURN(OffsetDeleteRequest req, DecodeRequest<OffsetDeleteRequest>(request));
  if (auto error = GroupRequestError(ctx, request, security::AclOperation::kDelete, req.group_id);
      error != protocol::ErrorCode::kNone) {
    OffsetDeleteResponse resp;
    resp.error_code = Code(error);
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  OffsetDeleteRequest known{req.group_id, {}};
  OffsetDeleteResponse unknown;
  for (const auto& t : req.topics) {
    auto info = ctx.topics.GetTopicInfo(t.name);
    OffsetDeleteRequest::Topic valid{t.name, {}};
    OffsetDeleteResponse::Topic invalid{t.name, {}};
    if (!Authorized(ctx, request, security::AclOperation::kRead, security::ResourceType::kTopic,
                    t.name)) {
      for (const auto& p : t.partitions) {
        invalid.partitions.push_back(
            {p.partition_index, Code(protocol::ErrorCode::kTopicAuthorizationFailed)});
      }
      unknown.topics.push_back(std::move(invalid));
      continue;
    }
    for (const auto& p : t.partitions) {
      if (info && p.partition_index >= 0 && p.partition_index < info->record.partitions) {
        valid.partitions.push_back(p);
      } else {
        invalid.partitions.push_back(
            {p.partition_index, Code(protocol::ErrorCode::kUnknownTopicOrPartition)});
      }
    }
    if (!valid.partitions.empty()) known.topics.push_back(std::move(valid));
    if (!invalid.partitions.empty()) unknown.topics.push_back(std::move(invalid));
  }
  OffsetDeleteResponse resp = ctx.group_coordinator->DeleteOffsets(known);
  if (resp.error_code == 0) {
    for (auto& t : unknown.topics) resp.topics.push_back(std::move(t));
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
