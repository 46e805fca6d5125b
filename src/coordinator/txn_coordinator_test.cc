// TxnCoordinator over a real log: requests become writes that take effect
// only when finished as committed; a commit's markers, then its end;
// residency, a reload finding a transaction mid-commit, fencing, the
// expiration of idle ids and the figures its metrics show.
#include "coordinator/txn_coordinator.h"

#include <gtest/gtest.h>

#include "coordinator/txn_log.h"
#include "storage/test_util.h"

namespace strata::coordinator {
namespace {

using protocol::ErrorCode;

constexpr int32_t kTimeout = 60000;
const TopicPartition kA{"a", 0};
const TopicPartition kB{"b", 3};

class TxnCoordinatorTest : public storage::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto log = storage::Log::Open(root_ / "__transaction_state-0", storage::LogConfig{}, &clock_);
    ASSERT_TRUE(log.ok()) << log.error().message;
    log_ = std::shared_ptr<storage::Log>(std::move(*log));
    coordinator_ = MakeCoordinator();
    ASSERT_TRUE(coordinator_->LoadPartition(0, 4).ok());
  }
  void TearDown() override {
    (void)log_->Close();
    TempDirTest::TearDown();
  }
  // One partition, so every id lands in it.
  std::unique_ptr<TxnCoordinator> MakeCoordinator() {
    auto clog = std::make_unique<CoordinatorLog>(
        kTransactionStateTopic, 1,
        [this](int32_t) {
          if (on_log_read_) on_log_read_();
          return log_;
        },
        [this](int32_t, MutableByteView batch,
               const std::vector<storage::BatchInfo>& infos) -> Result<CoordinatorLog::Appended> {
          STRATA_ASSIGN_OR_RETURN(auto appended, log_->Append(batch, infos, LeaderEpoch(4)));
          return CoordinatorLog::Appended{appended.last_offset, 4};
        },
        &clock_);
    return std::make_unique<TxnCoordinator>(
        TxnCoordinatorConfig{}, std::move(clog),
        [this]() -> Result<int64_t> { return next_pid_++; }, &clock_);
  }
  // The reply's write finished as committed; the answer it then gives.
  ErrorCode Commit(const TxnReply& reply) {
    EXPECT_TRUE(reply.write.has_value()) << protocol::ErrorCodeName(Code(reply.error));
    if (!reply.write) return reply.error;
    ErrorCode finished = coordinator_->Finish(*reply.write, true);
    return finished == ErrorCode::kNone ? reply.error : finished;
  }
  TxnStatus State(const std::string& id) { return coordinator_->Describe(id)->state; }
  // The ids List answers `filter` with (failing the test unless NONE).
  std::vector<std::string> Listed(const TxnListFilter& filter) {
    TxnList list = coordinator_->List(filter);
    EXPECT_EQ(list.error, ErrorCode::kNone);
    std::vector<std::string> ids;
    for (const TxnListing& t : list.transactions) ids.push_back(t.transactional_id);
    return ids;
  }

  ManualClock clock_{1'700'000'000'000};
  std::shared_ptr<storage::Log> log_;
  int64_t next_pid_ = 5000;
  std::unique_ptr<TxnCoordinator> coordinator_;

  // `tp`'s marker for the transaction `id` is ending now is written.
  bool Written(const std::string& id, const TopicPartition& tp) {
    auto markers = coordinator_->Markers(id);
    auto epoch = coordinator_->CoordinatorEpoch(coordinator_->PartitionFor(id));
    EXPECT_TRUE(markers && epoch) << id;
    return markers && epoch && coordinator_->MarkerWritten(id, tp, *markers, *epoch);
  }
  std::function<void()> on_log_read_;  // runs whenever the coordinator reads its log
};

TEST_F(TxnCoordinatorTest, ATransactionCommitsThroughItsMarkersAndSurvivesAReload) {
  TxnReply init = coordinator_->InitProducerId("t1", kTimeout, std::nullopt);
  EXPECT_EQ(init.producer_id, 5000);
  EXPECT_EQ(init.producer_epoch, 0);
  EXPECT_EQ(State("t1"), TxnStatus::kEmpty);
  EXPECT_EQ(coordinator_->Describe("t1")->producer_epoch, -1);  // not until committed
  ASSERT_EQ(Commit(init), ErrorCode::kNone);
  EXPECT_EQ(coordinator_->Describe("t1")->producer_epoch, 0);

  ASSERT_EQ(Commit(coordinator_->AddPartitions("t1", 5000, 0, {kA, kB}, 0)), ErrorCode::kNone);
  EXPECT_EQ(State("t1"), TxnStatus::kOngoing);
  // Adding what is there already writes nothing.
  TxnReply again = coordinator_->AddPartitions("t1", 5000, 0, {kA}, 0);
  EXPECT_FALSE(again.write);
  EXPECT_EQ(again.error, ErrorCode::kNone);

  ASSERT_EQ(Commit(coordinator_->EndTxn("t1", 5000, 0, TxnResult::kCommit, 0)), ErrorCode::kNone);
  EXPECT_EQ(State("t1"), TxnStatus::kPrepareCommit);
  auto markers = coordinator_->Markers("t1");
  ASSERT_TRUE(markers);
  EXPECT_EQ(markers->result, TxnResult::kCommit);
  EXPECT_EQ(markers->producer_epoch, 0);
  EXPECT_EQ(markers->partitions, (std::set<TopicPartition>{kA, kB}));
  // Requests wait while it completes.
  EXPECT_EQ(coordinator_->InitProducerId("t1", kTimeout, std::nullopt).error,
            ErrorCode::kConcurrentTransactions);
  EXPECT_FALSE(coordinator_->CompleteTransaction("t1"));  // markers outstanding
  // An answer for another transaction of the id, or from an older
  // coordinator epoch, strikes nothing.
  TxnMarkers other = *markers;
  other.producer_epoch = static_cast<int16_t>(other.producer_epoch + 1);
  const int32_t epoch = *coordinator_->CoordinatorEpoch(coordinator_->PartitionFor("t1"));
  EXPECT_FALSE(coordinator_->MarkerWritten("t1", kA, other, epoch));
  EXPECT_FALSE(coordinator_->MarkerWritten("t1", kA, *markers, epoch - 1));
  EXPECT_EQ(coordinator_->Markers("t1")->partitions.size(), 2u);
  EXPECT_FALSE(Written("t1", kA));
  EXPECT_TRUE(Written("t1", kB));
  auto end = coordinator_->CompleteTransaction("t1");
  ASSERT_TRUE(end);
  ASSERT_EQ(coordinator_->Finish(*end, true), ErrorCode::kNone);
  EXPECT_EQ(State("t1"), TxnStatus::kCompleteCommit);

  auto reloaded = MakeCoordinator();
  auto committing = reloaded->LoadPartition(0, 5);
  ASSERT_TRUE(committing.ok());
  EXPECT_TRUE(committing->empty());
  EXPECT_EQ(reloaded->Describe("t1")->state, TxnStatus::kCompleteCommit);
  EXPECT_EQ(reloaded->Describe("t1")->producer_id, 5000);
}

// A coordinator that took over mid-commit writes the markers again.
TEST_F(TxnCoordinatorTest, AReloadFindsACommitInProgressAndFinishesIt) {
  ASSERT_EQ(Commit(coordinator_->InitProducerId("t1", kTimeout, std::nullopt)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->AddPartitions("t1", 5000, 0, {kA}, 0)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->EndTxn("t1", 5000, 0, TxnResult::kAbort, 0)), ErrorCode::kNone);

  coordinator_ = MakeCoordinator();
  auto committing = coordinator_->LoadPartition(0, 5);
  ASSERT_TRUE(committing.ok());
  EXPECT_EQ(*committing, std::vector<std::string>{"t1"});
  auto markers = coordinator_->Markers("t1");
  ASSERT_TRUE(markers);
  EXPECT_EQ(markers->result, TxnResult::kAbort);
  EXPECT_EQ(markers->partitions, std::set<TopicPartition>{kA});
  EXPECT_EQ(coordinator_->CoordinatorEpoch(0), 5);
  ASSERT_TRUE(Written("t1", kA));
  auto end = coordinator_->CompleteTransaction("t1");
  ASSERT_TRUE(end);
  EXPECT_EQ(end->coordinator_epoch, 5);
  ASSERT_EQ(coordinator_->Finish(*end, true), ErrorCode::kNone);
  EXPECT_EQ(State("t1"), TxnStatus::kCompleteAbort);
}

// A new instance of the producer fences the old one: its open transaction is
// aborted under a bumped epoch, and the new instance is told to retry.
TEST_F(TxnCoordinatorTest, InitProducerIdFencesAnOpenTransaction) {
  ASSERT_EQ(Commit(coordinator_->InitProducerId("t1", kTimeout, std::nullopt)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->AddPartitions("t1", 5000, 0, {kA}, 0)), ErrorCode::kNone);
  TxnReply fence = coordinator_->InitProducerId("t1", kTimeout, std::nullopt);
  ASSERT_TRUE(fence.write);
  EXPECT_EQ(fence.write->transit.state, TxnStatus::kPrepareAbort);
  EXPECT_EQ(Commit(fence), ErrorCode::kConcurrentTransactions);
  auto markers = coordinator_->Markers("t1");
  ASSERT_TRUE(markers);
  EXPECT_EQ(markers->producer_epoch, 1);  // the old instance's writes are fenced
  // The old instance can no longer end it (its epoch is checked first).
  EXPECT_EQ(coordinator_->EndTxn("t1", 5000, 0, TxnResult::kCommit, 0).error,
            ErrorCode::kProducerFenced);
  ASSERT_TRUE(Written("t1", kA));
  ASSERT_EQ(coordinator_->Finish(*coordinator_->CompleteTransaction("t1"), true), ErrorCode::kNone);
  TxnReply retry = coordinator_->InitProducerId("t1", kTimeout, std::nullopt);
  ASSERT_EQ(Commit(retry), ErrorCode::kNone);
  EXPECT_EQ(retry.producer_epoch, 2);
  EXPECT_EQ(coordinator_->EndTxn("t1", 5000, 1, TxnResult::kCommit, 0).error,
            ErrorCode::kProducerFenced);
}

TEST_F(TxnCoordinatorTest, AFailedWriteChangesNothingAndAMovedPartitionAnswersNotCoordinator) {
  TxnReply init = coordinator_->InitProducerId("t1", kTimeout, std::nullopt);
  ASSERT_TRUE(init.write);
  EXPECT_EQ(coordinator_->Finish(*init.write, false), ErrorCode::kCoordinatorNotAvailable);
  EXPECT_EQ(coordinator_->Describe("t1")->producer_epoch, -1);
  TxnReply retried = coordinator_->InitProducerId("t1", kTimeout, std::nullopt);
  ASSERT_TRUE(retried.write);  // not CONCURRENT_TRANSACTIONS: nothing is pending

  coordinator_->UnloadPartition(0);
  EXPECT_EQ(coordinator_->Finish(*retried.write, true), ErrorCode::kNotCoordinator);
  EXPECT_EQ(coordinator_->Serves("t1"), ErrorCode::kNotCoordinator);
  EXPECT_EQ(coordinator_->InitProducerId("t1", kTimeout, std::nullopt).error,
            ErrorCode::kNotCoordinator);
  EXPECT_EQ(coordinator_->InitProducerId("t1", 0, std::nullopt).error,
            ErrorCode::kInvalidTransactionTimeout);
  EXPECT_EQ(coordinator_->InitProducerId("t1", 900001, std::nullopt).error,
            ErrorCode::kInvalidTransactionTimeout);
  EXPECT_EQ(coordinator_->AddPartitions("nobody", 1, 0, {kA}, 0).error, ErrorCode::kNotCoordinator);
  ASSERT_TRUE(coordinator_->LoadPartition(0, 6).ok());
  EXPECT_EQ(coordinator_->AddPartitions("nobody", 1, 0, {kA}, 0).error,
            ErrorCode::kInvalidProducerIdMapping);
}

TEST_F(TxnCoordinatorTest, VerifyOnlyAnswersPerPartitionWithoutWriting) {
  ASSERT_EQ(Commit(coordinator_->InitProducerId("t1", kTimeout, std::nullopt)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->AddPartitions("t1", 5000, 0, {kA}, 0)), ErrorCode::kNone);
  const Offset end = log_->log_end_offset();
  auto verified = coordinator_->VerifyPartitions("t1", 5000, 0, {kA, kB});
  EXPECT_EQ(verified, (std::map<TopicPartition, ErrorCode>{
                          {kA, ErrorCode::kNone}, {kB, ErrorCode::kTransactionAbortable}}));
  EXPECT_EQ(coordinator_->VerifyPartitions("t1", 5000, 7, {kA})[kA], ErrorCode::kProducerFenced);
  EXPECT_EQ(log_->log_end_offset(), end);
}

// ListTransactions' filters, each on its own and together, as Kafka's
// listTransactionStates applies them.
TEST_F(TxnCoordinatorTest, ListFiltersByStateProducerIdRunningTimeAndId) {
  ASSERT_EQ(Commit(coordinator_->InitProducerId("ongoing", kTimeout, std::nullopt)),
            ErrorCode::kNone);  // producer 5000
  ASSERT_EQ(Commit(coordinator_->AddPartitions("ongoing", 5000, 0, {kA}, 0)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->InitProducerId("empty", kTimeout, std::nullopt)),
            ErrorCode::kNone);  // producer 5001
  ASSERT_EQ(Commit(coordinator_->InitProducerId("aborting", kTimeout, std::nullopt)),
            ErrorCode::kNone);  // producer 5002
  clock_.Advance(400);
  ASSERT_EQ(Commit(coordinator_->AddPartitions("aborting", 5002, 0, {kB}, 0)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->EndTxn("aborting", 5002, 0, TxnResult::kAbort, 0)),
            ErrorCode::kNone);
  clock_.Advance(600);

  TxnList all = coordinator_->List({});
  EXPECT_EQ(all.error, ErrorCode::kNone);
  EXPECT_EQ(all.transactions, (std::vector<TxnListing>{{"aborting", 5002, TxnStatus::kPrepareAbort},
                                                       {"empty", 5001, TxnStatus::kEmpty},
                                                       {"ongoing", 5000, TxnStatus::kOngoing}}));
  EXPECT_EQ(Listed({.states = std::set{TxnStatus::kOngoing, TxnStatus::kEmpty}}),
            (std::vector<std::string>{"empty", "ongoing"}));
  // Only unknown state names asked for: a state filter that nothing passes.
  EXPECT_TRUE(Listed({.states = std::set<TxnStatus>{}}).empty());
  EXPECT_EQ(Listed({.producer_ids = {5001, 77}}), std::vector<std::string>{"empty"});
  // Started 1000 and 600 ms ago; an id without a transaction (start -1)
  // passes any running-time filter, as in Kafka.
  EXPECT_EQ(Listed({.min_duration_ms = 800}), (std::vector<std::string>{"empty", "ongoing"}));
  EXPECT_EQ(Listed({.min_duration_ms = 599}),
            (std::vector<std::string>{"aborting", "empty", "ongoing"}));
  EXPECT_EQ(Listed({.min_duration_ms = 1000}), std::vector<std::string>{"empty"});
  EXPECT_EQ(Listed({.id_matches = [](const std::string& id) { return id.starts_with("a"); }}),
            std::vector<std::string>{"aborting"});
  EXPECT_TRUE(Listed({.states = std::set{TxnStatus::kOngoing}, .producer_ids = {5001}}).empty());
}

TEST_F(TxnCoordinatorTest, ListIsLoadInProgressWhileAPartitionLoadsAndEmptyOnceItLeaves) {
  ASSERT_EQ(Commit(coordinator_->InitProducerId("t1", kTimeout, std::nullopt)), ErrorCode::kNone);
  coordinator_->UnloadPartition(0);
  EXPECT_TRUE(Listed({}).empty());
  std::optional<TxnList> while_loading;
  on_log_read_ = [&] {
    if (!while_loading) while_loading = coordinator_->List({});
  };
  ASSERT_TRUE(coordinator_->LoadPartition(0, 5).ok());
  on_log_read_ = nullptr;
  ASSERT_TRUE(while_loading.has_value());
  EXPECT_EQ(while_loading->error, ErrorCode::kCoordinatorLoadInProgress);
  EXPECT_TRUE(while_loading->transactions.empty());
  EXPECT_EQ(Listed({}), std::vector<std::string>{"t1"});
}

// ---- transactional id expiration (Kafka's removeExpiredTransactionalIds)

constexpr int64_t kExpiration = 7 * 86'400'000LL;

TEST_F(TxnCoordinatorTest, AnIdleIdExpiresThroughATombstoneAndAReloadDoesNotFindIt) {
  ASSERT_EQ(Commit(coordinator_->InitProducerId("idle", kTimeout, std::nullopt)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->InitProducerId("kept", kTimeout, std::nullopt)), ErrorCode::kNone);
  clock_.Advance(kExpiration - 1);
  EXPECT_TRUE(coordinator_->ExpireIds(kExpiration).empty());  // not quite yet
  ASSERT_EQ(Commit(coordinator_->InitProducerId("kept", kTimeout, std::nullopt)),
            ErrorCode::kNone);  // used: its clock starts again
  clock_.Advance(1);

  std::vector<TxnReply> expired = coordinator_->ExpireIds(kExpiration);
  ASSERT_EQ(expired.size(), 1u);
  ASSERT_TRUE(expired[0].write);
  EXPECT_EQ(expired[0].write->transactional_id, "idle");
  EXPECT_EQ(expired[0].write->transit.state, TxnStatus::kDead);
  // Until the tombstone is committed the id waits, and is not expired twice.
  EXPECT_EQ(coordinator_->InitProducerId("idle", kTimeout, std::nullopt).error,
            ErrorCode::kConcurrentTransactions);
  EXPECT_TRUE(coordinator_->ExpireIds(kExpiration).empty());
  ASSERT_EQ(coordinator_->Finish(*expired[0].write, true), ErrorCode::kNone);
  EXPECT_FALSE(coordinator_->Describe("idle"));
  EXPECT_EQ(Listed({}), std::vector<std::string>{"kept"});

  auto reloaded = MakeCoordinator();
  ASSERT_TRUE(reloaded->LoadPartition(0, 5).ok());
  EXPECT_FALSE(reloaded->Describe("idle"));  // the tombstone is in the log
  EXPECT_EQ(reloaded->Describe("kept")->producer_epoch, 1);
  // The id is new again: a new producer id, epoch 0.
  TxnReply again = coordinator_->InitProducerId("idle", kTimeout, std::nullopt);
  EXPECT_EQ(Commit(again), ErrorCode::kNone);
  EXPECT_EQ(again.producer_id, 5002);
  EXPECT_EQ(again.producer_epoch, 0);
}

TEST_F(TxnCoordinatorTest, AnOpenTransactionNeverExpiresAndAnEndedOneDoes) {
  ASSERT_EQ(Commit(coordinator_->InitProducerId("open", kTimeout, std::nullopt)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->AddPartitions("open", 5000, 0, {kA}, 0)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->InitProducerId("ending", kTimeout, std::nullopt)),
            ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->AddPartitions("ending", 5001, 0, {kB}, 0)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->EndTxn("ending", 5001, 0, TxnResult::kCommit, 0)),
            ErrorCode::kNone);
  clock_.Advance(10 * kExpiration);
  EXPECT_TRUE(coordinator_->ExpireIds(kExpiration).empty());  // Ongoing, PrepareCommit
  EXPECT_EQ(State("open"), TxnStatus::kOngoing);

  // Ended, it is idle since the commit was decided (its end is stamped
  // then, as Kafka's prepareComplete is), long ago.
  ASSERT_TRUE(Written("ending", kB));
  ASSERT_EQ(coordinator_->Finish(*coordinator_->CompleteTransaction("ending"), true),
            ErrorCode::kNone);
  EXPECT_EQ(State("ending"), TxnStatus::kCompleteCommit);
  std::vector<TxnReply> expired = coordinator_->ExpireIds(kExpiration);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].write->transactional_id, "ending");
  EXPECT_EQ(Commit(expired[0]), ErrorCode::kNone);
  EXPECT_FALSE(coordinator_->Describe("ending"));
  EXPECT_EQ(State("open"), TxnStatus::kOngoing);
}

// Kafka removes an id only while its tombstone is still the pending
// transition, at the epoch and coordinator epoch it was written at.
TEST_F(TxnCoordinatorTest, AnIdUsedBeforeItsTombstoneIsFinishedIsKept) {
  ASSERT_EQ(Commit(coordinator_->InitProducerId("t1", kTimeout, std::nullopt)), ErrorCode::kNone);
  clock_.Advance(kExpiration);
  std::vector<TxnReply> expired = coordinator_->ExpireIds(kExpiration);
  ASSERT_EQ(expired.size(), 1u);
  // The tombstone was not confirmed in time: the id is usable again, and
  // used; the tombstone's late Finish leaves it be.
  EXPECT_EQ(coordinator_->Finish(*expired[0].write, false), ErrorCode::kCoordinatorNotAvailable);
  ASSERT_EQ(Commit(coordinator_->InitProducerId("t1", kTimeout, std::nullopt)), ErrorCode::kNone);
  EXPECT_EQ(coordinator_->Finish(*expired[0].write, true), ErrorCode::kConcurrentTransactions);
  ASSERT_TRUE(coordinator_->Describe("t1"));
  EXPECT_EQ(coordinator_->Describe("t1")->producer_epoch, 1);
  auto reloaded = MakeCoordinator();  // the id's record follows the tombstone
  ASSERT_TRUE(reloaded->LoadPartition(0, 5).ok());
  EXPECT_EQ(reloaded->Describe("t1")->producer_epoch, 1);

  // The partition moved and came back meanwhile, and the id was made anew.
  clock_.Advance(kExpiration);
  expired = coordinator_->ExpireIds(kExpiration);
  ASSERT_EQ(expired.size(), 1u);
  coordinator_->UnloadPartition(0);
  ASSERT_TRUE(coordinator_->LoadPartition(0, 6).ok());
  EXPECT_FALSE(coordinator_->Describe("t1"));
  ASSERT_EQ(Commit(coordinator_->InitProducerId("t1", kTimeout, std::nullopt)), ErrorCode::kNone);
  EXPECT_EQ(coordinator_->Finish(*expired[0].write, true), ErrorCode::kNotCoordinator);
  EXPECT_EQ(coordinator_->Describe("t1")->producer_id, 5001);
}

TEST_F(TxnCoordinatorTest, StatsCountOpenTransactionsAndTheirEnds) {
  EXPECT_EQ(coordinator_->Stats().open, 0);
  EXPECT_EQ(coordinator_->Stats().oldest_open_start_ms, -1);
  const int64_t t0 = clock_.NowMs();
  ASSERT_EQ(Commit(coordinator_->InitProducerId("t1", kTimeout, std::nullopt)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->AddPartitions("t1", 5000, 0, {kA}, 0)), ErrorCode::kNone);
  clock_.Advance(500);
  ASSERT_EQ(Commit(coordinator_->InitProducerId("t2", kTimeout, std::nullopt)), ErrorCode::kNone);
  ASSERT_EQ(Commit(coordinator_->AddPartitions("t2", 5001, 0, {kB}, 0)), ErrorCode::kNone);
  TxnStats stats = coordinator_->Stats();
  EXPECT_EQ(stats.open, 2);
  EXPECT_EQ(stats.oldest_open_start_ms, t0);

  // Committing is open until its end takes effect.
  ASSERT_EQ(Commit(coordinator_->EndTxn("t1", 5000, 0, TxnResult::kCommit, 0)), ErrorCode::kNone);
  EXPECT_EQ(coordinator_->Stats().open, 2);
  ASSERT_TRUE(Written("t1", kA));
  ASSERT_EQ(coordinator_->Finish(*coordinator_->CompleteTransaction("t1"), true), ErrorCode::kNone);
  stats = coordinator_->Stats();
  EXPECT_EQ(stats.open, 1);
  EXPECT_EQ(stats.oldest_open_start_ms, t0 + 500);
  EXPECT_EQ(stats.committed, 1);
  EXPECT_EQ(stats.aborted, 0);

  // A timed-out transaction's abort counts as one.
  clock_.Advance(kTimeout + 1);
  std::vector<TxnReply> aborts = coordinator_->AbortTimedOut();
  ASSERT_EQ(aborts.size(), 1u);
  ASSERT_EQ(Commit(aborts[0]), ErrorCode::kNone);
  ASSERT_TRUE(Written("t2", kB));
  ASSERT_EQ(coordinator_->Finish(*coordinator_->CompleteTransaction("t2"), true), ErrorCode::kNone);
  stats = coordinator_->Stats();
  EXPECT_EQ(stats.open, 0);
  EXPECT_EQ(stats.oldest_open_start_ms, -1);
  EXPECT_EQ(stats.committed, 1);
  EXPECT_EQ(stats.aborted, 1);
}

}  // namespace
}  // namespace strata::coordinator
