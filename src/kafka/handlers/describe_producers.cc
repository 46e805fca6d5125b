// DescribeProducers (61): the producers a partition leader has state for,
// with each one's open transaction (kafka-transactions describe-producers
// and find-hanging).
#include "protocol/messages/describe_producers.h"

#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {

using protocol::ErrorCode;

HandlerResult HandleDescribeProducers(BrokerContext& ctx, net::Request& request) {
  using protocol::DescribeProducersRequest;
  using protocol::DescribeProducersResponse;
  STRATA_ASSIGN_OR_RETURN(DescribeProducersRequest req,
                          DecodeRequest<DescribeProducersRequest>(request));
  DescribeProducersResponse resp;
  for (const auto& topic : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = topic.name;
    const bool may_read = Authorized(ctx, request, security::AclOperation::kRead,
                                     security::ResourceType::kTopic, topic.name);
    for (int32_t p : topic.partition_indexes) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = p;
      if (!may_read) {
        out.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      broker::LeaderLookup leader = ctx.topics.LeaderPartition({topic.name, p}, -1);
      if (leader.error != ErrorCode::kNone) {
        out.error_code = Code(leader.error);
        if (!leader.message.empty()) out.error_message = leader.message;
        continue;
      }
      for (const storage::ProducerView& v : leader.partition->log()->ActiveProducers()) {
        out.active_producers.push_back({v.producer_id, v.producer_epoch, v.last_sequence,
                                        v.last_timestamp, v.coordinator_epoch,
                                        v.current_txn_start_offset.value()});
      }
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
