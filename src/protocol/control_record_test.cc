// End-transaction markers: the bytes Strata writes are Kafka's, and the
// parser reads them, tolerates newer versions and other control types, and
// refuses malformed ones.
#include "protocol/control_record.h"

#include <gtest/gtest.h>

#include "protocol/batch_builder.h"
#include "protocol/records.h"

namespace strata::protocol {
namespace {

BatchHeader HeaderOf(const Bytes& batch) {
  auto h = ParseBatchHeader(batch);
  EXPECT_TRUE(h.ok());
  return *h;
}

// A control batch with one record of `key` and `value`.
Bytes ControlBatch(Bytes key, std::optional<Bytes> value) {
  BatchBuilder b;
  b.set_producer(7, 2, -1).set_transactional(true).set_control(true);
  b.Add({.key = std::move(key), .value = std::move(value), .timestamp = 5});
  return b.Build();
}

TEST(TxnMarker, TheBatchIsKafkasSeventyEightByteMarker) {
  Bytes batch = BuildTxnMarkerBatch(4242, 3, {ControlType::kCommit, 9}, 1'700'000'000'000);
  ASSERT_EQ(batch.size(), 78u);  // 61-byte header + one 17-byte record
  BatchHeader h = HeaderOf(batch);
  EXPECT_EQ(h.attributes, 0x30);  // transactional | control, no compression
  EXPECT_EQ(h.producer_id, 4242);
  EXPECT_EQ(h.producer_epoch, 3);
  EXPECT_EQ(h.base_sequence, -1);
  EXPECT_EQ(h.records_count, 1);
  EXPECT_EQ(h.last_offset_delta, 0);
  EXPECT_EQ(h.base_timestamp, 1'700'000'000'000);
  // The record: length 16 (varint 32), attributes 0, timestamp delta 0,
  // offset delta 0, key length 4 (varint 8), key = version 0 | type 1,
  // value length 6 (varint 12), value = version 0 | epoch 9, no headers.
  const Bytes record = {32, 0, 0, 0, 8, 0, 0, 0, 1, 12, 0, 0, 0, 0, 0, 9, 0};
  EXPECT_EQ(Bytes(batch.begin() + kBatchHeaderSize, batch.end()), record);

  auto marker = ParseTxnMarker(h, batch);
  ASSERT_TRUE(marker.ok()) << marker.error().message;
  ASSERT_TRUE(marker->has_value());
  EXPECT_EQ(**marker, (TxnMarker{ControlType::kCommit, 9}));

  auto abort = BuildTxnMarkerBatch(1, 0, {ControlType::kAbort, 0}, 0);
  auto parsed = ParseTxnMarker(HeaderOf(abort), abort);
  ASSERT_TRUE(parsed.ok() && parsed->has_value());
  EXPECT_EQ((*parsed)->type, ControlType::kAbort);
}

// A client may never produce one.
TEST(TxnMarker, ProduceValidationRefusesIt) {
  Bytes batch = BuildTxnMarkerBatch(4242, 3, {ControlType::kAbort, 1}, 0);
  auto validated = ValidateProduceRecords(batch, ValidationLimits{});
  ASSERT_FALSE(validated.ok());
  EXPECT_EQ(validated.error().code, Errc::kInvalidArgument);
}

TEST(TxnMarker, DataBatchesAndOtherControlTypesAreNoMarker) {
  BatchBuilder data;
  data.set_producer(7, 2, 0).set_transactional(true).Add("k", "v", 1);
  Bytes plain = data.Build();
  auto none = ParseTxnMarker(HeaderOf(plain), plain);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  Bytes kraft = ControlBatch({0, 0, 0, 3}, Bytes{0, 0});  // a KRaft control type
  auto other = ParseTxnMarker(HeaderOf(kraft), kraft);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
}

// Newer key and value versions keep the leading fields: read them.
TEST(TxnMarker, NewerVersionsAreRead) {
  Bytes batch = ControlBatch({0, 1, 0, 0}, Bytes{0, 2, 0, 0, 1, 0, 0xAA, 0xBB});
  auto marker = ParseTxnMarker(HeaderOf(batch), batch);
  ASSERT_TRUE(marker.ok() && marker->has_value());
  EXPECT_EQ(**marker, (TxnMarker{ControlType::kAbort, 256}));
}

TEST(TxnMarker, MalformedMarkersAreCorrupt) {
  for (const auto& [key, value] : std::vector<std::pair<Bytes, std::optional<Bytes>>>{
           {Bytes{0, 0}, Bytes{0, 0, 0, 0, 0, 1}},              // short key
           {Bytes{0xFF, 0xFF, 0, 1}, Bytes{0, 0, 0, 0, 0, 1}},  // negative key version
           {Bytes{0, 0, 0, 1}, Bytes{0, 0, 0}},                 // short value
           {Bytes{0, 0, 0, 1}, std::nullopt},                   // no value
       }) {
    Bytes batch = ControlBatch(key, value);
    auto marker = ParseTxnMarker(HeaderOf(batch), batch);
    ASSERT_FALSE(marker.ok());
    EXPECT_EQ(marker.error().code, Errc::kCorrupt);
  }
  Bytes batch = BuildTxnMarkerBatch(1, 0, {ControlType::kCommit, 0}, 0);
  BatchHeader h = HeaderOf(batch);
  batch.resize(batch.size() - 3);  // the record cut short
  EXPECT_FALSE(ParseTxnMarker(h, batch).ok());
}

}  // namespace
}  // namespace strata::protocol
