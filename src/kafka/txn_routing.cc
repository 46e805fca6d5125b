#include "kafka/txn_routing.h"

#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>

#include "base/log.h"
#include "coordinator/txn_log.h"
#include "kafka/coordinator_topic.h"
#include "kafka/txn_marker_channel.h"

namespace strata::kafka {

using protocol::ErrorCode;

ErrorCode EnsureTransactionTopic(BrokerContext& ctx) {
  CoordinatorTopicSpec spec;
  spec.name = coordinator::kTransactionStateTopic;
  spec.partitions =
      static_cast<int32_t>(ctx.config.GetLong("transaction.state.log.num.partitions"));
  spec.replication_factor =
      static_cast<int16_t>(ctx.config.GetLong("transaction.state.log.replication.factor"));
  spec.replication_factor_key = "transaction.state.log.replication.factor";
  spec.min_insync_replicas =
      static_cast<int32_t>(ctx.config.GetLong("transaction.state.log.min.isr"));
  spec.configs = {{"segment.bytes", ctx.config.Get("transaction.state.log.segment.bytes")},
                  {"unclean.leader.election.enable", "false"}};
  return EnsureCoordinatorTopic(ctx, spec);
}

LiveBroker TxnCoordinatorBroker(const BrokerContext& ctx, const std::string& transactional_id,
                                std::string_view listener) {
  if (ctx.txn_coordinator == nullptr) return LiveBroker{};
  return CoordinatorTopicLeader(ctx, coordinator::kTransactionStateTopic,
                                ctx.txn_coordinator->PartitionFor(transactional_id), listener);
}

ErrorCode TxnCoordinatorError(const BrokerContext& ctx, const std::string& transactional_id) {
  if (ctx.txn_coordinator == nullptr) return ErrorCode::kCoordinatorNotAvailable;
  const int32_t p = ctx.txn_coordinator->PartitionFor(transactional_id);
  broker::LeaderLookup leader =
      ctx.topics.LeaderPartition({coordinator::kTransactionStateTopic, p}, -1);
  if (leader.error != ErrorCode::kNone) return ErrorCode::kNotCoordinator;
  // Led here: served once loaded. Until the coordinator has heard of the
  // leadership the client waits on this broker, as for a load in progress.
  const ErrorCode served = ctx.txn_coordinator->Serves(transactional_id);
  return served == ErrorCode::kNotCoordinator ? ErrorCode::kCoordinatorLoadInProgress : served;
}

asio::awaitable<ErrorCode> SettleTxnReply(BrokerContext& ctx, const coordinator::TxnReply& reply) {
  if (!reply.write) co_return reply.error;
  const coordinator::TxnWrite& write = *reply.write;
  const auto timeout = std::chrono::milliseconds(ctx.config.GetLong("request.timeout.ms"));
  const CommitOutcome outcome = co_await AwaitCoordinatorAppend(
      ctx, coordinator::kTransactionStateTopic, write.partition, write.appended.last_offset,
      write.appended.leader_epoch, timeout);
  const bool committed = outcome == CommitOutcome::kCommitted;
  if (outcome == CommitOutcome::kTimedOut) {
    log::Get("coordinator")
        ->warn("{}: the ISR of {}-{} did not confirm offset {} within {} ms",
               write.transactional_id, coordinator::kTransactionStateTopic, write.partition,
               write.appended.last_offset, timeout.count());
  }
  const ErrorCode finished = ctx.txn_coordinator->Finish(write, committed);
  if (outcome == CommitOutcome::kDeposed) co_return ErrorCode::kNotCoordinator;
  if (finished != ErrorCode::kNone) co_return finished;
  const coordinator::TxnStatus state = write.transit.state;
  if ((state == coordinator::TxnStatus::kPrepareCommit ||
       state == coordinator::TxnStatus::kPrepareAbort) &&
      ctx.txn_markers != nullptr) {
    ctx.txn_markers->Complete(write.transactional_id);  // the transaction ends now
  }
  co_return reply.error;
}

asio::awaitable<protocol::ErrorCode> AddPartitionsHoldingConcurrent(
    BrokerContext& ctx, const std::function<coordinator::TxnReply()>& add) {
  // The markers of a transaction take a few milliseconds: short steps, and a
  // bound well inside any client's request timeout.
  constexpr auto kConcurrentStep = std::chrono::milliseconds(2);
  constexpr auto kConcurrentHold = std::chrono::milliseconds(50);
  const auto give_up = std::chrono::steady_clock::now() + kConcurrentHold;
  for (;;) {
    const coordinator::TxnReply reply = add();
    if (reply.error != protocol::ErrorCode::kConcurrentTransactions || reply.write ||
        std::chrono::steady_clock::now() + kConcurrentStep > give_up) {
      co_return co_await SettleTxnReply(ctx, reply);
    }
    asio::steady_timer timer(co_await asio::this_coro::executor, kConcurrentStep);
    co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
}

}  // namespace strata::kafka
