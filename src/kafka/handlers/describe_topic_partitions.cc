// DescribeTopicPartitions (75): the partitions of the named topics (all
// topics when none are named), in topic-name order, at most
// min(ResponsePartitionLimit, max.request.partition.size.limit) partitions per
// response; NextCursor says where the next request starts, as Kafka's broker
// pages them. Served from the watched view, like Metadata.
#include "protocol/messages/describe_topic_partitions.h"

#include <algorithm>

#include "kafka/authorization.h"
#include "kafka/cluster_state.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {

using protocol::DescribeTopicPartitionsRequest;
using protocol::DescribeTopicPartitionsResponse;
using protocol::ErrorCode;

namespace {

DescribeTopicPartitionsResponse::Partition Describe(int32_t index, const PartitionState& s) {
  DescribeTopicPartitionsResponse::Partition out;
  out.error_code = Code(s.leader_available ? ErrorCode::kNone : ErrorCode::kLeaderNotAvailable);
  out.partition_index = index;
  out.leader_id = s.leader().value();
  out.leader_epoch = s.record.leader_epoch.value();
  out.replica_nodes = WireIds(s.record.replicas);
  out.isr_nodes = WireIds(s.record.isr);
  out.eligible_leader_replicas = WireIds(s.record.elr);
  out.last_known_elr = WireIds(s.record.last_known_elr);
  out.offline_replicas = WireIds(s.offline_replicas);
  return out;
}

}  // namespace

HandlerResult HandleDescribeTopicPartitions(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(DescribeTopicPartitionsRequest req,
                          DecodeRequest<DescribeTopicPartitionsRequest>(request));
  DescribeTopicPartitionsResponse resp;
  const bool all = req.topics.empty();
  std::vector<std::string> names;
  if (all) {
    for (const auto& record : ctx.topics.ListTopics()) {
      if (Authorized(ctx, request, security::AclOperation::kDescribe,
                     security::ResourceType::kTopic, record.name, false)) {
        names.push_back(record.name);
      }
    }
  } else {
    for (const auto& t : req.topics) names.push_back(t.name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (req.cursor && !all &&
      !std::binary_search(names.begin(), names.end(), req.cursor->topic_name)) {
    // Kafka: "The cursor topic must be included in the topics list if provided."
    for (const auto& name : names) {
      resp.topics.push_back({Code(ErrorCode::kInvalidRequest), name, {}, false, {}, INT32_MIN});
    }
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  const int64_t broker_limit = ctx.config.GetLong("max.request.partition.size.limit");
  int64_t remaining = std::clamp<int64_t>(req.response_partition_limit, 1, broker_limit);
  const std::vector<LiveBroker> live = LiveBrokers(ctx, request.listener);
  for (const auto& name : names) {
    if (req.cursor && name < req.cursor->topic_name) continue;
    if (!all && !Authorized(ctx, request, security::AclOperation::kDescribe,
                            security::ResourceType::kTopic, name)) {
      resp.topics.push_back(
          {Code(ErrorCode::kTopicAuthorizationFailed), name, {}, false, {}, INT32_MIN});
      continue;
    }
    auto info = ctx.topics.GetTopicInfo(name);
    if (!info) {
      resp.topics.push_back(
          {Code(ErrorCode::kUnknownTopicOrPartition), name, {}, false, {}, INT32_MIN});
      continue;
    }
    const int32_t first =
        req.cursor && name == req.cursor->topic_name ? std::max(0, req.cursor->partition_index) : 0;
    if (remaining == 0) {
      resp.next_cursor = protocol::TopicPartitionCursor{name, first};
      break;
    }
    auto& topic = resp.topics.emplace_back();
    topic.name = name;
    topic.topic_id = info->record.id;
    topic.is_internal = info->record.internal;
    topic.topic_authorized_operations =
        AuthorizedOperations(ctx, request, security::ResourceType::kTopic, name);
    std::vector<PartitionState> states = PartitionStates(ctx, info->record, live);
    for (int32_t p = first; p < info->record.partitions; ++p) {
      if (remaining == 0) {
        resp.next_cursor = protocol::TopicPartitionCursor{name, p};
        break;
      }
      topic.partitions.push_back(Describe(p, states[size_t(p)]));
      --remaining;
    }
    if (resp.next_cursor) break;
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
