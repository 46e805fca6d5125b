// EndTxn (26): a transactional producer commits or aborts its ongoing
// transaction. Answered once PrepareCommit/PrepareAbort is written to
// __transaction_state; the markers are then written to every partition of
// the transaction (TxnMarkerChannel), and until they are the producer's next
// transaction waits (CONCURRENT_TRANSACTIONS). v5 is transaction version 2:
// the epoch moves on at every end, and the answer carries the producer id
// and epoch to go on with.
#include "protocol/messages/end_txn.h"

#include "coordinator/txn_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "kafka/handlers/txn_errors.h"
#include "kafka/quota_charge.h"
#include "kafka/txn_routing.h"
#include "protocol/error_code.h"

namespace strata::kafka {

using protocol::ErrorCode;

asio::awaitable<HandlerResult> HandleEndTxn(BrokerContext& ctx, net::Request& request) {
  using protocol::EndTxnRequest;
  auto decoded = DecodeRequest<EndTxnRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  const EndTxnRequest& req = *decoded;
  const int16_t version = request.header.api_version;
  protocol::EndTxnResponse resp;
  ErrorCode code = Authorized(ctx, request, security::AclOperation::kWrite,
                              security::ResourceType::kTransactionalId, req.transactional_id)
                       ? TxnCoordinatorError(ctx, req.transactional_id)
                       : ErrorCode::kTransactionalIdAuthorizationFailed;
  if (code == ErrorCode::kNone) {
    const coordinator::TxnReply reply = ctx.txn_coordinator->EndTxn(
        req.transactional_id, req.producer_id, req.producer_epoch,
        req.committed ? coordinator::TxnResult::kCommit : coordinator::TxnResult::kAbort,
        /*client_transaction_version=*/version > 4 ? 2 : 0);
    code = co_await Waited(request, SettleTxnReply(ctx, reply));
    if (code == ErrorCode::kNone || reply.producer_id != coordinator::kNoProducerId) {
      resp.producer_id = reply.producer_id;
      resp.producer_epoch = reply.producer_epoch;
    }
  }
  resp.error_code = Code(TxnErrorForVersion(code, version));
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
