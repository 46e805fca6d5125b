// SyncGroup (14): the leader hands in the assignment; every member waits for
// its own share (parked in the coordinator until the leader's assignment is
// stored).
#include "coordinator/async_result.h"
#include "coordinator/group_coordinator.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/messages/sync_group.h"

namespace strata::kafka {

asio::awaitable<HandlerResult> HandleSyncGroup(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<protocol::SyncGroupRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  protocol::SyncGroupRequest& req = *decoded;
  protocol::SyncGroupResponse resp;
  if (request.header.api_version >= 5 && (!req.protocol_type || !req.protocol_name)) {
    // v5+ must name the protocol (Kafka's areMandatoryProtocolTypeAndNamePresent).
    resp.error_code = Code(protocol::ErrorCode::kInconsistentGroupProtocol);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  if (auto error = GroupRequestError(ctx, request, security::AclOperation::kRead, req.group_id);
      error != protocol::ErrorCode::kNone) {
    resp.error_code = Code(error);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  auto result = std::make_shared<coordinator::AsyncResult<protocol::SyncGroupResponse>>(
      co_await asio::this_coro::executor);
  ctx.group_coordinator->SyncGroup(
      GroupRequestContext(request), req,
      [result](protocol::SyncGroupResponse r) { result->Set(std::move(r)); });
  resp = co_await result->Wait();
  if (resp.error_code == 0) {
    // The leader's assignment is in __consumer_offsets: answered once committed.
    const protocol::ErrorCode replicated = co_await AwaitGroupWrites(ctx, req.group_id);
    if (replicated != protocol::ErrorCode::kNone) resp.error_code = Code(replicated);
  }
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
