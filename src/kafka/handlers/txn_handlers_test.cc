// The transaction APIs' handlers against an in-process broker whose
// transaction coordinator keeps its state in a real __transaction_state
// topic: what a transactional client sends, decoded back from the bytes the
// handler answers with. (The markers that end a transaction go over the
// network: tests/integration/test_transactions.py.)
#include <gtest/gtest.h>

#include "coordinator/txn_coordinator.h"
#include "coordinator/txn_log.h"
#include "kafka/coordinator_topic.h"
#include "kafka/handlers/handlers.h"
#include "kafka/handlers/test_requests.h"
#include "kafka/in_process_broker.h"
#include "protocol/error_code.h"
#include "protocol/messages/add_offsets_to_txn.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/end_txn.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/init_producer_id.h"

namespace strata::kafka {
namespace {

using cluster::NodeId;
using coordinator::TxnStatus;
using protocol::ErrorCode;
using testing::DecodeResponse;
using testing::Encode;
using testing::RunAsync;

constexpr int32_t kStatePartitions = 2;

class TxnHandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_.MakeTopic("a", {{NodeId(1)}, {NodeId(1)}});
    broker_.MakeTopic(coordinator::kTransactionStateTopic, {{NodeId(1)}, {NodeId(1)}});
    ASSERT_TRUE(broker_.topics().Start().ok());
    ProducerIdAllocator* ids = &ctx().producer_ids;
    coordinator_ = std::make_unique<coordinator::TxnCoordinator>(
        coordinator::TxnCoordinatorConfig{.max_timeout_ms = 60000},
        MakeCoordinatorLog(broker_.topics(), coordinator::kTransactionStateTopic, kStatePartitions,
                           Clock::Real()),
        [ids] { return ids->Next(); }, Clock::Real());
    for (int32_t p = 0; p < kStatePartitions; ++p) ASSERT_TRUE(Load(p));
    ctx().txn_coordinator = coordinator_.get();
  }

  bool Load(int32_t p) {
    auto partition = broker_.topics().GetPartition({coordinator::kTransactionStateTopic, p});
    return partition && coordinator_->LoadPartition(p, partition->leader_epoch().value()).ok();
  }
  BrokerContext& ctx() { return broker_.context(); }

  protocol::InitProducerIdResponse Init(const std::string& id, int16_t version = 4,
                                        int32_t timeout_ms = 10000, int64_t pid = -1,
                                        int16_t epoch = -1) {
    protocol::InitProducerIdRequest req;
    req.transactional_id = id;
    req.transaction_timeout_ms = timeout_ms;
    req.producer_id = pid;
    req.producer_epoch = epoch;
    auto call = Encode(req, version);
    HandlerResult out = RunAsync(HandleInitProducerId(ctx(), call->request));
    return DecodeResponse<protocol::InitProducerIdResponse>(call->request, out);
  }
  // AddPartitionsToTxn v0-3: each partition's error code, as "topic-p" -> code.
  std::map<std::string, int16_t> Add(const std::string& id, int64_t pid, int16_t epoch,
                                     const std::vector<std::pair<std::string, int32_t>>& tps,
                                     int16_t version = 3) {
    protocol::AddPartitionsToTxnRequest req;
    req.v3_and_below_transactional_id = id;
    req.v3_and_below_producer_id = pid;
    req.v3_and_below_producer_epoch = epoch;
    for (const auto& [topic, p] : tps) {
      auto it = std::find_if(req.v3_and_below_topics.begin(), req.v3_and_below_topics.end(),
                             [&](const auto& t) { return t.name == topic; });
      if (it == req.v3_and_below_topics.end()) {
        req.v3_and_below_topics.push_back({topic, {}});
        it = std::prev(req.v3_and_below_topics.end());
      }
      it->partitions.push_back(p);
    }
    auto call = Encode(req, version);
    HandlerResult out = RunAsync(HandleAddPartitionsToTxn(ctx(), call->request));
    auto resp = DecodeResponse<protocol::AddPartitionsToTxnResponse>(call->request, out);
    std::map<std::string, int16_t> codes;
    for (const auto& t : resp.results_by_topic_v3_and_below) {
      for (const auto& p : t.results_by_partition)
        codes[t.name + "-" + std::to_string(p.partition_index)] = p.partition_error_code;
    }
    return codes;
  }
  protocol::EndTxnResponse End(const std::string& id, int64_t pid, int16_t epoch, bool commit,
                               int16_t version = 4) {
    protocol::EndTxnRequest req;
    req.transactional_id = id;
    req.producer_id = pid;
    req.producer_epoch = epoch;
    req.committed = commit;
    auto call = Encode(req, version);
    HandlerResult out = RunAsync(HandleEndTxn(ctx(), call->request));
    return DecodeResponse<protocol::EndTxnResponse>(call->request, out);
  }
  TxnStatus StateOf(const std::string& id) {
    auto d = coordinator_->Describe(id);
    EXPECT_TRUE(d.has_value()) << id;
    return d ? d->state : TxnStatus::kDead;
  }

  testing::InProcessBroker broker_;
  std::unique_ptr<coordinator::TxnCoordinator> coordinator_;
};

TEST_F(TxnHandlersTest, InitProducerIdBumpsTheEpochOfATransactionalId) {
  auto first = Init("tx-a");
  ASSERT_EQ(first.error_code, 0);
  EXPECT_GE(first.producer_id, 0);
  EXPECT_EQ(first.producer_epoch, 0);
  auto second = Init("tx-a");
  ASSERT_EQ(second.error_code, 0);
  EXPECT_EQ(second.producer_id, first.producer_id);
  EXPECT_EQ(second.producer_epoch, 1);
  // KIP-360: the instance holding epoch 1 resumes at 2; one holding an older
  // epoch is fenced.
  auto resumed = Init("tx-a", 4, 10000, first.producer_id, 1);
  ASSERT_EQ(resumed.error_code, 0);
  EXPECT_EQ(resumed.producer_epoch, 2);
  EXPECT_EQ(Init("tx-a", 4, 10000, first.producer_id, 0).error_code,
            Code(ErrorCode::kProducerFenced));
  // v3 clients do not know PRODUCER_FENCED.
  EXPECT_EQ(Init("tx-a", 3, 10000, first.producer_id, 0).error_code,
            Code(ErrorCode::kInvalidProducerEpoch));
  // The state is in __transaction_state: a reload finds the epoch.
  const int32_t p = coordinator_->PartitionFor("tx-a");
  coordinator_->UnloadPartition(p);
  ASSERT_TRUE(Load(p));
  EXPECT_EQ(Init("tx-a").producer_epoch, 3);
}

TEST_F(TxnHandlersTest, InitProducerIdRefusesBadArguments) {
  EXPECT_EQ(Init("").error_code, Code(ErrorCode::kInvalidRequest));
  EXPECT_EQ(Init("tx-b", 4, 10000, 5, -1).error_code, Code(ErrorCode::kInvalidRequest));
  EXPECT_EQ(Init("tx-b", 4, 60001).error_code, Code(ErrorCode::kInvalidTransactionTimeout));
  EXPECT_EQ(Init("tx-b", 4, 0).error_code, Code(ErrorCode::kInvalidTransactionTimeout));
}

TEST_F(TxnHandlersTest, AnIdWhosePartitionIsLedButNotLoadedWaits) {
  const int32_t p = coordinator_->PartitionFor("tx-c");
  coordinator_->UnloadPartition(p);
  EXPECT_EQ(Init("tx-c").error_code, Code(ErrorCode::kCoordinatorLoadInProgress));
  ASSERT_TRUE(Load(p));
  EXPECT_EQ(Init("tx-c").error_code, 0);
}

TEST_F(TxnHandlersTest, AddPartitionsThenEndTxnPreparesTheCommit) {
  auto init = Init("tx-d");
  ASSERT_EQ(init.error_code, 0);
  auto added = Add("tx-d", init.producer_id, init.producer_epoch, {{"a", 0}, {"a", 1}});
  EXPECT_EQ(added, (std::map<std::string, int16_t>{{"a-0", 0}, {"a-1", 0}}));
  EXPECT_EQ(StateOf("tx-d"), TxnStatus::kOngoing);
  EXPECT_EQ(coordinator_->Describe("tx-d")->partitions.size(), 2u);
  auto end = End("tx-d", init.producer_id, init.producer_epoch, /*commit=*/true);
  EXPECT_EQ(end.error_code, 0);
  // Held in PrepareCommit until the markers are written (no marker channel
  // here); the producer's next transaction waits.
  EXPECT_EQ(StateOf("tx-d"), TxnStatus::kPrepareCommit);
  auto markers = coordinator_->Markers("tx-d");
  ASSERT_TRUE(markers.has_value());
  EXPECT_EQ(markers->partitions.size(), 2u);
  EXPECT_EQ(Add("tx-d", init.producer_id, init.producer_epoch, {{"a", 0}})["a-0"],
            Code(ErrorCode::kConcurrentTransactions));
}

TEST_F(TxnHandlersTest, AddPartitionsWithAnUnknownTopicAddsNothing) {
  auto init = Init("tx-e");
  ASSERT_EQ(init.error_code, 0);
  auto added =
      Add("tx-e", init.producer_id, init.producer_epoch, {{"a", 0}, {"nope", 0}, {"a", 7}});
  EXPECT_EQ(added,
            (std::map<std::string, int16_t>{{"a-0", Code(ErrorCode::kOperationNotAttempted)},
                                            {"nope-0", Code(ErrorCode::kUnknownTopicOrPartition)},
                                            {"a-7", Code(ErrorCode::kUnknownTopicOrPartition)}}));
  EXPECT_EQ(StateOf("tx-e"), TxnStatus::kEmpty);
}

TEST_F(TxnHandlersTest, AFencedProducerCannotAddOrEnd) {
  auto old_instance = Init("tx-f");
  ASSERT_EQ(old_instance.error_code, 0);
  ASSERT_EQ(Init("tx-f").error_code, 0);  // a new instance: epoch 1
  const int64_t pid = old_instance.producer_id;
  EXPECT_EQ(Add("tx-f", pid, 0, {{"a", 0}})["a-0"], Code(ErrorCode::kProducerFenced));
  EXPECT_EQ(Add("tx-f", pid, 0, {{"a", 0}}, /*version=*/1)["a-0"],
            Code(ErrorCode::kInvalidProducerEpoch));
  EXPECT_EQ(End("tx-f", pid, 0, true).error_code, Code(ErrorCode::kProducerFenced));
  EXPECT_EQ(End("tx-f", pid, 0, true, /*version=*/1).error_code,
            Code(ErrorCode::kInvalidProducerEpoch));
  EXPECT_EQ(Add("tx-f", pid + 1000, 1, {{"a", 0}})["a-0"],
            Code(ErrorCode::kInvalidProducerIdMapping));
  EXPECT_EQ(StateOf("tx-f"), TxnStatus::kEmpty);
}

TEST_F(TxnHandlersTest, VerifyOnlyAnswersWhetherAPartitionIsInTheTransaction) {
  auto init = Init("tx-g");
  ASSERT_EQ(init.error_code, 0);
  ASSERT_EQ(Add("tx-g", init.producer_id, init.producer_epoch, {{"a", 0}})["a-0"], 0);
  protocol::AddPartitionsToTxnRequest req;
  auto& txn = req.transactions.emplace_back();
  txn.transactional_id = "tx-g";
  txn.producer_id = init.producer_id;
  txn.producer_epoch = init.producer_epoch;
  txn.verify_only = true;
  txn.topics.push_back({"a", {0, 1}});
  auto call = Encode(req, 5);
  HandlerResult out = RunAsync(HandleAddPartitionsToTxn(ctx(), call->request));
  auto resp = DecodeResponse<protocol::AddPartitionsToTxnResponse>(call->request, out);
  ASSERT_EQ(resp.results_by_transaction.size(), 1u);
  const auto& results = resp.results_by_transaction[0].topic_results.at(0).results_by_partition;
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].partition_error_code, 0);
  EXPECT_EQ(results[1].partition_error_code, Code(ErrorCode::kTransactionAbortable));
  EXPECT_EQ(coordinator_->Describe("tx-g")->partitions.size(), 1u);  // nothing added
}

TEST_F(TxnHandlersTest, FindCoordinatorOfATransactionalIdIsItsPartitionLeader) {
  protocol::FindCoordinatorRequest req;
  req.key_type = 1;
  req.coordinator_keys = {"tx-h"};
  auto call = Encode(req, 4);
  HandlerResult out = HandleFindCoordinator(ctx(), call->request);
  auto resp = DecodeResponse<protocol::FindCoordinatorResponse>(call->request, out);
  ASSERT_EQ(resp.coordinators.size(), 1u);
  EXPECT_EQ(resp.coordinators[0].error_code, 0);
  EXPECT_EQ(resp.coordinators[0].node_id, 1);
}

}  // namespace
}  // namespace strata::kafka
