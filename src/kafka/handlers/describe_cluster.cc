// DescribeCluster (60): the cluster id, the active controller and the live
// brokers (v2: the fenced ones too, marked), as kafka-cluster and AdminClient
// describeCluster ask for them.
#include "protocol/messages/describe_cluster.h"

#include "kafka/authorization.h"
#include "kafka/cluster_state.h"
#include "kafka/handlers/handlers.h"

namespace strata::kafka {

HandlerResult HandleDescribeCluster(BrokerContext& ctx, net::Request& request) {
  using protocol::DescribeClusterRequest;
  STRATA_ASSIGN_OR_RETURN(DescribeClusterRequest req,
                          DecodeRequest<DescribeClusterRequest>(request));
  protocol::DescribeClusterResponse resp;
  resp.endpoint_type = req.endpoint_type;
  // Kafka answers DescribeCluster whatever the ACLs (clients look up the
  // cluster id with it).
  if (req.include_cluster_authorized_operations) {
    resp.cluster_authorized_operations =
        AuthorizedOnCluster(ctx, request, security::AclOperation::kDescribe, false)
            ? AuthorizedOperations(ctx, request, security::ResourceType::kCluster,
                                   security::kClusterResourceName)
            : 0;
  }
  resp.cluster_id = ctx.store.cluster_id();
  resp.controller_id = ControllerId(ctx);
  for (auto& b : LiveBrokers(ctx, request.listener))
    resp.brokers.push_back({b.node_id, b.host, b.port, b.rack});
  if (req.include_fenced_brokers) {  // v2: fenced registrations too, marked
    for (auto& b : FencedBrokers(ctx, request.listener)) {
      resp.brokers.push_back({b.node_id, b.host, b.port, b.rack, /*is_fenced=*/true});
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
