// AddPartitionsToTxn (24): partitions join a producer's ongoing transaction
// on its transaction coordinator, answered once that is written to
// __transaction_state. v0-3 are a client's (one transaction, classic
// protocol); v4+ a broker's batch (KIP-890), each transaction either added
// (transaction version 2) or, VerifyOnly, only checked: a partition leader
// asking whether a transactional produce belongs to an ongoing transaction.
// A request naming a topic that does not exist adds nothing: those
// partitions are UNKNOWN_TOPIC_OR_PARTITION, the others
// OPERATION_NOT_ATTEMPTED.
#include "protocol/messages/add_partitions_to_txn.h"

#include <functional>
#include <map>
#include <set>

#include "coordinator/txn_coordinator.h"
#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "kafka/handlers/txn_errors.h"
#include "kafka/quota_charge.h"
#include "kafka/txn_routing.h"
#include "protocol/error_code.h"

namespace strata::kafka {
namespace {

using protocol::AddPartitionsToTxnRequest;
using protocol::AddPartitionsToTxnResponse;
using protocol::ErrorCode;
using TopicResults = std::vector<AddPartitionsToTxnResponse::TopicResult>;

// Every partition of `topics` answered by `code_of`.
template <class CodeOf>
TopicResults Results(const std::vector<AddPartitionsToTxnRequest::Topic>& topics, CodeOf code_of) {
  TopicResults out;
  for (const auto& topic : topics) {
    auto& t = out.emplace_back();
    t.name = topic.name;
    for (int32_t p : topic.partitions)
      t.results_by_partition.push_back({p, Code(code_of(TopicPartition{topic.name, p}))});
  }
  return out;
}

// The partitions of a transaction, or the answer when one does not exist.
std::optional<TopicResults> UnknownTopics(
    BrokerContext& ctx, const std::vector<AddPartitionsToTxnRequest::Topic>& topics) {
  std::set<TopicPartition> unknown;
  for (const auto& topic : topics) {
    auto record = ctx.topics.GetTopic(topic.name);
    for (int32_t p : topic.partitions) {
      if (!record || p < 0 || p >= record->partitions) unknown.insert({topic.name, p});
    }
  }
  if (unknown.empty()) return std::nullopt;
  return Results(topics, [&](const TopicPartition& tp) {
    return unknown.contains(tp) ? ErrorCode::kUnknownTopicOrPartition
                                : ErrorCode::kOperationNotAttempted;
  });
}

std::set<TopicPartition> PartitionsOf(const std::vector<AddPartitionsToTxnRequest::Topic>& topics) {
  std::set<TopicPartition> out;
  for (const auto& topic : topics) {
    for (int32_t p : topic.partitions) out.insert({topic.name, p});
  }
  return out;
}

// A client's (v3-) authorization: WRITE on the transactional id and on
// every topic; the answer when refused.
std::optional<TopicResults> Refused(const BrokerContext& ctx, const net::Request& request,
                                    const std::string& id,
                                    const std::vector<AddPartitionsToTxnRequest::Topic>& topics) {
  if (!Authorized(ctx, request, security::AclOperation::kWrite,
                  security::ResourceType::kTransactionalId, id)) {
    return Results(topics, [](const TopicPartition&) {
      return ErrorCode::kTransactionalIdAuthorizationFailed;
    });
  }
  std::set<std::string> denied;
  for (const auto& t : topics) {
    if (!Authorized(ctx, request, security::AclOperation::kWrite, security::ResourceType::kTopic,
                    t.name)) {
      denied.insert(t.name);
    }
  }
  if (denied.empty()) return std::nullopt;
  return Results(topics, [&](const TopicPartition& tp) {
    return denied.contains(tp.topic) ? ErrorCode::kTopicAuthorizationFailed
                                     : ErrorCode::kOperationNotAttempted;
  });
}

// One transaction's answer, per partition.
asio::awaitable<TopicResults> AddOne(BrokerContext& ctx, net::Request& request,
                                     const std::string& id, int64_t producer_id,
                                     int16_t producer_epoch, bool verify_only,
                                     const std::vector<AddPartitionsToTxnRequest::Topic>& topics,
                                     int16_t version) {
  if (auto unknown = UnknownTopics(ctx, topics)) co_return *unknown;
  const std::set<TopicPartition> partitions = PartitionsOf(topics);
  ErrorCode served = TxnCoordinatorError(ctx, id);
  if (served == ErrorCode::kNone && verify_only) {
    const auto verified =
        ctx.txn_coordinator->VerifyPartitions(id, producer_id, producer_epoch, partitions);
    co_return Results(topics, [&](const TopicPartition& tp) {
      auto it = verified.find(tp);
      return it == verified.end() ? ErrorCode::kUnknownServerError : it->second;
    });
  }
  if (served == ErrorCode::kNone) {
    // v4+ come from transaction version 2 clients (or their leaders).
    const int16_t client_tv = version > 3 ? 2 : 0;
    const std::function<coordinator::TxnReply()> add = [&] {
      return ctx.txn_coordinator->AddPartitions(id, producer_id, producer_epoch, partitions,
                                                client_tv);
    };
    if (version > 3) {
      // A partition leader adding for a produce (KIP-890) holds a
      // verification guard that the previous transaction's marker voids: it
      // must hear CONCURRENT_TRANSACTIONS and ask again under a new guard.
      const coordinator::TxnReply reply = add();
      served = co_await Waited(request, SettleTxnReply(ctx, reply));
    } else {
      served = co_await Waited(request, AddPartitionsHoldingConcurrent(ctx, add));
    }
  }
  served = TxnErrorForVersion(served, version);
  co_return Results(topics, [&](const TopicPartition&) { return served; });
}

}  // namespace

asio::awaitable<HandlerResult> HandleAddPartitionsToTxn(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<AddPartitionsToTxnRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  const AddPartitionsToTxnRequest& req = *decoded;
  const int16_t version = request.header.api_version;
  AddPartitionsToTxnResponse resp;
  if (version <= 3) {
    if (auto refused =
            Refused(ctx, request, req.v3_and_below_transactional_id, req.v3_and_below_topics)) {
      resp.results_by_topic_v3_and_below = std::move(*refused);
      co_return std::optional<Bytes>(EncodeResponse(request, resp));
    }
    resp.results_by_topic_v3_and_below = co_await AddOne(
        ctx, request, req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
        req.v3_and_below_producer_epoch, /*verify_only=*/false, req.v3_and_below_topics, version);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  // v4+ come from partition leaders verifying a produce (KIP-890).
  request.quota_exempt = true;
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kClusterAction)) {
    resp.error_code = Code(ErrorCode::kClusterAuthorizationFailed);
    co_return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  for (const auto& txn : req.transactions) {
    auto& out = resp.results_by_transaction.emplace_back();
    out.transactional_id = txn.transactional_id;
    out.topic_results = co_await AddOne(ctx, request, txn.transactional_id, txn.producer_id,
                                        txn.producer_epoch, txn.verify_only, txn.topics, version);
  }
  co_return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
