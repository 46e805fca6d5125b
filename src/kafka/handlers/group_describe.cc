// DescribeGroups (15): state, protocol and members (with their assignment)
// of each group; unknown groups are reported as Dead without an error, as
// Kafka does for v0-5.
#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "protocol/messages/describe_groups.h"

namespace strata::kafka {

HandlerResult HandleDescribeGroups(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(protocol::DescribeGroupsRequest req,
                          DecodeRequest<protocol::DescribeGroupsRequest>(request));
  protocol::DescribeGroupsResponse resp;
  for (const auto& id : req.groups) {
    if (auto error = GroupRequestError(ctx, request, security::AclOperation::kDescribe, id);
        error != protocol::ErrorCode::kNone) {
      auto& g = resp.groups.emplace_back();
      g.group_id = id;
      g.error_code = Code(error);
      continue;
    }
    auto& g = resp.groups.emplace_back(ctx.group_coordinator->DescribeGroup(id));
    if (req.include_authorized_operations) {
      g.authorized_operations =
          AuthorizedOperations(ctx, request, security::ResourceType::kGroup, id);
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
