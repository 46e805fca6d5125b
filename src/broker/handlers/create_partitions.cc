// CreatePartitions (37): grows a topic's partition count.
#include <fmt/format.h>

#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/messages/create_partitions.h"

namespace strata::broker {

namespace {

using protocol::CreatePartitionsRequest;
using protocol::CreatePartitionsResponse;
using protocol::ErrorCode;

void GrowOne(BrokerContext& ctx, const CreatePartitionsRequest::Topic& in, bool validate_only,
             CreatePartitionsResponse::TopicResult& out) {
  auto info = ctx.topics.GetTopicInfo(in.name);
  auto fail = [&](ErrorCode code, std::string message) {
    out.error_code = Code(code);
    out.error_message = std::move(message);
  };
  if (!info) return fail(ErrorCode::kUnknownTopicOrPartition, "The topic '" + in.name + "' does not exist.");
  int32_t current = info->record.partitions;
  if (in.count < current) {
    return fail(ErrorCode::kInvalidPartitions,
                fmt::format("Topic currently has {} partitions, which is higher than the requested {}.",
                            current, in.count));
  }
  if (in.count == current) {
    return fail(ErrorCode::kInvalidPartitions,
                fmt::format("Topic already has {} partitions.", current));
  }
  if (in.assignments) {
    if (static_cast<int32_t>(in.assignments->size()) != in.count - current) {
      return fail(ErrorCode::kInvalidReplicaAssignment,
                  "Increasing the number of partitions needs one assignment per new partition.");
    }
    for (const auto& a : *in.assignments) {
      for (int32_t b : a.broker_ids) {
        if (b != ctx.config.node_id()) {
          return fail(ErrorCode::kInvalidReplicaAssignment, fmt::format("Unknown broker id {}", b));
        }
      }
    }
  }
  if (validate_only) return;
  Status st = ctx.topics.AddPartitions(in.name, in.count);
  if (!st.ok()) fail(ErrorCode::kKafkaStorageError, st.error().message);
}

}  // namespace

HandlerResult HandleCreatePartitions(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(CreatePartitionsRequest req, DecodeRequest<CreatePartitionsRequest>(request));
  CreatePartitionsResponse resp;
  for (const auto& topic : req.topics) {
    auto& out = resp.results.emplace_back();
    out.name = topic.name;
    GrowOne(ctx, topic, req.validate_only, out);
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::broker
