// CoordinatorLog: appends go through the broker's appender (its partition
// leader), whose epoch and refusal the offsets log passes on.
#include "coordinator/coordinator_log.h"

#include <gtest/gtest.h>

#include <cstring>

#include "storage/test_util.h"

namespace strata::coordinator {
namespace {

class CoordinatorLogTest : public storage::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto log = storage::Log::Open(root_ / "__consumer_offsets-0", storage::LogConfig{}, &clock_);
    ASSERT_TRUE(log.ok()) << log.error().message;
    log_ = std::shared_ptr<storage::Log>(std::move(*log));
  }
  void TearDown() override {
    (void)log_->Close();
    TempDirTest::TearDown();
  }
  // The partition leader epoch of every batch in the log, in offset order.
  std::vector<int32_t> Epochs() {
    auto read = log_->Read(0_o, 1 << 20, log_->log_end_offset(), true);
    EXPECT_TRUE(read.ok());
    std::vector<int32_t> out;
    for (const auto& h : storage::testing::Headers(read->records)) {
      out.push_back(h.partition_leader_epoch);
    }
    return out;
  }
  // The broker's partition as far as the offsets log sees it: appends at
  // `epoch`, refused without one (no leadership).
  CoordinatorLog::Appender LeaderAt(std::optional<int32_t>& epoch) {
    return [this, &epoch](
               int32_t, MutableByteView batch,
               const std::vector<storage::BatchInfo>& infos) -> Result<CoordinatorLog::Appended> {
      if (!epoch) return MakeError(Errc::kFenced, "not the leader");
      STRATA_ASSIGN_OR_RETURN(auto appended, log_->Append(batch, infos, LeaderEpoch(*epoch)));
      return CoordinatorLog::Appended{appended.last_offset, *epoch};
    };
  }
  static std::vector<CoordinatorRecord> One(const char* key) {
    return {{Bytes(key, key + strlen(key)), Bytes{'v'}}};
  }

  ManualClock clock_{1'700'000'000'000};
  std::shared_ptr<storage::Log> log_;
};

TEST_F(CoordinatorLogTest, AppendsCarryTheLeaderEpochAndNeedLeadership) {
  std::optional<int32_t> epoch = 0;
  CoordinatorLog offsets(
      "__consumer_offsets", 1, [this](int32_t) { return log_; }, LeaderAt(epoch), &clock_);
  ASSERT_TRUE(offsets.Append(0, One("a")).ok());
  epoch = 7;
  ASSERT_TRUE(offsets.Append(0, One("b")).ok());
  epoch = 9;
  ASSERT_TRUE(offsets.Append(0, One("c")).ok());
  EXPECT_EQ(Epochs(), (std::vector<int32_t>{0, 7, 9}));
  epoch = std::nullopt;  // leadership lost
  Result<Offset> refused = offsets.Append(0, One("d"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::kFenced);
  EXPECT_FALSE(offsets.LastAppended(0)->last_offset > 2_o);
  EXPECT_EQ(log_->log_end_offset(), 3_o);
}

// What a commit waits for: the end of the latest append, by (epoch, offset),
// so a new term's appends count even where the log was truncated below an
// old term's.
TEST_F(CoordinatorLogTest, LastAppendedIsTheLatestByEpochThenOffset) {
  std::optional<int32_t> epoch = 3;
  CoordinatorLog offsets(
      "__consumer_offsets", 1, [this](int32_t) { return log_; }, LeaderAt(epoch), &clock_);
  EXPECT_FALSE(offsets.LastAppended(0));
  ASSERT_TRUE(offsets.Append(0, One("a")).ok());
  auto appended = offsets.Append(0, {{Bytes{'b'}, Bytes{'1'}}, {Bytes{'c'}, Bytes{'2'}}});
  ASSERT_TRUE(appended.ok());
  EXPECT_EQ(*appended, 2_o);  // where the batch ends
  auto last = offsets.LastAppended(0);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->last_offset, 2_o);
  EXPECT_EQ(last->leader_epoch, 3);
  ASSERT_TRUE(log_->TruncateTo(1_o).ok());  // as a follower would, before leading again
  epoch = 5;
  ASSERT_TRUE(offsets.Append(0, One("d")).ok());
  last = offsets.LastAppended(0);
  EXPECT_EQ(last->last_offset, 1_o);
  EXPECT_EQ(last->leader_epoch, 5);
}

}  // namespace
}  // namespace strata::coordinator
