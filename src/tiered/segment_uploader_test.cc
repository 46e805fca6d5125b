// UploadSegment's error classification: kNotFound ("the segment is gone, drop
// it") only when the local .log is gone; a producer snapshot pruned during the
// upload means "no snapshot", not a lost segment.
#include "tiered/segment_uploader.h"

#include <gtest/gtest.h>

#include "storage/file.h"
#include "storage/test_util.h"
#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

namespace fs = std::filesystem;

// Fails Puts whose path ends with `ext`: first runs `before` (e.g. pruning
// the local file), then answers kNotFound as a store reading a vanished
// source would.
class MissingSourceStorage : public testing::ForwardingStorage {
 public:
  MissingSourceStorage(RemoteStorage* inner, std::string ext, std::function<void()> before)
      : ForwardingStorage(inner), ext_(std::move(ext)), before_(std::move(before)) {}
  using RemoteStorage::Put;
  Status Put(std::string_view p, const PutSource& s, const CallOptions& o) override {
    if (p.ends_with(ext_)) {
      before_();
      return MakeError(Errc::kNotFound, "source gone: " + std::string(p));
    }
    return inner_->Put(p, s, o);
  }

 private:
  std::string ext_;
  std::function<void()> before_;
};

class SegmentUploaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage::LogConfig config;
    config.segment_bytes = 2048;
    log_ = storage::Log::Open(fs::path(local_.path()) / "t-0", config, Clock::Real()).value();
    for (int i = 0; i < 8; ++i) {
      storage::testing::BatchOptions o;
      o.records = 5;
      o.value_bytes = 100;
      o.producer_id = 7;  // idempotent: rolls write producer snapshots
      o.producer_epoch = 0;
      o.base_sequence = i * 5;
      ASSERT_TRUE(storage::testing::AppendOne(*log_, o).ok());
    }
    ASSERT_GE(log_->RolledSegments().size(), 2u);
    rolled_ = log_->RolledSegments().front();
    snapshot_ = rolled_.log_path.parent_path() /
                storage::OffsetFileName((rolled_.end_offset + 1).value(), ".snapshot");
    ASSERT_TRUE(fs::exists(snapshot_));
    fs_ = OpenRemoteStorage("file://" + remote_.path()).value();
    seg_.base_offset = rolled_.base_offset;
    seg_.end_offset = rolled_.end_offset;
    seg_.size = rolled_.size;
    seg_.uuid = "u";
  }

  testing::TempDir local_, remote_;
  std::shared_ptr<storage::Log> log_;
  storage::SegmentSummary rolled_;
  fs::path snapshot_;
  std::unique_ptr<RemoteStorage> fs_;
  RemoteSegment seg_;
};

TEST_F(SegmentUploaderTest, SnapshotPrunedDuringUploadIsNoSnapshot) {
  MissingSourceStorage store(fs_.get(), ".snapshot", [&] { fs::remove(snapshot_); });
  ASSERT_TRUE(UploadSegment(store, "d", rolled_, {}, &seg_).ok());
  EXPECT_FALSE(seg_.has_snapshot);
  EXPECT_TRUE(fs::exists(fs::path(remote_.path()) / RemoteObjectPath("d", seg_, kRemoteLogExt)));
}

TEST_F(SegmentUploaderTest, MissingObjectWithTheLogPresentIsRetriableNotGone) {
  MissingSourceStorage store(fs_.get(), ".index", [] {});
  auto st = UploadSegment(store, "d", rolled_, {}, &seg_);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kIoError);
}

TEST_F(SegmentUploaderTest, GoneLogIsNotFound) {
  fs::remove(rolled_.log_path);
  auto st = UploadSegment(*fs_, "d", rolled_, {}, &seg_);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kNotFound);
}

}  // namespace
}  // namespace strata::tiered
