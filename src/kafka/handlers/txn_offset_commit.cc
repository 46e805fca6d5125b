// TxnOffsetCommit (28): a transactional producer commits its consumer
// group's offsets inside its transaction (sendOffsetsToTransaction). The
// group coordinator checks the consumer's member and generation (KIP-447),
// writes them as a transactional batch of the producer to __consumer_offsets
// and holds them pending until the transaction's marker lands there; the
// answer waits until the partition's ISR has the batch. Partitions of unknown
// topics are answered UNKNOWN_TOPIC_OR_PARTITION.
#include "protocol/messages/txn_offset_commit.h"

#include "coordinator/group_coordinator.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "kafka/txn_verification.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;
using protocol::TxnOffsetCommitRequest;
using protocol::TxnOffsetCommitResponse;

TxnOffsetCommitResponse AllFailed(const TxnOffsetCommitRequest& req, ErrorCode code) {
  TxnOffsetCommitResponse resp;
  for (const auto& t : req.topics) {
    auto& out = resp.topics.emplace_back();
    out.name = t.name;
    for (const auto& p : t.partitions) out.partitions.push_back({p.partition_index, Code(code)});
  }
  return resp;
}

// The request without partitions of unknown topics (topics keep their
// index, possibly empty).
TxnOffsetCommitRequest KnownPartitions(BrokerContext& ctx, const TxnOffsetCommitRequest& req) {
  TxnOffsetCommitRequest known = req;
  for (auto& t : known.topics) {
    auto record = ctx.topics.GetTopic(t.name);
    std::erase_if(t.partitions, [&](const TxnOffsetCommitRequest::Partition& p) {
      return !record || p.partition_index < 0 || p.partition_index >= record->partitions;
    });
  }
  return known;
}

// Adds the group's __consumer_offsets partition to the producer's
// transaction with its coordinator. Errors the producer retries on (the
// coordinator cannot answer yet, or is still ending the previous
// transaction) become COORDINATOR_NOT_AVAILABLE.
asio::awaitable<ErrorCode> AddOffsetsPartition(BrokerContext& ctx,
                                               const TxnOffsetCommitRequest& req) {
  if (ctx.txn_verifier == nullptr) co_return ErrorCode::kCoordinatorNotAvailable;
  std::set<TopicPartition> offsets;
  offsets.insert({coordinator::kOffsetsTopic, ctx.group_coordinator->PartitionFor(req.group_id)});
  const auto answers =
      co_await ctx.txn_verifier->Ask(TxnPartitionVerifier::Mode::kAdd, req.transactional_id,
                                     req.producer_id, req.producer_epoch, offsets);
  const ErrorCode code = answers.empty() ? ErrorCode::kUnknownServerError : answers.begin()->second;
  switch (code) {
    case ErrorCode::kConcurrentTransactions:
    case ErrorCode::kCoordinatorLoadInProgress:
    case ErrorCode::kNotCoordinator:
      co_return ErrorCode::kCoordinatorNotAvailable;
    case ErrorCode::kProducerFenced:
      co_return ErrorCode::kInvalidProducerEpoch;
    default:
      co_return code;
  }
}

}  // namespace

asio::awaitable<HandlerResult> HandleTxnOffsetCommit(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<TxnOffsetCommitRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  const TxnOffsetCommitRequest& req = *decoded;
  if (auto error = GroupCoordinatorError(ctx, req.group_id); error != ErrorCode::kNone) {
    TxnOffsetCommitResponse resp = AllFailed(req, error);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  if (request.header.api_version >= 5) {
    // Transaction version 2: the client sent no AddOffsetsToTxn; the
    // offsets partition joins the transaction here, as a produce's does.
    if (const ErrorCode added = co_await AddOffsetsPartition(ctx, req); added != ErrorCode::kNone) {
      TxnOffsetCommitResponse resp = AllFailed(req, added);
      co_return std::optional<Bytes>(EncodeResponse(request, resp));
    }
  }
  TxnOffsetCommitResponse stored =
      ctx.group_coordinator->CommitTxnOffsets(KnownPartitions(ctx, req));
  const ErrorCode replicated = co_await AwaitGroupWrites(ctx, req.group_id);
  // Answers in request order: stored ones from the coordinator, the others
  // unknown.
  TxnOffsetCommitResponse resp = AllFailed(req, ErrorCode::kUnknownTopicOrPartition);
  for (size_t ti = 0; ti < resp.topics.size(); ++ti) {
    const auto& got = stored.topics[ti].partitions;
    size_t next = 0;
    for (auto& p : resp.topics[ti].partitions) {
      if (next >= got.size() || got[next].partition_index != p.partition_index) continue;
      p.error_code = got[next++].error_code;
      if (p.error_code == 0 && replicated != ErrorCode::kNone) p.error_code = Code(replicated);
    }
  }
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
