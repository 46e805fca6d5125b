// DeleteGroups (42): deletes empty groups with their committed offsets
// (tombstones in __consumer_offsets); NON_EMPTY_GROUP / GROUP_ID_NOT_FOUND
// otherwise.
#include "coordinator/group_coordinator.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "protocol/messages/delete_groups.h"

namespace strata::kafka {

HandlerResult HandleDeleteGroups(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(protocol::DeleteGroupsRequest req,
                          DecodeRequest<protocol::DeleteGroupsRequest>(request));
  protocol::DeleteGroupsResponse resp;
  for (const auto& id : req.groups_names) {
    if (auto error = GroupRequestError(ctx, request, security::AclOperation::kDelete, id);
        error != protocol::ErrorCode::kNone) {
      resp.results.push_back({id, Code(error)});
      continue;
    }
    resp.results.push_back(ctx.group_coordinator->DeleteGroup(id));
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
