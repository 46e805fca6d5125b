// LeaveGroup (13): members leave at once (triggering a rebalance). v0-2 name
// one member and report its error at the top level; v3+ batch members
// (KIP-345), static ones possibly by instance id only.
#include "coordinator/group_coordinator.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "protocol/messages/leave_group.h"

namespace strata::kafka {

HandlerResult HandleLeaveGroup(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(protocol::LeaveGroupRequest req,
                          DecodeRequest<protocol::LeaveGroupRequest>(request));
  bool single = request.header.api_version <= 2;
  if (single) req.members = {{req.member_id, std::nullopt, std::nullopt}};
  if (auto error = GroupRequestError(ctx, request, security::AclOperation::kRead, req.group_id);
      error != protocol::ErrorCode::kNone) {
    protocol::LeaveGroupResponse resp;
    resp.error_code = Code(error);
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  protocol::LeaveGroupResponse resp = ctx.group_coordinator->LeaveGroup(req.group_id, req.members);
  if (single && resp.error_code == 0) {
    for (const auto& m : resp.members) {
      if (m.error_code != 0) {
        resp.error_code = m.error_code;
        break;
      }
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
