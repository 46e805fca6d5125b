// Tests of RemoteRetention over one partition and a file:// store: expiry
// by size and by a DeleteRecords floor (objects gone, log start moved), a
// deletion the store refused finished next round, and deleted topics'
// directories retried until the store answers.
#include "tiered/remote_retention.h"

#include <gtest/gtest.h>

#include "tiered/remote_copier.h"
#include "tiered/tier_test_util.h"

namespace strata::tiered {
namespace {

namespace fs = std::filesystem;
using S = RemoteSegmentState;

class RemoteRetentionTest : public testing::TierFixture {
 protected:
  // Uploads every rolled segment of log_ through `p`.
  void UploadAll(const std::shared_ptr<TieredPartition>& p) {
    RemoteCopier copier(ctx_);
    copier.Start();
    {
      std::lock_guard lock(p->mu);
      ASSERT_TRUE(p->LoadManifestLocked());
    }
    ASSERT_TRUE(Until(
        *p, [&] { copier.CopyLocked(p); }, [&] { return RemoteCopier::UploadsDoneLocked(*p); }));
  }
  // Produces 60 batches (more than four rolled segments) and uploads every
  // rolled one through a new partition, which it returns.
  std::shared_ptr<TieredPartition> Uploaded() {
    Produce(60);
    EXPECT_GT(log_->RolledSegments().size(), 4u);
    auto p = Partition();
    UploadAll(p);
    return p;
  }
};

TEST_F(RemoteRetentionTest, ExpiresTheOldestSegmentsByBytesAndMovesTheLogStart) {
  auto p = Uploaded();
  const auto rolled = log_->RolledSegments();
  const auto files = RemoteLogFiles();
  ASSERT_EQ(files.size(), rolled.size());
  // Keep about all but the first two segments' bytes.
  int64_t total = log_->size_bytes();
  config_.retention_bytes = total - rolled[0].size - rolled[1].size;
  {
    std::lock_guard lock(p->mu);
    p->config = config_;
  }
  RemoteRetention retention(ctx_);
  EXPECT_EQ(retention.Expire(*p), 2);
  EXPECT_EQ(counters_.expired.load(), 2u);
  EXPECT_EQ(RemoteLogFiles().size(), rolled.size() - 2);
  EXPECT_EQ(Manifest().remote_log_start_offset(), rolled[2].base_offset);
  EXPECT_EQ(log_->log_start_offset(), rolled[2].base_offset);  // local copies went too
  EXPECT_EQ(p->remote_start.load(), rolled[2].base_offset);
  EXPECT_EQ(retention.Expire(*p), 0);  // nothing more is over
}

TEST_F(RemoteRetentionTest, DeletesSegmentsWhollyBelowTheDeleteRecordsFloor) {
  auto p = Uploaded();
  const auto rolled = log_->RolledSegments();
  // Inside segment 3: segments 0..2 go, 3 stays (its head is below the floor).
  p->delete_floor = rolled[3].base_offset + 1;
  RemoteRetention retention(ctx_);
  EXPECT_EQ(retention.Expire(*p), 3);
  EXPECT_EQ(Manifest().remote_log_start_offset(), rolled[3].base_offset);
  EXPECT_EQ(RemoteLogFiles().size(), rolled.size() - 3);
}

TEST_F(RemoteRetentionTest, ADeletionTheStoreRefusedIsFinishedNextRound) {
  auto p = Uploaded();
  const auto rolled = log_->RolledSegments();
  store_->part = ".log";  // segment data cannot be deleted; the manifest can be written
  store_->fail = true;
  p->delete_floor = rolled[2].base_offset;
  RemoteRetention retention(ctx_);
  EXPECT_EQ(retention.Expire(*p), 0);
  // Recorded as started (durably), hidden from reads, still in the store.
  EXPECT_EQ(Manifest().segments()[0].state, S::kDeleteStarted);
  EXPECT_EQ(p->ReadView()->FindReadable(rolled[0].base_offset), nullptr);
  EXPECT_EQ(RemoteLogFiles().size(), rolled.size());
  EXPECT_EQ(log_->log_start_offset(), 0_o);

  store_->fail = false;
  EXPECT_EQ(retention.Expire(*p), 2);
  EXPECT_EQ(RemoteLogFiles().size(), rolled.size() - 2);
  EXPECT_EQ(Manifest().remote_log_start_offset(), rolled[2].base_offset);
  EXPECT_EQ(log_->log_start_offset(), rolled[2].base_offset);
}

TEST_F(RemoteRetentionTest, ADeletedTopicsDirectoryIsRetriedUntilTheStoreAnswers) {
  Produce(30);
  auto p = Partition();
  UploadAll(p);
  ASSERT_TRUE(fs::exists(remote_dir()));
  store_->fail = true;
  RemoteRetention retention(ctx_);
  retention.DeleteDirSoon(p->dir);
  EXPECT_EQ(retention.DeletePendingDirsOnce(), 1u);
  EXPECT_TRUE(fs::exists(remote_dir()));
  store_->fail = false;
  EXPECT_EQ(retention.DeletePendingDirsOnce(), 0u);
  EXPECT_FALSE(fs::exists(remote_dir()));
}

}  // namespace
}  // namespace strata::tiered
