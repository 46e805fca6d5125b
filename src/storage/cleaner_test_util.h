#pragma once
// Test-only helpers for compaction tests: keyed batches (protocol::
// BatchBuilder), reading a whole log back record by record, and checking a
// segment's offset index the way kafka-dump-log does.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/batch_builder.h"
#include "protocol/records.h"
#include "storage/cleaner_offset_map.h"
#include "storage/file.h"
#include "storage/log.h"
#include "storage/test_util.h"

namespace strata::storage::testing {

using KeyValue = std::pair<std::optional<std::string>, std::optional<std::string>>;

struct KeyedBatchOptions {
  protocol::Compression codec = protocol::Compression::kNone;
  int64_t timestamp = -1;  // of the first record (+1 per record); -1: 1000, or now in Put()
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
};

inline Bytes KeyedBatch(const std::vector<KeyValue>& kvs, const KeyedBatchOptions& o = {}) {
  protocol::BatchBuilder b;
  b.set_compression(o.codec);
  if (o.producer_id >= 0) b.set_producer(o.producer_id, o.producer_epoch, o.base_sequence);
  int64_t ts = o.timestamp < 0 ? 1000 : o.timestamp;
  for (const auto& [k, v] : kvs) b.Add(k, v, ts++);
  return b.Build();
}

// One record of a log as read back.
struct ReadRecord {
  Offset offset = kNoOffset;
  std::optional<std::string> key;
  std::optional<std::string> value;
  int64_t timestamp = -1;
};

struct ReadBatch {
  protocol::BatchHeader header;
  std::vector<ReadRecord> records;
};

inline std::optional<std::string> ToString(const std::optional<ByteView>& v) {
  if (!v) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(v->data()), v->size());
}

// Every batch from the log start to the log end, via Log::Read, CRC-checked.
inline std::vector<ReadBatch> ReadAllBatches(const Log& log) {
  std::vector<ReadBatch> out;
  Offset offset = log.log_start_offset();
  const Offset end = log.log_end_offset();
  while (offset < end) {
    auto r = log.Read(offset, 1 << 20, end, true);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    if (!r.ok() || r->records.empty()) break;
    size_t pos = 0;
    ByteView data(r->records);
    while (pos < data.size()) {
      auto h = protocol::ParseBatchHeader(data.subspan(pos));
      EXPECT_TRUE(h.ok());
      if (!h.ok()) return out;
      ByteView batch = data.subspan(pos, size_t(h->size_in_bytes()));
      EXPECT_TRUE(protocol::BatchCrcValid(batch)) << "batch at offset " << h->base_offset;
      ReadBatch rb{*h, {}};
      Status st = protocol::ForEachRecord(*h, batch, 64 << 20, [&](const protocol::Record& rec) {
        rb.records.push_back({h->base_offset + rec.offset_delta, ToString(rec.key),
                              ToString(rec.value), h->base_timestamp + rec.timestamp_delta});
        return Status::Ok();
      });
      EXPECT_TRUE(st.ok()) << st.error().message;
      offset = h->last_offset() + 1;
      pos += batch.size();
      out.push_back(std::move(rb));
    }
  }
  return out;
}

inline std::vector<ReadRecord> ReadAllRecords(const Log& log) {
  std::vector<ReadRecord> out;
  for (auto& b : ReadAllBatches(log)) {
    for (auto& r : b.records) out.push_back(std::move(r));
  }
  return out;
}

// key -> (offset, value) of the last record per key among `records`.
inline std::map<std::string, std::pair<Offset, std::optional<std::string>>> LatestByKey(
    const std::vector<ReadRecord>& records) {
  std::map<std::string, std::pair<Offset, std::optional<std::string>>> latest;
  for (const auto& r : records) {
    if (r.key) latest[*r.key] = {r.offset, r.value};
  }
  return latest;
}

// kafka-dump-log's index check: every offset-index entry (O, P) names the
// batch starting at P, whose last offset is O; positions increase.
inline void ExpectIndexMatchesLog(const std::filesystem::path& log_path,
                                  const std::filesystem::path& index_path, int64_t base) {
  auto log = ReadWholeFile(log_path);
  auto index = ReadWholeFile(index_path);
  ASSERT_TRUE(log.ok() && index.ok());
  ASSERT_EQ(index->size() % 8, 0u);
  int64_t last_position = -1;
  for (size_t i = 0; i < index->size(); i += 8) {
    const Offset offset(base + int32_t(LoadBE32(index->data() + i)));
    int64_t position = LoadBE32(index->data() + i + 4);
    ASSERT_GT(position, last_position);
    ASSERT_LT(size_t(position), log->size());
    auto h = protocol::ParseBatchHeader(ByteView(*log).subspan(size_t(position)));
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->last_offset(), offset) << index_path;
    last_position = position;
  }
}

// A temp-dir fixture with a compacted log whose segments roll only when
// Roll() says so (segment.ms elapsed), so whole test logs clean as one group.
class CompactedLogTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    config_.compacted = true;
    config_.cleanup_delete = false;
    config_.retention_ms = -1;
    config_.segment_bytes = 1 << 20;
    config_.segment_ms = 1000;
    config_.index_interval_bytes = 1;  // an index entry for every batch but the first
    config_.delete_retention_ms = 10'000;
    config_.min_cleanable_dirty_ratio = 0.5;
  }
  std::unique_ptr<Log> OpenLog() {
    auto log = Log::Open(dir_, config_, &clock_);
    EXPECT_TRUE(log.ok()) << (log.ok() ? "" : log.error().message);
    return log.ok() ? std::move(*log) : nullptr;
  }
  // Appends one batch of `kvs`; returns its base offset.
  Offset Put(Log& log, const std::vector<KeyValue>& kvs, KeyedBatchOptions o = {}) {
    if (o.timestamp < 0) o.timestamp = clock_.NowMs();
    auto r = AppendAll(log, {KeyedBatch(kvs, o)});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r->base_offset : kNoOffset;
  }
  Offset Put(Log& log, const std::string& key, std::optional<std::string> value) {
    return Put(log, {{key, std::move(value)}});
  }
  // Rolls the active segment (segment.ms), so what was appended becomes cleanable.
  void Roll(Log& log) {
    const int before = log.segment_count();
    clock_.Advance(config_.segment_ms + 1);
    ASSERT_TRUE(log.EnforceRetention().ok());
    ASSERT_EQ(log.segment_count(), before + 1);
  }
  Result<CleaningResult> Clean(Log& log) { return log.Clean(map_, clock_.NowMs()); }

  // The records a full clean up to `end` should leave: below `end` only
  // the last record of each key (keyless records dropped), all from `end`.
  static std::vector<ReadRecord> ExpectedAfterClean(const std::vector<ReadRecord>& before,
                                                    Offset end) {
    std::vector<ReadRecord> below;
    for (const auto& r : before) {
      if (r.offset < end) below.push_back(r);
    }
    auto latest = LatestByKey(below);
    std::vector<ReadRecord> out;
    for (const auto& r : before) {
      bool keep = r.offset >= end || (r.key && latest[*r.key].first == r.offset);
      if (keep) out.push_back(r);
    }
    return out;
  }
  // "offset:key=value@ts" lines, for readable comparisons.
  static std::vector<std::string> Describe(const std::vector<ReadRecord>& records) {
    std::vector<std::string> out;
    for (const auto& r : records) {
      out.push_back(std::to_string(r.offset.value()) + ":" + r.key.value_or("<null>") + "=" +
                    r.value.value_or("<null>") + "@" + std::to_string(r.timestamp));
    }
    return out;
  }
  // Checks every segment's offset index against its .log.
  void ExpectAllIndexesValid() const {
    for (const auto& ent : std::filesystem::directory_iterator(dir_)) {
      auto base = ParseOffsetFileName(ent.path().filename().string(), ".log");
      if (!base) continue;
      ExpectIndexMatchesLog(ent.path(), File(*base, ".index"), *base);
    }
  }
  // Names of compaction leftovers (.cleaned, .swap, .deleted) in the directory.
  std::vector<std::string> SwapLeftovers() const {
    std::vector<std::string> out;
    for (const auto& ent : std::filesystem::directory_iterator(dir_)) {
      std::string name = ent.path().filename().string();
      if (name.ends_with(".cleaned") || name.ends_with(".swap") || name.ends_with(".deleted")) {
        out.push_back(name);
      }
    }
    return out;
  }

  LogConfig config_;
  ManualClock clock_{1'000'000'000};
  OffsetMap map_{1 << 20};
};

}  // namespace strata::storage::testing
