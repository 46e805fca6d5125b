// OffsetFetch (9): committed offsets of one group (v0-7; topics null = all,
// v2+) or of several groups (v8, KIP-709). Partitions without a commit get
// offset -1 and empty metadata. With RequireStable (v7+, read_committed
// consumers) a partition with an offset in an open transaction is
// UNSTABLE_OFFSET_COMMIT until the transaction ends.
#include "coordinator/group_coordinator.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "protocol/messages/offset_fetch.h"

namespace strata::kafka {

HandlerResult HandleOffsetFetch(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(protocol::OffsetFetchRequest req,
                          DecodeRequest<protocol::OffsetFetchRequest>(request));
  protocol::OffsetFetchResponse resp;
  if (request.header.api_version >= 8) {
    for (const auto& g : req.groups) {
      if (auto error = GroupCoordinatorError(ctx, g.group_id);
          error != protocol::ErrorCode::kNone) {
        auto& out = resp.groups.emplace_back();
        out.group_id = g.group_id;
        out.error_code = Code(error);
        continue;
      }
      resp.groups.push_back(
          ctx.group_coordinator->FetchOffsets(g.group_id, g.topics, req.require_stable));
    }
  } else if (auto error = GroupCoordinatorError(ctx, req.group_id);
             error != protocol::ErrorCode::kNone) {
    resp.error_code = Code(error);
  } else {
    auto group = ctx.group_coordinator->FetchOffsets(req.group_id, req.topics, req.require_stable);
    resp.topics = std::move(group.topics);
    resp.error_code = group.error_code;
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
