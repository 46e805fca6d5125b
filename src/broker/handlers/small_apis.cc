// The small APIs: DescribeCluster (60), DeleteRecords (21),
// OffsetForLeaderEpoch (23), InitProducerId (22).
#include "base/log.h"
#include "broker/cluster_state.h"
#include "broker/error_mapping.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/describe_cluster.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/offset_for_leader_epoch.h"

namespace strata::broker {

using protocol::ErrorCode;

HandlerResult HandleDescribeCluster(BrokerContext& ctx, net::Request& request) {
  using protocol::DescribeClusterRequest;
  STRATA_ASSIGN_OR_RETURN(DescribeClusterRequest req,
                          DecodeRequest<DescribeClusterRequest>(request));
  protocol::DescribeClusterResponse resp;
  resp.endpoint_type = req.endpoint_type;
  resp.cluster_id = ctx.store.cluster_id();
  resp.controller_id = ControllerId(ctx);
  for (auto& b : LiveBrokers(ctx)) resp.brokers.push_back({b.node_id, b.host, b.port, b.rack});
  if (req.include_fenced_brokers) {  // v2: fenced registrations too, marked
    for (auto& b : FencedBrokers(ctx)) {
      resp.brokers.push_back({b.node_id, b.host, b.port, b.rack, /*is_fenced=*/true});
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult HandleDeleteRecords(BrokerContext& ctx, net::Request& request) {
  using protocol::DeleteRecordsRequest;
  STRATA_ASSIGN_OR_RETURN(DeleteRecordsRequest req, DecodeRequest<DeleteRecordsRequest>(request));
  protocol::DeleteRecordsResponse resp;
  for (const auto& topic : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = topic.name;
    for (const auto& p : topic.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = p.partition_index;
      LeaderLookup leader = ctx.topics.LeaderPartition({topic.name, p.partition_index}, -1);
      if (leader.error != ErrorCode::kNone) {
        out.error_code = Code(leader.error);
        out.low_watermark = -1;
        continue;
      }
      const std::shared_ptr<storage::Log>& log = leader.partition->log();
      // -1: the high watermark; nothing beyond it may be deleted (Kafka).
      const int64_t high_watermark = ctx.topics.HighWatermark(*leader.partition);
      int64_t offset = p.offset == -1 ? high_watermark : p.offset;
      if (offset < 0 || offset > high_watermark) {
        out.error_code = Code(ErrorCode::kOffsetOutOfRange);
        out.low_watermark = -1;
        continue;
      }
      Status st =
          offset > log->log_start_offset() ? log->DeleteRecordsBefore(offset) : Status::Ok();
      // Tiered: the log start moves at once; remote segments wholly below it
      // are deleted in the background.
      TopicPartition tp{topic.name, p.partition_index};
      tiered::RemoteLogManager* remote = ctx.topics.remote();
      if (st.ok() && remote != nullptr && remote->IsTiered(tp)) {
        st = remote->DeleteRecordsBefore(tp, offset);
      }
      if (!st.ok()) out.error_code = Code(GenericErrorCode(st.error().code));
      out.low_watermark = ctx.topics.LogStartOffset(tp, *log);
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult HandleOffsetForLeaderEpoch(BrokerContext& ctx, net::Request& request) {
  using protocol::OffsetForLeaderEpochRequest;
  STRATA_ASSIGN_OR_RETURN(OffsetForLeaderEpochRequest req,
                          DecodeRequest<OffsetForLeaderEpochRequest>(request));
  protocol::OffsetForLeaderEpochResponse resp;
  for (const auto& topic : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.topic = topic.topic;
    for (const auto& p : topic.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition = p.partition;
      LeaderLookup leader =
          ctx.topics.LeaderPartition({topic.topic, p.partition}, p.current_leader_epoch);
      if (leader.error != ErrorCode::kNone) {
        out.error_code = Code(leader.error);
        continue;
      }
      const std::shared_ptr<storage::Log>& log = leader.partition->log();
      const int32_t current = leader.partition->leader_epoch().value();
      int32_t epoch = -1;
      int64_t end_offset = -1;
      if (p.leader_epoch == current) {
        // The leader's own epoch ends at the log end, written in it or not.
        epoch = current;
        end_offset = log->log_end_offset();
      } else if (p.leader_epoch < current) {
        std::tie(epoch, end_offset) = log->EndOffsetForEpoch(p.leader_epoch);
        if (epoch < 0 && log->latest_epoch() < 0) {
          // Nothing written yet: every earlier epoch ends at the log end.
          epoch = current;
          end_offset = log->log_end_offset();
        }
      }  // a future epoch: UNDEFINED (-1, -1), as Kafka
      out.leader_epoch = epoch;
      out.end_offset = end_offset;
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult HandleInitProducerId(BrokerContext& ctx, net::Request& request) {
  using protocol::InitProducerIdRequest;
  STRATA_ASSIGN_OR_RETURN(InitProducerIdRequest req, DecodeRequest<InitProducerIdRequest>(request));
  protocol::InitProducerIdResponse resp;
  if (req.transactional_id) {
    log::Get("broker")->warn(
        "InitProducerId for transactional id '{}' refused: transactions are "
        "not supported yet",
        *req.transactional_id);
    resp.error_code = Code(ErrorCode::kInvalidRequest);
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  // A fresh id (epoch 0) is valid for both new producers and KIP-360 bumps.
  auto id = ctx.producer_ids.Next();
  if (!id.ok()) {
    resp.error_code = Code(ErrorCode::kCoordinatorNotAvailable);
  } else {
    resp.producer_id = id.value();
    resp.producer_epoch = 0;
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::broker
