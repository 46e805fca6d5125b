// ConsumerGroupDescribe (69): KIP-848 groups with their epochs and each
// member's current and target assignment; groups that are not consumer
// groups are GROUP_ID_NOT_FOUND (Kafka's admin client then asks
// DescribeGroups).
#include "protocol/messages/consumer_group_describe.h"

#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"

namespace strata::kafka {

HandlerResult HandleConsumerGroupDescribe(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(protocol::ConsumerGroupDescribeRequest req,
                          DecodeRequest<protocol::ConsumerGroupDescribeRequest>(request));
  protocol::ConsumerGroupDescribeResponse resp;
  for (const auto& id : req.group_ids) {
    auto& g = resp.groups.emplace_back();
    g.group_id = id;
    if (!ctx.group_coordinator->ConsumerProtocolEnabled()) {
      g.error_code = Code(protocol::ErrorCode::kUnsupportedVersion);
      continue;
    }
    if (auto error = GroupRequestError(ctx, request, security::AclOperation::kDescribe, id);
        error != protocol::ErrorCode::kNone) {
      g.error_code = Code(error);
      continue;
    }
    g = ctx.group_coordinator->DescribeConsumerGroup(id);
    if (req.include_authorized_operations) {
      g.authorized_operations =
          AuthorizedOperations(ctx, request, security::ResourceType::kGroup, id);
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
