// Heartbeat (12): keeps a member's session alive and tells it when a
// rebalance has started (REBALANCE_IN_PROGRESS).
#include "coordinator/group_coordinator.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "protocol/messages/heartbeat.h"

namespace strata::kafka {

HandlerResult HandleHeartbeat(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(protocol::HeartbeatRequest req,
                          DecodeRequest<protocol::HeartbeatRequest>(request));
  protocol::HeartbeatResponse resp;
  resp.error_code =
      Code(GroupRequestError(ctx, request, security::AclOperation::kRead, req.group_id));
  if (resp.error_code == 0) resp = ctx.group_coordinator->Heartbeat(req);
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
