// InitProducerId (22): a producer id and epoch. Without a transactional id,
// an idempotent producer's (epoch 0; a KIP-360 bump gets a fresh id). With
// one, the transaction coordinator of the id answers: the id's producer id
// at its next epoch, fencing the previous instance (and aborting its open
// transaction), once that is written to __transaction_state.
#include "protocol/messages/init_producer_id.h"

#include "coordinator/txn_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "kafka/handlers/txn_errors.h"
#include "kafka/quota_charge.h"
#include "kafka/txn_routing.h"
#include "protocol/error_code.h"

namespace strata::kafka {
namespace {

using protocol::ErrorCode;
using protocol::InitProducerIdRequest;
using protocol::InitProducerIdResponse;

// The transactional path; the answer's error, id and epoch.
asio::awaitable<InitProducerIdResponse> InitTransactional(BrokerContext& ctx, net::Request& request,
                                                          const InitProducerIdRequest& req,
                                                          int16_t version) {
  InitProducerIdResponse resp;
  resp.producer_epoch = -1;
  auto fail = [&](ErrorCode code) {
    resp.error_code = Code(TxnErrorForVersion(code, version, /*first_fenced_version=*/4));
    return resp;
  };
  const std::string& id = *req.transactional_id;
  if (id.empty()) co_return fail(ErrorCode::kInvalidRequest);
  if (!Authorized(ctx, request, security::AclOperation::kWrite,
                  security::ResourceType::kTransactionalId, id)) {
    co_return fail(ErrorCode::kTransactionalIdAuthorizationFailed);
  }
  // v3+ names the producer id and epoch it holds (KIP-360), both or neither.
  std::optional<coordinator::ProducerIdAndEpoch> expected;
  const bool has_id = req.producer_id != coordinator::kNoProducerId;
  const bool has_epoch = req.producer_epoch != coordinator::kNoProducerEpoch;
  if (has_id != has_epoch) co_return fail(ErrorCode::kInvalidRequest);
  if (has_id) expected = coordinator::ProducerIdAndEpoch{req.producer_id, req.producer_epoch};
  if (ErrorCode served = TxnCoordinatorError(ctx, id); served != ErrorCode::kNone) {
    co_return fail(served);
  }
  const coordinator::TxnReply reply =
      ctx.txn_coordinator->InitProducerId(id, req.transaction_timeout_ms, expected);
  const ErrorCode settled = co_await Waited(request, SettleTxnReply(ctx, reply));
  if (settled != ErrorCode::kNone) co_return fail(settled);
  resp.producer_id = reply.producer_id;
  resp.producer_epoch = reply.producer_epoch;
  co_return resp;
}

}  // namespace

asio::awaitable<HandlerResult> HandleInitProducerId(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<InitProducerIdRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  const InitProducerIdRequest& req = *decoded;
  InitProducerIdResponse resp;
  if (req.transactional_id) {
    resp = co_await InitTransactional(ctx, request, req, request.header.api_version);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  // An idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on
  // some topic.
  if (ctx.authorizer != nullptr &&
      !AuthorizedOnCluster(ctx, request, security::AclOperation::kIdempotentWrite, false) &&
      !AuthorizedAny(ctx, request, security::AclOperation::kWrite,
                     security::ResourceType::kTopic)) {
    resp.error_code = Code(ErrorCode::kClusterAuthorizationFailed);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  // A fresh id (epoch 0) is valid for both new producers and KIP-360 bumps.
  auto id = ctx.producer_ids.Next();
  if (!id.ok()) {
    resp.error_code = Code(ErrorCode::kCoordinatorNotAvailable);
  } else {
    resp.producer_id = id.value();
    resp.producer_epoch = 0;
  }
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
