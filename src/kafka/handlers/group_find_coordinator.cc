// FindCoordinator (10): a group's coordinator is the leader of its
// __consumer_offsets partition (key type 0), a transactional id's the leader
// of its __transaction_state partition (key type 1), each topic made at its
// first lookup; COORDINATOR_NOT_AVAILABLE while that partition has no
// leader. Other key types (share groups) are INVALID_REQUEST, as Kafka
// answers versions below 6.
// v0-3 carry one key, v4+ a batch (KIP-699).
#include "kafka/authorization.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "kafka/txn_routing.h"
#include "protocol/error_code.h"
#include "protocol/messages/find_coordinator.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;
using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;

constexpr int8_t kGroupKey = 0;
constexpr int8_t kTransactionKey = 1;

const char* Message(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNone:
      return "NONE";
    case ErrorCode::kCoordinatorNotAvailable:
      return "The coordinator is not available.";
    default:
      return "The request was malformed or sent to an incompatible broker.";
  }
}

FindCoordinatorResponse::Coordinator Lookup(BrokerContext& ctx, const net::Request& request,
                                            int8_t key_type, const std::string& key) {
  const std::string_view listener = request.listener;
  FindCoordinatorResponse::Coordinator c;
  c.key = key;
  // DESCRIBE on the group or transactional id, as Kafka asks.
  if ((key_type == kGroupKey || key_type == kTransactionKey) &&
      !Authorized(ctx, request, security::AclOperation::kDescribe,
                  key_type == kGroupKey ? security::ResourceType::kGroup
                                        : security::ResourceType::kTransactionalId,
                  key)) {
    const ErrorCode code = key_type == kGroupKey ? ErrorCode::kGroupAuthorizationFailed
                                                 : ErrorCode::kTransactionalIdAuthorizationFailed;
    c.error_code = Code(code);
    c.error_message = "Authorization failed.";
    c.node_id = -1;
    c.port = -1;
    return c;
  }
  LiveBroker b;
  if (key_type == kGroupKey && ctx.group_coordinator != nullptr &&
      EnsureOffsetsTopic(ctx) == ErrorCode::kNone) {
    b = GroupCoordinatorBroker(ctx, key, listener);
  } else if (key_type == kTransactionKey && ctx.txn_coordinator != nullptr &&
             EnsureTransactionTopic(ctx) == ErrorCode::kNone) {
    b = TxnCoordinatorBroker(ctx, key, listener);
  }
  if (b.node_id >= 0) {
    c.node_id = b.node_id;
    c.host = b.host;
    c.port = b.port;
    return c;
  }
  ErrorCode code = key_type == kGroupKey || key_type == kTransactionKey
                       ? ErrorCode::kCoordinatorNotAvailable
                       : ErrorCode::kInvalidRequest;
  c.error_code = Code(code);
  c.error_message = Message(code);
  c.node_id = -1;
  c.port = -1;
  return c;
}

}  // namespace

HandlerResult HandleFindCoordinator(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(FindCoordinatorRequest req,
                          DecodeRequest<FindCoordinatorRequest>(request));
  FindCoordinatorResponse resp;
  if (request.header.api_version >= 4) {
    for (const auto& key : req.coordinator_keys)
      resp.coordinators.push_back(Lookup(ctx, request, req.key_type, key));
  } else {
    auto c = Lookup(ctx, request, req.key_type, req.key);
    resp.error_code = c.error_code;
    resp.error_message =
        c.error_message ? c.error_message : std::optional<std::string>(Message(ErrorCode::kNone));
    resp.node_id = c.node_id;
    resp.host = c.host;
    resp.port = c.port;
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
