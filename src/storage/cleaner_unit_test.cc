// OffsetMap and single-batch filtering.
#include <gtest/gtest.h>

#include <string>

#include "protocol/compression.h"
#include "protocol/control_record.h"
#include "storage/cleaner_batch.h"
#include "storage/cleaner_offset_map.h"
#include "storage/cleaner_test_util.h"

namespace strata::storage {
namespace {

using protocol::BatchHeader;
using protocol::Compression;
using protocol::Record;
using testing::KeyedBatch;

ByteView Key(const std::string& s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(OffsetMapTest, PutGetOverwriteAndLatestOffset) {
  OffsetMap map(1 << 12);
  EXPECT_EQ(map.Get(Key("a")), kNoOffset);
  EXPECT_TRUE(map.Put(Key("a"), 5_o));
  EXPECT_TRUE(map.Put(Key("b"), 6_o));
  EXPECT_TRUE(map.Put(Key("a"), 9_o));
  EXPECT_EQ(map.Get(Key("a")), 9_o);
  EXPECT_EQ(map.Get(Key("b")), 6_o);
  EXPECT_EQ(map.Get(Key("c")), kNoOffset);
  EXPECT_EQ(map.Get(Key("")), kNoOffset);
  EXPECT_EQ(map.size(), 2u);
  EXPECT_EQ(map.latest_offset(), 9_o);
  map.UpdateLatestOffset(20_o);
  map.UpdateLatestOffset(15_o);
  EXPECT_EQ(map.latest_offset(), 20_o);
  map.Clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.Get(Key("a")), kNoOffset);
  EXPECT_EQ(map.latest_offset(), kNoOffset);
}

TEST(OffsetMapTest, FullMapRejectsNewKeysButUpdatesKnownOnes) {
  OffsetMap map(OffsetMap::kSlotBytes * 11);
  ASSERT_EQ(map.slots(), 11u);
  ASSERT_EQ(map.max_entries(), 9u);
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(map.Put(Key("k" + std::to_string(i)), Offset(i)));
  EXPECT_FALSE(map.Put(Key("new"), 100_o));
  EXPECT_EQ(map.latest_offset(), 8_o);
  EXPECT_TRUE(map.Put(Key("k3"), 101_o));
  EXPECT_EQ(map.Get(Key("k3")), 101_o);
  EXPECT_EQ(map.Get(Key("new")), kNoOffset);
}

TEST(OffsetMapTest, ManyKeysNoMixUps) {
  OffsetMap map(8 << 20);
  const int n = int(map.max_entries());
  ASSERT_GT(n, 300000);
  for (int i = 0; i < n; ++i) ASSERT_TRUE(map.Put(Key("key-" + std::to_string(i)), Offset(i)));
  for (int i = 0; i < n; ++i) ASSERT_EQ(map.Get(Key("key-" + std::to_string(i))), Offset(i));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(map.Get(Key("absent-" + std::to_string(i))), kNoOffset);
}

// Header of a batch, with its base offset set.
Bytes At(Bytes batch, Offset base) {
  protocol::SetBaseOffset(batch, base);
  return batch;
}

std::vector<std::pair<int64_t, std::optional<std::string>>> Records(ByteView batch) {
  auto h = protocol::ParseBatchHeader(batch);
  EXPECT_TRUE(h.ok());
  std::vector<std::pair<int64_t, std::optional<std::string>>> out;
  EXPECT_TRUE(protocol::ForEachRecord(*h, batch, 1 << 20, [&](const Record& r) {
                out.emplace_back(h->base_timestamp + r.timestamp_delta, testing::ToString(r.value));
                return Status::Ok();
              }).ok());
  return out;
}

TEST(FilterBatchTest, KeepsAnUntouchedBatchByteForByte) {
  Bytes batch = At(KeyedBatch({{"a", "1"}, {"b", "2"}}), 10_o);
  auto h = protocol::ParseBatchHeader(batch).value();
  auto out = FilterBatch(batch, h, {}, [](Offset, const Record&) { return true; });
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->outcome, BatchOutcome::kOriginal);
  EXPECT_EQ(out->records_read, 2);
  EXPECT_EQ(out->records_retained, 2);
}

TEST(FilterBatchTest, RewritesSurvivorsWithTheSameCodecOffsetsAndProducer) {
  Bytes batch = At(KeyedBatch({{"a", "1"}, {"b", "2"}, {"c", "3"}}, {.codec = Compression::kZstd,
                                                                     .timestamp = 5000,
                                                                     .producer_id = 9,
                                                                     .producer_epoch = 2,
                                                                     .base_sequence = 40}),
                   100_o);
  protocol::SetPartitionLeaderEpoch(batch, 7);
  auto h = protocol::ParseBatchHeader(batch).value();
  auto out =
      FilterBatch(batch, h, {}, [](Offset offset, const Record&) { return offset != 100_o; });
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->outcome, BatchOutcome::kRewritten);
  EXPECT_EQ(out->records_retained, 2);
  ASSERT_TRUE(protocol::BatchCrcValid(out->bytes));
  auto nh = protocol::ParseBatchHeader(out->bytes).value();
  EXPECT_EQ(nh.base_offset, 100_o);
  EXPECT_EQ(nh.last_offset_delta, 2);
  EXPECT_EQ(nh.records_count, 2);
  EXPECT_EQ(nh.compression(), Compression::kZstd);
  EXPECT_EQ(nh.producer_id, 9);
  EXPECT_EQ(nh.producer_epoch, 2);
  EXPECT_EQ(nh.base_sequence, 40);
  EXPECT_EQ(nh.partition_leader_epoch, 7);
  EXPECT_EQ(nh.base_timestamp, 5001);
  EXPECT_EQ(nh.max_timestamp, 5002);
  using P = std::pair<int64_t, std::optional<std::string>>;
  EXPECT_EQ(Records(out->bytes), (std::vector<P>{{5001, "2"}, {5002, "3"}}));
}

TEST(FilterBatchTest, EmptyBatchKeepsOffsetsAndProducerFields) {
  Bytes batch = At(KeyedBatch({{"a", "1"}, {"b", "2"}}, {.codec = Compression::kGzip,
                                                         .timestamp = 7000,
                                                         .producer_id = 3,
                                                         .producer_epoch = 1,
                                                         .base_sequence = 11}),
                   50_o);
  auto h = protocol::ParseBatchHeader(batch).value();
  auto none = [](Offset, const Record&) { return false; };
  auto dropped = FilterBatch(batch, h, {}, none);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(dropped->outcome, BatchOutcome::kDropped);
  auto kept = FilterBatch(batch, h, {.retain_empty = true}, none);
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->outcome, BatchOutcome::kRewritten);
  EXPECT_EQ(kept->bytes.size(), size_t(protocol::kBatchHeaderSize));
  EXPECT_TRUE(protocol::BatchCrcValid(kept->bytes));
  auto nh = protocol::ParseBatchHeader(kept->bytes).value();
  EXPECT_EQ(nh.base_offset, 50_o);
  EXPECT_EQ(nh.last_offset(), 51_o);
  EXPECT_EQ(nh.records_count, 0);
  EXPECT_EQ(nh.compression(), Compression::kNone);
  EXPECT_EQ(nh.base_sequence, 11);
  EXPECT_EQ(nh.producer_id, 3);
  EXPECT_EQ(nh.max_timestamp, 7001);
}

TEST(FilterBatchTest, TombstoneGetsADeleteHorizonAndKeepsItsTimestamp) {
  Bytes batch = At(KeyedBatch({{"a", std::nullopt}, {"b", "2"}}, {.timestamp = 9000}), 0_o);
  auto h = protocol::ParseBatchHeader(batch).value();
  EXPECT_FALSE(DeleteHorizon(h).has_value());
  auto all = [](Offset, const Record&) { return true; };
  auto out = FilterBatch(batch, h, {.new_delete_horizon = 123456}, all);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->outcome, BatchOutcome::kRewritten);
  auto nh = protocol::ParseBatchHeader(out->bytes).value();
  EXPECT_EQ(DeleteHorizon(nh), 123456);
  EXPECT_EQ(nh.max_timestamp, 9001);
  using P = std::pair<int64_t, std::optional<std::string>>;
  EXPECT_EQ(Records(out->bytes), (std::vector<P>{{9000, std::nullopt}, {9001, "2"}}));
  // Once set, the horizon is kept and the batch needs no rewrite.
  auto again = FilterBatch(out->bytes, nh, {.new_delete_horizon = 999999}, all);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->outcome, BatchOutcome::kOriginal);
}

TEST(FilterBatchTest, LogAppendTimeBatchKeepsItsTimestampType) {
  Bytes batch = At(KeyedBatch({{"a", "1"}, {"b", "2"}}, {.timestamp = 100}), 0_o);
  protocol::SetLogAppendTime(batch, 777);
  auto h = protocol::ParseBatchHeader(batch).value();
  auto out = FilterBatch(batch, h, {}, [](Offset offset, const Record&) { return offset == 1_o; });
  ASSERT_TRUE(out.ok());
  auto nh = protocol::ParseBatchHeader(out->bytes).value();
  EXPECT_TRUE(nh.log_append_time());
  EXPECT_EQ(nh.max_timestamp, 777);
  EXPECT_EQ(nh.records_count, 1);
}

TEST(FilterBatchTest, ControlBatchesAreKept) {
  protocol::BatchBuilder::Entry marker;
  marker.key = Bytes{0, 0, 0, 1};
  marker.value = Bytes{0, 0, 0, 0, 0, 0};
  protocol::BatchBuilder b;
  b.set_control(true).set_producer(1, 0, -1).Add(std::move(marker));
  Bytes batch = b.Build();
  auto h = protocol::ParseBatchHeader(batch).value();
  auto out = FilterBatch(batch, h, {}, [](Offset, const Record&) {
    ADD_FAILURE() << "control records are not judged";
    return false;
  });
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->outcome, BatchOutcome::kOriginal);
}

// A marker whose transaction is gone is stamped with a delete horizon first
// (record and timestamp kept), and loses its record only past it.
TEST(FilterBatchTest, ADiscardableMarkerGoesOnlyPastItsHorizon) {
  Bytes batch = protocol::BuildTxnMarkerBatch(1, 0, {protocol::ControlType::kCommit, 5}, 1000);
  auto h = protocol::ParseBatchHeader(batch).value();
  BatchFilterOptions options{.new_delete_horizon = 50'000};
  auto kept = FilterControlBatch(batch, h, options, /*now=*/40'000, /*discardable=*/false);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->outcome, BatchOutcome::kOriginal);
  EXPECT_EQ(kept->delete_horizon, -1);

  auto stamped = FilterControlBatch(batch, h, options, 40'000, true);
  ASSERT_TRUE(stamped.ok());
  ASSERT_EQ(stamped->outcome, BatchOutcome::kRewritten);
  EXPECT_EQ(stamped->delete_horizon, 50'000);
  auto sh = protocol::ParseBatchHeader(stamped->bytes).value();
  EXPECT_TRUE(sh.control() && sh.transactional());
  EXPECT_EQ(DeleteHorizon(sh), 50'000);
  EXPECT_EQ(sh.producer_id, 1);
  EXPECT_EQ(sh.last_offset(), h.last_offset());
  auto marker = protocol::ParseTxnMarker(sh, stamped->bytes);
  ASSERT_TRUE(marker.ok());
  EXPECT_EQ(*marker, (protocol::TxnMarker{protocol::ControlType::kCommit, 5}));

  auto early = FilterControlBatch(stamped->bytes, sh, options, 49'999, true);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->outcome, BatchOutcome::kOriginal);
  EXPECT_EQ(early->delete_horizon, 50'000);
  auto gone = FilterControlBatch(stamped->bytes, sh, options, 50'000, true);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->outcome, BatchOutcome::kDropped);
  options.retain_empty = true;
  auto emptied = FilterControlBatch(stamped->bytes, sh, options, 50'000, true);
  ASSERT_TRUE(emptied.ok());
  ASSERT_EQ(emptied->outcome, BatchOutcome::kRewritten);
  auto eh = protocol::ParseBatchHeader(emptied->bytes).value();
  EXPECT_EQ(eh.records_count, 0);
  EXPECT_TRUE(eh.control());
  EXPECT_EQ(eh.producer_epoch, 0);
  EXPECT_EQ(protocol::ParseTxnMarker(eh, emptied->bytes).value(), std::nullopt);
}

TEST(FilterBatchTest, CorruptRecordsAreAnError) {
  Bytes batch = At(KeyedBatch({{"a", "1"}}), 0_o);
  batch.back() = 0x7f;  // the header count varint now claims 63 headers
  auto h = protocol::ParseBatchHeader(batch).value();
  auto out = FilterBatch(batch, h, {}, [](Offset, const Record&) { return true; });
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, Errc::kCorrupt);
}

}  // namespace
}  // namespace strata::storage
