// The RemoteLogManager's state in the metadata store: remote log offsets that
// survive a restart while the remote store is down, and remote directories of
// deleted topics that are removed once the store answers again.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cluster/metadata_store.h"
#include "storage/test_util.h"
#include "tiered/fault_injecting_storage.h"
#include "tiered/remote_log_manager.h"
#include "tiered/test_util.h"
#include "tiered/tiered_log_test_util.h"

namespace strata::tiered {
namespace {

namespace fs = std::filesystem;

class RemoteLogMetadataTest : public testing::TieredLogTest {
 protected:
  void SetUp() override {
    OpenLog();
    metadata_ = cluster::OpenEmbeddedMetadataStore(metadata_dir_.path()).value();
    Produce(60);
  }

  // A manager over file:// whose every call of `failing` fails (kUnavailable).
  std::unique_ptr<RemoteLogManager> MakeManager(std::vector<StorageOp> failing = {},
                                                bool add_partition = true) {
    auto faulty = std::make_unique<FaultInjectingStorage>(FileStore(), 1);
    FaultSpec down;
    down.fail_ratio = 1.0;
    for (StorageOp op : failing) faulty->SetFault(op, down);
    ResilientStorage rs;
    rs.storage = std::move(faulty);
    auto m = std::make_unique<RemoteLogManager>(FastOptions(), std::move(rs), Clock::Real());
    m->AttachMetadataStore(metadata_.get());
    if (add_partition) m->AddPartition(id_, log_, config_);
    return m;
  }

  testing::TempDir metadata_dir_;
  std::unique_ptr<cluster::MetadataStore> metadata_;
};

TEST_F(RemoteLogMetadataTest, OffsetsOutliveARestartWhileTheStoreIsDown) {
  int64_t remote_end = -1;
  {
    auto m = MakeManager();
    m->Start();
    ASSERT_TRUE(m->WaitForUploads(30000));
    m->Stop();
    remote_end = m->RemoteLogEndOffset(id_.key());
    ASSERT_GT(remote_end, 0);
  }
  auto saved = metadata_->GetRemoteLogOffsets(id_.topic_id, 0);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->start, 0);
  EXPECT_EQ(saved->end, remote_end);
  // Local retention may now drop what is uploaded; the local start moves up.
  ASSERT_TRUE(log_->EnforceRetention().ok());
  ASSERT_GT(log_->log_start_offset(), 0);

  // "Restart" with every Get failing: the manifest cannot be loaded.
  auto m = MakeManager({StorageOp::kGet});
  m->Start();
  m->ScanOnce();
  EXPECT_FALSE(m->PartitionStats(id_.key()).manifest_loaded);
  EXPECT_EQ(m->LogStartOffset(id_.key(), log_->log_start_offset()), 0);
  EXPECT_EQ(m->RemoteLogEndOffset(id_.key()), remote_end);
  auto read = m->Read(id_.key(), 0, 1 << 20);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, Errc::kUnavailable);  // retriable, not "out of range"
  m->Stop();
}

TEST_F(RemoteLogMetadataTest, DeletedTopicDirIsRemovedOnceTheStoreAnswers) {
  {
    auto m = MakeManager();
    m->Start();
    ASSERT_TRUE(m->WaitForUploads(30000));
    m->Stop();
  }
  ASSERT_TRUE(fs::exists(fs::path(remote_.path()) / dir_));
  {
    auto m = MakeManager({StorageOp::kDelete});
    m->RemovePartition(id_.key(), /*delete_remote=*/true);
    EXPECT_EQ(m->DeletePendingDirsOnce(), 1u);
    EXPECT_EQ(metadata_->PendingRemoteDeletions(), std::vector<std::string>{dir_});
    m->Stop();
  }
  ASSERT_TRUE(fs::exists(fs::path(remote_.path()) / dir_));
  // After a restart the pending deletion is picked up from the metadata store.
  auto m = MakeManager({}, /*add_partition=*/false);
  m->Start();
  EXPECT_EQ(m->DeletePendingDirsOnce(), 0u);
  EXPECT_FALSE(fs::exists(fs::path(remote_.path()) / dir_));
  EXPECT_TRUE(metadata_->PendingRemoteDeletions().empty());
  m->Stop();
}

// A roll wakes the upload scan at once: with the poll set to a minute, a
// segment rolled after Start is still uploaded promptly.
TEST_F(RemoteLogMetadataTest, RollWakesTheUploadScan) {
  RemoteLogManagerOptions o;
  o.scan_interval_ms = 60000;
  o.register_metrics = false;
  auto store = OpenRemoteStorage("file://" + remote_.path()).value();
  ResilientStorage rs;
  rs.storage = std::move(store);
  RemoteLogManager m(o, std::move(rs), Clock::Real());
  m.AddPartition(id_, log_, config_);
  m.Start();  // the first scan uploads what is already rolled
  ASSERT_TRUE(m.WaitForUploads(30000));
  const int64_t before = m.RemoteLogEndOffset(id_.key());
  for (int i = 0; i < 20; ++i) {
    storage::testing::BatchOptions b;
    b.records = 5;
    b.value_bytes = 100;
    ASSERT_TRUE(storage::testing::AppendOne(*log_, b).ok());
  }
  const int64_t rolled_end = log_->RolledSegments().back().end_offset;
  ASSERT_GT(rolled_end, before);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (m.RemoteLogEndOffset(id_.key()) < rolled_end &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(m.RemoteLogEndOffset(id_.key()), rolled_end);
  m.Stop();
}

}  // namespace
}  // namespace strata::tiered
