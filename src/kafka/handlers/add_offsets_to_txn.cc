// AddOffsetsToTxn (25): a transactional producer (classic protocol) adds the
// __consumer_offsets partition of a consumer group to its ongoing
// transaction before committing the group's offsets in it
// (TxnOffsetCommit), so the transaction's marker reaches that partition too.
#include "protocol/messages/add_offsets_to_txn.h"

#include <functional>
#include <set>

#include "coordinator/group_coordinator.h"
#include "coordinator/txn_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "kafka/handlers/txn_errors.h"
#include "kafka/quota_charge.h"
#include "kafka/txn_routing.h"
#include "protocol/error_code.h"

namespace strata::kafka {

using protocol::ErrorCode;

asio::awaitable<HandlerResult> HandleAddOffsetsToTxn(BrokerContext& ctx, net::Request& request) {
  using protocol::AddOffsetsToTxnRequest;
  auto decoded = DecodeRequest<AddOffsetsToTxnRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  const AddOffsetsToTxnRequest& req = *decoded;
  protocol::AddOffsetsToTxnResponse resp;
  ErrorCode code = TxnCoordinatorError(ctx, req.transactional_id);
  if (!Authorized(ctx, request, security::AclOperation::kWrite,
                  security::ResourceType::kTransactionalId, req.transactional_id)) {
    code = ErrorCode::kTransactionalIdAuthorizationFailed;
  } else if (!Authorized(ctx, request, security::AclOperation::kRead,
                         security::ResourceType::kGroup, req.group_id)) {
    code = ErrorCode::kGroupAuthorizationFailed;
  }
  if (code == ErrorCode::kNone && ctx.group_coordinator == nullptr)
    code = ErrorCode::kCoordinatorNotAvailable;
  if (code == ErrorCode::kNone) {
    const TopicPartition offsets{coordinator::kOffsetsTopic,
                                 ctx.group_coordinator->PartitionFor(req.group_id)};
    // Always the classic protocol: transaction version 2 clients skip this.
    const std::set<TopicPartition> partitions{offsets};
    const std::function<coordinator::TxnReply()> add = [&] {
      return ctx.txn_coordinator->AddPartitions(req.transactional_id, req.producer_id,
                                                req.producer_epoch, partitions, 0);
    };
    code = co_await Waited(request, AddPartitionsHoldingConcurrent(ctx, add));
  }
  resp.error_code = Code(TxnErrorForVersion(code, request.header.api_version));
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
