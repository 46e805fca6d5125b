// LogCleaner threads, cleaning concurrent with reads/appends/Close, and a
// throughput measurement (disabled by default; run with
// --gtest_also_run_disabled_tests --gtest_filter='*Throughput*').
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "protocol/compression.h"
#include "storage/cleaner.h"
#include "storage/cleaner_test_util.h"

namespace strata::storage {
namespace {

using protocol::Compression;
using testing::AppendAll;
using testing::KeyedBatch;
using testing::KeyValue;
using testing::LatestByKey;
using testing::ReadAllRecords;

namespace fs = std::filesystem;

class CleanerThreadTest : public testing::CompactedLogTest {
 protected:
  std::shared_ptr<Log> OpenShared(const fs::path& dir, const LogConfig& config) {
    auto log = Log::Open(dir, config, &clock_);
    EXPECT_TRUE(log.ok());
    return log.ok() ? std::shared_ptr<Log>(std::move(*log)) : nullptr;
  }
  // `rounds` overwrites of `keys` keys, one segment per round, plus an active batch.
  void Fill(Log& log, int keys, int rounds) {
    for (int round = 0; round < rounds; ++round) {
      for (int k = 0; k < keys; ++k) {
        Put(log, "key-" + std::to_string(k), "r" + std::to_string(round));
      }
      Roll(log);
    }
    Put(log, "active", "x");
  }
  template <typename Pred>
  static bool WaitFor(Pred pred) {
    for (int i = 0; i < 1000 && !pred(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
  }
};

TEST_F(CleanerThreadTest, BackgroundThreadCleansOnlyCompactedLogs) {
  auto compacted = OpenShared(dir_, config_);
  Fill(*compacted, 5, 4);
  LogConfig plain = config_;
  plain.compacted = false;
  auto other = OpenShared(root_ / "plain-0", plain);
  Fill(*other, 5, 4);
  const auto other_before = ReadAllRecords(*other);

  LogCleaner cleaner({.threads = 1, .backoff_ms = 20, .dedupe_buffer_bytes = 1 << 20}, &clock_);
  cleaner.Register({"compacted", 0}, compacted);
  cleaner.Register({"plain", 0}, other);
  cleaner.Start();
  ASSERT_TRUE(WaitFor([&] { return compacted->cleaner_checkpoint() == 20_o; }));
  // Give the thread another round: the clean log is no longer chosen.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  cleaner.Stop();

  auto after = ReadAllRecords(*compacted);
  ASSERT_EQ(after.size(), 6u);
  EXPECT_EQ(after[0].offset, 15_o);
  EXPECT_EQ(Describe(ReadAllRecords(*other)), Describe(other_before));
  EXPECT_EQ(other->cleaner_checkpoint(), kNoOffset);
  CleanerStats s = cleaner.stats();
  EXPECT_EQ(s.passes, 1);
  EXPECT_EQ(s.segments_cleaned, 4);
  EXPECT_EQ(s.segments_written, 1);
  EXPECT_EQ(s.records_read, 20);
  EXPECT_EQ(s.records_retained, 5);
  EXPECT_GT(s.bytes_read, s.bytes_written);
  EXPECT_GT(s.map_bytes_read, 0);
  EXPECT_EQ(s.errors, 0);
  EXPECT_EQ(s.uncleanable_logs, 0);
  EXPECT_DOUBLE_EQ(s.max_dirty_ratio, 0.0);  // measured after the clean
}

TEST_F(CleanerThreadTest, TwoThreadsCleanSeveralLogs) {
  std::vector<std::shared_ptr<Log>> logs;
  LogCleaner cleaner({.threads = 2, .backoff_ms = 10, .dedupe_buffer_bytes = 2 << 20}, &clock_);
  for (int p = 0; p < 4; ++p) {
    logs.push_back(OpenShared(root_ / ("t-" + std::to_string(p)), config_));
    Fill(*logs.back(), 8, 3);
    cleaner.Register({"t", p}, logs.back());
  }
  cleaner.Start();
  ASSERT_TRUE(WaitFor([&] {
    for (auto& log : logs) {
      if (log->cleaner_checkpoint() != 24_o) return false;
    }
    return true;
  }));
  cleaner.Stop();
  for (auto& log : logs) EXPECT_EQ(ReadAllRecords(*log).size(), 9u);
  EXPECT_EQ(cleaner.stats().passes, 4);
}

TEST_F(CleanerThreadTest, CorruptLogBecomesUncleanable) {
  auto log = OpenShared(dir_, config_);
  Fill(*log, 5, 3);
  ASSERT_TRUE(log->Close().ok());
  // Flip a byte inside a record of the first segment's middle batch; the
  // Open-time tail check (last batch only) does not see it.
  auto bytes = ReadWholeFile(File(0, ".log")).value();
  bytes[bytes.size() / 2] ^= 0xff;
  {
    auto f = storage::File::Open(File(0, ".log"), false, true).value();
    ASSERT_TRUE(f->Append(bytes).ok());
  }
  log = OpenShared(dir_, config_);
  LogCleaner cleaner({.threads = 1, .backoff_ms = 10, .dedupe_buffer_bytes = 1 << 20}, &clock_);
  cleaner.Register({"bad", 0}, log);
  OffsetMap map(1 << 16);
  auto r = cleaner.CleanNow({"bad", 0}, map);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kCorrupt);
  EXPECT_EQ(cleaner.stats().errors, 1);
  EXPECT_EQ(cleaner.stats().uncleanable_logs, 1);
  EXPECT_FALSE(cleaner.CleanFilthiest(map));  // skipped from now on
  EXPECT_TRUE(SwapLeftovers().empty());
  EXPECT_EQ(ReadWholeFile(File(0, ".log")).value(), bytes);  // untouched
  EXPECT_EQ(log->segment_count(), 4);
}

TEST_F(CleanerThreadTest, ReadsAndAppendsRunDuringCleaning) {
  config_.segment_bytes = 8 << 10;  // roll by size: the threads never touch the clock
  auto log = OpenShared(dir_, config_);
  const std::string pad(150, 'p');
  for (int round = 0; round < 10; ++round) {
    for (int k = 0; k < 40; ++k)
      Put(*log, "key-" + std::to_string(k), "r" + std::to_string(round) + pad);
  }
  for (int k = 0; k < 40; ++k) Put(*log, "key-" + std::to_string(k), "final" + pad);

  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  auto reader = [&] {
    while (!stop.load()) {
      auto records = ReadAllRecords(*log);
      Offset prev = kNoOffset;
      for (const auto& r : records) {
        ASSERT_GT(r.offset, prev);
        prev = r.offset;
      }
      auto latest = LatestByKey(records);
      for (int k = 0; k < 40; ++k) {
        ASSERT_EQ(latest["key-" + std::to_string(k)].second, "final" + pad);
      }
      reads.fetch_add(1);
    }
  };
  constexpr int kExtra = 1500;
  std::atomic<bool> writer_done{false};
  std::thread writer([&] {
    for (int i = 0; i < kExtra; ++i)
      Put(*log, "extra-" + std::to_string(i % 300), std::to_string(i) + pad);
    writer_done.store(true);
  });
  std::thread r1(reader), r2(reader);
  int passes = 0;
  // Clean for as long as the writer runs (at least 40 passes), so the count
  // of passes that rewrote something does not depend on machine load.
  for (int i = 0; i < 40 || !writer_done.load(); ++i) {
    auto r = Clean(*log);
    ASSERT_TRUE(r.ok()) << r.error().message;
    passes += r->segments_written > 0 ? 1 : 0;
  }
  writer.join();
  ASSERT_TRUE(WaitFor([&] { return reads.load() > 5; }));
  stop.store(true);
  r1.join();
  r2.join();
  EXPECT_GT(passes, 1);

  ASSERT_TRUE(Clean(*log).ok());
  auto latest = LatestByKey(ReadAllRecords(*log));
  EXPECT_EQ(latest.size(), 340u);
  for (int i = kExtra - 300; i < kExtra; ++i) {
    EXPECT_EQ(latest["extra-" + std::to_string(i % 300)].second, std::to_string(i) + pad);
  }
  ExpectAllIndexesValid();
}

TEST_F(CleanerThreadTest, CloseDuringCleaningIsSafe) {
  auto log = OpenShared(dir_, config_);
  const std::string pad(1000, 'v');
  for (int round = 0; round < 4; ++round) {
    for (int k = 0; k < 2000; ++k)
      Put(*log, "key-" + std::to_string(k), std::to_string(round) + pad);
    Roll(*log);
  }
  Put(*log, "active", "x");
  std::thread cleaning([&] {
    auto r = Clean(*log);
    if (!r.ok()) {
      EXPECT_EQ(r.error().code, Errc::kShuttingDown) << r.error().message;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(log->Close().ok());
  cleaning.join();
  log = OpenShared(dir_, config_);
  EXPECT_TRUE(SwapLeftovers().empty());
  auto latest = LatestByKey(ReadAllRecords(*log));
  EXPECT_EQ(latest.size(), 2001u);
  EXPECT_EQ(latest["key-7"].second, "3" + pad);
}

// Throughput on ~200 MB of log with 10k keys (values of ~1 KiB, 20 per batch).
class CleanerThroughputTest : public CleanerThreadTest,
                              public ::testing::WithParamInterface<Compression> {};

TEST_P(CleanerThroughputTest, DISABLED_Throughput200MB) {
  config_.segment_bytes = 64 << 20;
  auto log = OpenShared(dir_, config_);
  // Hex text from a fixed LCG: compresses about 2:1, like typical payloads.
  std::string pool(1 << 16, ' ');
  uint64_t x = 42;
  for (char& c : pool) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    c = "0123456789abcdef"[x >> 60];
  }
  int64_t seq = 0;
  while (log->size_bytes() < (200ll << 20)) {
    std::vector<KeyValue> kvs;
    for (int j = 0; j < 20; ++j, ++seq) {
      kvs.emplace_back(
          "key-" + std::to_string((seq * 7919) % 10000),
          std::to_string(seq) + pool.substr(size_t(seq * 977) % (pool.size() - 1000), 1000));
    }
    Put(*log, kvs, {.codec = GetParam()});
  }
  Roll(*log);
  Put(*log, "active", "x");
  const int64_t total = log->size_bytes();
  OffsetMap map(128 << 20);
  auto started = std::chrono::steady_clock::now();
  auto r = Clean(*log);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(LatestByKey(ReadAllRecords(*log)).size(), 10001u);
  std::printf(
      "[cleaner throughput] codec=%s log=%.1f MB read(map)=%.1f MB read(copy)=%.1f MB "
      "written=%.2f MB records %lld -> %lld in %.2f s: %.1f MB/s of log cleaned\n",
      protocol::CompressionName(GetParam()), total / 1e6, r->map_bytes_read / 1e6,
      r->bytes_read / 1e6, r->bytes_written / 1e6, static_cast<long long>(r->records_read),
      static_cast<long long>(r->records_retained), secs, total / 1e6 / secs);
}

INSTANTIATE_TEST_SUITE_P(Codecs, CleanerThroughputTest,
                         ::testing::Values(Compression::kNone, Compression::kLz4,
                                           Compression::kZstd),
                         [](const auto& info) {
                           return std::string(protocol::CompressionName(info.param));
                         });

}  // namespace
}  // namespace strata::storage
