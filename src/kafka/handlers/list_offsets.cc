// ListOffsets (2): latest (-1), earliest (-2), max timestamp (-3),
// earliest local (-4), latest tiered (-5), or the first offset at or after a
// timestamp; and, for Strata replicas only, the active segment's base
// (-1000), where a new replica of a tiered partition starts its log
// (docs/replication.md, "Active-segment sync").
#include "protocol/messages/list_offsets.h"

#include <algorithm>

#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;

constexpr int64_t kLatest = -1;
constexpr int64_t kEarliest = -2;
constexpr int64_t kMaxTimestamp = -3;
constexpr int64_t kEarliestLocal = -4;
constexpr int64_t kLatestTiered = -5;
// Not Kafka's: asked only by Strata followers (replica id >= 0).
constexpr int64_t kActiveSegmentBase = -1000;

// The epoch of the leader's records at `offset` (the last that started at
// or below it); kNoLeaderEpoch when the log knows none.
LeaderEpoch EpochAt(const storage::Log& log, Offset offset) {
  LeaderEpoch epoch = kNoLeaderEpoch;
  for (const auto& [e, start] : log.LeaderEpochEntries()) {
    if (start > offset) break;
    epoch = e;
  }
  return epoch;
}

// The sync point of a new replica: the leader first rolls a non-empty
// active segment (strata.replica.sync.roll.enable), so the replica starts
// at the log end and copies nothing while the rolled segment is uploaded.
// Only segments wholly below the high watermark are uploaded. While the ISR
// is below min.insync.replicas the high watermark waits for a replica to
// join, maybe this one: it then starts no higher than the first segment not
// wholly below the high watermark, as a start above it would leave a gap
// that nothing would ever fill. (Otherwise the high watermark reaches the
// log end as the ISR fetches, and the rolled segments go up.)
void ActiveSegmentBase(BrokerContext& ctx, const std::string& topic, storage::Log& log,
                       broker::Partition& leader, ListOffsetsResponse::Partition& out) {
  auto info = ctx.topics.GetTopicInfo(topic);
  if (!info || !info->log_config.remote_storage_enable) {
    out.error_code = Code(ErrorCode::kInvalidRequest);  // only tiered partitions sync
    return;
  }
  if (ctx.config.GetBool("strata.replica.sync.roll.enable")) {
    Status rolled = log.Roll();
    if (!rolled.ok()) {
      out.error_code = Code(ErrorCode::kKafkaStorageError);
      return;
    }
  }
  Offset base = log.active_segment_base_offset();
  const auto isr = static_cast<int32_t>(leader.state().isr.size());
  if (isr < info->min_insync_replicas) {
    const Offset high_watermark = ctx.topics.HighWatermark(leader);
    for (const storage::SegmentSummary& s : log.RolledSegments()) {
      if (s.end_offset < high_watermark) continue;  // wholly below it: uploaded in time
      // Not below the log start (DeleteRecords may have put it inside
      // the first segment): the replica takes the batch holding it whole.
      base = std::max(std::min(base, s.base_offset), log.log_start_offset());
      break;
    }
  }
  out.offset = base.value();
  out.leader_epoch = EpochAt(log, base).value();
}
void Lookup(BrokerContext& ctx, const std::string& topic, const ListOffsetsRequest::Partition& in,
            int16_t version, bool from_replica, bool read_committed,
            ListOffsetsResponse::Partition& out) {
  out.partition_index = in.partition_index;
  broker::LeaderLookup leader =
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
  // What a consumer of this isolation level can read (Kafka's
  // lastFetchableOffset): the high watermark, or the last stable offset.
  const Offset high_watermark = ctx.topics.HighWatermark(*leader.partition);
  const Offset fetchable = read_committed ? leader.partition->last_stable_offset() : high_watermark;
  switch (in.timestamp) {
    case kLatest:
      out.offset = fetchable.value();
      break;
    case kEarliest:  // remote segments included
      out.offset = ctx.topics.LogStartOffset({topic, in.partition_index}, *log).value();
      break;
    case kEarliestLocal: {
      const Offset local_start = log->log_start_offset();
      out.offset = local_start.value();
      if (from_replica) out.leader_epoch = EpochAt(*log, local_start).value();  // as Kafka's
      break;
    }
    case kLatestTiered: {
      auto* remote = ctx.topics.remote();
      TopicPartition tp{topic, in.partition_index};
      const Offset end = remote ? remote->RemoteLogEndOffset(tp) : kNoOffset;  // none tiered: -1
      out.offset = end.value();
      break;
    }
    case kMaxTimestamp: {
      auto max = log->MaxTimestamp();
      out.timestamp = max.timestamp;
      out.offset = max.offset.value();
      break;
    }
    case kActiveSegmentBase:
      if (from_replica) {
        ActiveSegmentBase(ctx, topic, *log, *leader.partition, out);
        break;
      }
      [[fallthrough]];
    default: {
      if (in.timestamp < 0) {
        out.error_code = Code(ErrorCode::kInvalidRequest);
        return;
      }
      auto found = log->OffsetForTimestamp(in.timestamp);
      if (found && found->offset < fetchable) {  // none a consumer could read yet
        out.timestamp = found->timestamp;
        out.offset = found->offset.value();
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
    if (!Authorized(ctx, request, security::AclOperation::kDescribe, security::ResourceType::kTopic,
                    topic.name)) {
      for (const auto& p : topic.partitions) {
        auto& out = out_topic.partitions.emplace_back();
        out.partition_index = p.partition_index;
        out.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
      }
      continue;
    }
    for (const auto& p : topic.partitions) {
      Lookup(ctx, topic.name, p, request.header.api_version, req.replica_id >= 0,
             req.isolation_level == protocol::kReadCommitted, out_topic.partitions.emplace_back());
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
