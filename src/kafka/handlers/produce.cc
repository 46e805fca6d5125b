// Produce (0): validate each partition's batch, append it to the log (which
// assigns offsets and checks producer sequences), wake long-polling fetches.
// acks=all answers once the high watermark has passed the batch (every ISR
// member has it), waiting on a timer, not a thread, up to the request's
// timeout. acks=0 gets no response; on an acks=0 error the connection is
// closed so the client refreshes metadata, as Kafka does.
#include "protocol/messages/produce.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "kafka/authorization.h"
#include "kafka/cluster_state.h"
#include "kafka/commit_wait.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "kafka/quota_charge.h"
#include "kafka/record_checks.h"
#include "kafka/txn_verification.h"
#include "protocol/error_code.h"
#include "protocol/records.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

auto ProduceLog() { return log::Get("produce"); }

void SetError(ProduceResponse::Partition& out, ErrorCode code, std::string message) {
  out.error_code = Code(code);
  out.error_message = std::move(message);
}

// An acks=all append waiting for the high watermark to pass it.
struct PendingAck {
  CommitWait wait;
  int min_isr = 1;
  size_t topic_index = 0;  // where its answer is in the response
  size_t partition_index = 0;
};

// Whether any partition's batch is transactional (attribute bit 4 of its
// first batch header), or carries a producer id (idempotent); a malformed
// one is judged later, by validation.
bool AnyBatch(const ProduceRequest& req, bool (*test)(const protocol::BatchHeader&)) {
  for (const auto& topic : req.topics) {
    for (const auto& partition : topic.partitions) {
      if (partition.records.null) continue;
      auto header = protocol::ParseBatchHeader(partition.records.view);
      if (header.ok() && test(*header)) return true;
    }
  }
  return false;
}
bool HasTransactionalRecords(const ProduceRequest& req) {
  return AnyBatch(req, [](const protocol::BatchHeader& h) { return h.transactional(); });
}
bool HasIdempotentRecords(const ProduceRequest& req) {
  return AnyBatch(req, [](const protocol::BatchHeader& h) { return h.producer_id >= 0; });
}

// Kafka's checks of the whole request: WRITE on the transactional id, or for
// an idempotent producer IDEMPOTENT_WRITE on the cluster or WRITE on some
// topic. The error every partition gets, or kNone.
std::pair<ErrorCode, std::string> RefusedProduce(const BrokerContext& ctx,
                                                 const net::Request& request,
                                                 const ProduceRequest& req) {
  using security::AclOperation;
  if (req.transactional_id) {
    if (!Authorized(ctx, request, AclOperation::kWrite, security::ResourceType::kTransactionalId,
                    *req.transactional_id)) {
      return {ErrorCode::kTransactionalIdAuthorizationFailed,
              "not authorized to write for transactional id " + *req.transactional_id};
    }
    return {ErrorCode::kNone, ""};
  }
  if (HasTransactionalRecords(req)) {
    // Kafka authorizes a transactional write by its transactional id.
    return {ErrorCode::kTransactionalIdAuthorizationFailed,
            "transactional records need the producer's transactional id"};
  }
  if (ctx.authorizer != nullptr && HasIdempotentRecords(req) &&
      !AuthorizedOnCluster(ctx, request, AclOperation::kIdempotentWrite, false) &&
      !AuthorizedAny(ctx, request, AclOperation::kWrite, security::ResourceType::kTopic)) {
    return {ErrorCode::kClusterAuthorizationFailed,
            "an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on a topic"};
  }
  return {ErrorCode::kNone, ""};
}

// Appends one partition's batch; with acks=all the append is added to
// `pending` unless already committed.
void ProducePartition(BrokerContext& ctx, const std::string& topic, const broker::TopicInfo* info,
                      int16_t acks, const TxnProduceCheck* txn_check, ProduceRequest::Partition& in,
                      ProduceResponse::Partition& out, std::vector<PendingAck>& pending) {
  out.index = in.index;
  TopicPartition tp{topic, in.index};
  if (txn_check != nullptr && txn_check->error != ErrorCode::kNone) {
    SetError(out, txn_check->error,
             txn_check->error == ErrorCode::kNotEnoughReplicas
                 ? "the transaction coordinator could not confirm the transaction"
                 : "Partition was not added to the transaction");
    return;
  }
  broker::LeaderLookup leader = ctx.topics.LeaderPartition(tp, -1);
  if (leader.error != ErrorCode::kNone) {
    SetError(out, leader.error, std::move(leader.message));
    if (leader.error == ErrorCode::kNotLeaderOrFollower && leader.leader != cluster::kNoNode) {
      out.current_leader = {leader.leader.value(), leader.leader_epoch.value()};  // KIP-951
    }
    return;
  }
  if (auto reason = ctx.topics.ProduceBlockedReason()) {
    // Retriable: clients back off and retry until uploads and local
    // retention free space.
    SetError(out, ErrorCode::kKafkaStorageError, std::move(*reason));
    return;
  }
  const size_t in_sync = leader.partition->state().isr.size();
  if (acks == -1 && static_cast<int>(in_sync) < info->min_insync_replicas) {
    SetError(out, ErrorCode::kNotEnoughReplicas,
             fmt::format("min.insync.replicas={} but only {} replicas are in sync",
                         info->min_insync_replicas, in_sync));
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
  for (const auto& b : *batches) {
    auto rejected =
        CheckRecords(b.header, ByteView(in.records.view).subspan(b.position, b.size),
                     info->log_config, tp, ctx.clock->NowMs(), limits.max_decompressed_bytes);
    if (!rejected.ok()) {
      SetError(out, ProduceErrorCode(rejected.error().code), rejected.error().message);
      return;
    }
    if (rejected->code != ErrorCode::kNone) {  // KIP-467: the records at fault are named
      SetError(out, rejected->code, std::move(rejected->message));
      out.record_errors = std::move(rejected->errors);
      return;
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
                     .transactional = b.header.transactional(),
                     .txn_verification_guard = txn_check ? txn_check->guard : 0});
  }
  broker::Partition& partition = *leader.partition;
  auto result = partition.AppendAsLeader(in.records.view, infos, info->min_insync_replicas);
  if (!result.ok()) {
    const Errc errc = result.error().code;
    SetError(out, ProduceErrorCode(errc), result.error().message);
    if (errc == Errc::kIoError) {
      ProduceLog()->error("append to {} failed: {}", tp.ToString(), result.error().message);
    }
    return;
  }
  const storage::AppendResult* appended = &result->appended;
  out.base_offset = appended->base_offset.value();
  out.log_append_time_ms = appended->log_append_time;
  out.log_start_offset = appended->log_start_offset.value();
  if (acks == -1 && partition.high_watermark() <= appended->last_offset) {
    pending.push_back({{leader.partition, appended->last_offset, leader.partition->leader(),
                        result->leader_epoch},
                       info->min_insync_replicas});
  }
}

// Waits until every pending append is below its partition's high
// watermark, or `timeout`; each still waiting then gets REQUEST_TIMED_OUT
// (Kafka's answer when the ISR did not confirm in time). A committed append
// whose ISR fell below min.insync.replicas meanwhile gets
// NOT_ENOUGH_REPLICAS_AFTER_APPEND: it is written, but not as durably as asked.
asio::awaitable<void> AwaitAcks(BrokerContext& ctx, const std::vector<PendingAck>& pending,
                                std::chrono::milliseconds timeout, ProduceResponse& resp) {
  std::vector<CommitWait> waits;
  for (const auto& p : pending) waits.push_back(p.wait);
  const std::vector<CommitOutcome> outcomes = co_await AwaitCommitted(ctx, waits, timeout);
  for (size_t i = 0; i < pending.size(); ++i) {
    const PendingAck& p = pending[i];
    const std::string tp = p.wait.partition->tp().ToString();
    auto& out = resp.topics[p.topic_index].partitions[p.partition_index];
    if (outcomes[i] == CommitOutcome::kDeposed) {
      SetError(out, ErrorCode::kNotLeaderOrFollower,
               fmt::format("{}: leadership moved before the in-sync replicas confirmed offset {}",
                           tp, p.wait.last_offset));
    } else if (outcomes[i] == CommitOutcome::kTimedOut) {
      SetError(out, ErrorCode::kRequestTimedOut,
               fmt::format("the in-sync replicas of {} did not confirm offset {} within {} ms", tp,
                           p.wait.last_offset, timeout.count()));
    } else if (static_cast<int>(p.wait.partition->state().isr.size()) < p.min_isr) {
      SetError(
          out, ErrorCode::kNotEnoughReplicasAfterAppend,
          fmt::format("{}: written, but the ISR fell below min.insync.replicas={}", tp, p.min_isr));
    }
  }
}

// KIP-951: the brokers that CurrentLeader fields name, so a client moves
// the partition without waiting for a metadata refresh.
void AddLeaderEndpoints(const BrokerContext& ctx, std::string_view listener,
                        ProduceResponse& resp) {
  std::vector<int32_t> named;
  for (const auto& t : resp.topics) {
    for (const auto& p : t.partitions) {
      if (p.current_leader) named.push_back(p.current_leader->leader_id);
    }
  }
  if (named.empty()) return;
  resp.node_endpoints.emplace();
  for (const auto& b : LiveBrokers(ctx, listener)) {
    if (std::find(named.begin(), named.end(), b.node_id) == named.end()) continue;
    resp.node_endpoints->push_back({b.node_id, b.host, b.port, b.rack});
  }
}

}  // namespace

asio::awaitable<HandlerResult> HandleProduce(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<ProduceRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  ProduceRequest& req = *decoded;
  int16_t version = request.header.api_version;
  ProduceResponse resp;
  const auto [refused, refused_why] = RefusedProduce(ctx, request, req);
  const bool refuse_all = refused != ErrorCode::kNone;
  // KIP-890: transactional batches are checked with their coordinator first.
  std::map<TopicPartition, TxnProduceCheck> txn_checks;
  if (!refuse_all && version >= 3)
    txn_checks = co_await Waited(request, CheckTransactionalProduce(ctx, req, version));
  std::vector<PendingAck> pending;
  for (auto& topic : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = topic.name;
    auto info = ctx.topics.GetTopicInfo(topic.name);
    const bool may_write = refuse_all || Authorized(ctx, request, security::AclOperation::kWrite,
                                                    security::ResourceType::kTopic, topic.name);
    for (auto& partition : topic.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      if (refuse_all) {
        out.index = partition.index;
        SetError(out, refused, refused_why);
      } else if (!may_write) {
        out.index = partition.index;
        SetError(out, ErrorCode::kTopicAuthorizationFailed,
                 "not authorized to write to topic " + topic.name);
      } else if (version < 3) {
        // Kafka 4 advertises Produce v0 for old librdkafka but rejects v0-2.
        out.index = partition.index;
        SetError(out, ErrorCode::kUnsupportedVersion,
                 "produce v0-2 (message format v0/v1) is not supported");
      } else if (req.acks != 0 && req.acks != 1 && req.acks != -1) {
        out.index = partition.index;
        SetError(out, ErrorCode::kInvalidRequiredAcks, "acks must be -1, 0 or 1");
      } else {
        size_t before = pending.size();
        auto check = txn_checks.find({topic.name, partition.index});
        ProducePartition(ctx, topic.name, info.get(), req.acks,
                         check == txn_checks.end() ? nullptr : &check->second, partition, out,
                         pending);
        if (pending.size() > before) {
          pending.back().topic_index = resp.topics.size() - 1;
          pending.back().partition_index = out_topic.partitions.size() - 1;
        }
      }
    }
  }
  if (!pending.empty()) {
    co_await Waited(
        request,
        AwaitAcks(ctx, pending, std::chrono::milliseconds(std::max(req.timeout_ms, 0)), resp));
  }
  bool any_error = false;
  for (const auto& t : resp.topics) {
    for (const auto& p : t.partitions) any_error |= p.error_code != 0;
  }
  AddLeaderEndpoints(ctx, request.listener, resp);
  resp.throttle_time_ms = ChargeProduce(ctx, request, request.frame_size);
  if (req.acks == 0) {
    // Kafka does not charge acks=0 produces to the request quota (no
    // response could tell the client); the byte rate still mutes.
    request.request_time_charger = nullptr;
    if (any_error)
      co_return MakeError(Errc::kInvalidArgument,
                          "acks=0 produce failed; closing to force a metadata refresh");
    co_return std::optional<Bytes>();
  }
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
