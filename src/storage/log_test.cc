// Log append/read/roll/index/reopen behaviour.
#include "storage/log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "storage/file.h"
#include "storage/offset_index.h"
#include "storage/test_util.h"
#include "storage/time_index.h"

namespace strata::storage {
namespace {

using testing::AppendAll;
using testing::AppendOne;
using testing::BatchOptions;
using testing::Headers;
using testing::MakeBatch;
using testing::Stamped;

class LogTest : public testing::TempDirTest {
 protected:
  std::unique_ptr<Log> OpenLog(const LogConfig& config = LogConfig()) {
    auto log = Log::Open(dir_, config, &clock_);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().message);
    return log.ok() ? std::move(*log) : nullptr;
  }

  ManualClock clock_{1'700'000'000'000};
};

TEST_F(LogTest, AppendReadRoundTripExactBytes) {
  auto log = OpenLog();
  Bytes a = MakeBatch({.records = 3, .first_timestamp = 5000, .fill = 'a'});
  Bytes b = MakeBatch({.records = 2, .first_timestamp = 6000, .fill = 'b'});
  auto r1 = AppendAll(*log, {a}, 7);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(r1->base_offset, 0_o);
  EXPECT_EQ(r1->last_offset, 2_o);
  EXPECT_EQ(r1->log_append_time, -1);
  EXPECT_FALSE(r1->duplicate);
  auto r2 = AppendAll(*log, {b}, 7);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->base_offset, 3_o);
  EXPECT_EQ(r2->last_offset, 4_o);
  EXPECT_EQ(log->log_end_offset(), 5_o);

  auto read = log->Read(0_o, 1 << 20, Offset::Max(), false);
  ASSERT_TRUE(read.ok());
  Bytes expected = Stamped(a, 0_o, 7);
  Bytes sb = Stamped(b, 3_o, 7);
  expected.insert(expected.end(), sb.begin(), sb.end());
  EXPECT_EQ(read->records, expected);
  EXPECT_EQ(read->log_start_offset, 0_o);
  EXPECT_EQ(read->log_end_offset, 5_o);
  EXPECT_TRUE(protocol::BatchCrcValid(ByteView(read->records).subspan(0, a.size())));

  // The .log file holds exactly the same bytes.
  auto on_disk = ReadWholeFile(File(0, ".log"));
  ASSERT_TRUE(on_disk.ok());
  EXPECT_EQ(*on_disk, expected);
}

TEST_F(LogTest, ReadMidBatchReturnsContainingBatch) {
  auto log = OpenLog();
  ASSERT_TRUE(AppendOne(*log, {.records = 4}).ok());  // 0..3
  ASSERT_TRUE(AppendOne(*log, {.records = 4}).ok());  // 4..7
  auto read = log->Read(6_o, 1 << 20, Offset::Max(), false);
  ASSERT_TRUE(read.ok());
  auto headers = Headers(read->records);
  ASSERT_EQ(headers.size(), 1u);
  EXPECT_EQ(headers[0].base_offset, 4_o);
  EXPECT_EQ(headers[0].last_offset(), 7_o);
}

TEST_F(LogTest, ReadLimitsAndRange) {
  auto log = OpenLog();
  Bytes batch = MakeBatch({.records = 2, .value_bytes = 100});
  const int32_t size = static_cast<int32_t>(batch.size());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(AppendAll(*log, {batch}).ok());  // 0..7

  auto two = log->Read(0_o, 2 * size + size / 2, Offset::Max(), false);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->records.size(), size_t(2 * size));

  auto none = log->Read(0_o, size - 1, Offset::Max(), false);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->records.empty());

  auto one = log->Read(0_o, size - 1, Offset::Max(), true);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->records.size(), size_t(size));

  // max_offset 5 (high watermark inside the third batch): only 0..3 visible.
  auto below_hw = log->Read(0_o, 1 << 20, 5_o, true);
  ASSERT_TRUE(below_hw.ok());
  ASSERT_EQ(Headers(below_hw->records).size(), 2u);
  EXPECT_EQ(Headers(below_hw->records).back().last_offset(), 3_o);
  auto at_hw = log->Read(6_o, 1 << 20, 6_o, true);
  ASSERT_TRUE(at_hw.ok());
  EXPECT_TRUE(at_hw->records.empty());

  auto at_end = log->Read(8_o, 1 << 20, Offset::Max(), true);
  ASSERT_TRUE(at_end.ok());
  EXPECT_TRUE(at_end->records.empty());
  EXPECT_EQ(at_end->log_end_offset, 8_o);
  auto past_end = log->Read(9_o, 1 << 20, Offset::Max(), true);
  ASSERT_FALSE(past_end.ok());
  EXPECT_EQ(past_end.error().code, Errc::kOutOfRange);
}

TEST_F(LogTest, RollsBySize) {
  LogConfig config;
  Bytes batch = MakeBatch({.records = 1, .value_bytes = 200});
  config.segment_bytes = static_cast<int64_t>(batch.size()) * 3;
  auto log = OpenLog(config);
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(AppendAll(*log, {batch}).ok());
  // Three batches fit exactly per segment: bases 0, 3, 6.
  EXPECT_EQ(log->segment_count(), 3);
  for (int64_t base : {0, 3, 6}) EXPECT_TRUE(std::filesystem::exists(File(base, ".log"))) << base;
  EXPECT_EQ(std::filesystem::file_size(File(0, ".log")), batch.size() * 3);
  EXPECT_EQ(std::filesystem::file_size(File(6, ".log")), batch.size());
  // A producer snapshot is named after each new segment.
  EXPECT_TRUE(std::filesystem::exists(File(3, ".snapshot")));
  EXPECT_TRUE(std::filesystem::exists(File(6, ".snapshot")));
  // Reads cross segments in order.
  for (Offset off = 0_o; off < 7_o; ++off) {
    auto read = log->Read(off, 1 << 20, Offset::Max(), false);
    ASSERT_TRUE(read.ok());
    ASSERT_FALSE(read->records.empty());
    EXPECT_EQ(Headers(read->records).front().base_offset, off);
  }
}

TEST_F(LogTest, RollsByTime) {
  LogConfig config;
  config.segment_ms = 1000;
  auto log = OpenLog(config);
  ASSERT_TRUE(AppendOne(*log, {}).ok());
  clock_.Advance(1000);
  ASSERT_TRUE(AppendOne(*log, {}).ok());
  EXPECT_EQ(log->segment_count(), 1);  // exactly segment.ms: not yet
  clock_.Advance(1);
  auto r = AppendOne(*log, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(log->segment_count(), 2);
  EXPECT_TRUE(std::filesystem::exists(File(2, ".log")));
}

TEST_F(LogTest, IndexesMatchBatchesAcrossManyBatches) {
  LogConfig config;
  config.index_interval_bytes = 1000;
  auto log = OpenLog(config);
  std::vector<std::pair<Offset, uint32_t>> batches;  // (last offset, position)
  uint32_t pos = 0;
  for (int i = 0; i < 200; ++i) {
    Bytes b =
        MakeBatch({.records = 1 + i % 3, .first_timestamp = 1000 + 10 * i, .value_bytes = 50});
    auto r = AppendAll(*log, {b});
    ASSERT_TRUE(r.ok());
    batches.push_back({r->last_offset, pos});
    pos += static_cast<uint32_t>(b.size());
  }
  auto index = OffsetIndex::Open(File(0, ".index"), 0, 1 << 20);
  ASSERT_TRUE(index.ok());
  ASSERT_GT((*index)->entries(), 10u);
  // Every entry names the batch starting at its position (kafka-dump-log's check).
  for (size_t i = 0; i < (*index)->entries(); ++i) {
    auto e = (*index)->entry(i);
    auto it = std::find_if(batches.begin(), batches.end(),
                           [&](const auto& b) { return b.second == e.position; });
    ASSERT_NE(it, batches.end());
    EXPECT_EQ(it->first, Offset(e.offset));
  }
  EXPECT_EQ(std::filesystem::file_size(File(0, ".index")), (*index)->entries() * 8);
  // Kafka's rule: the first entry comes with the first batch that starts more
  // than index.interval.bytes after position 0.
  auto first = (*index)->entry(0);
  EXPECT_GT(first.position, 1000u);
  auto prev = std::find_if(batches.begin(), batches.end(),
                           [&](const auto& b) { return b.second == first.position; });
  EXPECT_LE((prev - 1)->second, 1000u);

  auto tindex = TimeIndex::Open(File(0, ".timeindex"), 0, 1 << 20);
  ASSERT_TRUE(tindex.ok());
  EXPECT_EQ((*tindex)->entries(), (*index)->entries());
  for (size_t i = 0; i < (*tindex)->entries(); ++i) {
    EXPECT_EQ((*tindex)->entry(i).offset, (*index)->entry(i).offset);
  }
  // Every offset reads back from its own batch.
  for (Offset off = 0_o; off < log->log_end_offset(); off += 7) {
    auto read = log->Read(off, 1, Offset::Max(), true);
    ASSERT_TRUE(read.ok());
    auto h = Headers(read->records);
    ASSERT_EQ(h.size(), 1u);
    EXPECT_LE(h[0].base_offset, off);
    EXPECT_GE(h[0].last_offset(), off);
  }
}

TEST_F(LogTest, RollsWhenIndexFullAndOnConfigUpdate) {
  LogConfig config;
  config.index_interval_bytes = 0;  // an index entry for every batch but the first
  config.segment_index_bytes = 48;  // time index: 4 slots, one kept for the roll
  auto log = OpenLog(config);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(AppendOne(*log, {.first_timestamp = 1000 + i}).ok());
  }
  EXPECT_EQ(log->segment_count(), 2);
  EXPECT_TRUE(std::filesystem::exists(File(4, ".log")));
  EXPECT_EQ(std::filesystem::file_size(File(0, ".index")), 3u * 8);
  // The roll's max-timestamp entry equals the last entry, so it is not repeated.
  EXPECT_EQ(std::filesystem::file_size(File(0, ".timeindex")), 3u * 12);

  config.segment_index_bytes = 1 << 20;
  config.segment_bytes = int64_t(MakeBatch({}).size());  // one batch per segment
  log->UpdateConfig(config);
  ASSERT_TRUE(AppendOne(*log, {.first_timestamp = 2000}).ok());
  EXPECT_EQ(log->segment_count(), 3);
  EXPECT_TRUE(std::filesystem::exists(File(5, ".log")));
}

TEST_F(LogTest, ReopenAfterCloseKeepsEverything) {
  LogConfig config;
  config.index_interval_bytes = 100;
  Bytes all;
  {
    auto log = OpenLog(config);
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(AppendOne(*log, {.records = 2, .first_timestamp = 100 + i}, 3).ok());
    }
    auto read = log->Read(0_o, 1 << 30, Offset::Max(), false);
    ASSERT_TRUE(read.ok());
    all = read->records;
    ASSERT_TRUE(log->Close().ok());
  }
  EXPECT_TRUE(std::filesystem::exists(dir_ / "strata-clean-shutdown"));
  auto index_bytes = ReadWholeFile(File(0, ".index"));
  auto log = OpenLog(config);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "strata-clean-shutdown"));
  EXPECT_EQ(log->log_end_offset(), 40_o);
  EXPECT_EQ(log->latest_epoch(), LeaderEpoch(3));
  auto read = log->Read(0_o, 1 << 30, Offset::Max(), false);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->records, all);
  EXPECT_EQ(*ReadWholeFile(File(0, ".index")), *index_bytes);  // trusted, not rebuilt
  auto r = AppendOne(*log, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->base_offset, 40_o);
}

TEST_F(LogTest, LogAppendTimeStampsBatches) {
  LogConfig config;
  config.message_timestamp_log_append = true;
  auto log = OpenLog(config);
  auto r = AppendOne(*log, {.records = 2, .first_timestamp = 5});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->log_append_time, clock_.NowMs());
  auto read = log->Read(0_o, 1 << 20, Offset::Max(), false);
  ASSERT_TRUE(read.ok());
  auto h = Headers(read->records);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].max_timestamp, clock_.NowMs());
  EXPECT_TRUE(h[0].log_append_time());
  EXPECT_TRUE(protocol::BatchCrcValid(read->records));
  auto max = log->MaxTimestamp();
  EXPECT_EQ(max.timestamp, clock_.NowMs());
  EXPECT_EQ(max.offset, 0_o);
}

TEST_F(LogTest, RejectsMismatchedInfosAndTooLarge) {
  LogConfig config;
  config.max_message_bytes = 200;
  auto log = OpenLog(config);
  Bytes big = MakeBatch({.value_bytes = 300});
  auto r = AppendAll(*log, {big});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kTooLarge);
  Bytes small = MakeBatch({});
  std::vector<BatchInfo> infos{testing::InfoFor(small)};
  infos[0].size -= 1;
  auto bad = log->Append(MutableByteView(small), infos, LeaderEpoch(0));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(log->log_end_offset(), 0_o);
}

TEST_F(LogTest, OffsetForTimestampIsRecordLevel) {
  LogConfig config;
  config.index_interval_bytes = 50;
  auto log = OpenLog(config);
  // Batch k holds records with timestamps 1000 + 10k + {0, 2, 4}.
  for (int k = 0; k < 30; ++k) {
    ASSERT_TRUE(
        AppendOne(*log, {.records = 3, .first_timestamp = 1000 + 10 * k, .timestamp_step = 2})
            .ok());
  }
  auto hit = log->OffsetForTimestamp(1000 + 10 * 17 + 3);  // record ts 1174 is offset 53
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->offset, Offset(17 * 3 + 2));
  EXPECT_EQ(hit->timestamp, 1000 + 10 * 17 + 4);
  auto first = log->OffsetForTimestamp(0);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->offset, 0_o);
  EXPECT_FALSE(log->OffsetForTimestamp(1000 + 10 * 29 + 5).has_value());
  auto max = log->MaxTimestamp();
  EXPECT_EQ(max.timestamp, 1000 + 10 * 29 + 4);
  EXPECT_EQ(max.offset, 89_o);
}

TEST_F(LogTest, LeaderEpochCheckpointAndEndOffsetForEpoch) {
  {
    auto log = OpenLog();
    ASSERT_TRUE(AppendOne(*log, {.records = 2}, 1).ok());  // 0..1 epoch 1
    ASSERT_TRUE(AppendOne(*log, {.records = 2}, 1).ok());  // 2..3 epoch 1
    ASSERT_TRUE(AppendOne(*log, {.records = 3}, 4).ok());  // 4..6 epoch 4
    ASSERT_TRUE(AppendOne(*log, {.records = 1}, 6).ok());  // 7 epoch 6
    auto text = ReadWholeFile(dir_ / "leader-epoch-checkpoint");
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(std::string(text->begin(), text->end()), "0\n3\n1 0\n4 4\n6 7\n");
    EXPECT_EQ(log->latest_epoch(), LeaderEpoch(6));
    EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(1)),
              (std::pair<LeaderEpoch, Offset>{LeaderEpoch(1), 4_o}));
    EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(3)),
              (std::pair<LeaderEpoch, Offset>{LeaderEpoch(1), 4_o}));
    EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(4)),
              (std::pair<LeaderEpoch, Offset>{LeaderEpoch(4), 7_o}));
    EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(6)),
              (std::pair<LeaderEpoch, Offset>{LeaderEpoch(6), 8_o}));
    EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(0)),
              (std::pair<LeaderEpoch, Offset>{LeaderEpoch(0), 0_o}));
    EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(7)),
              (std::pair<LeaderEpoch, Offset>{LeaderEpoch(-1), kNoOffset}));
    EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(-1)),
              (std::pair<LeaderEpoch, Offset>{LeaderEpoch(-1), kNoOffset}));
    // Batches carry the epoch they were appended in.
    auto read = log->Read(4_o, 1, Offset::Max(), true);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(Headers(read->records)[0].partition_leader_epoch, 4);
    // An older epoch never rewrites history.
    ASSERT_TRUE(AppendOne(*log, {}, 5).ok());
    EXPECT_EQ(log->latest_epoch(), LeaderEpoch(6));
  }
  auto log = OpenLog();  // unclean: epochs re-derived from the scanned tail
  EXPECT_EQ(log->latest_epoch(), LeaderEpoch(6));
  EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(4)),
            (std::pair<LeaderEpoch, Offset>{LeaderEpoch(4), 7_o}));
  EXPECT_EQ(log->EndOffsetForEpoch(LeaderEpoch(6)),
            (std::pair<LeaderEpoch, Offset>{LeaderEpoch(6), 9_o}));
}

TEST_F(LogTest, CloseRejectsAppendsAndDeleteRemovesDir) {
  LogConfig config;
  config.flush_messages = 2;
  auto log = OpenLog(config);
  ASSERT_TRUE(AppendOne(*log, {}).ok());
  ASSERT_TRUE(AppendOne(*log, {}).ok());
  ASSERT_TRUE(log->Flush().ok());
  ASSERT_TRUE(log->Close().ok());
  auto r = AppendOne(*log, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kShuttingDown);
  ASSERT_TRUE(log->Delete().ok());
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

// A deleted log may still be held by a periodic task (flush, retention,
// metrics); every call on it must be safe (this crashed the broker once).
TEST_F(LogTest, CallsAfterDeleteAreSafe) {
  auto log = OpenLog(LogConfig{});
  ASSERT_TRUE(AppendOne(*log, {}).ok());
  ASSERT_TRUE(log->Delete().ok());
  EXPECT_TRUE(log->Flush().ok());
  EXPECT_TRUE(log->EnforceRetention().ok());
  EXPECT_EQ(log->size_bytes(), 0);
  EXPECT_EQ(log->segment_count(), 0);
  EXPECT_FALSE(AppendOne(*log, {}).ok());
  auto read = log->Read(0_o, 1000, log->log_end_offset(), true);
  if (read.ok()) {
    EXPECT_TRUE(read->records.empty());
  }
  EXPECT_FALSE(log->OffsetForTimestamp(0).has_value());
  (void)log->MaxTimestamp();
  EXPECT_TRUE(log->Close().ok());
}

TEST_F(LogTest, ReadsRunConcurrentlyWithAppendsAndRolls) {
  LogConfig config;
  config.segment_bytes = 4000;
  config.index_interval_bytes = 300;
  auto log = OpenLog(config);
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::atomic<int> reads{0};
  auto reader = [&](uint32_t seed) {
    while (!done.load()) {
      const Offset end = log->log_end_offset();
      if (end == 0_o) continue;
      seed = seed * 1103515245 + 12345;
      const Offset off(int64_t(seed % uint64_t(end.value())));
      auto r = log->Read(off, 1, Offset::Max(), true);
      if (!r.ok()) {
        ++bad;
        continue;
      }
      auto h = Headers(r->records);
      if (h.size() != 1 || h[0].base_offset > off || h[0].last_offset() < off ||
          !protocol::BatchCrcValid(r->records)) {
        ++bad;
      }
      ++reads;
    }
  };
  std::thread r1(reader, 1), r2(reader, 2);
  for (int i = 0; i < 1500; ++i) {
    ASSERT_TRUE(AppendOne(*log, {.records = 1 + i % 3, .value_bytes = 30}).ok());
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_GT(log->segment_count(), 10);
}

}  // namespace
}  // namespace strata::storage
