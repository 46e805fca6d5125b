// UnregisterBroker (64): kafka-cluster unregister --id N. The broker's
// known-broker record goes, so it is no longer listed as fenced; a live
// broker loses its lease and registers again, as a KRaft broker does after
// its registration was removed. Any broker may serve it: the store's
// compare-and-set orders it against the broker's own registrations.
#include "protocol/messages/unregister_broker.h"

#include "cluster/metadata.h"
#include "kafka/authorization.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"
#include "protocol/error_code.h"

namespace strata::kafka {

HandlerResult HandleUnregisterBroker(BrokerContext& ctx, net::Request& request) {
  using protocol::ErrorCode;
  using protocol::UnregisterBrokerRequest;
  using protocol::UnregisterBrokerResponse;
  STRATA_ASSIGN_OR_RETURN(UnregisterBrokerRequest req,
                          DecodeRequest<UnregisterBrokerRequest>(request));
  UnregisterBrokerResponse resp;
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kAlter)) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kClusterAuthorizationFailed);
    resp.error_message = "Cluster authorization failed.";
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  if (ctx.metadata == nullptr) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kBrokerIdNotRegistered);
    resp.error_message = "no cluster metadata";
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  Status st = ctx.metadata->UnregisterBroker(cluster::NodeId(req.broker_id));
  if (st.ok()) {
    Log()->info("broker {} unregistered", req.broker_id);
  } else {
    resp.error_code = static_cast<int16_t>(st.error().code == Errc::kNotFound
                                               ? ErrorCode::kBrokerIdNotRegistered
                                               : GenericErrorCode(st.error().code));
    resp.error_message = st.error().message;
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
