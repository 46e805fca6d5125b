#pragma once
// KIP-890: before a partition leader lets a producer's transactional batch
// open a transaction in a partition, it asks the producer's transaction
// coordinator. With the classic protocol (Produce v11 and older) it asks
// whether the partition is in that producer's ongoing transaction
// (AddPartitionsToTxn, verify-only): a produce without AddPartitionsToTxn, or
// one arriving after its transaction ended, is refused instead of leaving a
// transaction that nothing will end (the hanging transactions Jepsen found in
// Kafka); Kafka's `transaction.partition.verification.enable`, on by
// default. With transaction version 2 (Produce v12, TxnOffsetCommit v5) the
// client sends no AddPartitionsToTxn: the leader adds the partition itself.
#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "base/topic_partition.h"
#include "kafka/broker_context.h"
#include "net/client.h"
#include "protocol/error_code.h"
#include "protocol/messages/produce.h"

namespace strata::kafka {

// Asks transaction coordinators (this broker's directly, the others with
// AddPartitionsToTxn v5 verify-only). Thread-safe.
class TxnPartitionVerifier {
 public:
  TxnPartitionVerifier(BrokerContext& ctx, asio::any_io_executor executor);
  ~TxnPartitionVerifier();

  // Verify: whether each partition is in the producer's ongoing
  // transaction; Add: adds them to it (transaction version 2).
  enum class Mode : uint8_t { kVerify, kAdd };
  // The coordinator's answer per partition: NONE when it is (now) in the
  // producer's ongoing transaction; the coordinator's error otherwise, or
  // COORDINATOR_NOT_AVAILABLE when it could not be asked.
  asio::awaitable<std::map<TopicPartition, protocol::ErrorCode>> Ask(
      Mode mode, const std::string& transactional_id, int64_t producer_id, int16_t producer_epoch,
      const std::set<TopicPartition>& partitions);

 private:
  std::shared_ptr<net::Client> ClientFor(int32_t node, const std::string& host, uint16_t port);

  BrokerContext& ctx_;
  asio::any_io_executor executor_;
  std::mutex mu_;  // clients_
  std::map<int32_t, std::shared_ptr<net::Client>> clients_;
};

// A transactional partition of a produce, checked: the guard its append
// carries (storage::Log::StartTxnVerification), or the error it is answered
// with instead.
struct TxnProduceCheck {
  uint64_t guard = 0;
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
};

// Checks every partition of `req` whose batch is transactional and led here
// (Produce v12: adds it). Errors are those a producer of `produce_version`
// understands: a partition not in the transaction is TRANSACTION_ABORTABLE
// (v11+) or INVALID_TXN_STATE, a fenced producer INVALID_PRODUCER_EPOCH, a
// coordinator that cannot answer (or is still ending the previous
// transaction) NOT_ENOUGH_REPLICAS, which every producer retries, as Kafka
// answers.
asio::awaitable<std::map<TopicPartition, TxnProduceCheck>> CheckTransactionalProduce(
    BrokerContext& ctx, const protocol::ProduceRequest& req, int16_t produce_version);

}  // namespace strata::kafka
