// The transaction coordinator's records in a real log: appended through a
// CoordinatorLog and loaded back, latest per id, tombstones removing ids,
// unknown key versions skipped and damaged values failing the load.
#include "coordinator/txn_log.h"

#include <gtest/gtest.h>

#include "storage/test_util.h"

namespace strata::coordinator {
namespace {

class TxnLogTest : public storage::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto log = storage::Log::Open(root_ / "__transaction_state-0", storage::LogConfig{}, &clock_);
    ASSERT_TRUE(log.ok()) << log.error().message;
    log_ = std::shared_ptr<storage::Log>(std::move(*log));
    coordinator_log_ = std::make_unique<CoordinatorLog>(
        kTransactionStateTopic, 1, [this](int32_t) { return log_; },
        [this](int32_t, MutableByteView batch,
               const std::vector<storage::BatchInfo>& infos) -> Result<CoordinatorLog::Appended> {
          STRATA_ASSIGN_OR_RETURN(auto appended, log_->Append(batch, infos, LeaderEpoch(0)));
          return CoordinatorLog::Appended{appended.last_offset, 0};
        },
        &clock_);
  }
  void TearDown() override {
    (void)log_->Close();
    TempDirTest::TearDown();
  }
  static TxnLogValue Value(int64_t pid, TxnStatus status,
                           std::map<std::string, std::vector<int32_t>> partitions = {}) {
    TxnLogValue v;
    v.producer_id = pid;
    v.producer_epoch = 2;
    v.timeout_ms = 60000;
    v.status = status;
    v.partitions = std::move(partitions);
    v.last_update_ms = 1000;
    v.start_ms = 900;
    return v;
  }
  void Append(std::string_view id, const std::optional<TxnLogValue>& value, int16_t version = 1) {
    ASSERT_TRUE(AppendTxnRecord(*coordinator_log_, 0, id, value, version).ok());
  }

  ManualClock clock_{1'700'000'000'000};
  std::shared_ptr<storage::Log> log_;
  std::unique_ptr<CoordinatorLog> coordinator_log_;
};

TEST_F(TxnLogTest, TheLatestRecordOfEachIdWinsAndATombstoneRemovesIt) {
  Append("a", Value(1, TxnStatus::kOngoing, {{"t", {0, 1}}}));
  Append("b", Value(2, TxnStatus::kEmpty), 0);
  Append("a", Value(1, TxnStatus::kCompleteCommit));
  Append("c", Value(3, TxnStatus::kPrepareAbort, {{"u", {4}}}));
  Append("b", std::nullopt);
  auto loaded = LoadTxnPartition(*coordinator_log_, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->records, 5);
  EXPECT_EQ(loaded->skipped, 0);
  EXPECT_EQ(loaded->transactions, (std::map<std::string, TxnLogValue>{
                                      {"a", Value(1, TxnStatus::kCompleteCommit)},
                                      {"c", Value(3, TxnStatus::kPrepareAbort, {{"u", {4}}})}}));
}

TEST_F(TxnLogTest, UnknownKeyVersionsAreSkippedAndDamagedValuesFailTheLoad) {
  Append("a", Value(1, TxnStatus::kOngoing, {{"t", {0}}}));
  Bytes newer_key = EncodeTxnLogKey("x");
  newer_key[1] = 7;  // key version 7
  ASSERT_TRUE(coordinator_log_->Append(0, {{newer_key, Bytes{0, 9}}}).ok());
  auto loaded = LoadTxnPartition(*coordinator_log_, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->skipped, 1);
  EXPECT_EQ(loaded->transactions.size(), 1u);

  Bytes damaged = EncodeTxnLogValue(Value(2, TxnStatus::kEmpty), 1);
  damaged.resize(damaged.size() - 3);
  ASSERT_TRUE(coordinator_log_->Append(0, {{EncodeTxnLogKey("b"), damaged}}).ok());
  auto failed = LoadTxnPartition(*coordinator_log_, 0);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, Errc::kCorrupt);
  EXPECT_NE(failed.error().message.find("__transaction_state-0"), std::string::npos);
}

}  // namespace
}  // namespace strata::coordinator
