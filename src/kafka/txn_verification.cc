#include "kafka/txn_verification.h"

#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>

#include "base/log.h"
#include "coordinator/txn_coordinator.h"
#include "kafka/txn_routing.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/record_batch.h"

namespace strata::kafka {

namespace {

using protocol::AddPartitionsToTxnRequest;
using protocol::AddPartitionsToTxnResponse;
using protocol::ErrorCode;

constexpr int16_t kVerifyVersion = 5;

std::map<TopicPartition, ErrorCode> AllWith(const std::set<TopicPartition>& partitions,
                                            ErrorCode code) {
  std::map<TopicPartition, ErrorCode> out;
  for (const auto& tp : partitions) out[tp] = code;
  return out;
}

AddPartitionsToTxnRequest AskRequest(bool verify_only, const std::string& id, int64_t producer_id,
                                     int16_t producer_epoch,
                                     const std::set<TopicPartition>& partitions) {
  AddPartitionsToTxnRequest req;
  auto& txn = req.transactions.emplace_back();
  txn.transactional_id = id;
  txn.producer_id = producer_id;
  txn.producer_epoch = producer_epoch;
  txn.verify_only = verify_only;
  for (const auto& tp : partitions) {
    if (txn.topics.empty() || txn.topics.back().name != tp.topic)
      txn.topics.push_back({tp.topic, {}});
    txn.topics.back().partitions.push_back(tp.partition);
  }
  return req;
}

// What the producer is told for the coordinator's answer (Kafka's
// AddPartitionsToTxnManager and KafkaApis.handleProduceRequest).
ErrorCode ForProducer(ErrorCode code, int16_t produce_version) {
  switch (code) {
    case ErrorCode::kNone:
      return code;
    case ErrorCode::kProducerFenced:
      return ErrorCode::kInvalidProducerEpoch;
    case ErrorCode::kTransactionAbortable:
      return produce_version > 10 ? code : ErrorCode::kInvalidTxnState;
    case ErrorCode::kConcurrentTransactions:
    case ErrorCode::kCoordinatorLoadInProgress:
    case ErrorCode::kCoordinatorNotAvailable:
    case ErrorCode::kNotCoordinator:
    case ErrorCode::kNetworkException:
    case ErrorCode::kRequestTimedOut:
      return ErrorCode::kNotEnoughReplicas;
    default:
      return code;
  }
}

// Starts a verification of the producer's transaction in each partition
// this broker leads, recording its guard in `checks`; the partitions where
// no transaction of the producer's epoch is open yet (the coordinator's to
// confirm). A partition not led here is left to the append to answer.
std::set<TopicPartition> StartVerifications(BrokerContext& ctx,
                                            const std::set<TopicPartition>& partitions,
                                            int64_t producer_id, int16_t producer_epoch,
                                            std::map<TopicPartition, TxnProduceCheck>& checks) {
  std::set<TopicPartition> ask;
  for (const TopicPartition& tp : partitions) {
    broker::LeaderLookup leader = ctx.topics.LeaderPartition(tp, -1);
    if (leader.error != ErrorCode::kNone) continue;
    const storage::TxnVerification v =
        leader.partition->log()->StartTxnVerification(producer_id, producer_epoch);
    checks[tp].guard = v.guard;
    if (!v.ongoing) ask.insert(tp);
  }
  return ask;
}

}  // namespace

TxnPartitionVerifier::TxnPartitionVerifier(BrokerContext& ctx, asio::any_io_executor executor)
    : ctx_(ctx), executor_(std::move(executor)) {}

TxnPartitionVerifier::~TxnPartitionVerifier() {
  std::lock_guard lock(mu_);
  for (auto& [node, client] : clients_) client->Close();
}

std::shared_ptr<net::Client> TxnPartitionVerifier::ClientFor(int32_t node, const std::string& host,
                                                             uint16_t port) {
  std::lock_guard lock(mu_);
  auto& client = clients_[node];
  if (!client || client->host() != host || client->port() != port) {
    if (client) client->Close();
    net::ClientOptions options;
    options.client_id = "strata-txn-verification";
    options.max_connections = 2;
    options.security = ctx_.inter_broker_security;
    client = std::make_shared<net::Client>(executor_, host, port, options);
  }
  return client;
}

asio::awaitable<std::map<TopicPartition, ErrorCode>> TxnPartitionVerifier::Ask(
    Mode mode, const std::string& id, int64_t producer_id, int16_t producer_epoch,
    const std::set<TopicPartition>& partitions) {
  const LiveBroker coordinator = TxnCoordinatorBroker(ctx_, id, InterBrokerListener(ctx_));
  if (coordinator.node_id < 0) co_return AllWith(partitions, ErrorCode::kCoordinatorNotAvailable);
  if (coordinator.node_id == ctx_.config.node_id() && ctx_.txn_coordinator != nullptr) {
    const ErrorCode served = TxnCoordinatorError(ctx_, id);
    if (served != ErrorCode::kNone) co_return AllWith(partitions, served);
    if (mode == Mode::kVerify) {
      co_return ctx_.txn_coordinator->VerifyPartitions(id, producer_id, producer_epoch, partitions);
    }
    const coordinator::TxnReply reply = ctx_.txn_coordinator->AddPartitions(
        id, producer_id, producer_epoch, partitions, /*client_transaction_version=*/2);
    co_return AllWith(partitions, co_await SettleTxnReply(ctx_, reply));
  }
  std::shared_ptr<net::Client> client =
      ClientFor(coordinator.node_id, coordinator.host, static_cast<uint16_t>(coordinator.port));
  AddPartitionsToTxnRequest req =
      AskRequest(mode == Mode::kVerify, id, producer_id, producer_epoch, partitions);
  auto resp = co_await client->Send<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse>(
      req, kVerifyVersion);
  if (!resp.ok()) {
    log::Get("produce")->debug("verifying {}'s partitions with broker {}: {}", id,
                               coordinator.node_id, resp.error().message);
    co_return AllWith(partitions, ErrorCode::kCoordinatorNotAvailable);
  }
  if (resp->error_code != 0) {
    co_return AllWith(partitions, static_cast<ErrorCode>(resp->error_code));
  }
  std::map<TopicPartition, ErrorCode> out = AllWith(partitions, ErrorCode::kUnknownServerError);
  for (const auto& txn : resp->results_by_transaction) {
    for (const auto& t : txn.topic_results) {
      for (const auto& p : t.results_by_partition) {
        TopicPartition tp{t.name, p.partition_index};
        if (out.contains(tp)) out[tp] = static_cast<ErrorCode>(p.partition_error_code);
      }
    }
  }
  co_return out;
}

asio::awaitable<std::map<TopicPartition, TxnProduceCheck>> CheckTransactionalProduce(
    BrokerContext& ctx, const protocol::ProduceRequest& req, int16_t produce_version) {
  std::map<TopicPartition, TxnProduceCheck> checks;
  // Transaction version 2 always adds; the classic check can be turned off.
  if (!req.transactional_id || ctx.txn_verifier == nullptr ||
      (produce_version < 12 && !ctx.config.GetBool("transaction.partition.verification.enable"))) {
    co_return checks;
  }
  // One producer per request; its transactional partitions.
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  std::set<TopicPartition> partitions;
  for (const auto& topic : req.topics) {
    for (const auto& partition : topic.partitions) {
      if (partition.records.null) continue;
      auto header = protocol::ParseBatchHeader(partition.records.view);
      if (!header.ok() || !header->transactional() || header->control()) continue;
      producer_id = header->producer_id;
      producer_epoch = header->producer_epoch;
      partitions.insert({topic.name, partition.index});
    }
  }
  // Produce v12 is transaction version 2: the client added nothing.
  const auto mode = produce_version >= 12 ? TxnPartitionVerifier::Mode::kAdd
                                          : TxnPartitionVerifier::Mode::kVerify;
  // CONCURRENT_TRANSACTIONS: the producer's previous transaction is still
  // writing its markers, which a transaction version 2 producer does not wait
  // for. Asked again after add.partitions.to.txn.retry.backoff.ms, up to
  // add.partitions.to.txn.retry.backoff.max.ms, as Kafka's broker does, each
  // time under a new guard (the previous transaction's marker voids the old).
  const auto backoff =
      std::chrono::milliseconds(ctx.config.GetLong("add.partitions.to.txn.retry.backoff.ms"));
  const auto give_up =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(ctx.config.GetLong("add.partitions.to.txn.retry.backoff.max.ms"));
  for (;;) {
    const std::set<TopicPartition> ask =
        StartVerifications(ctx, partitions, producer_id, producer_epoch, checks);
    if (ask.empty()) co_return checks;
    const auto answers = co_await ctx.txn_verifier->Ask(mode, *req.transactional_id, producer_id,
                                                        producer_epoch, ask);
    const bool may_wait = std::chrono::steady_clock::now() + backoff <= give_up;
    partitions.clear();
    for (const auto& [tp, code] : answers) {
      if (may_wait && code == ErrorCode::kConcurrentTransactions) {
        partitions.insert(tp);
      } else {
        checks[tp].error = ForProducer(code, produce_version);
      }
    }
    if (partitions.empty()) co_return checks;
    asio::steady_timer timer(co_await asio::this_coro::executor, backoff);
    co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
}

}  // namespace strata::kafka
