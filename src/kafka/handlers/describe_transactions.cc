// DescribeTransactions (65): the state of some transactional ids as their
// coordinator holds it (kafka-transactions describe sends it to the id's
// coordinator). Each id is answered on its own, as Kafka's
// TransactionCoordinator.handleDescribeTransactions does:
// COORDINATOR_NOT_AVAILABLE without a coordinator, INVALID_REQUEST for an
// empty id, the routing error when this broker does not (yet) coordinate
// it, TRANSACTIONAL_ID_NOT_FOUND when the coordinator has no live state for
// it; else its state name, timeout, start (-1 without a transaction),
// producer id and epoch, and the partitions still in the transaction (of the
// topics the client may describe).
#include "protocol/messages/describe_transactions.h"

#include "coordinator/txn_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "kafka/txn_routing.h"
#include "protocol/error_code.h"

namespace strata::kafka {
namespace {

using protocol::DescribeTransactionsResponse;
using protocol::ErrorCode;

DescribeTransactionsResponse::TransactionState DescribeOne(const BrokerContext& ctx,
                                                           const net::Request& request,
                                                           const std::string& transactional_id) {
  DescribeTransactionsResponse::TransactionState out;
  out.transactional_id = transactional_id;
  if (ctx.txn_coordinator == nullptr) {
    out.error_code = Code(ErrorCode::kCoordinatorNotAvailable);
    return out;
  }
  if (transactional_id.empty()) {
    out.error_code = Code(ErrorCode::kInvalidRequest);
    return out;
  }
  if (ErrorCode routed = TxnCoordinatorError(ctx, transactional_id); routed != ErrorCode::kNone) {
    out.error_code = Code(routed);
    return out;
  }
  std::optional<coordinator::TxnTransit> txn = ctx.txn_coordinator->Describe(transactional_id);
  if (!txn || txn->state == coordinator::TxnStatus::kDead) {  // Dead: being expired
    out.error_code = Code(ErrorCode::kTransactionalIdNotFound);
    return out;
  }
  out.transaction_state = std::string(coordinator::TxnStatusName(txn->state));
  out.transaction_timeout_ms = txn->timeout_ms;
  out.transaction_start_time_ms = txn->start_ms;
  out.producer_id = txn->producer_id;
  out.producer_epoch = txn->producer_epoch;
  // The set is sorted by topic, so each topic's partitions are adjacent.
  // Topics the client may not DESCRIBE are left out, as Kafka does.
  for (const TopicPartition& tp : txn->partitions) {
    if (!Authorized(ctx, request, security::AclOperation::kDescribe,
                    security::ResourceType::kTopic, tp.topic, /*log_denial=*/false)) {
      continue;
    }
    if (out.topics.empty() || out.topics.back().topic != tp.topic) {
      out.topics.push_back({tp.topic, {}});
    }
    out.topics.back().partitions.push_back(tp.partition);
  }
  return out;
}

}  // namespace

HandlerResult HandleDescribeTransactions(BrokerContext& ctx, net::Request& request) {
  using protocol::DescribeTransactionsRequest;
  STRATA_ASSIGN_OR_RETURN(DescribeTransactionsRequest req,
                          DecodeRequest<DescribeTransactionsRequest>(request));
  DescribeTransactionsResponse resp;
  for (const std::string& id : req.transactional_ids) {
    if (!Authorized(ctx, request, security::AclOperation::kDescribe,
                    security::ResourceType::kTransactionalId, id)) {
      auto& out = resp.transaction_states.emplace_back();
      out.transactional_id = id;
      out.error_code = Code(ErrorCode::kTransactionalIdAuthorizationFailed);
      continue;
    }
    resp.transaction_states.push_back(DescribeOne(ctx, request, id));
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
