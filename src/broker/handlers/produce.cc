// Produce (0): validate each partition's batch, append it to the log (which
// assigns offsets and checks producer sequences), wake long-polling fetches.
// acks=0 gets no response; on an acks=0 error the connection is closed so the
// client refreshes metadata, as Kafka does.
#include "protocol/messages/produce.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "broker/cluster_state.h"
#include "broker/error_mapping.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/records.h"

namespace strata::broker {

namespace {

using protocol::ErrorCode;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

auto ProduceLog() { return log::Get("produce"); }

void SetError(ProduceResponse::Partition& out, ErrorCode code, std::string message) {
  out.error_code = Code(code);
  out.error_message = std::move(message);
}

void ProducePartition(BrokerContext& ctx, const std::string& topic, const TopicInfo* info,
                      int16_t acks, ProduceRequest::Partition& in,
                      ProduceResponse::Partition& out) {
  out.index = in.index;
  TopicPartition tp{topic, in.index};
  LeaderLookup leader = ctx.topics.LeaderPartition(tp, -1);
  if (leader.error != ErrorCode::kNone) {
    SetError(out, leader.error, std::move(leader.message));
    if (leader.error == ErrorCode::kNotLeaderOrFollower && leader.leader != cluster::kNoNode) {
      out.current_leader = {leader.leader.value(), leader.leader_epoch.value()};  // KIP-951
    }
    return;
  }
  const std::shared_ptr<storage::Log>& log = leader.partition->log();
  if (auto reason = ctx.topics.ProduceBlockedReason()) {
    // Retriable: clients back off and retry until uploads and local
    // retention free space.
    SetError(out, ErrorCode::kKafkaStorageError, std::move(*reason));
    return;
  }
  if (acks == -1 && info->min_insync_replicas > 1) {
    SetError(out, ErrorCode::kNotEnoughReplicas,
             fmt::format("min.insync.replicas={} but only 1 replica is in sync",
                         info->min_insync_replicas));
    return;
  }
  if (in.records.null || in.records.view.empty()) {
    SetError(out, ErrorCode::kInvalidRecord, "produce request has no record batch");
    return;
  }
  protocol::ValidationLimits limits;
  limits.max_batch_bytes = static_cast<size_t>(info->log_config.max_message_bytes);
  auto batches = protocol::ValidateProduceRecords(in.records.view, limits);
  if (!batches.ok()) {
    SetError(out, ProduceErrorCode(batches.error().code), batches.error().message);
    return;
  }
  if (info->log_config.compacted) {
    // Kafka rejects keyless records on compacted topics: they could never be
    // compacted. Only compacted topics pay for this second pass.
    for (const auto& b : *batches) {
      Status st = protocol::ForEachRecord(
          b.header, ByteView(in.records.view).subspan(b.position, b.size),
          limits.max_decompressed_bytes, [](const protocol::Record& r) -> Status {
            if (!r.key)
              return MakeError(Errc::kInvalidArgument,
                               "Compacted topic cannot accept message without key");
            return Status::Ok();
          });
      if (!st.ok()) {
        SetError(out, ErrorCode::kInvalidRecord, st.error().message);
        return;
      }
    }
  }
  if (batches->size() != 1) {
    SetError(out, ErrorCode::kInvalidRecord,
             "produce v3+ requests must hold exactly one record batch per partition");
    return;
  }
  std::vector<storage::BatchInfo> infos;
  for (const auto& b : *batches) {
    infos.push_back({.size = static_cast<int32_t>(b.size),
                     .record_count = b.header.last_offset_delta + 1,
                     .max_timestamp = b.max_timestamp,
                     .offset_delta_of_max_timestamp = b.offset_delta_of_max_timestamp,
                     .producer_id = b.header.producer_id,
                     .producer_epoch = b.header.producer_epoch,
                     .base_sequence = b.header.base_sequence,
                     .transactional = b.header.transactional()});
  }
  auto appended = log->Append(in.records.view, infos, leader.partition->leader_epoch().value());
  if (!appended.ok()) {
    SetError(out, ProduceErrorCode(appended.error().code), appended.error().message);
    if (appended.error().code == Errc::kIoError) {
      ProduceLog()->error("append to {} failed: {}", tp.ToString(), appended.error().message);
    }
    return;
  }
  out.base_offset = appended->base_offset;
  out.log_append_time_ms = appended->log_append_time;
  out.log_start_offset = appended->log_start_offset;
  if (!appended->duplicate) ctx.notifier.Notify(tp);
}

// KIP-951: the brokers that CurrentLeader fields name, so a client moves
// the partition without waiting for a metadata refresh.
void AddLeaderEndpoints(const BrokerContext& ctx, ProduceResponse& resp) {
  std::vector<int32_t> named;
  for (const auto& t : resp.topics) {
    for (const auto& p : t.partitions) {
      if (p.current_leader) named.push_back(p.current_leader->leader_id);
    }
  }
  if (named.empty()) return;
  resp.node_endpoints.emplace();
  for (const auto& b : LiveBrokers(ctx)) {
    if (std::find(named.begin(), named.end(), b.node_id) == named.end()) continue;
    resp.node_endpoints->push_back({b.node_id, b.host, b.port, b.rack});
  }
}

}  // namespace

HandlerResult HandleProduce(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(ProduceRequest req, DecodeRequest<ProduceRequest>(request));
  int16_t version = request.header.api_version;
  ProduceResponse resp;
  bool any_error = false;
  for (auto& topic : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = topic.name;
    auto info = ctx.topics.GetTopicInfo(topic.name);
    for (auto& partition : topic.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      if (version < 3) {
        // Kafka 4 advertises Produce v0 for old librdkafka but rejects v0-2.
        out.index = partition.index;
        SetError(out, ErrorCode::kUnsupportedVersion,
                 "produce v0-2 (message format v0/v1) is not supported");
      } else if (req.acks != 0 && req.acks != 1 && req.acks != -1) {
        out.index = partition.index;
        SetError(out, ErrorCode::kInvalidRequiredAcks, "acks must be -1, 0 or 1");
      } else {
        ProducePartition(ctx, topic.name, info.get(), req.acks, partition, out);
      }
      any_error |= out.error_code != 0;
    }
  }
  AddLeaderEndpoints(ctx, resp);
  if (req.acks == 0) {
    if (any_error)
      return MakeError(Errc::kInvalidArgument,
                       "acks=0 produce failed; closing to force a metadata refresh");
    return std::optional<Bytes>();
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::broker
