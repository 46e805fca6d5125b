// WriteTxnMarkers (27): a transaction coordinator (or kafka-transactions
// abort) has the leaders of a transaction's partitions append its COMMIT or
// ABORT marker. Each marker is appended with the coordinator origin (the
// partition checks the producer and coordinator epochs) and answered once
// committed, as Kafka writes markers with acks=all, within
// request.timeout.ms. The coordinator retries a partition that failed. A
// marker in __consumer_offsets also ends the producer's pending offsets
// there.
#include "protocol/messages/write_txn_markers.h"

#include <fmt/format.h>

#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/commit_wait.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "protocol/control_record.h"
#include "protocol/error_code.h"

namespace strata::kafka {
namespace {

using protocol::ErrorCode;
using protocol::WriteTxnMarkersRequest;
using protocol::WriteTxnMarkersResponse;

// Where an answer waiting for its marker's commit goes.
struct PendingMarker {
  size_t marker = 0, topic = 0, partition = 0;
};

// Appends `marker` to `tp`; a commit wait in `waits` unless it is already
// committed. The error code of the partition's answer so far.
ErrorCode AppendMarker(BrokerContext& ctx, const WriteTxnMarkersRequest::Marker& marker,
                       const TopicPartition& tp, std::vector<CommitWait>& waits) {
  broker::LeaderLookup leader = ctx.topics.LeaderPartition(tp, -1);
  if (leader.error != ErrorCode::kNone) return leader.error;
  auto info = ctx.topics.GetTopicInfo(tp.topic);
  const int min_isr = info ? info->min_insync_replicas : 1;
  broker::Partition& partition = *leader.partition;
  if (static_cast<int>(partition.state().isr.size()) < min_isr)
    return ErrorCode::kNotEnoughReplicas;
  const int64_t now = ctx.clock->NowMs();
  const protocol::TxnMarker txn_marker{
      marker.transaction_result ? protocol::ControlType::kCommit : protocol::ControlType::kAbort,
      marker.coordinator_epoch};
  Bytes batch =
      protocol::BuildTxnMarkerBatch(marker.producer_id, marker.producer_epoch, txn_marker, now);
  const std::vector<storage::BatchInfo> infos{
      {.size = static_cast<int32_t>(batch.size()),
       .record_count = 1,
       .max_timestamp = now,
       .producer_id = marker.producer_id,
       .producer_epoch = marker.producer_epoch,
       .transactional = true,
       .marker_transaction_version = marker.transaction_version}};
  auto appended = partition.AppendAsLeader(MutableByteView(batch), infos, min_isr,
                                           storage::AppendOrigin::kCoordinator);
  if (!appended.ok()) return ProduceErrorCode(appended.error().code);
  const Offset last = appended->appended.last_offset;
  if (partition.high_watermark() <= last) {
    waits.push_back({leader.partition, last, partition.leader(), appended->leader_epoch});
  }
  return ErrorCode::kNone;
}

ErrorCode Answer(CommitOutcome outcome) {
  switch (outcome) {
    case CommitOutcome::kCommitted:
      return ErrorCode::kNone;
    case CommitOutcome::kDeposed:
      return ErrorCode::kNotLeaderOrFollower;
    case CommitOutcome::kTimedOut:
      return ErrorCode::kRequestTimedOut;
  }
  return ErrorCode::kUnknownServerError;
}

// A committed marker in a __consumer_offsets partition ends the producer's
// transactional offsets there (Kafka's onTransactionCompleted).
void CompleteGroupOffsets(BrokerContext& ctx, const WriteTxnMarkersRequest& req,
                          const WriteTxnMarkersResponse& resp) {
  if (ctx.group_coordinator == nullptr) return;
  for (size_t m = 0; m < req.markers.size(); ++m) {
    for (const auto& topic : resp.markers[m].topics) {
      if (topic.name != coordinator::kOffsetsTopic) continue;
      for (const auto& p : topic.partitions) {
        if (p.error_code != 0) continue;
        ctx.group_coordinator->CompleteTransaction(p.partition_index, req.markers[m].producer_id,
                                                   req.markers[m].transaction_result);
      }
    }
  }
}

}  // namespace

asio::awaitable<HandlerResult> HandleWriteTxnMarkers(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<WriteTxnMarkersRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  const WriteTxnMarkersRequest& req = *decoded;
  WriteTxnMarkersResponse resp;
  std::vector<CommitWait> waits;
  std::vector<PendingMarker> pending;
  request.quota_exempt = true;
  // Only brokers (CLUSTER_ACTION) write transaction markers.
  const bool allowed = AuthorizedOnCluster(ctx, request, security::AclOperation::kClusterAction);
  for (size_t m = 0; m < req.markers.size(); ++m) {
    const auto& marker = req.markers[m];
    auto& out_marker = resp.markers.emplace_back();
    out_marker.producer_id = marker.producer_id;
    for (size_t t = 0; t < marker.topics.size(); ++t) {
      auto& out_topic = out_marker.topics.emplace_back();
      out_topic.name = marker.topics[t].name;
      for (int32_t p : marker.topics[t].partition_indexes) {
        if (!allowed) {
          out_topic.partitions.push_back({p, Code(ErrorCode::kClusterAuthorizationFailed)});
          continue;
        }
        const size_t waiting = waits.size();
        const ErrorCode code = AppendMarker(ctx, marker, {out_topic.name, p}, waits);
        out_topic.partitions.push_back({p, Code(code)});
        if (waits.size() > waiting) pending.push_back({m, t, out_topic.partitions.size() - 1});
      }
    }
  }
  if (!waits.empty()) {
    const auto timeout = std::chrono::milliseconds(ctx.config.GetLong("request.timeout.ms"));
    const std::vector<CommitOutcome> outcomes = co_await AwaitCommitted(ctx, waits, timeout);
    for (size_t i = 0; i < pending.size(); ++i) {
      const PendingMarker& at = pending[i];
      resp.markers[at.marker].topics[at.topic].partitions[at.partition].error_code =
          Code(Answer(outcomes[i]));
    }
  }
  CompleteGroupOffsets(ctx, req, resp);
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
