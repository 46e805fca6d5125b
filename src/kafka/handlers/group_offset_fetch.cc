// OffsetFetch (9): committed offsets of one group (v0-7; topics null = all,
// v2+) or of several groups (v8, KIP-709). Partitions without a commit get
// offset -1 and empty metadata. With RequireStable (v7+, read_committed
// consumers) a partition with an offset in an open transaction is
// UNSTABLE_OFFSET_COMMIT until the transaction ends.
#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "protocol/messages/offset_fetch.h"

namespace strata::kafka {

namespace {

// Topics the client may not DESCRIBE: left out of an all-topics answer, their
// partitions TOPIC_AUTHORIZATION_FAILED when the request named them.
void FilterTopics(const BrokerContext& ctx, const net::Request& request, bool named,
                  std::vector<protocol::OffsetFetchResponse::Topic>& topics) {
  std::erase_if(topics, [&](protocol::OffsetFetchResponse::Topic& t) {
    if (Authorized(ctx, request, security::AclOperation::kDescribe, security::ResourceType::kTopic,
                   t.name, named)) {
      return false;
    }
    if (!named) return true;
    for (auto& p : t.partitions) {
      const int32_t index = p.partition_index;
      p = protocol::OffsetFetchResponse::Partition{};  // nothing of the offset shown
      p.partition_index = index;
      p.error_code = Code(protocol::ErrorCode::kTopicAuthorizationFailed);
    }
    return false;
  });
}

}  // namespace

HandlerResult HandleOffsetFetch(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(protocol::OffsetFetchRequest req,
                          DecodeRequest<protocol::OffsetFetchRequest>(request));
  protocol::OffsetFetchResponse resp;
  if (request.header.api_version >= 8) {
    for (const auto& g : req.groups) {
      if (auto error =
              GroupRequestError(ctx, request, security::AclOperation::kDescribe, g.group_id);
          error != protocol::ErrorCode::kNone) {
        auto& out = resp.groups.emplace_back();
        out.group_id = g.group_id;
        out.error_code = Code(error);
        continue;
      }
      resp.groups.push_back(
          ctx.group_coordinator->FetchOffsets(g.group_id, g.topics, req.require_stable));
      FilterTopics(ctx, request, g.topics.has_value(), resp.groups.back().topics);
    }
  } else if (auto error =
                 GroupRequestError(ctx, request, security::AclOperation::kDescribe, req.group_id);
             error != protocol::ErrorCode::kNone) {
    resp.error_code = Code(error);
  } else {
    auto group = ctx.group_coordinator->FetchOffsets(req.group_id, req.topics, req.require_stable);
    resp.topics = std::move(group.topics);
    resp.error_code = group.error_code;
    FilterTopics(ctx, request, req.topics.has_value(), resp.topics);
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
