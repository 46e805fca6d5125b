// ListGroups (16): every live group with its protocol type and (v4+) state;
// v4 may filter by state names (case-insensitive).
#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "protocol/messages/list_groups.h"

namespace strata::kafka {

HandlerResult HandleListGroups(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(protocol::ListGroupsRequest req,
                          DecodeRequest<protocol::ListGroupsRequest>(request));
  protocol::ListGroupsResponse resp;
  resp.groups = ctx.group_coordinator->ListGroups(req.states_filter);
  // DESCRIBE on the cluster lists every group; otherwise those the client
  // may DESCRIBE.
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kDescribe, false)) {
    std::erase_if(resp.groups, [&](const auto& g) {
      return !Authorized(ctx, request, security::AclOperation::kDescribe,
                         security::ResourceType::kGroup, g.group_id, false);
    });
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
