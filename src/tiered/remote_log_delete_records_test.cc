// Tests of DeleteRecords on tiered partitions (remote segments below the new
// log start are deleted promptly) and of the copier's commit: the retry of a
// failed manifest write, and in-order commit when an earlier upload fails.
#include <gtest/gtest.h>

#include <asio/post.hpp>
#include <atomic>
#include <fstream>
#include <future>
#include <set>
#include <thread>

#include "storage/test_util.h"
#include "tiered/fault_injecting_storage.h"
#include "tiered/remote_log_manager.h"
#include "tiered/remote_manifest.h"
#include "tiered/test_util.h"
#include "tiered/tiered_log_test_util.h"

namespace strata::tiered {
namespace {

// Fails Puts of manifest.json that commit a COPY_FINISHED segment while `fail` is set, counting
// every manifest Put attempt.
class FailingCommitStorage : public testing::ForwardingStorage {
 public:
  using ForwardingStorage::ForwardingStorage;
  using RemoteStorage::Put;
  Status Put(std::string_view p, const PutSource& s, const CallOptions& o) override {
    if (p.ends_with(ManifestName(LeaderEpoch(-1)))) {
      manifest_puts.fetch_add(1);
      std::string_view text(reinterpret_cast<const char*>(s.bytes.data()), s.bytes.size());
      if (fail.load() && text.find("COPY_FINISHED") != std::string_view::npos) {
        return MakeError(Errc::kUnavailable, "injected manifest write failure");
      }
    }
    return inner_->Put(p, s, o);
  }
  std::atomic<bool> fail{false};
  std::atomic<int> manifest_puts{0};
};

// Fails every Put whose path contains `part` while `fail` is set.
class FailingPathStorage : public testing::ForwardingStorage {
 public:
  FailingPathStorage(RemoteStorage* inner, std::string part)
      : ForwardingStorage(inner), part_(std::move(part)) {}
  using RemoteStorage::Put;
  Status Put(std::string_view p, const PutSource& s, const CallOptions& o) override {
    if (fail.load() && p.find(part_) != std::string_view::npos) {
      failures.fetch_add(1);
      return MakeError(Errc::kUnavailable, "injected failure");
    }
    return inner_->Put(p, s, o);
  }
  std::atomic<bool> fail{true};
  std::atomic<int> failures{0};

 private:
  std::string part_;
};

// Holds manifest Puts for `delay` while `slow` is set, counting those it held.
class SlowManifestStorage : public testing::ForwardingStorage {
 public:
  using ForwardingStorage::ForwardingStorage;
  using RemoteStorage::Put;
  Status Put(std::string_view p, const PutSource& s, const CallOptions& o) override {
    if (slow.load() && p.ends_with(ManifestName(LeaderEpoch(-1)))) {
      held.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    }
    return inner_->Put(p, s, o);
  }
  std::atomic<bool> slow{false};
  std::atomic<int> held{0};
};

class RemoteDeleteRecordsTest : public testing::TieredLogTest {
 protected:
  void SetUp() override {
    OpenLog();
    backend_ = FileStore();
  }

  std::unique_ptr<RemoteLogManager> MakeManager(std::unique_ptr<RemoteStorage> store,
                                                int reader_threads = 2) {
    RemoteLogManagerOptions o = FastOptions();
    o.reader_threads = reader_threads;
    o.copier_threads = 2;
    o.retry_backoff_ms = 50;
    o.max_retry_backoff_ms = 200;
    return Manage(std::move(store), o);
  }
  std::unique_ptr<RemoteLogManager> MakeFaultyManager(int reader_threads = 2) {
    auto faulty = std::make_unique<FaultInjectingStorage>(
        std::make_unique<testing::ForwardingStorage>(backend_.get()), 1);
    faulty_ = faulty.get();
    return MakeManager(std::move(faulty), reader_threads);
  }

  // Polls until `n` segments are DELETE_FINISHED in the stored manifest (or 5 s pass).
  bool WaitForDeleted(size_t n) {
    for (int i = 0; i < 500; ++i) {
      size_t done = 0;
      const RemoteManifest manifest = Manifest();
      for (const auto& s : manifest.segments()) {
        done += s.state == RemoteSegmentState::kDeleteFinished;
      }
      if (done >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::unique_ptr<RemoteStorage> backend_;
  FaultInjectingStorage* faulty_ = nullptr;
};

TEST_F(RemoteDeleteRecordsTest, DeletesRemoteSegmentsBelowNewStartPromptly) {
  Produce(60);
  auto m = MakeFaultyManager();
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  const auto rolled = log_->RolledSegments();
  ASSERT_GT(rolled.size(), 6u);
  ASSERT_TRUE(log_->EnforceRetention().ok());  // local keeps only the active segment
  const size_t files_before = RemoteLogFiles().size();
  ASSERT_EQ(files_before, rolled.size());

  // A new start inside segment 3: segments 0-2 go, segment 3 stays (partly readable).
  const Offset start = rolled[3].base_offset + 2;
  ASSERT_TRUE(m->DeleteRecordsBefore(id_.tp(), start).ok());
  EXPECT_EQ(m->LogStartOffset(id_.tp(), log_->log_start_offset()), start);  // at once
  ASSERT_TRUE(WaitForDeleted(3));  // well before the (disabled) retention tick
  EXPECT_EQ(RemoteLogFiles().size(), files_before - 3);
  RemoteManifest manifest = Manifest();
  for (const RemoteSegment& s : manifest.segments()) {
    EXPECT_EQ(s.state, s.base_offset < rolled[3].base_offset ? RemoteSegmentState::kDeleteFinished
                                                             : RemoteSegmentState::kCopyFinished)
        << s.base_offset;
  }
  EXPECT_EQ(manifest.remote_log_start_offset(), rolled[3].base_offset);
  EXPECT_EQ(m->counters().segments_expired, 3u);
  EXPECT_EQ(m->LogStartOffset(id_.tp(), log_->log_start_offset()), start);
  EXPECT_EQ(m->Read(id_.tp(), rolled[2].end_offset, 100).error().code, Errc::kNotFound);
  EXPECT_TRUE(m->Read(id_.tp(), start, 100).ok());
  // A lower offset later does not move the start back.
  ASSERT_TRUE(m->DeleteRecordsBefore(id_.tp(), 1_o).ok());
  EXPECT_EQ(m->LogStartOffset(id_.tp(), log_->log_start_offset()), start);
  EXPECT_EQ(m->DeleteRecordsBefore({"nope", 0}, 5_o).error().code, Errc::kNotFound);
}

TEST_F(RemoteDeleteRecordsTest, DeletionFailingWhileStoreIsDownIsFinishedLater) {
  Produce(40);
  auto m = MakeFaultyManager();
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  const auto rolled = log_->RolledSegments();
  ASSERT_TRUE(log_->EnforceRetention().ok());
  FaultSpec down;
  down.fail_ratio = 1.0;
  faulty_->SetFault(StorageOp::kDelete, down);
  const Offset start = rolled[2].end_offset + 1;
  ASSERT_TRUE(m->DeleteRecordsBefore(id_.tp(), start).ok());
  EXPECT_EQ(m->LogStartOffset(id_.tp(), log_->log_start_offset()), start);
  // The background deletion fails: the first segment is durably
  // DELETE_STARTED but its objects remain.
  for (int i = 0; i < 500 && faulty_->counters().injected_failures == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Manifest().segments().front().state, RemoteSegmentState::kDeleteStarted);
  EXPECT_EQ(RemoteLogFiles().size(), rolled.size());
  EXPECT_EQ(m->counters().segments_expired, 0u);

  faulty_->SetFault(StorageOp::kDelete, FaultSpec{});  // back: the retention task finishes it
  EXPECT_EQ(m->EnforceRetentionOnce(), 3);
  EXPECT_EQ(RemoteLogFiles().size(), rolled.size() - 3);
  EXPECT_EQ(Manifest().remote_log_start_offset(), rolled[3].base_offset);
  EXPECT_EQ(m->LogStartOffset(id_.tp(), log_->log_start_offset()), start);
}

TEST_F(RemoteDeleteRecordsTest, SlowDeletionDoesNotHoldTheReaderPool) {
  Produce(40);
  auto m = MakeFaultyManager(/*reader_threads=*/1);
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  const auto rolled = log_->RolledSegments();
  ASSERT_TRUE(log_->EnforceRetention().ok());
  FaultSpec slow;
  slow.delay_ratio = 1.0;
  slow.delay = std::chrono::milliseconds(3000);
  faulty_->SetFault(StorageOp::kDelete, slow);
  ASSERT_TRUE(m->DeleteRecordsBefore(id_.tp(), rolled[2].end_offset + 1).ok());
  for (int i = 0; i < 500 && faulty_->counters().injected_delays == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(faulty_->counters().injected_delays, 0u);  // a Delete is stuck in the store
  // The (single) reader thread is free for the remote reads Fetch posts there.
  std::promise<void> ran;
  asio::post(m->reader_pool(), [&] { ran.set_value(); });
  EXPECT_EQ(ran.get_future().wait_for(std::chrono::milliseconds(1500)), std::future_status::ready);
  faulty_->SetFault(StorageOp::kDelete, FaultSpec{});
  EXPECT_TRUE(WaitForDeleted(3));
}

TEST_F(RemoteDeleteRecordsTest, ReadsDoNotWaitForASlowManifestWrite) {
  Produce(40);
  auto store = std::make_unique<SlowManifestStorage>(backend_.get());
  SlowManifestStorage* s = store.get();
  auto m = MakeManager(std::move(store));
  m->Start();
  ASSERT_TRUE(m->WaitForUploads(30000));
  const auto rolled = log_->RolledSegments();
  ASSERT_TRUE(log_->EnforceRetention().ok());  // remote-only now
  // DeleteRecords marks segment 0 DELETE_STARTED and writes the manifest,
  // holding the partition's lock across that (slow) Put.
  s->slow = true;
  ASSERT_TRUE(m->DeleteRecordsBefore(id_.tp(), rolled[0].end_offset + 1).ok());
  for (int i = 0; i < 300 && s->held.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(s->held.load(), 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = m->Read(id_.tp(), rolled[3].base_offset, 1000);
  const auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(storage::testing::Headers(*r).front().base_offset, rolled[3].base_offset);
  EXPECT_LT(waited, std::chrono::milliseconds(1000));  // the Put holds the lock for 2 s
  // Segment 0 is hidden from reads as soon as its deletion starts.
  EXPECT_EQ(m->Read(id_.tp(), rolled[0].base_offset, 1000).error().code, Errc::kNotFound);
  s->slow = false;
  EXPECT_TRUE(WaitForDeleted(1));
}

TEST_F(RemoteDeleteRecordsTest, FailedManifestCommitIsRetriedWithBackoff) {
  Produce(40);
  const auto rolled = log_->RolledSegments();
  auto store = std::make_unique<FailingCommitStorage>(backend_.get());
  FailingCommitStorage* s = store.get();
  s->fail = true;
  auto m = MakeManager(std::move(store));
  m->Start();
  // Wait for the first failed commit, then count retries over 600 ms.
  for (int i = 0; i < 500 && m->counters().manifest_write_failures == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(m->counters().manifest_write_failures, 0u);
  const int puts_before = s->manifest_puts.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const int retries = s->manifest_puts.load() - puts_before;
  // Backoff 50, 100, 200, 200 ms: a handful, not one per 5 ms scan.
  EXPECT_GE(retries, 2);
  EXPECT_LE(retries, 8);
  EXPECT_EQ(log_->log_start_offset(), 0_o);
  ASSERT_TRUE(log_->EnforceRetention().ok());  // nothing committed: nothing deleted locally
  EXPECT_EQ(log_->RolledSegments().size(), rolled.size());

  s->fail = false;
  ASSERT_TRUE(m->WaitForUploads(30000));
  m->Stop();
  RemoteManifest manifest = Manifest();
  ASSERT_EQ(manifest.segments().size(), rolled.size());
  for (size_t i = 0; i < rolled.size(); ++i) {
    EXPECT_EQ(manifest.segments()[i].base_offset, rolled[i].base_offset);
    EXPECT_EQ(manifest.segments()[i].state, RemoteSegmentState::kCopyFinished);
  }
  EXPECT_EQ(RemoteLogFiles().size(), rolled.size());
  EXPECT_EQ(m->counters().uploads, rolled.size());
}

TEST_F(RemoteDeleteRecordsTest, LaterUploadsWaitForAFailedEarlierOne) {
  Produce(60);
  const auto rolled = log_->RolledSegments();
  ASSERT_GT(rolled.size(), 5u);
  // Segment 0's objects cannot be written; the others upload in parallel.
  auto store = std::make_unique<FailingPathStorage>(backend_.get(), "/00000000000000000000-");
  FailingPathStorage* s = store.get();
  config_.local_retention_bytes = 0;
  auto m = MakeManager(std::move(store));
  m->Start();
  for (int i = 0; i < 500 && (s->failures.load() < 2 || m->counters().upload_failures < 2); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(m->counters().upload_failures, 2u);
  // Nothing is committed past the missing segment, so local retention keeps it.
  EXPECT_EQ(m->RemoteLogEndOffset(id_.tp()), kNoOffset);
  EXPECT_EQ(m->counters().uploads, 0u);
  ASSERT_TRUE(log_->EnforceRetention().ok());
  EXPECT_EQ(log_->log_start_offset(), 0_o);
  EXPECT_EQ(log_->RolledSegments().size(), rolled.size());

  s->fail = false;
  ASSERT_TRUE(m->WaitForUploads(30000));
  m->Stop();
  RemoteManifest manifest = Manifest();
  ASSERT_EQ(manifest.segments().size(), rolled.size());
  for (size_t i = 0; i < rolled.size(); ++i) {
    EXPECT_EQ(manifest.segments()[i].base_offset, rolled[i].base_offset);
    EXPECT_EQ(manifest.segments()[i].state, RemoteSegmentState::kCopyFinished);
  }
  EXPECT_EQ(m->counters().uploads, rolled.size());
}

}  // namespace
}  // namespace strata::tiered
