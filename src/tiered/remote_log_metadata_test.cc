// The RemoteLogManager's state in the metadata store: remote log offsets that
// survive a restart while the remote store is down, and remote directories of
// deleted topics that are removed once the store answers again.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
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
using testing::ReadFile;

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
  Offset remote_end = kNoOffset;
  {
    auto m = MakeManager();
    m->Start();
    ASSERT_TRUE(m->WaitForUploads(30000));
    m->Stop();
    remote_end = m->RemoteLogEndOffset(id_.tp());
    ASSERT_GT(remote_end, 0_o);
  }
  auto saved = metadata_->GetRemoteLogOffsets(id_.topic_id, 0);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->start, 0);
  EXPECT_EQ(Offset(saved->end), remote_end);
  // Local retention may now drop what is uploaded; the local start moves up.
  ASSERT_TRUE(log_->EnforceRetention().ok());
  ASSERT_GT(log_->log_start_offset(), 0_o);

  // "Restart" with every Get failing: the manifest cannot be loaded.
  auto m = MakeManager({StorageOp::kGet});
  m->Start();
  m->ScanOnce();
  EXPECT_FALSE(m->PartitionStats(id_.tp()).manifest_loaded);
  EXPECT_EQ(m->LogStartOffset(id_.tp(), log_->log_start_offset()), 0_o);
  EXPECT_EQ(m->RemoteLogEndOffset(id_.tp()), remote_end);
  auto read = m->Read(id_.tp(), 0_o, 1 << 20);
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
    m->RemovePartition(id_.tp(), /*delete_remote=*/true);
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
  const Offset before = m.RemoteLogEndOffset(id_.tp());
  for (int i = 0; i < 20; ++i) {
    storage::testing::BatchOptions b;
    b.records = 5;
    b.value_bytes = 100;
    ASSERT_TRUE(storage::testing::AppendOne(*log_, b).ok());
  }
  const Offset rolled_end = log_->RolledSegments().back().end_offset;
  ASSERT_GT(rolled_end, before);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (m.RemoteLogEndOffset(id_.tp()) < rolled_end &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(m.RemoteLogEndOffset(id_.tp()), rolled_end);
  m.Stop();
}

// In a cluster each leadership writes manifest-<epoch>.json and saves the
// offsets under its epoch. A new leader whose segments have other boundaries
// takes the remote log over: what it uploads replaces the shorter segments it
// covers, and the deposed leader, still running, changes nothing any more.
TEST_F(RemoteLogMetadataTest, ANewLeadershipTakesTheRemoteLogOverAndFencesTheOldOne) {
  auto old_leader = MakeManager({}, /*add_partition=*/false);
  old_leader->AddPartition(id_, log_, config_, {}, LeaderEpoch(0));
  old_leader->Start();
  ASSERT_TRUE(old_leader->WaitForUploads(30000));
  const Offset old_end = old_leader->RemoteLogEndOffset(id_.tp());
  ASSERT_GT(old_end, 0_o);
  EXPECT_EQ(metadata_->GetRemoteLogOffsets(id_.topic_id, 0)->leader_epoch, LeaderEpoch(0));
  EXPECT_FALSE(fs::exists(remote_dir() / ManifestName(LeaderEpoch(-1))));

  const size_t old_objects = RemoteLogFiles().size();

  // The new leader's first segment starts where the old one's did and goes
  // on past the remote end (64 KiB segments against 4 KiB).
  std::shared_ptr<storage::Log> old_log = log_;
  log_ = Replica("t-0-new", 65536);
  ASSERT_NE(log_, nullptr);
  config_.segment_bytes = 65536;
  Produce(80);
  ASSERT_FALSE(log_->RolledSegments().empty());
  ASSERT_EQ(log_->RolledSegments().front().base_offset, 0_o);
  ASSERT_GT(log_->RolledSegments().front().end_offset, old_end);
  auto new_leader = MakeManager({}, /*add_partition=*/false);
  new_leader->AddPartition(id_, log_, config_, {}, LeaderEpoch(1));
  new_leader->Start();
  ASSERT_TRUE(new_leader->WaitForUploads(30000));
  new_leader->EnforceRetentionOnce();  // deletes the replaced segments' objects

  auto saved = metadata_->GetRemoteLogOffsets(id_.topic_id, 0);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->leader_epoch, LeaderEpoch(1));
  EXPECT_EQ(Offset(saved->end), log_->RolledSegments().back().end_offset);
  auto manifest = RemoteManifest::Parse(ReadFile(remote_dir() / ManifestName(LeaderEpoch(1))));
  ASSERT_TRUE(manifest.ok());
  EXPECT_EQ(manifest->leader_epoch(), LeaderEpoch(1));
  // No finished segment lies within another, and each one's objects exist.
  std::set<std::string> listed;
  const auto& segs = manifest->segments();
  for (const RemoteSegment& a : segs) {
    if (a.state != RemoteSegmentState::kCopyFinished) continue;
    listed.insert(fmt::format("{:020d}-{}.log", a.base_offset, a.uuid));
    for (const RemoteSegment& b : segs) {
      if (&a == &b || b.state != RemoteSegmentState::kCopyFinished) continue;
      EXPECT_FALSE(b.base_offset >= a.base_offset && b.end_offset <= a.end_offset)
          << "[" << b.base_offset << ", " << b.end_offset << "] within [" << a.base_offset << ", "
          << a.end_offset << "]";
    }
  }
  EXPECT_EQ(RemoteLogFiles(), listed);  // the replaced ones are gone
  EXPECT_LT(listed.size(), old_objects);
  for (Offset off = 0_o; off <= Offset(saved->end); off += 5) {
    auto r = new_leader->Read(id_.tp(), off, 1);
    ASSERT_TRUE(r.ok()) << off << ": " << r.error().message;
    EXPECT_EQ(storage::testing::Headers(*r).front().base_offset, off);
  }

  // The deposed leader has new segments of its own: it sees the takeover
  // and uploads nothing (and a late save would be refused: kFenced), so
  // neither the store, the new manifest nor its local retention moves.
  log_ = old_log;
  Produce(30);
  old_leader->ScanOnce();
  old_leader->EnforceRetentionOnce();
  EXPECT_EQ(RemoteLogFiles(), listed);
  EXPECT_EQ(metadata_->GetRemoteLogOffsets(id_.topic_id, 0), saved);
  ASSERT_TRUE(old_log->EnforceRetention().ok());
  EXPECT_LE(old_log->log_start_offset(), old_end + 1);
  auto still = RemoteManifest::Parse(ReadFile(remote_dir() / ManifestName(LeaderEpoch(1))));
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->Serialize(), manifest->Serialize());
  old_leader->Stop();
  new_leader->Stop();
}

// A new leader abandons its predecessor's half-done upload: the entry is
// deleted as replaced, which never moves the log start (those offsets are
// in the local log, not yet uploaded again).
TEST_F(RemoteLogMetadataTest, AnAbandonedUploadIsDeletedWithoutMovingTheLogStart) {
  RemoteManifest left;
  left.set_leader_epoch(LeaderEpoch(0));
  left.Insert({0_o, 29_o, 4000, 1000, "halfdone", RemoteSegmentState::kCopyStarted, false});
  fs::create_directories(remote_dir());
  {
    Bytes data = left.Serialize();
    std::ofstream(remote_dir() / ManifestName(LeaderEpoch(0)), std::ios::binary)
        .write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
  }
  ASSERT_TRUE(metadata_->SetRemoteLogOffsets(id_.topic_id, 0, {-1, -1, -1, LeaderEpoch(0)}).ok());
  auto m = MakeManager({}, /*add_partition=*/false);
  m->AddPartition(id_, log_, config_, {}, LeaderEpoch(1));
  m->ScanOnce();              // loads, takes over, queues uploads (no copier runs yet)
  m->EnforceRetentionOnce();  // deletes the abandoned entry
  EXPECT_EQ(log_->log_start_offset(), 0_o);
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  EXPECT_EQ(m->LogStartOffset(id_.tp(), log_->log_start_offset()), 0_o);
  auto r = m->Read(id_.tp(), 0_o, 1);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(storage::testing::Headers(*r).front().base_offset, 0_o);
  m->Stop();
}

// The names of every object under the partition's remote directory.
std::set<std::string> RemoteObjects(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.insert(e.path().string());
  return out;
}

// KIP-392: a follower's replica registered for reads serves offsets below
// its local log start from the leader's remote log, follows the leader's
// saves, writes, uploads and deletes nothing, and takes the remote log over
// when registered as leader.
TEST_F(RemoteLogMetadataTest, AReaderServesTheLeadersRemoteLogAndChangesNothing) {
  auto leader = MakeManager({}, /*add_partition=*/false);
  leader->AddPartition(id_, log_, config_, {}, LeaderEpoch(2));
  leader->Start();
  ASSERT_TRUE(leader->WaitForUploads(30000));
  const auto saved = metadata_->GetRemoteLogOffsets(id_.topic_id, 0);
  ASSERT_TRUE(saved && saved->end > 0 && saved->leader_epoch == LeaderEpoch(2));

  // The follower's copy, trimmed locally below the saved end.
  std::shared_ptr<storage::Log> copy = Replica("t-0-follower", 4096);
  ASSERT_NE(copy, nullptr);
  copy->SetRemoteCopiedOffset(Offset(saved->end) + 1);
  ASSERT_TRUE(copy->EnforceRetention().ok());
  ASSERT_GT(copy->log_start_offset(), 0_o);

  auto reader = MakeManager({}, /*add_partition=*/false);
  reader->AddReader(id_, copy, config_);
  reader->Start();
  EXPECT_TRUE(reader->IsReader(id_.tp()));
  EXPECT_EQ(reader->LogStartOffset(id_.tp(), copy->log_start_offset()), 0_o);
  EXPECT_FALSE(reader->PartitionStats(id_.tp()).manifest_loaded);
  EXPECT_TRUE(reader->AllPartitionStats().empty());  // it tiers nothing
  const std::set<std::string> objects = RemoteObjects(remote_dir());
  for (Offset off = 0_o; off < copy->log_start_offset(); off += 5) {
    auto got = reader->Read(id_.tp(), off, 1);
    ASSERT_TRUE(got.ok()) << off << ": " << got.error().message;
    auto want = leader->Read(id_.tp(), off, 1);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(*got, *want) << off;
  }
  EXPECT_TRUE(reader->PartitionStats(id_.tp()).manifest_loaded);
  reader->ScanOnce();
  EXPECT_EQ(reader->EnforceRetentionOnce(), 0);
  EXPECT_TRUE(reader->WaitForUploads(0));
  EXPECT_EQ(RemoteObjects(remote_dir()), objects);
  EXPECT_EQ(metadata_->GetRemoteLogOffsets(id_.topic_id, 0), saved);

  // The leader uploads more: the reader's next read of it loads the new
  // manifest, and its scan follows the saved offsets.
  Produce(30);
  ASSERT_TRUE(leader->WaitForUploads(30000));
  const auto later = metadata_->GetRemoteLogOffsets(id_.topic_id, 0);
  ASSERT_TRUE(later && later->end > saved->end);
  auto fresh = reader->Read(id_.tp(), Offset(later->end), 1);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  EXPECT_LE(storage::testing::Headers(*fresh).front().base_offset, Offset(later->end));
  reader->ScanOnce();
  EXPECT_EQ(reader->RemoteLogEndOffset(id_.tp()), Offset(later->end));

  // Registered as the next leader, it takes the remote log over.
  leader->Stop();
  reader->AddPartition(id_, copy, config_, {}, LeaderEpoch(3));
  EXPECT_FALSE(reader->IsReader(id_.tp()));
  reader->ScanOnce();
  EXPECT_EQ(metadata_->GetRemoteLogOffsets(id_.topic_id, 0)->leader_epoch, LeaderEpoch(3));
  EXPECT_TRUE(fs::exists(remote_dir() / ManifestName(LeaderEpoch(3))));
  reader->Stop();
}

// A reader whose manifest lists a segment the leader has since replaced
// (same offsets, other objects; the saved offsets did not move) loads the
// manifest again when the objects are gone, and reads the new ones.
TEST_F(RemoteLogMetadataTest, AReaderLoadsTheManifestAgainWhenASegmentWasReplaced) {
  auto leader = MakeManager({}, /*add_partition=*/false);
  leader->AddPartition(id_, log_, config_, {}, LeaderEpoch(2));
  leader->Start();
  ASSERT_TRUE(leader->WaitForUploads(30000));
  leader->Stop();
  auto reader = MakeManager({}, /*add_partition=*/false);
  reader->AddReader(id_, log_, config_);
  ASSERT_TRUE(reader->Read(id_.tp(), 0_o, 1).ok());  // loads the view

  // The last segment (not read yet: no index cached) under a new uuid, the
  // old objects gone.
  auto manifest = RemoteManifest::Parse(ReadFile(remote_dir() / ManifestName(LeaderEpoch(2))));
  ASSERT_TRUE(manifest.ok());
  ASSERT_GE(manifest->segments().size(), 2u);
  RemoteSegment* seg = &manifest->segments().back();
  const Offset offset = seg->base_offset;
  const std::string old_prefix = fmt::format("{:020d}-{}", seg->base_offset, seg->uuid);
  seg->uuid = RandomUuidBase64();
  const std::string new_prefix = fmt::format("{:020d}-{}", seg->base_offset, seg->uuid);
  for (const auto& e : fs::directory_iterator(remote_dir())) {
    const std::string name = e.path().filename().string();
    if (name.rfind(old_prefix, 0) != 0) continue;
    fs::rename(e.path(), remote_dir() / (new_prefix + name.substr(old_prefix.size())));
  }
  Bytes data = manifest->Serialize();
  std::ofstream(remote_dir() / ManifestName(LeaderEpoch(2)), std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));

  auto got = reader->Read(id_.tp(), offset, 1);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(storage::testing::Headers(*got).front().base_offset, offset);
  auto fresh = MakeManager({}, /*add_partition=*/false);
  fresh->AddReader(id_, log_, config_);
  auto want = fresh->Read(id_.tp(), offset, 1);
  ASSERT_TRUE(want.ok()) << want.error().message;
  EXPECT_EQ(*got, *want);
  reader->Stop();
  fresh->Stop();
}

}  // namespace
}  // namespace strata::tiered
