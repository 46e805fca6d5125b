// ListOffsets (2): latest (-1), earliest (-2), max timestamp (-3),
// earliest local (-4), latest tiered (-5), or the first offset at or after a
// timestamp.
#include "protocol/messages/list_offsets.h"

#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::broker {

namespace {

using protocol::ErrorCode;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;

constexpr int64_t kLatest = -1;
constexpr int64_t kEarliest = -2;
constexpr int64_t kMaxTimestamp = -3;
constexpr int64_t kEarliestLocal = -4;
constexpr int64_t kLatestTiered = -5;

void Lookup(BrokerContext& ctx, const std::string& topic, const ListOffsetsRequest::Partition& in,
            int16_t version, ListOffsetsResponse::Partition& out) {
  out.partition_index = in.partition_index;
  LeaderLookup leader =
      ctx.topics.LeaderPartition({topic, in.partition_index}, in.current_leader_epoch);
  if (leader.error != ErrorCode::kNone) {
    out.error_code = Code(leader.error);
    return;
  }
  const std::shared_ptr<storage::Log>& log = leader.partition->log();
  // The current epoch for every answer: never older than the offset's own,
  // so a client validating with it never sees a false truncation.
  out.leader_epoch = leader.partition->leader_epoch().value();
  out.timestamp = -1;
  switch (in.timestamp) {
    case kLatest:  // what consumers can read: the high watermark
      out.offset = ctx.topics.HighWatermark(*leader.partition);
      break;
    case kEarliest:  // remote segments included
      out.offset = ctx.topics.LogStartOffset({topic, in.partition_index}, *log);
      break;
    case kEarliestLocal:
      out.offset = log->log_start_offset();
      break;
    case kLatestTiered: {
      auto* remote = ctx.topics.remote();
      TopicPartition tp{topic, in.partition_index};
      out.offset = remote ? remote->RemoteLogEndOffset(tp.ToString()) : -1;  // -1: none tiered
      break;
    }
    case kMaxTimestamp: {
      auto max = log->MaxTimestamp();
      out.timestamp = max.timestamp;
      out.offset = max.offset;
      break;
    }
    default: {
      if (in.timestamp < 0) {
        out.error_code = Code(ErrorCode::kInvalidRequest);
        return;
      }
      auto found = log->OffsetForTimestamp(in.timestamp);
      if (found) {
        out.timestamp = found->timestamp;
        out.offset = found->offset;
      }
    }
  }
  if (version == 0 && out.offset >= 0) out.old_style_offsets = {out.offset};
}

}  // namespace

HandlerResult HandleListOffsets(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(ListOffsetsRequest req, DecodeRequest<ListOffsetsRequest>(request));
  ListOffsetsResponse resp;
  for (const auto& topic : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = topic.name;
    for (const auto& p : topic.partitions) {
      Lookup(ctx, topic.name, p, request.header.api_version, out_topic.partitions.emplace_back());
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::broker
