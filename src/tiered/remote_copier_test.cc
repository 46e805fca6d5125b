// Tests of RemoteCopier over one partition and a file:// store: what it
// uploads (committed segments only, byte-identical), and that a failed
// upload holds back the commit of every segment after it.
#include "tiered/remote_copier.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tiered/tier_test_util.h"

namespace strata::tiered {
namespace {

namespace fs = std::filesystem;
using S = RemoteSegmentState;
using testing::ReadFile;

class RemoteCopierTest : public testing::TierFixture {
 protected:
  // What the copier holds for `p`, for a failed wait's message.
  std::string Describe(TieredPartition& p) {
    std::lock_guard lock(p.mu);
    std::string out = fmt::format("failures {}, inflight", counters_.upload_failures.load());
    for (const auto& [base, f] : p.inflight) out += fmt::format(" {}{}", base, f.done ? "+" : "");
    out += ", pending";
    for (const auto& s : p.pending) out += fmt::format(" {}", s.base_offset);
    return out;
  }
};

TEST_F(RemoteCopierTest, UploadsOnlyCommittedSegmentsByteForByte) {
  Produce(60);
  const auto rolled = log_->RolledSegments();
  ASSERT_GT(rolled.size(), 4u);
  committed_ = rolled[2].end_offset + 1;  // segments 0..2 committed, the rest not yet
  auto p = Partition();
  RemoteCopier copier(ctx_);
  copier.Start();
  {
    std::lock_guard lock(p->mu);
    ASSERT_TRUE(p->LoadManifestLocked());
  }
  auto copy = [&] { copier.CopyLocked(p); };
  auto done = [&] { return RemoteCopier::UploadsDoneLocked(*p); };
  ASSERT_TRUE(Until(*p, copy, done));
  {
    std::lock_guard lock(p->mu);
    ASSERT_EQ(p->manifest.segments().size(), 3u);
    EXPECT_EQ(p->manifest.remote_log_end_offset(), rolled[2].end_offset);
  }
  EXPECT_EQ(Manifest().remote_log_end_offset(), rolled[2].end_offset);  // written, not just held

  committed_ = Offset::Max();
  ASSERT_TRUE(Until(*p, copy, done));
  copier.Stop();
  const RemoteManifest written = Manifest();
  ASSERT_EQ(written.segments().size(), rolled.size());
  for (size_t i = 0; i < rolled.size(); ++i) {
    const RemoteSegment& s = written.segments()[i];
    EXPECT_EQ(s.state, S::kCopyFinished);
    EXPECT_EQ(s.base_offset, rolled[i].base_offset);
    EXPECT_EQ(s.end_offset, rolled[i].end_offset);
    EXPECT_EQ(ReadFile(fs::path(remote_.path()) / RemoteObjectPath(dir_, s, kRemoteLogExt)),
              ReadFile(rolled[i].log_path))
        << s.base_offset;
  }
  EXPECT_EQ(counters_.uploads.load(), rolled.size());
  EXPECT_EQ(counters_.upload_failures.load(), 0u);
}

TEST_F(RemoteCopierTest, AFailedUploadHoldsBackTheCommitOfLaterSegments) {
  Produce(60);
  const auto rolled = log_->RolledSegments();
  ASSERT_GT(rolled.size(), 4u);
  // Segment 1's objects cannot be written; the others upload in parallel.
  store_->part = fmt::format("/{:020d}-", rolled[1].base_offset);
  store_->fail = true;
  options_.copier_threads = 4;
  options_.parallel_lag_segments = 1;
  auto p = Partition();
  RemoteCopier copier(ctx_);
  copier.Start();
  auto copy = [&] { copier.CopyLocked(p); };
  {
    std::lock_guard lock(p->mu);
    ASSERT_TRUE(p->LoadManifestLocked());
  }
  // Until segment 1 failed twice and every segment after it was uploaded.
  ASSERT_TRUE(Until(*p, copy, [&] {
    size_t uploaded_after = 0;
    for (const auto& [base, f] : p->inflight)
      uploaded_after += f.done && base > rolled[1].base_offset;
    return counters_.upload_failures.load() >= 2 && uploaded_after == rolled.size() - 2;
  })) << Describe(*p);
  {
    std::lock_guard lock(p->mu);
    EXPECT_EQ(p->manifest.Find(rolled[0].base_offset, rolled[0].end_offset)->state,
              S::kCopyFinished);
    for (size_t i = 1; i < rolled.size(); ++i) {
      const RemoteSegment* s = p->manifest.Find(rolled[i].base_offset, rolled[i].end_offset);
      if (s != nullptr) {
        EXPECT_EQ(s->state, S::kCopyStarted) << i;
      }
    }
  }
  // Local retention may drop segment 0 only.
  ASSERT_TRUE(log_->EnforceRetention().ok());
  EXPECT_EQ(log_->log_start_offset(), rolled[1].base_offset);

  store_->fail = false;
  ASSERT_TRUE(Until(*p, copy, [&] { return RemoteCopier::UploadsDoneLocked(*p); }));
  copier.Stop();
  const RemoteManifest written = Manifest();
  ASSERT_EQ(written.segments().size(), rolled.size());
  for (const RemoteSegment& s : written.segments()) EXPECT_EQ(s.state, S::kCopyFinished);
}

// remote.log.manager.copy.max.bytes.per.second: uploads wait while the
// recent upload rate is above the cap, so the whole backlog takes about its
// size over the cap (the first window's worth goes at once).
TEST_F(RemoteCopierTest, TheCopyQuotaCapsTheUploadRate) {
  Produce(60);
  const auto rolled = log_->RolledSegments();
  ASSERT_GT(rolled.size(), 4u);
  uint64_t total = 0;
  for (const auto& s : rolled) total += s.size;
  // The backlog in ~4 s at the cap, averaged over 4 windows of 250 ms: at
  // most the windows' allowance (1 s, window starts being aligned) and the
  // last segment go without waiting.
  const uint64_t cap = total / 4;
  CopyQuota quota(cap, 4, std::chrono::milliseconds(250));
  ctx_.copy_quota = &quota;
  options_.copier_threads = 2;
  options_.parallel_lag_segments = 1;
  auto p = Partition();
  RemoteCopier copier(ctx_);
  copier.Start();
  {
    std::lock_guard lock(p->mu);
    ASSERT_TRUE(p->LoadManifestLocked());
  }
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(Until(
      *p, [&] { copier.CopyLocked(p); }, [&] { return RemoteCopier::UploadsDoneLocked(*p); }));
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  copier.Stop();
  EXPECT_EQ(Manifest().segments().size(), rolled.size());
  // At least the backlog less the first windows' allowance over the cap.
  EXPECT_GT(secs, 2.0) << total << " bytes at " << cap << " B/s";
  EXPECT_GT(counters_.copy_throttle_ms.load(), 500u);
}

TEST(CopyQuota, ThrottlesWhileTheRateIsAboveTheBound) {
  CopyQuota unlimited(0, 11, std::chrono::milliseconds(1000));
  unlimited.Record(1 << 30, 0);
  EXPECT_EQ(unlimited.ThrottleTime(0).count(), 0);
  CopyQuota quota(1000, 11, std::chrono::milliseconds(1000));  // 1000 B/s over 11 s
  EXPECT_EQ(quota.ThrottleTime(5000).count(), 0);
  quota.Record(5000, 5000);  // 10 s of allowance at least: within
  EXPECT_EQ(quota.ThrottleTime(5100).count(), 0);
  quota.Record(15000, 5200);  // 20000 B over a 10 s span: 10 s too many
  EXPECT_NEAR(double(quota.ThrottleTime(5200).count()), 10000.0, 2.0);
  EXPECT_EQ(quota.ThrottleTime(5000 + 11000).count(), 0);  // the samples have aged out
}

}  // namespace
}  // namespace strata::tiered
