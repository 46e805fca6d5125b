// TxnOffsetCommit (28): a transactional producer commits its consumer
// group's offsets inside its transaction (sendOffsetsToTransaction). The
// offsets partition is first checked with the transaction coordinator
// (KIP-890, as a produce's partition is); the group coordinator then checks
// the consumer's member and generation (KIP-447),
// writes them as a transactional batch of the producer to __consumer_offsets
// and holds them pending until the transaction's marker lands there; the
// answer waits until the partition's ISR has the batch. Partitions of unknown
// topics are answered UNKNOWN_TOPIC_OR_PARTITION.
#include "protocol/messages/txn_offset_commit.h"

#include <set>

#include "coordinator/group_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/group_routing.h"
#include "kafka/handlers/handlers.h"
#include "kafka/quota_charge.h"
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
TxnOffsetCommitRequest KnownPartitions(BrokerContext& ctx, const TxnOffsetCommitRequest& req,
                                       const std::set<std::string>& denied) {
  TxnOffsetCommitRequest known = req;
  for (auto& t : known.topics) {
    auto record = ctx.topics.GetTopic(t.name);
    std::erase_if(t.partitions, [&](const TxnOffsetCommitRequest::Partition& p) {
      return !record || denied.contains(t.name) || p.partition_index < 0 ||
             p.partition_index >= record->partitions;
    });
  }
  return known;
}

// The offsets partition checked with the producer's transaction coordinator
// (KIP-890) before the offsets open a transaction in it: with transaction
// version 2 (v5) added to the transaction, as a produce's partition is (the
// client sent no AddOffsetsToTxn); before, verified to be in it when
// transaction.partition.verification.enable. The guard the append carries.
struct OffsetsPartitionCheck {
  ErrorCode error = ErrorCode::kNone;
  uint64_t guard = 0;
};

ErrorCode ForTxnOffsetCommit(ErrorCode code, int16_t version) {
  switch (code) {
    case ErrorCode::kConcurrentTransactions:
    case ErrorCode::kCoordinatorLoadInProgress:
    case ErrorCode::kNotCoordinator:
      return ErrorCode::kCoordinatorNotAvailable;  // retried here, not re-routed
    case ErrorCode::kProducerFenced:
      return ErrorCode::kInvalidProducerEpoch;
    case ErrorCode::kTransactionAbortable:
      return version >= 4 ? code : ErrorCode::kInvalidTxnState;
    default:
      return code;
  }
}

asio::awaitable<OffsetsPartitionCheck> CheckOffsetsPartition(BrokerContext& ctx,
                                                             const TxnOffsetCommitRequest& req,
                                                             int16_t version) {
  const bool add = version >= 5;
  if (!add && !ctx.config.GetBool("transaction.partition.verification.enable")) {
    co_return OffsetsPartitionCheck{};
  }
  if (ctx.txn_verifier == nullptr)
    co_return OffsetsPartitionCheck{ErrorCode::kCoordinatorNotAvailable, 0};
  const TopicPartition tp{coordinator::kOffsetsTopic,
                          ctx.group_coordinator->PartitionFor(req.group_id)};
  auto partition = ctx.topics.GetPartition(tp);
  if (!partition) co_return OffsetsPartitionCheck{ErrorCode::kNotCoordinator, 0};
  const storage::TxnVerification v =
      partition->log()->StartTxnVerification(req.producer_id, req.producer_epoch);
  if (v.ongoing)
    co_return OffsetsPartitionCheck{ErrorCode::kNone, v.guard};  // this transaction has it already
  std::set<TopicPartition> partitions;
  partitions.insert(tp);
  const auto mode = add ? TxnPartitionVerifier::Mode::kAdd : TxnPartitionVerifier::Mode::kVerify;
  const auto answers = co_await ctx.txn_verifier->Ask(mode, req.transactional_id, req.producer_id,
                                                      req.producer_epoch, partitions);
  const ErrorCode code = answers.empty() ? ErrorCode::kUnknownServerError : answers.begin()->second;
  co_return OffsetsPartitionCheck{ForTxnOffsetCommit(code, version), v.guard};
}

}  // namespace

asio::awaitable<HandlerResult> HandleTxnOffsetCommit(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<TxnOffsetCommitRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  const TxnOffsetCommitRequest& req = *decoded;
  if (!Authorized(ctx, request, security::AclOperation::kWrite,
                  security::ResourceType::kTransactionalId, req.transactional_id)) {
    TxnOffsetCommitResponse resp = AllFailed(req, ErrorCode::kTransactionalIdAuthorizationFailed);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  if (auto error = GroupRequestError(ctx, request, security::AclOperation::kRead, req.group_id);
      error != ErrorCode::kNone) {
    TxnOffsetCommitResponse resp = AllFailed(req, error);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  const OffsetsPartitionCheck check =
      co_await Waited(request, CheckOffsetsPartition(ctx, req, request.header.api_version));
  if (check.error != ErrorCode::kNone) {
    TxnOffsetCommitResponse resp = AllFailed(req, check.error);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  std::set<std::string> denied;  // topics the client may not READ
  for (const auto& t : req.topics) {
    if (!Authorized(ctx, request, security::AclOperation::kRead, security::ResourceType::kTopic,
                    t.name)) {
      denied.insert(t.name);
    }
  }
  TxnOffsetCommitResponse stored =
      ctx.group_coordinator->CommitTxnOffsets(KnownPartitions(ctx, req, denied), check.guard);
  const ErrorCode replicated = co_await Waited(request, AwaitGroupWrites(ctx, req.group_id));
  // Answers in request order: stored ones from the coordinator, the others
  // unknown.
  TxnOffsetCommitResponse resp = AllFailed(req, ErrorCode::kUnknownTopicOrPartition);
  for (size_t ti = 0; ti < resp.topics.size(); ++ti) {
    const auto& got = stored.topics[ti].partitions;
    size_t next = 0;
    for (auto& p : resp.topics[ti].partitions) {
      if (denied.contains(resp.topics[ti].name)) {
        p.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      if (next >= got.size() || got[next].partition_index != p.partition_index) continue;
      p.error_code = got[next++].error_code;
      if (p.error_code == 0 && replicated != ErrorCode::kNone) p.error_code = Code(replicated);
    }
  }
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
