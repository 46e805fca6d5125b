// Log compaction through Log::Clean: dedupe, tombstones, lags, codecs,
// producer state, checkpoints.
#include <gtest/gtest.h>

#include <algorithm>

#include "protocol/compression.h"
#include "storage/cleaner_batch.h"
#include "storage/cleaner_checkpoint.h"
#include "storage/cleaner_test_util.h"

namespace strata::storage {
namespace {

using protocol::Compression;
using testing::AppendAll;
using testing::KeyedBatch;
using testing::KeyValue;
using testing::LatestByKey;
using testing::ReadAllBatches;
using testing::ReadAllRecords;

namespace fs = std::filesystem;

class CleanerTest : public testing::CompactedLogTest {
 protected:
  // 10 keys written 5 times over 5 segments; then an active segment with
  // one more batch. Returns the active segment's base.
  Offset WriteOverwrites(Log& log) {
    for (int round = 0; round < 5; ++round) {
      for (int k = 0; k < 10; ++k) {
        Put(log, "key-" + std::to_string(k), "v" + std::to_string(round) + "-" + std::to_string(k));
      }
      Roll(log);
    }
    return Put(log, "key-0", "active");
  }
};

TEST_F(CleanerTest, KeepsOnlyTheLatestValuePerKeyWithOffsetsPreserved) {
  auto log = OpenLog();
  const Offset active_base = WriteOverwrites(*log);
  ASSERT_EQ(active_base, 50_o);
  ASSERT_EQ(log->segment_count(), 6);
  const auto before = ReadAllRecords(*log);
  ASSERT_EQ(before.size(), 51u);

  CleaningEstimate est = log->EstimateCleaning(clock_.NowMs());
  EXPECT_TRUE(est.ShouldClean());
  EXPECT_EQ(est.first_dirty_offset, 0_o);
  EXPECT_EQ(est.first_uncleanable_offset, 50_o);
  EXPECT_EQ(est.clean_bytes, 0);
  EXPECT_DOUBLE_EQ(est.dirty_ratio(), 1.0);

  auto r = Clean(*log);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->end_offset, 50_o);
  EXPECT_EQ(r->segments_cleaned, 5);
  EXPECT_EQ(r->segments_written, 1);  // grouped: five small segments into one
  EXPECT_EQ(r->records_read, 50);
  EXPECT_EQ(r->records_retained, 10);
  EXPECT_FALSE(r->map_full);
  EXPECT_LT(r->bytes_written, r->bytes_read);

  const auto after = ReadAllRecords(*log);
  EXPECT_EQ(Describe(after), Describe(ExpectedAfterClean(before, 50_o)));
  ASSERT_EQ(after.size(), 11u);
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(after[size_t(k)].offset, 40_o + k);
    EXPECT_EQ(after[size_t(k)].value, "v4-" + std::to_string(k));
  }
  EXPECT_EQ(log->segment_count(), 2);
  EXPECT_EQ(log->log_end_offset(), 51_o);
  EXPECT_EQ(log->log_start_offset(), 0_o);
  EXPECT_EQ(log->cleaner_checkpoint(), 50_o);
  ExpectAllIndexesValid();
  EXPECT_TRUE(SwapLeftovers().empty());
  EXPECT_FALSE(fs::exists(File(10, ".log")));

  // A fetch at a removed offset gets the next surviving batch.
  auto read = log->Read(3_o, 1 << 20, 51_o, true);
  ASSERT_TRUE(read.ok());
  auto headers = testing::Headers(read->records);
  ASSERT_FALSE(headers.empty());
  EXPECT_EQ(headers.front().base_offset, 40_o);

  // Nothing dirty is left: the estimate agrees and a second pass is a no-op.
  est = log->EstimateCleaning(clock_.NowMs());
  EXPECT_EQ(est.first_dirty_offset, 50_o);
  EXPECT_FALSE(est.ShouldClean());

  // The cleaned segment survives a clean restart and a crash restart.
  ASSERT_TRUE(log->Close().ok());
  log = OpenLog();
  EXPECT_EQ(Describe(ReadAllRecords(*log)), Describe(after));
  EXPECT_EQ(log->cleaner_checkpoint(), 50_o);
  log.reset();
  log = OpenLog();
  EXPECT_EQ(Describe(ReadAllRecords(*log)), Describe(after));
}

TEST_F(CleanerTest, CheckpointIsPersistedAndBoundsTheNextDirtySection) {
  auto log = OpenLog();
  WriteOverwrites(*log);
  ASSERT_TRUE(Clean(*log).ok());
  auto bytes = ReadWholeFile(dir_ / kCleanerCheckpointFile);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(std::string(bytes->begin(), bytes->end()), "0\n50\n");

  // New overwrites of two keys: only they are dirty; the clean part is re-read.
  Put(*log, "key-3", "late-3");
  Put(*log, "key-4", "late-4");
  Roll(*log);
  CleaningEstimate est = log->EstimateCleaning(clock_.NowMs());
  EXPECT_EQ(est.first_dirty_offset, 50_o);
  EXPECT_EQ(est.first_uncleanable_offset, 53_o);
  EXPECT_GT(est.clean_bytes, 0);
  EXPECT_GT(est.cleanable_bytes, 0);
  const auto before = ReadAllRecords(*log);
  auto r = Clean(*log);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->first_dirty_offset, 50_o);
  EXPECT_EQ(r->end_offset, 53_o);
  const auto after = ReadAllRecords(*log);
  EXPECT_EQ(Describe(after), Describe(ExpectedAfterClean(before, 53_o)));
  EXPECT_EQ(LatestByKey(after)["key-3"].second, "late-3");
  EXPECT_EQ(after.size(), 10u);  // key-0, key-3 and key-4 now live at 50..52

  ASSERT_TRUE(log->Close().ok());
  log = OpenLog();
  EXPECT_EQ(log->cleaner_checkpoint(), 53_o);
  EXPECT_EQ(log->EstimateCleaning(clock_.NowMs()).first_dirty_offset, 53_o);
}

TEST_F(CleanerTest, CheckpointBelowLogStartIsIgnored) {
  auto log = OpenLog();
  WriteOverwrites(*log);
  ASSERT_TRUE(WriteCleanerCheckpoint(dir_, 7).ok());
  ASSERT_TRUE(log->Close().ok());
  log = OpenLog();
  EXPECT_EQ(log->EstimateCleaning(clock_.NowMs()).first_dirty_offset, 7_o);
  ASSERT_TRUE(log->DeleteRecordsBefore(20_o).ok());
  EXPECT_EQ(log->EstimateCleaning(clock_.NowMs()).first_dirty_offset, 20_o);
}

TEST_F(CleanerTest, TombstonesStayUntilTheDeleteHorizonPasses) {
  auto log = OpenLog();
  Put(*log, "a", "a1");
  Put(*log, "b", "b1");
  Put(*log, "a", "a2");
  const int64_t tombstone_ts = clock_.NowMs();
  const Offset tombstone = Put(*log, "a", std::nullopt);  // offset 3
  Put(*log, "c", "c1");
  Roll(*log);
  Put(*log, "d", "d1");  // active

  const int64_t t0 = clock_.NowMs();
  ASSERT_TRUE(Clean(*log).ok());
  auto batches = ReadAllBatches(*log);
  std::vector<std::string> seen;
  for (const auto& b : batches) {
    for (const auto& r : b.records) {
      if (r.key == "a") {
        EXPECT_EQ(r.offset, tombstone);
        EXPECT_FALSE(r.value.has_value());
        EXPECT_EQ(r.timestamp, tombstone_ts);  // rebased onto the horizon, same timestamp
        auto horizon = DeleteHorizon(b.header);
        ASSERT_TRUE(horizon.has_value());
        EXPECT_EQ(*horizon, t0 + config_.delete_retention_ms);
      }
      seen.push_back(*r.key);
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"b", "a", "c", "d"}));

  // Before the horizon: another pass (new dirty data) keeps the tombstone.
  clock_.Advance(config_.delete_retention_ms - config_.segment_ms - 10);
  Put(*log, "e", "e1");
  Roll(*log);
  ASSERT_LT(clock_.NowMs(), t0 + config_.delete_retention_ms);
  ASSERT_TRUE(Clean(*log).ok());
  EXPECT_TRUE(LatestByKey(ReadAllRecords(*log)).count("a"));

  // Past the horizon: the next pass drops it.
  clock_.Advance(20);
  Put(*log, "f", "f1");
  Roll(*log);
  ASSERT_GE(clock_.NowMs(), t0 + config_.delete_retention_ms);
  ASSERT_TRUE(Clean(*log).ok());
  auto latest = LatestByKey(ReadAllRecords(*log));
  EXPECT_EQ(latest.count("a"), 0u);
  EXPECT_EQ(latest.size(), 5u);  // b c d e f
}

TEST_F(CleanerTest, AnIdleLogLosesItsTombstonesOnceTheHorizonPasses) {
  auto log = OpenLog();
  Put(*log, "a", "a1");
  Put(*log, "b", "b1");
  Put(*log, "a", std::nullopt);
  Roll(*log);
  Put(*log, "c", "c1");  // active
  const int64_t t0 = clock_.NowMs();
  ASSERT_TRUE(Clean(*log).ok());
  EXPECT_TRUE(LatestByKey(ReadAllRecords(*log)).count("a"));
  // Nothing dirty: not cleanable until the horizon (KIP-534).
  EXPECT_FALSE(log->EstimateCleaning(clock_.NowMs()).ShouldClean());
  clock_.Advance(config_.delete_retention_ms - 1);
  EXPECT_FALSE(log->EstimateCleaning(clock_.NowMs()).ShouldClean());
  clock_.Advance(1);
  ASSERT_EQ(clock_.NowMs(), t0 + config_.delete_retention_ms);
  CleaningEstimate e = log->EstimateCleaning(clock_.NowMs());
  EXPECT_EQ(e.cleanable_bytes, 0);
  EXPECT_TRUE(e.ShouldClean());
  auto result = Clean(*log);
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto latest = LatestByKey(ReadAllRecords(*log));
  EXPECT_EQ(latest.count("a"), 0u);
  EXPECT_EQ(latest.size(), 2u);  // b c
  // Nothing left to do: the log is not picked again.
  EXPECT_EQ(result->earliest_delete_horizon, -1);
  EXPECT_FALSE(log->EstimateCleaning(clock_.NowMs()).ShouldClean());
}

TEST_F(CleanerTest, ActiveSegmentIsNeverTouched) {
  auto log = OpenLog();
  Put(*log, "x", "1");
  Put(*log, "x", "2");
  Roll(*log);
  const Offset active = Put(*log, "x", "3");
  Put(*log, "x", "4");
  Put(*log, "y", std::nullopt);
  auto active_bytes = ReadWholeFile(File(active.value(), ".log"));
  ASSERT_TRUE(active_bytes.ok());
  auto r = Clean(*log);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end_offset, active);
  EXPECT_EQ(ReadWholeFile(File(active.value(), ".log")).value(), *active_bytes);
  EXPECT_EQ(Describe(ReadAllRecords(*log)).size(), 4u);  // x=2 plus the three active records
  auto records = ReadAllRecords(*log);
  EXPECT_EQ(records[0].offset, 1_o);
  EXPECT_EQ(records[1].offset, 2_o);
  EXPECT_EQ(records[3].offset, 4_o);
}

TEST_F(CleanerTest, MinCompactionLagKeepsYoungSegmentsDirty) {
  config_.min_compaction_lag_ms = 60'000;
  auto log = OpenLog();
  const int64_t old_ts = clock_.NowMs() - 100'000;
  Put(*log, {{"k", "old1"}}, {.timestamp = old_ts});
  Put(*log, {{"k", "old2"}}, {.timestamp = old_ts + 1});
  Roll(*log);
  const Offset young_base = Put(*log, "k", "young1");  // timestamp now
  Put(*log, "k", "young2");
  Roll(*log);
  Put(*log, "z", "active");

  CleaningEstimate est = log->EstimateCleaning(clock_.NowMs());
  EXPECT_EQ(est.first_uncleanable_offset, young_base);
  auto r = Clean(*log);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end_offset, young_base);
  // Only the old segment was deduplicated; the young one is untouched.
  EXPECT_EQ(Describe(ReadAllRecords(*log)).size(), 4u);  // old2, young1, young2, z
  EXPECT_EQ(ReadAllRecords(*log)[0].value, "old2");

  clock_.Advance(60'000);
  est = log->EstimateCleaning(clock_.NowMs());
  EXPECT_EQ(est.first_uncleanable_offset, young_base + 2);
  ASSERT_TRUE(Clean(*log).ok());
  auto records = ReadAllRecords(*log);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].value, "young2");
  EXPECT_EQ(records[0].offset, young_base + 1);
}

TEST_F(CleanerTest, MaxCompactionLagForcesACleanBelowTheDirtyRatio) {
  config_.min_cleanable_dirty_ratio = 0.99;
  config_.max_compaction_lag_ms = 50'000;
  auto log = OpenLog();
  for (int i = 0; i < 20; ++i) Put(*log, "k" + std::to_string(i), "v");
  Roll(*log);
  ASSERT_TRUE(Clean(*log).ok());  // everything dirty: ratio 1
  Put(*log, "k1", "again");
  Roll(*log);
  Put(*log, "active", "x");
  CleaningEstimate est = log->EstimateCleaning(clock_.NowMs());
  EXPECT_LT(est.dirty_ratio(), 0.99);
  EXPECT_EQ(est.compaction_delay_ms, 0);
  EXPECT_FALSE(est.ShouldClean());
  clock_.Advance(50'000 + 123);
  est = log->EstimateCleaning(clock_.NowMs());
  EXPECT_GT(est.compaction_delay_ms, 0);
  EXPECT_TRUE(est.ShouldClean());
}

TEST_F(CleanerTest, KeylessRecordsAreDropped) {
  auto log = OpenLog();
  Put(*log, {{std::nullopt, "no-key-1"}, {"k", "v1"}, {std::nullopt, "no-key-2"}});
  Put(*log, "k", "v2");
  Roll(*log);
  Put(*log, {{std::nullopt, "active-no-key"}});
  ASSERT_TRUE(Clean(*log).ok());
  auto records = ReadAllRecords(*log);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].value, "v2");
  EXPECT_EQ(records[1].value, "active-no-key");  // the active segment is not cleaned
}

TEST_F(CleanerTest, SmallOffsetMapCleansInSeveralPasses) {
  auto log = OpenLog();
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 30; ++k) Put(*log, "key-" + std::to_string(k), "r" + std::to_string(round));
  }
  Roll(*log);
  Put(*log, "active", "x");
  const auto before = ReadAllRecords(*log);
  OffsetMap small(OffsetMap::kSlotBytes * 11);  // 11 slots, 9 keys per pass
  ASSERT_EQ(small.max_entries(), 9u);
  int passes = 0;
  Offset end = 0_o;
  while (end < 60_o && passes < 20) {
    auto r = log->Clean(small, clock_.NowMs());
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_GT(r->end_offset, end);
    EXPECT_EQ(r->map_full, r->end_offset < 60_o);
    end = r->end_offset;
    EXPECT_EQ(log->cleaner_checkpoint(), end);
    ++passes;
  }
  EXPECT_EQ(end, 60_o);
  EXPECT_GT(passes, 3);
  EXPECT_EQ(Describe(ReadAllRecords(*log)), Describe(ExpectedAfterClean(before, 60_o)));
  EXPECT_EQ(ReadAllRecords(*log).size(), 31u);
}

class CleanerCodecTest : public CleanerTest, public ::testing::WithParamInterface<Compression> {};

TEST_P(CleanerCodecTest, CompressedBatchesAreRewrittenWithTheirCodec) {
  const Compression codec = GetParam();
  auto log = OpenLog();
  for (int i = 0; i < 12; ++i) {
    std::vector<KeyValue> kvs;
    for (int j = 0; j < 4; ++j) {
      kvs.emplace_back(
          "k" + std::to_string((i * 4 + j) % 7),
          "value-" + std::to_string(i) + "-" + std::to_string(j) + std::string(40, 'x'));
    }
    Put(*log, kvs, {.codec = codec});
    if (i % 4 == 3) Roll(*log);
  }
  Put(*log, "active", "x");
  const auto before = ReadAllRecords(*log);
  const auto before_batches = ReadAllBatches(*log);
  ASSERT_TRUE(Clean(*log).ok());
  const auto after = ReadAllRecords(*log);
  EXPECT_EQ(Describe(after), Describe(ExpectedAfterClean(before, 48_o)));
  int rewritten = 0;
  for (const auto& b : ReadAllBatches(*log)) {
    if (b.header.base_offset >= 48_o) continue;
    if (b.header.records_count > 0) {
      EXPECT_EQ(b.header.compression(), codec);
    }
    // Same offset range as the original batch (gaps inside are fine).
    bool matched = false;
    for (const auto& o : before_batches) {
      matched = matched || (o.header.base_offset == b.header.base_offset &&
                            o.header.last_offset_delta == b.header.last_offset_delta);
    }
    EXPECT_TRUE(matched) << b.header.base_offset;
    rewritten += b.header.records_count < b.header.last_offset_delta + 1 ? 1 : 0;
  }
  EXPECT_GT(rewritten, 0);
  ExpectAllIndexesValid();
}

INSTANTIATE_TEST_SUITE_P(Codecs, CleanerCodecTest,
                         ::testing::Values(Compression::kNone, Compression::kGzip,
                                           Compression::kSnappy, Compression::kLz4,
                                           Compression::kZstd),
                         [](const auto& info) {
                           return std::string(protocol::CompressionName(info.param));
                         });

TEST_F(CleanerTest, IdempotentBatchesKeepProducerFieldsAndState) {
  constexpr int64_t kPid = 77;
  auto log = OpenLog();
  for (int seq = 0; seq < 5; ++seq) {
    Put(*log, {{"p" + std::to_string(seq % 2), "s" + std::to_string(seq)}, {"q", "x"}},
        {.producer_id = kPid, .producer_epoch = 3, .base_sequence = seq * 2});
  }
  // Offsets 0..9; the producer's last batch (8..9) is then superseded.
  Put(*log, {{"p0", "plain"}, {"p1", "plain"}, {"q", "plain"}});
  Roll(*log);
  Put(*log, "active", "x");
  ASSERT_TRUE(Clean(*log).ok());

  auto batches = ReadAllBatches(*log);
  ASSERT_EQ(batches.size(), 3u);
  // Every earlier producer batch is gone; the last one stays, empty, with its
  // producer fields and offset range.
  const auto& last = batches[0].header;
  EXPECT_EQ(last.base_offset, 8_o);
  EXPECT_EQ(last.last_offset(), 9_o);
  EXPECT_EQ(last.records_count, 0);
  EXPECT_EQ(last.producer_id, kPid);
  EXPECT_EQ(last.producer_epoch, 3);
  EXPECT_EQ(last.base_sequence, 8);
  EXPECT_EQ(batches[1].header.base_offset, 10_o);
  EXPECT_EQ(batches[1].records.size(), 3u);

  // Rebuild producer state from the log alone (no snapshots): the sequence
  // continues from the retained batch.
  ASSERT_TRUE(log->Close().ok());
  for (const auto& ent : fs::directory_iterator(dir_)) {
    if (ent.path().extension() == ".snapshot") fs::remove(ent.path());
  }
  log = OpenLog();
  auto gap = AppendAll(
      *log,
      {KeyedBatch({{"p0", "z"}}, {.producer_id = kPid, .producer_epoch = 3, .base_sequence = 12})});
  ASSERT_FALSE(gap.ok());
  EXPECT_EQ(gap.error().code, Errc::kOutOfOrderSequence);
  auto retry =
      AppendAll(*log, {KeyedBatch({{"p0", "s4"}, {"q", "x"}},
                                  {.producer_id = kPid, .producer_epoch = 3, .base_sequence = 8})});
  ASSERT_TRUE(retry.ok());
  EXPECT_TRUE(retry->duplicate);
  EXPECT_EQ(retry->base_offset, 8_o);
  auto next = AppendAll(
      *log,
      {KeyedBatch({{"p0", "z"}}, {.producer_id = kPid, .producer_epoch = 3, .base_sequence = 10})});
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_FALSE(next->duplicate);
}

TEST_F(CleanerTest, PartiallyKeptIdempotentBatchKeepsItsSequenceRange) {
  auto log = OpenLog();
  Put(*log, {{"a", "1"}, {"b", "1"}, {"c", "1"}},
      {.producer_id = 5, .producer_epoch = 0, .base_sequence = 0});
  Put(*log, {{"b", "2"}}, {.producer_id = 5, .producer_epoch = 0, .base_sequence = 3});
  Roll(*log);
  Put(*log, "active", "x");
  ASSERT_TRUE(Clean(*log).ok());
  auto batches = ReadAllBatches(*log);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].header.base_offset, 0_o);
  EXPECT_EQ(batches[0].header.last_offset_delta, 2);
  EXPECT_EQ(batches[0].header.base_sequence, 0);
  EXPECT_EQ(batches[0].header.producer_id, 5);
  ASSERT_EQ(batches[0].records.size(), 2u);
  EXPECT_EQ(batches[0].records[0].key, "a");
  EXPECT_EQ(batches[0].records[1].key, "c");
  EXPECT_EQ(batches[0].records[1].offset, 2_o);
}

TEST_F(CleanerTest, NonCompactedLogIsRefused) {
  config_.compacted = false;
  auto log = OpenLog();
  Put(*log, "k", "v");
  Roll(*log);
  EXPECT_FALSE(log->EstimateCleaning(clock_.NowMs()).ShouldClean());
  auto r = Clean(*log);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
}

TEST_F(CleanerTest, CompactAndDeletePolicyCleansWhatRetentionLeft) {
  config_.cleanup_delete = true;
  auto log = OpenLog();
  Put(*log, {{"k", "old"}}, {.timestamp = clock_.NowMs() - 100'000});
  Roll(*log);
  Put(*log, "k", "new");
  Roll(*log);
  Put(*log, "active", "x");
  config_.retention_ms = 5'000;
  log->UpdateConfig(config_);
  // Retention deletes the old segment; the dirty section starts at the new log start.
  ASSERT_EQ(log->EnforceRetention().value(), 1);
  auto r = Clean(*log);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto records = ReadAllRecords(*log);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].value, "new");
}

}  // namespace
}  // namespace strata::storage
