// ConsumerGroupHeartbeat (68): KIP-848's one group request. The coordinator
// works out the member's next step and writes it to __consumer_offsets; the
// answer waits until the partition's ISR has it (as OffsetCommit's does), so
// a coordinator that fails over never forgets an epoch a member was told.
#include "protocol/messages/consumer_group_heartbeat.h"

#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "kafka/quota_charge.h"

namespace strata::kafka {

asio::awaitable<HandlerResult> HandleConsumerGroupHeartbeat(BrokerContext& ctx,
                                                            net::Request& request) {
  auto decoded = DecodeRequest<protocol::ConsumerGroupHeartbeatRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  const protocol::ConsumerGroupHeartbeatRequest& req = *decoded;
  protocol::ConsumerGroupHeartbeatResponse resp;
  auto refuse = [&](protocol::ErrorCode code, std::string message) {
    resp.error_code = Code(code);
    if (!message.empty()) resp.error_message = std::move(message);
    return std::optional<Bytes>(EncodeResponse(request, resp));
  };
  if (!ctx.group_coordinator->ConsumerProtocolEnabled()) {
    co_return refuse(protocol::ErrorCode::kUnsupportedVersion,
                     "The consumer group protocol is not enabled on this broker "
                     "(group.coordinator.rebalance.protocols).");
  }
  if (auto error = GroupRequestError(ctx, request, security::AclOperation::kRead, req.group_id);
      error != protocol::ErrorCode::kNone) {
    co_return refuse(error, "");
  }
  if (req.subscribed_topic_names) {
    for (const auto& topic : *req.subscribed_topic_names) {
      if (!Authorized(ctx, request, security::AclOperation::kDescribe,
                      security::ResourceType::kTopic, topic)) {
        co_return refuse(protocol::ErrorCode::kTopicAuthorizationFailed, "");
      }
    }
  }
  resp = ctx.group_coordinator->ConsumerGroupHeartbeat(GroupRequestContext(request), req);
  if (resp.error_code == 0) {
    const protocol::ErrorCode replicated =
        co_await Waited(request, AwaitGroupWrites(ctx, req.group_id));
    if (replicated != protocol::ErrorCode::kNone) {
      resp = {};
      co_return refuse(replicated, "");
    }
  }
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
