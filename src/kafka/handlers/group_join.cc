// JoinGroup (11): parks the request in the group coordinator until the join
// phase of the rebalance completes (or answers at once with an error,
// MEMBER_ID_REQUIRED, or the current generation).
#include "coordinator/async_result.h"
#include "coordinator/group_coordinator.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "protocol/messages/join_group.h"

namespace strata::kafka {

coordinator::RequestContext GroupRequestContext(const net::Request& request) {
  coordinator::RequestContext rc;
  rc.client_id = request.header.client_id.value_or("");
  // Kafka shows a member's host as InetAddress.toString(): "/<ip>".
  std::string ip = request.peer.substr(0, request.peer.rfind(':'));
  rc.client_host = "/" + ip;
  rc.api_version = request.header.api_version;
  return rc;
}

asio::awaitable<HandlerResult> HandleJoinGroup(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<protocol::JoinGroupRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  if (auto error =
          GroupRequestError(ctx, request, security::AclOperation::kRead, decoded->group_id);
      error != protocol::ErrorCode::kNone) {
    protocol::JoinGroupResponse resp;
    resp.error_code = Code(error);
    resp.member_id = decoded->member_id;
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  auto result = std::make_shared<coordinator::AsyncResult<protocol::JoinGroupResponse>>(
      co_await asio::this_coro::executor);
  ctx.group_coordinator->JoinGroup(
      GroupRequestContext(request), *decoded,
      [result](protocol::JoinGroupResponse r) { result->Set(std::move(r)); });
  protocol::JoinGroupResponse resp = co_await result->Wait();
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
