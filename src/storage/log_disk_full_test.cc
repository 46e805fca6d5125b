// A log whose checkpoints cannot be written (disk full, torn writes, through
// FaultInjectingEnv): the append that needed the write fails with an I/O
// error, nothing acknowledged is lost, and once space is back the log goes
// on as if nothing happened, after a restart too.
#include <gtest/gtest.h>

#include "base/env.h"
#include "storage/log.h"
#include "storage/test_util.h"

namespace strata::storage {
namespace {

using testing::AppendOne;
using testing::BatchOptions;
using testing::Headers;

class LogDiskFullTest : public testing::TempDirTest {
 protected:
  std::unique_ptr<Log> OpenLog(Env* env, const LogConfig& config) {
    auto log = Log::Open(dir_, config, &clock_, env);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().message);
    return log.ok() ? std::move(*log) : nullptr;
  }

  // Base offset and leader epoch of every batch in the log, from offset 0
  // (a read stops at a segment's end).
  static std::vector<std::pair<Offset, int32_t>> Batches(Log& log) {
    std::vector<std::pair<Offset, int32_t>> out;
    Offset next = 0_o;
    while (next < log.log_end_offset()) {
      auto read = log.Read(next, 1 << 30, Offset::Max(), false);
      EXPECT_TRUE(read.ok());
      if (!read.ok()) break;
      auto headers = Headers(read->records);
      if (headers.empty()) break;
      for (const auto& h : headers) {
        out.emplace_back(h.base_offset, h.partition_leader_epoch);
        next = h.last_offset() + 1;
      }
    }
    return out;
  }

  ManualClock clock_{1'700'000'000'000};
  FaultInjectingEnv env_{Env::Default()};
};

TEST_F(LogDiskFullTest, ANewLeaderEpochThatCannotBeCheckpointedFailsTheAppendUntilItCan) {
  auto log = OpenLog(&env_, LogConfig{});
  ASSERT_TRUE(AppendOne(*log, {.records = 2}, /*leader_epoch=*/1).ok());  // 0..1
  for (bool torn : {false, true}) {
    env_.FailAfterBytes(4, torn);
    auto refused = AppendOne(*log, {.records = 3}, /*leader_epoch=*/2);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, Errc::kIoError) << refused.error().message;
    env_.Heal();
    EXPECT_EQ(log->log_end_offset(), 2_o);           // nothing of it was written
    EXPECT_EQ(log->latest_epoch(), LeaderEpoch(1));  // nor remembered
  }
  auto retried = AppendOne(*log, {.records = 3}, /*leader_epoch=*/2);
  ASSERT_TRUE(retried.ok()) << retried.error().message;
  EXPECT_EQ(retried->base_offset, 2_o);
  ASSERT_TRUE(log->Close().ok());

  // After a clean restart the epoch history comes from the checkpoint alone.
  auto reopened = OpenLog(Env::Default(), LogConfig{});
  EXPECT_EQ(reopened->latest_epoch(), LeaderEpoch(2));
  EXPECT_EQ(reopened->EndOffsetForEpoch(LeaderEpoch(1)),
            (std::pair<LeaderEpoch, Offset>{LeaderEpoch(1), 2_o}));
  EXPECT_EQ(Batches(*reopened), (std::vector<std::pair<Offset, int32_t>>{{0_o, 1}, {2_o, 2}}));
  ASSERT_TRUE(reopened->Close().ok());
}

TEST_F(LogDiskFullTest, ARollWhoseProducerSnapshotCannotBeWrittenLosesNothing) {
  LogConfig config;
  config.segment_bytes = 600;  // a roll every few batches
  auto log = OpenLog(&env_, config);
  const int64_t pid = 7;
  int32_t seq = 0;
  auto produce = [&] {
    BatchOptions o{.records = 2,
                   .value_bytes = 100,
                   .producer_id = pid,
                   .producer_epoch = 0,
                   .base_sequence = seq};
    auto r = AppendOne(*log, o, 0);
    if (r.ok()) seq += 2;
    return r;
  };
  std::vector<Offset> acknowledged;
  int failures = 0;
  for (int i = 0; i < 12; ++i) {
    // Every third append on a full disk: a roll then cannot snapshot.
    if (i % 3 == 2) env_.FailAfterBytes(0);
    auto r = produce();
    env_.Heal();
    if (r.ok()) {
      acknowledged.push_back(r->base_offset);
    } else {
      ++failures;
      EXPECT_EQ(r.error().code, Errc::kIoError) << r.error().message;
    }
  }
  ASSERT_GT(failures, 0) << "no append needed a checkpoint while the disk was full";
  // Offsets stay dense: a failed append took none.
  for (size_t i = 0; i < acknowledged.size(); ++i)
    EXPECT_EQ(acknowledged[i], Offset(int64_t(i) * 2));
  ASSERT_TRUE(log->Close().ok());

  auto reopened = OpenLog(Env::Default(), config);
  std::vector<Offset> bases;
  for (const auto& [base, epoch] : Batches(*reopened)) bases.push_back(base);
  EXPECT_EQ(bases, acknowledged);
  // Producer state survived: the last batch sent again is a duplicate.
  BatchOptions again{.records = 2,
                     .value_bytes = 100,
                     .producer_id = pid,
                     .producer_epoch = 0,
                     .base_sequence = seq - 2};
  auto dup = AppendOne(*reopened, again, 0);
  ASSERT_TRUE(dup.ok()) << dup.error().message;
  EXPECT_TRUE(dup->duplicate);
  EXPECT_EQ(dup->base_offset, acknowledged.back());
  ASSERT_TRUE(reopened->Close().ok());
}

}  // namespace
}  // namespace strata::storage
