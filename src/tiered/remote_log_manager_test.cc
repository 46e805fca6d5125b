// Tests of the manifest, the uploader/copier and remote reads, over the
// file:// backend (optionally behind FaultInjectingStorage).
#include "tiered/remote_log_manager.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <set>
#include <thread>

#include "protocol/control_record.h"
#include "storage/test_util.h"
#include "tiered/fault_injecting_storage.h"
#include "tiered/local_fs_storage.h"
#include "tiered/remote_manifest.h"
#include "tiered/segment_uploader.h"
#include "tiered/test_util.h"
#include "tiered/tiered_log_test_util.h"

namespace strata::tiered {
namespace {

namespace fs = std::filesystem;
using storage::testing::AppendOne;
using storage::testing::BatchOptions;
using storage::testing::Headers;
using testing::TempDir;

using testing::ReadFile;

TEST(RemoteManifestTest, RoundTripsAndFindsSegments) {
  RemoteManifest m;
  m.segments().push_back({0_o, 9_o, 100, 1000, "u0", RemoteSegmentState::kDeleteStarted, false});
  m.segments().push_back({10_o, 19_o, 200, 2000, "u1", RemoteSegmentState::kCopyFinished, true});
  m.segments().push_back({20_o, 29_o, 300, 3000, "u2", RemoteSegmentState::kCopyFinished, false});
  m.segments().push_back({30_o, 39_o, 400, 4000, "u3", RemoteSegmentState::kCopyStarted, false});
  auto parsed = RemoteManifest::Parse(m.Serialize());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->segments().size(), 4u);
  EXPECT_EQ(parsed->segments()[1].uuid, "u1");
  EXPECT_TRUE(parsed->segments()[1].has_snapshot);
  EXPECT_EQ(parsed->segments()[3].state, RemoteSegmentState::kCopyStarted);
  EXPECT_EQ(parsed->remote_log_start_offset(), 10_o);
  EXPECT_EQ(parsed->remote_log_end_offset(), 29_o);
  EXPECT_EQ(parsed->remote_bytes(), 500);
  EXPECT_EQ(parsed->FindReadable(5_o), nullptr);  // being deleted
  EXPECT_EQ(parsed->FindReadable(25_o)->base_offset, 20_o);
  EXPECT_EQ(parsed->FindReadable(35_o), nullptr);  // not finished
  EXPECT_EQ(RemoteObjectPath("t-0-x", parsed->segments()[1], kRemoteLogExt),
            "t-0-x/00000000000000000010-u1.log");
  EXPECT_FALSE(RemoteManifest::Parse(ByteView(testing::ToBytes("{nope"))).ok());
}

TEST(EpochCheckpointTest, KeepsEntriesUpToTheSegmentEnd) {
  EXPECT_EQ(EpochCheckpointText(
                {{LeaderEpoch(0), 0_o}, {LeaderEpoch(3), 50_o}, {LeaderEpoch(4), 120_o}}, 99_o),
            "0\n2\n0 0\n3 50\n");
}

class RemoteLogManagerTest : public testing::TieredLogTest {
 protected:
  void SetUp() override { OpenLog(); }

  // Four copiers over file:// behind a FaultInjectingStorage whose Puts fail
  // `put_fail_ratio` of the time.
  std::unique_ptr<RemoteLogManager> MakeManager(double put_fail_ratio, uint64_t seed = 7) {
    auto faulty = std::make_unique<FaultInjectingStorage>(FileStore(), seed);
    faulty_ = faulty.get();
    FaultSpec spec;
    spec.fail_ratio = put_fail_ratio;
    spec.fail_after_call = true;  // the nastiest case: the object may exist anyway
    faulty->SetFault(StorageOp::kPut, spec);
    RemoteLogManagerOptions o = FastOptions();
    o.copier_threads = 4;
    o.parallel_lag_segments = 2;
    return Manage(std::move(faulty), o);
  }

  FaultInjectingStorage* faulty_ = nullptr;
};

TEST_F(RemoteLogManagerTest, EverySegmentUploadedExactlyOnceDespiteFailedPuts) {
  Produce(200);
  auto rolled = log_->RolledSegments();
  ASSERT_GT(rolled.size(), 20u);
  auto m = MakeManager(0.2);
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  m->Stop();
  EXPECT_GT(m->counters().upload_failures, 0u);
  EXPECT_EQ(m->counters().uploads, rolled.size());

  RemoteManifest manifest = Manifest();
  ASSERT_EQ(manifest.segments().size(), rolled.size());
  std::set<std::string> files = RemoteLogFiles();
  EXPECT_EQ(files.size(), rolled.size());  // one object set per segment
  for (size_t i = 0; i < rolled.size(); ++i) {
    const RemoteSegment& s = manifest.segments()[i];
    EXPECT_EQ(s.state, RemoteSegmentState::kCopyFinished);
    EXPECT_EQ(s.base_offset, rolled[i].base_offset);
    EXPECT_EQ(s.end_offset, rolled[i].end_offset);
    EXPECT_EQ(s.size, rolled[i].size);
    fs::path remote_log = fs::path(remote_.path()) / RemoteObjectPath(dir_, s, kRemoteLogExt);
    EXPECT_EQ(ReadFile(remote_log), ReadFile(rolled[i].log_path)) << s.base_offset;
    fs::path local_index = rolled[i].log_path;
    local_index.replace_extension(".index");
    EXPECT_EQ(ReadFile(fs::path(remote_.path()) / RemoteObjectPath(dir_, s, kRemoteIndexExt)),
              ReadFile(local_index));
  }
  EXPECT_EQ(m->RemoteLogEndOffset(id_.tp()), rolled.back().end_offset);
}

TEST_F(RemoteLogManagerTest, RestartNeverReuploadsAndLocalRetentionWaitsForUploads) {
  Produce(60);
  const auto rolled = log_->RolledSegments();
  // Nothing uploaded yet: local retention (local.retention.bytes=0) keeps all.
  ASSERT_TRUE(log_->EnforceRetention().ok());
  EXPECT_EQ(log_->RolledSegments().size(), rolled.size());
  EXPECT_EQ(log_->log_start_offset(), 0_o);
  {
    auto m = MakeManager(0);
    m->Start();
    ASSERT_TRUE(m->WaitForUploads(30000));
  }
  auto files = RemoteLogFiles();
  auto m = MakeManager(0);
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  EXPECT_EQ(m->counters().uploads, 0u);
  EXPECT_EQ(RemoteLogFiles(), files);
  Produce(20);  // more segments roll: only those are uploaded
  ASSERT_TRUE(m->WaitForUploads(30000));
  EXPECT_EQ(m->counters().uploads, log_->RolledSegments().size() - rolled.size());

  auto now_rolled = log_->RolledSegments();
  ASSERT_TRUE(log_->EnforceRetention().ok());
  EXPECT_TRUE(log_->RolledSegments().empty());
  EXPECT_EQ(log_->log_start_offset(), now_rolled.back().end_offset + 1);  // local log start
  EXPECT_EQ(m->LogStartOffset(id_.tp(), log_->log_start_offset()), 0_o);
}

TEST_F(RemoteLogManagerTest, ReadsServeWholeBatchesAtExactOffsets) {
  Produce(40);
  const auto rolled = log_->RolledSegments();
  Bytes local;  // every rolled segment's bytes, in order
  for (const auto& s : rolled) {
    Bytes b = ReadFile(s.log_path);
    local.insert(local.end(), b.begin(), b.end());
  }
  auto m = MakeManager(0);
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  ASSERT_TRUE(log_->EnforceRetention().ok());
  const Offset remote_end = rolled.back().end_offset;
  // Offset by offset with a tiny max_bytes: exactly the batch holding it.
  for (Offset off = 0_o; off <= remote_end; ++off) {
    auto r = m->Read(id_.tp(), off, 1);
    ASSERT_TRUE(r.ok()) << off << ": " << r.error().message;
    auto hs = Headers(*r);
    ASSERT_EQ(hs.size(), 1u);
    EXPECT_EQ(hs[0].base_offset, Offset(off.value() / 5 * 5));
  }
  // A sequential consumer with a large max_bytes gets the identical bytes.
  Bytes consumed;
  Offset next = 0_o;
  while (next <= remote_end) {
    auto r = m->Read(id_.tp(), next, 3000);
    ASSERT_TRUE(r.ok()) << r.error().message;
    auto hs = Headers(*r);
    ASSERT_FALSE(hs.empty());
    EXPECT_LE(r->size(), 3000u);
    next = hs.back().last_offset() + 1;
    consumed.insert(consumed.end(), r->begin(), r->end());
  }
  EXPECT_EQ(consumed, local);
  EXPECT_EQ(m->Read(id_.tp(), remote_end + 1, 100).error().code, Errc::kNotFound);
}

TEST_F(RemoteLogManagerTest, RetentionExpiresRemoteSegmentsAndMovesLogStart) {
  Produce(60);
  auto m = MakeManager(0);
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  const auto rolled = log_->RolledSegments();
  ASSERT_TRUE(log_->EnforceRetention().ok());
  const size_t before = RemoteLogFiles().size();
  config_.retention_bytes = 3 * 4096;  // local + remote
  m->AddPartition(id_, log_, config_);
  int expired = m->EnforceRetentionOnce();
  EXPECT_GT(expired, 0);
  EXPECT_EQ(RemoteLogFiles().size(), before - size_t(expired));
  RemoteManifest manifest = Manifest();
  EXPECT_EQ(manifest.remote_log_start_offset(), rolled[size_t(expired)].base_offset);
  for (const RemoteSegment& s : manifest.segments()) {  // expired ones: DELETE_FINISHED
    EXPECT_EQ(s.state, s.base_offset < rolled[size_t(expired)].base_offset
                           ? RemoteSegmentState::kDeleteFinished
                           : RemoteSegmentState::kCopyFinished);
  }
  EXPECT_EQ(m->LogStartOffset(id_.tp(), log_->log_start_offset()),
            rolled[size_t(expired)].base_offset);
  EXPECT_EQ(m->Read(id_.tp(), 0_o, 100).error().code, Errc::kNotFound);
  // Total kept (remote + local) is within one segment of retention.bytes.
  EXPECT_LT(manifest.remote_bytes() + log_->size_bytes() - rolled[size_t(expired)].size,
            config_.retention_bytes);
  // The next round forgets the DELETE_FINISHED entries.
  EXPECT_EQ(m->EnforceRetentionOnce(), 0);
  EXPECT_EQ(Manifest().segments().front().base_offset, rolled[size_t(expired)].base_offset);
}

TEST_F(RemoteLogManagerTest, ReadFailsWithRetriableErrorWhenStoreIsDown) {
  Produce(20);
  auto m = MakeManager(0);
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  FaultSpec down;
  down.fail_ratio = 1.0;
  faulty_->SetFault(StorageOp::kGet, down);
  auto r = m->Read(id_.tp(), 0_o, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsRetriable(r.error().code));
  EXPECT_EQ(m->counters().remote_read_failures, 1u);
}

TEST_F(RemoteLogManagerTest, OutageKeepsLocalSegmentsAndUploadsResumeInOrder) {
  auto m = MakeManager(0);
  FaultSpec down;
  down.fail_ratio = 1.0;
  faulty_->SetFault(StorageOp::kPut, down);
  m->Start();
  Produce(60);  // the store is down while segments roll
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto rolled = log_->RolledSegments();
  ASSERT_TRUE(log_->EnforceRetention().ok());
  EXPECT_EQ(log_->RolledSegments().size(), rolled.size());  // nothing un-uploaded deleted
  EXPECT_EQ(log_->log_start_offset(), 0_o);
  EXPECT_EQ(m->counters().uploads, 0u);
  EXPECT_GT(m->PartitionStats(id_.tp()).lag_segments, 0);
  // Produce and local reads go on.
  ASSERT_TRUE(AppendOne(*log_, BatchOptions{}).ok());
  ASSERT_TRUE(log_->Read(0_o, 1000, log_->log_end_offset(), true).ok());

  faulty_->SetFault(StorageOp::kPut, FaultSpec{});  // the store is back
  ASSERT_TRUE(m->WaitForUploads(30000));
  RemoteManifest manifest = Manifest();
  const auto now_rolled = log_->RolledSegments();
  ASSERT_EQ(manifest.segments().size(), now_rolled.size());
  for (size_t i = 0; i < now_rolled.size(); ++i) {
    EXPECT_EQ(manifest.segments()[i].base_offset, now_rolled[i].base_offset);
    EXPECT_EQ(manifest.segments()[i].state, RemoteSegmentState::kCopyFinished);
  }
  EXPECT_EQ(m->PartitionStats(id_.tp()).lag_segments, 0);
  ASSERT_TRUE(log_->EnforceRetention().ok());
  EXPECT_TRUE(log_->RolledSegments().empty());
}

// In a cluster only committed data goes to remote storage: a rolled segment
// waits until it is wholly below the high watermark (the committed end).
TEST_F(RemoteLogManagerTest, OnlySegmentsBelowTheCommittedEndAreUploaded) {
  Produce(60);
  const auto rolled = log_->RolledSegments();
  ASSERT_GT(rolled.size(), 3u);
  std::atomic<Offset> committed = rolled[1].end_offset + 1;  // two segments wholly below
  auto m = MakeManager(0);
  m->AddPartition(id_, log_, config_, [&] { return committed.load(); });
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  RemoteManifest manifest = Manifest();
  ASSERT_EQ(manifest.segments().size(), 2u);
  EXPECT_EQ(manifest.remote_log_end_offset(), rolled[1].end_offset);
  ASSERT_TRUE(log_->EnforceRetention().ok());  // what is not uploaded stays local
  EXPECT_EQ(log_->RolledSegments().front().base_offset, rolled[2].base_offset);

  committed = log_->log_end_offset();  // the rest is committed now: the next scans take it
  ASSERT_TRUE(m->WaitForUploads(30000));
  EXPECT_EQ(Manifest().segments().size(), log_->RolledSegments().size() + 2);
}

// A new leader's segments need not line up with the old leader's (rolls by
// time, or a different segment.bytes): the one straddling the remote end is
// uploaded too, so remote storage has no gap and every offset stays readable.
TEST_F(RemoteLogManagerTest, ANewLeaderWithOtherSegmentBoundariesLeavesNoGap) {
  Produce(40);
  {
    auto m = MakeManager(0);
    m->Start();
    ASSERT_TRUE(m->WaitForUploads(30000));
    m->Stop();
  }
  const Offset old_end = Manifest().remote_log_end_offset();
  ASSERT_GT(old_end, 0_o);
  // The new leader holds the same batches in 5 KiB segments, and more.
  log_ = Replica("t-0-new", 5120);
  ASSERT_NE(log_, nullptr);
  config_.segment_bytes = 5120;
  Produce(30);
  bool straddles = false;
  std::string seen;
  for (const auto& s : log_->RolledSegments()) {
    straddles = straddles || (s.base_offset <= old_end && s.end_offset > old_end);
    seen += fmt::format(" [{}, {}]", s.base_offset, s.end_offset);
  }
  ASSERT_TRUE(straddles) << "no segment across the old remote end " << old_end << ":" << seen;

  auto m = MakeManager(0);  // manages log_ (the new leader's) from the same store
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  const Offset end = Manifest().remote_log_end_offset();
  EXPECT_EQ(end, log_->RolledSegments().back().end_offset);
  for (Offset off = 0_o; off <= end; off += 5) {  // batches of 5 records
    auto r = m->Read(id_.tp(), off, 1);
    ASSERT_TRUE(r.ok()) << off << ": " << r.error().message;
    EXPECT_EQ(Headers(*r).front().base_offset, off);
  }
}

// A segment's aborted transactions go up with it: once local retention has
// dropped it, a read_committed read of remote data still learns them.
TEST_F(RemoteLogManagerTest, AbortedTransactionsAreReadFromRemoteSegments) {
  Produce(3);
  storage::testing::BatchOptions txn;
  txn.producer_id = 9;
  txn.producer_epoch = 0;
  txn.base_sequence = 0;
  txn.transactional = true;
  auto opened = storage::testing::AppendOne(*log_, txn);
  ASSERT_TRUE(opened.ok());
  Produce(10);
  Bytes marker = protocol::BuildTxnMarkerBatch(9, 0, {protocol::ControlType::kAbort, 0}, 2000);
  std::vector<storage::BatchInfo> infos{storage::testing::InfoFor(marker)};
  auto aborted_at = log_->Append(MutableByteView(marker), infos, LeaderEpoch(0),
                                 storage::AppendOrigin::kCoordinator);
  ASSERT_TRUE(aborted_at.ok());
  Produce(20);
  log_->SetHighWatermark(log_->log_end_offset());
  const std::vector<storage::AbortedTxn> expected{
      {9, opened->base_offset, aborted_at->base_offset, aborted_at->base_offset + 1}};
  ASSERT_EQ(log_->AbortedTransactions(0_o, log_->log_end_offset()), expected);

  auto m = MakeManager(0);
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  ASSERT_TRUE(log_->EnforceRetention().ok());
  ASSERT_GT(log_->log_start_offset(), aborted_at->base_offset);  // only remote holds them now
  int with_index = 0;
  const RemoteManifest manifest = Manifest();
  for (const RemoteSegment& seg : manifest.segments()) {
    with_index += seg.has_txn_index;
    EXPECT_EQ(seg.has_txn_index, seg.base_offset <= aborted_at->base_offset &&
                                     aborted_at->base_offset <= seg.end_offset);
  }
  EXPECT_EQ(with_index, 1);
  auto remote = m->AbortedTransactions(id_.tp(), 0_o, log_->log_end_offset());
  ASSERT_TRUE(remote.ok()) << remote.error().message;
  EXPECT_EQ(*remote, expected);
  auto past = m->AbortedTransactions(id_.tp(), aborted_at->base_offset + 1, log_->log_end_offset());
  ASSERT_TRUE(past.ok());
  EXPECT_TRUE(past->empty());
  m->Stop();
}

}  // namespace
}  // namespace strata::tiered
