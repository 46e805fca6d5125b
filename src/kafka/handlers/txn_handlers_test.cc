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
#include "kafka/txn_verification.h"
#include "protocol/batch_builder.h"
#include "protocol/error_code.h"
#include "protocol/messages/add_offsets_to_txn.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/end_txn.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/list_transactions.h"
#include "protocol/messages/produce.h"

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
    verifier_ = std::make_unique<TxnPartitionVerifier>(ctx(), verifier_io_.get_executor());
    ctx().txn_verifier = verifier_.get();
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
  protocol::DescribeTransactionsResponse Describe(const std::vector<std::string>& ids) {
    protocol::DescribeTransactionsRequest req;
    req.transactional_ids = ids;
    auto call = Encode(req, 0);
    HandlerResult out = HandleDescribeTransactions(ctx(), call->request);
    return DecodeResponse<protocol::DescribeTransactionsResponse>(call->request, out);
  }
  protocol::ListTransactionsResponse List(protocol::ListTransactionsRequest req,
                                          int16_t version = 2) {
    auto call = Encode(req, version);
    HandlerResult out = HandleListTransactions(ctx(), call->request);
    return DecodeResponse<protocol::ListTransactionsResponse>(call->request, out);
  }
  // The "id state" rows of a ListTransactions answer (sorted by id).
  static std::vector<std::string> Rows(const protocol::ListTransactionsResponse& resp) {
    std::vector<std::string> rows;
    for (const auto& t : resp.transaction_states)
      rows.push_back(t.transactional_id + " " + t.transaction_state);
    return rows;
  }
  // `prefix` with the first suffix that puts it in __transaction_state `p`.
  std::string IdIn(int32_t p, const std::string& prefix) {
    for (int i = 0;; ++i) {
      std::string id = prefix + "-" + std::to_string(i);
      if (coordinator_->PartitionFor(id) == p) return id;
    }
  }
  TxnStatus StateOf(const std::string& id) {
    auto d = coordinator_->Describe(id);
    EXPECT_TRUE(d.has_value()) << id;
    return d ? d->state : TxnStatus::kDead;
  }

  // A transactional produce of one record to a-`partition` (acks=1): the
  // partition's answer.
  protocol::ProduceResponse::Partition TxnProduce(const std::string& id, int64_t pid, int16_t epoch,
                                                  int32_t seq, int32_t partition, int16_t version) {
    protocol::BatchBuilder builder;
    builder.set_producer(pid, epoch, seq).set_transactional(true);
    builder.Add("k", "v", 1000);
    protocol::ProduceRequest req;
    req.transactional_id = id;
    req.acks = 1;
    auto& t = req.topics.emplace_back();
    t.name = "a";
    auto& p = t.partitions.emplace_back();
    p.index = partition;
    p.records.Own(builder.Build());
    auto call = Encode(req, version);
    HandlerResult out = RunAsync(HandleProduce(ctx(), call->request));
    auto resp = DecodeResponse<protocol::ProduceResponse>(call->request, out);
    if (resp.topics.empty() || resp.topics[0].partitions.empty()) return {};
    return resp.topics[0].partitions[0];
  }
  int64_t EndOffset(int32_t partition) {
    return broker_.topics().GetPartition({"a", partition})->log()->log_end_offset().value();
  }

  testing::InProcessBroker broker_;
  std::unique_ptr<coordinator::TxnCoordinator> coordinator_;
  asio::io_context verifier_io_;  // no peer is asked: the coordinator is here
  std::unique_ptr<TxnPartitionVerifier> verifier_;
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

// KIP-890: a transactional produce to a partition the producer did not add
// to its transaction is refused, nothing written; once added it goes in.
TEST_F(TxnHandlersTest, ATransactionalProduceNeedsThePartitionInTheTransaction) {
  auto init = Init("tx-v");
  ASSERT_EQ(init.error_code, 0);
  const int64_t pid = init.producer_id;
  const int16_t epoch = init.producer_epoch;
  EXPECT_EQ(TxnProduce("tx-v", pid, epoch, 0, 0, 9).error_code, Code(ErrorCode::kInvalidTxnState));
  EXPECT_EQ(TxnProduce("tx-v", pid, epoch, 0, 0, 11).error_code,
            Code(ErrorCode::kTransactionAbortable));
  EXPECT_EQ(EndOffset(0), 0);
  ASSERT_EQ(Add("tx-v", pid, epoch, {{"a", 0}})["a-0"], 0);
  EXPECT_EQ(TxnProduce("tx-v", pid, epoch, 0, 0, 9).error_code, 0);
  EXPECT_EQ(TxnProduce("tx-v", pid, epoch, 1, 0, 9).error_code, 0);  // the transaction is open
  EXPECT_EQ(EndOffset(0), 2);
  // Another partition of the same transaction is still not in it; an epoch
  // the coordinator does not hold is fenced.
  EXPECT_EQ(TxnProduce("tx-v", pid, epoch, 0, 1, 11).error_code,
            Code(ErrorCode::kTransactionAbortable));
  EXPECT_EQ(TxnProduce("tx-v", pid, static_cast<int16_t>(epoch + 1), 0, 1, 11).error_code,
            Code(ErrorCode::kInvalidProducerEpoch));
  EXPECT_EQ(EndOffset(1), 0);
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

TEST_F(TxnHandlersTest, DescribeTransactionsAnswersEachIdOnItsOwn) {
  const std::string ongoing_id = IdIn(0, "tx-i"), empty_id = IdIn(0, "tx-j");
  const std::string unknown_id = IdIn(0, "tx-none"), loading_id = IdIn(1, "tx-k");
  auto init = Init(ongoing_id, 4, 20000);
  ASSERT_EQ(init.error_code, 0);
  ASSERT_EQ(Add(ongoing_id, init.producer_id, init.producer_epoch, {{"a", 1}, {"a", 0}})["a-0"], 0);
  ASSERT_EQ(Init(empty_id).error_code, 0);
  coordinator_->UnloadPartition(1);

  auto resp = Describe({ongoing_id, empty_id, loading_id, "", unknown_id});
  ASSERT_EQ(resp.transaction_states.size(), 5u);
  const auto& ongoing = resp.transaction_states[0];
  EXPECT_EQ(ongoing.transactional_id, ongoing_id);
  EXPECT_EQ(ongoing.error_code, 0);
  EXPECT_EQ(ongoing.transaction_state, "Ongoing");
  EXPECT_EQ(ongoing.transaction_timeout_ms, 20000);
  EXPECT_GT(ongoing.transaction_start_time_ms, 0);
  EXPECT_EQ(ongoing.producer_id, init.producer_id);
  EXPECT_EQ(ongoing.producer_epoch, init.producer_epoch);
  ASSERT_EQ(ongoing.topics.size(), 1u);
  EXPECT_EQ(ongoing.topics[0].topic, "a");
  EXPECT_EQ(ongoing.topics[0].partitions, (std::vector<int32_t>{0, 1}));
  const auto& empty = resp.transaction_states[1];
  EXPECT_EQ(empty.error_code, 0);
  EXPECT_EQ(empty.transaction_state, "Empty");
  EXPECT_EQ(empty.transaction_start_time_ms, -1);
  EXPECT_TRUE(empty.topics.empty());
  // Led here, not loaded: the client waits.
  EXPECT_EQ(resp.transaction_states[2].error_code, Code(ErrorCode::kCoordinatorLoadInProgress));
  EXPECT_EQ(resp.transaction_states[3].error_code, Code(ErrorCode::kInvalidRequest));
  EXPECT_EQ(resp.transaction_states[4].transactional_id, unknown_id);
  EXPECT_EQ(resp.transaction_states[4].error_code, Code(ErrorCode::kTransactionalIdNotFound));
  ASSERT_TRUE(Load(1));
  EXPECT_EQ(Describe({loading_id}).transaction_states.at(0).error_code,
            Code(ErrorCode::kTransactionalIdNotFound));
  ctx().txn_coordinator = nullptr;
  EXPECT_EQ(Describe({ongoing_id}).transaction_states.at(0).error_code,
            Code(ErrorCode::kCoordinatorNotAvailable));
}

TEST_F(TxnHandlersTest, ListTransactionsFiltersAsKafkaDoes) {
  auto ongoing = Init("tx-l");
  ASSERT_EQ(ongoing.error_code, 0);
  ASSERT_EQ(Add("tx-l", ongoing.producer_id, ongoing.producer_epoch, {{"a", 0}})["a-0"], 0);
  auto committing = Init("tx-m");
  ASSERT_EQ(committing.error_code, 0);
  ASSERT_EQ(Add("tx-m", committing.producer_id, committing.producer_epoch, {{"a", 1}})["a-1"], 0);
  ASSERT_EQ(End("tx-m", committing.producer_id, committing.producer_epoch, true).error_code, 0);
  auto empty = Init("other-n");
  ASSERT_EQ(empty.error_code, 0);

  auto all = List({});
  EXPECT_EQ(all.error_code, 0);
  EXPECT_EQ(Rows(all),
            (std::vector<std::string>{"other-n Empty", "tx-l Ongoing", "tx-m PrepareCommit"}));
  EXPECT_EQ(all.transaction_states[1].producer_id, ongoing.producer_id);

  auto by_state = List({.state_filters = {"Ongoing", "PrepareCommit", "Bogus", "Bogus"}});
  EXPECT_EQ(Rows(by_state), (std::vector<std::string>{"tx-l Ongoing", "tx-m PrepareCommit"}));
  EXPECT_EQ(by_state.unknown_state_filters, std::vector<std::string>{"Bogus"});
  // Only unknown names: nothing passes.
  EXPECT_TRUE(List({.state_filters = {"ongoing"}}).transaction_states.empty());
  EXPECT_EQ(Rows(List({.producer_id_filters = {empty.producer_id}})),
            std::vector<std::string>{"other-n Empty"});
  // v2's pattern must match the whole id; v0-1 cannot carry one.
  EXPECT_EQ(Rows(List({.transactional_id_pattern = "tx-.*"})),
            (std::vector<std::string>{"tx-l Ongoing", "tx-m PrepareCommit"}));
  EXPECT_TRUE(List({.transactional_id_pattern = "tx-"}).transaction_states.empty());
  EXPECT_EQ(List({.transactional_id_pattern = ""}).transaction_states.size(), 3u);
  EXPECT_EQ(Rows(List({.transactional_id_pattern = "tx-[lz]"})),
            std::vector<std::string>{"tx-l Ongoing"});
  EXPECT_EQ(List({.transactional_id_pattern = "nothing"}, 1).transaction_states.size(), 3u);
  EXPECT_EQ(List({.transactional_id_pattern = "(unclosed"}).error_code,
            Code(ErrorCode::kInvalidRegularExpression));
  EXPECT_EQ(List({.transactional_id_pattern = "(a)\\1"}).error_code,
            Code(ErrorCode::kInvalidRegularExpression));  // RE2 has no back-references
  // v1's running-time filter: no transaction has run for an hour; an id
  // without one (start -1) passes, as in Kafka.
  auto long_running = List({.duration_filter = 3'600'000}, 1);
  EXPECT_EQ(long_running.error_code, 0);
  EXPECT_EQ(Rows(long_running), std::vector<std::string>{"other-n Empty"});
}

TEST_F(TxnHandlersTest, ListTransactionsListsOnlyLoadedPartitions) {
  const std::string id = IdIn(1, "tx-o");
  ASSERT_EQ(Init(id).error_code, 0);
  EXPECT_EQ(Rows(List({})), std::vector<std::string>{id + " Empty"});
  // (A partition still loading makes it COORDINATOR_LOAD_IN_PROGRESS: the
  // coordinator's own test.)
  coordinator_->UnloadPartition(1);
  auto after = List({});
  EXPECT_EQ(after.error_code, 0);
  EXPECT_TRUE(after.transaction_states.empty());
  ctx().txn_coordinator = nullptr;
  EXPECT_EQ(List({}).error_code, Code(ErrorCode::kCoordinatorNotAvailable));
}

}  // namespace
}  // namespace strata::kafka
