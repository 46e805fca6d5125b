#pragma once
// TieredLogTest: the fixture shared by tests of RemoteLogManager over one
// partition — a local log of small segments in a temp dir, a file:// store in
// another, and helpers to produce, build a manager and inspect the store.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "storage/log.h"
#include "storage/test_util.h"
#include "tiered/remote_log_manager.h"
#include "tiered/remote_manifest.h"
#include "tiered/test_util.h"

namespace strata::tiered::testing {

inline Bytes ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class TieredLogTest : public ::testing::Test {
 protected:
  TieredLogTest() {
    config_.segment_bytes = 4096;
    config_.index_interval_bytes = 256;
    config_.remote_storage_enable = true;
    config_.local_retention_bytes = 0;  // local copies may go as soon as uploaded
    config_.retention_ms = -1;          // remote retention only where a test asks for it
  }

  // Opens log_ with config_ (a test may change config_ first).
  void OpenLog() {
    auto log =
        storage::Log::Open(std::filesystem::path(local_.path()) / "t-0", config_, Clock::Real());
    ASSERT_TRUE(log.ok()) << log.error().message;
    log_ = std::move(log).value();
  }

  // Appends `n` batches of `records` records of `value_bytes` (5 x 100 B:
  // ~6 batches per 4 KiB segment). Batch i is filled with 'a' + i % 20 and
  // timestamped 1000 + i, so segments differ in content and time.
  void Produce(int n, int records = 5, int value_bytes = 100) {
    for (int i = 0; i < n; ++i) {
      storage::testing::BatchOptions o;
      o.records = records;
      o.value_bytes = value_bytes;
      o.fill = uint8_t('a' + i % 20);
      o.first_timestamp = 1000 + i;
      ASSERT_TRUE(storage::testing::AppendOne(*log_, o).ok());
    }
  }

  // Another replica of log_: its batches, byte for byte, appended as a
  // follower does, into segments of `segment_bytes` (replicas roll at their
  // own offsets), in local_/`name`.
  std::shared_ptr<storage::Log> Replica(const std::string& name, int32_t segment_bytes) {
    storage::LogConfig other = config_;
    other.segment_bytes = segment_bytes;
    auto opened =
        storage::Log::Open(std::filesystem::path(local_.path()) / name, other, Clock::Real());
    EXPECT_TRUE(opened.ok());
    if (!opened.ok()) return nullptr;
    std::shared_ptr<storage::Log> replica = std::move(opened).value();
    Bytes data;  // every batch of log_, read segment by segment
    for (Offset next = log_->log_start_offset(); next < log_->log_end_offset();) {
      auto r = log_->Read(next, 1 << 24, log_->log_end_offset(), true);
      EXPECT_TRUE(r.ok() && !r->records.empty());
      if (!r.ok() || r->records.empty()) return nullptr;
      next = storage::testing::Headers(r->records).back().last_offset() + 1;
      data.insert(data.end(), r->records.begin(), r->records.end());
    }
    std::vector<storage::BatchInfo> infos;
    size_t pos = 0;
    for (const auto& h : storage::testing::Headers(data)) {
      infos.push_back(storage::testing::InfoFor(
          ByteView(data).subspan(pos, static_cast<size_t>(h.size_in_bytes()))));
      pos += static_cast<size_t>(h.size_in_bytes());
    }
    EXPECT_TRUE(replica->AppendAsFollower(MutableByteView(data), infos).ok());
    return replica;
  }

  std::unique_ptr<RemoteStorage> FileStore() const {
    auto store = OpenRemoteStorage("file://" + remote_.path());
    EXPECT_TRUE(store.ok());
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // Short intervals so tests finish fast; remote retention never runs by
  // itself (tests call EnforceRetentionOnce); no global metrics.
  static RemoteLogManagerOptions FastOptions() {
    RemoteLogManagerOptions o;
    o.scan_interval_ms = 5;
    o.retry_backoff_ms = 2;
    o.max_retry_backoff_ms = 50;
    o.retention_interval_ms = 1000000;
    o.register_metrics = false;
    return o;
  }

  // A manager over `store` that manages log_ (not started).
  std::unique_ptr<RemoteLogManager> Manage(std::unique_ptr<RemoteStorage> store,
                                           const RemoteLogManagerOptions& options) {
    ResilientStorage rs;
    rs.storage = std::move(store);
    auto m = std::make_unique<RemoteLogManager>(options, std::move(rs), Clock::Real());
    m->AddPartition(id_, log_, config_);
    return m;
  }

  // Names of the .log objects in the partition's remote directory.
  std::set<std::string> RemoteLogFiles() const {
    std::set<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(remote_dir())) {
      if (e.path().extension() == ".log") out.insert(e.path().filename().string());
    }
    return out;
  }

  RemoteManifest Manifest() const {
    auto m = RemoteManifest::Parse(ReadFile(remote_dir() / ManifestName(LeaderEpoch(-1))));
    EXPECT_TRUE(m.ok());
    return m.ok() ? std::move(m).value() : RemoteManifest{};
  }

  std::filesystem::path remote_dir() const { return std::filesystem::path(remote_.path()) / dir_; }

  TempDir local_, remote_;
  storage::LogConfig config_;
  std::shared_ptr<storage::Log> log_;
  RemotePartitionId id_{"t", 0, "AAAAAAAAAAAAAAAAAAAAAQ"};
  std::string dir_ = "t-0-AAAAAAAAAAAAAAAAAAAAAQ";
};

}  // namespace strata::tiered::testing
