#pragma once
// Which broker coordinates a transactional id, the leader of the id's
// __transaction_state partition (Kafka's rule), and how a request's write to
// that partition is seen through: committed first, applied to the
// coordinator's state second, answered last.
#include <asio.hpp>
#include <functional>
#include <string>

#include "coordinator/txn_coordinator.h"
#include "kafka/broker_context.h"
#include "kafka/cluster_state.h"
#include "protocol/error_code.h"

namespace strata::kafka {

// Creates __transaction_state when it does not exist yet, as Kafka does at
// the first FindCoordinator of a transactional id:
// transaction.state.log.num.partitions partitions,
// transaction.state.log.replication.factor replicas (at most one per active
// broker), min.insync.replicas transaction.state.log.min.isr (at most the
// replication factor), compacted, no unclean election. kNone, or
// COORDINATOR_NOT_AVAILABLE.
protocol::ErrorCode EnsureTransactionTopic(BrokerContext& ctx);

// The coordinator's broker, or node_id -1 while the partition has no leader.
LiveBroker TxnCoordinatorBroker(const BrokerContext& ctx, const std::string& transactional_id,
                                std::string_view listener);

// kNone when this broker coordinates the id; COORDINATOR_LOAD_IN_PROGRESS
// while it leads the id's partition but has not loaded it yet;
// NOT_COORDINATOR otherwise.
protocol::ErrorCode TxnCoordinatorError(const BrokerContext& ctx,
                                        const std::string& transactional_id);

// Sees `reply` through: without a write its error as is; with one, waits
// until the write is committed (request.timeout.ms at most), has the
// coordinator apply it (Finish) and answers the reply's error if it took
// effect, else NOT_COORDINATOR (the partition moved) or
// COORDINATOR_NOT_AVAILABLE (the ISR did not confirm it; retriable). A
// transaction it moved to PrepareCommit/PrepareAbort gets its markers
// written (ctx.txn_markers).
asio::awaitable<protocol::ErrorCode> SettleTxnReply(BrokerContext& ctx,
                                                    const coordinator::TxnReply& reply);

// Adding partitions to a transaction (`add`, called again as needed) while
// the id's previous transaction is still writing its markers is answered
// CONCURRENT_TRANSACTIONS, which clients retry after a backoff (librdkafka
// 20 ms) that would dominate a short transaction. It is asked again here
// every kConcurrentStep for up to kConcurrentHold first; the answer then
// settled as SettleTxnReply does.
asio::awaitable<protocol::ErrorCode> AddPartitionsHoldingConcurrent(
    BrokerContext& ctx, const std::function<coordinator::TxnReply()>& add);

}  // namespace strata::kafka
