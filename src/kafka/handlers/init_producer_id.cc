// InitProducerId (22): a producer id for an idempotent producer (epoch 0; a
// KIP-360 bump gets a fresh id). Transactional ids are refused until
// transactions exist.
#include "protocol/messages/init_producer_id.h"

#include "base/log.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"
#include "protocol/error_code.h"

namespace strata::kafka {

using protocol::ErrorCode;

HandlerResult HandleInitProducerId(BrokerContext& ctx, net::Request& request) {
  using protocol::InitProducerIdRequest;
  STRATA_ASSIGN_OR_RETURN(InitProducerIdRequest req, DecodeRequest<InitProducerIdRequest>(request));
  protocol::InitProducerIdResponse resp;
  if (req.transactional_id) {
    Log()->warn(
        "InitProducerId for transactional id '{}' refused: transactions are "
        "not supported yet",
        *req.transactional_id);
    resp.error_code = Code(ErrorCode::kInvalidRequest);
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  // A fresh id (epoch 0) is valid for both new producers and KIP-360 bumps.
  auto id = ctx.producer_ids.Next();
  if (!id.ok()) {
    resp.error_code = Code(ErrorCode::kCoordinatorNotAvailable);
  } else {
    resp.producer_id = id.value();
    resp.producer_epoch = 0;
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
