// OffsetCommit (8): partitions of unknown topics are answered here with
// UNKNOWN_TOPIC_OR_PARTITION (as Kafka's request handler does); the rest go to
// the group coordinator, which fences by generation and appends the commit to
// __consumer_offsets; the answer waits until the partition's ISR has it.
#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "kafka/quota_charge.h"
#include "protocol/error_code.h"
#include "protocol/messages/offset_commit.h"

namespace strata::kafka {

namespace {

using protocol::OffsetCommitRequest;
using protocol::OffsetCommitResponse;

bool PartitionExists(const cluster::TopicRecord* topic, int32_t partition) {
  return topic != nullptr && partition >= 0 && partition < topic->partitions;
}

}  // namespace

asio::awaitable<HandlerResult> HandleOffsetCommit(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<OffsetCommitRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  OffsetCommitRequest& req = *decoded;
  if (auto error = GroupRequestError(ctx, request, security::AclOperation::kRead, req.group_id);
      error != protocol::ErrorCode::kNone) {
    OffsetCommitResponse resp;
    for (const auto& t : req.topics) {
      auto& out = resp.topics.emplace_back();
      out.name = t.name;
      for (const auto& p : t.partitions) out.partitions.push_back({p.partition_index, Code(error)});
    }
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  // Split off partitions of unknown topics, remembering where each goes.
  OffsetCommitRequest known = req;
  known.topics.clear();
  // Per partition: kNone to commit, else its error (an unknown partition, or
  // a topic the client may not READ).
  std::vector<std::vector<protocol::ErrorCode>> refused(req.topics.size());
  for (size_t ti = 0; ti < req.topics.size(); ++ti) {
    auto info = ctx.topics.GetTopicInfo(req.topics[ti].name);
    const cluster::TopicRecord* record = info ? &info->record : nullptr;
    const bool may_read = Authorized(ctx, request, security::AclOperation::kRead,
                                     security::ResourceType::kTopic, req.topics[ti].name);
    OffsetCommitRequest::Topic t{req.topics[ti].name, {}};
    for (const auto& p : req.topics[ti].partitions) {
      refused[ti].push_back(!may_read ? protocol::ErrorCode::kTopicAuthorizationFailed
                            : PartitionExists(record, p.partition_index)
                                ? protocol::ErrorCode::kNone
                                : protocol::ErrorCode::kUnknownTopicOrPartition);
      if (refused[ti].back() == protocol::ErrorCode::kNone) t.partitions.push_back(p);
    }
    known.topics.push_back(std::move(t));  // same index as in req, possibly empty
  }
  OffsetCommitResponse stored =
      ctx.group_coordinator->CommitOffsets(known, request.header.api_version);
  // Stored in the coordinator's memory and log; acknowledged once committed.
  const protocol::ErrorCode replicated =
      co_await Waited(request, AwaitGroupWrites(ctx, req.group_id));
  if (replicated != protocol::ErrorCode::kNone) {
    for (auto& t : stored.topics) {
      for (auto& p : t.partitions) {
        if (p.error_code == 0) p.error_code = Code(replicated);
      }
    }
  }
  OffsetCommitResponse resp;
  for (size_t ti = 0; ti < req.topics.size(); ++ti) {
    auto& out = resp.topics.emplace_back();
    out.name = req.topics[ti].name;
    size_t next_stored = 0;
    for (size_t pi = 0; pi < req.topics[ti].partitions.size(); ++pi) {
      if (refused[ti][pi] == protocol::ErrorCode::kNone) {
        out.partitions.push_back(stored.topics[ti].partitions[next_stored++]);
      } else {
        out.partitions.push_back(
            {req.topics[ti].partitions[pi].partition_index, Code(refused[ti][pi])});
      }
    }
  }
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
