#include "protocol/records.h"

#include <gtest/gtest.h>

#include <string>

#include "protocol/batch_builder.h"
#include "protocol/compression.h"

namespace strata::protocol {
namespace {

Bytes B(std::string_view s) { return Bytes(s.begin(), s.end()); }
std::string S(ByteView v) { return std::string(v.begin(), v.end()); }

// Rewrites batchLength to match the buffer and recomputes the CRC, so a test
// can break one rule without tripping the CRC or length checks first.
void Reseal(Bytes& batch) {
  StoreBE32(batch.data() + 8, static_cast<uint32_t>(batch.size() - kLogOverhead));
  StoreBE32(batch.data() + kCrcOffset, ComputeBatchCrc(batch));
}

// Replaces the records section of `batch` with `section` (compressed with
// `codec`, which also becomes the batch's codec).
Bytes WithSection(Bytes batch, const Bytes& section, Compression codec = Compression::kNone) {
  batch.resize(kBatchHeaderSize);
  uint16_t attrs = LoadBE16(batch.data() + kAttributesOffset);
  StoreBE16(batch.data() + kAttributesOffset, (attrs & ~0x7) | static_cast<uint16_t>(codec));
  Bytes packed = *Compress(codec, section);
  batch.insert(batch.end(), packed.begin(), packed.end());
  Reseal(batch);
  return batch;
}

void PutVarint(Bytes& out, int64_t v) {
  uint64_t u = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  while (u >= 0x80) {
    out.push_back(static_cast<uint8_t>(u | 0x80));
    u >>= 7;
  }
  out.push_back(static_cast<uint8_t>(u));
}

// One record with the given raw body (everything after the length varint).
Bytes RawRecord(const Bytes& body) {
  Bytes out;
  PutVarint(out, static_cast<int64_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

// attributes, tsDelta 0, offsetDelta 0, then the given tail.
Bytes RecordBody(const Bytes& tail) {
  Bytes body = {0, 0, 0};
  body.insert(body.end(), tail.begin(), tail.end());
  return body;
}

BatchBuilder RichBatch(Compression codec) {
  BatchBuilder b;
  b.set_compression(codec).set_producer(42, 3, 17).set_base_offset(0);
  b.Add("k0", "value zero", 1000);
  b.Add(std::nullopt, "null key", 1005);
  b.Add("null value", std::nullopt, 999);
  BatchBuilder::Entry e;
  e.key = B("k3");
  e.value = Bytes{};
  e.timestamp = 1005;
  e.headers = {{"trace", B("abc")}, {"", std::nullopt}, {"empty", Bytes{}}};
  b.Add(std::move(e));
  return b;
}

struct Seen {
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  int64_t ts_delta;
  int32_t offset_delta;
};

Result<std::vector<Seen>> Collect(ByteView batch) {
  STRATA_ASSIGN_OR_RETURN(BatchHeader h, ParseBatchHeader(batch));
  std::vector<Seen> out;
  Status st = ForEachRecord(h, batch, 1 << 20, [&](const Record& r) -> Status {
    Seen s{};
    if (r.key) s.key = S(*r.key);
    if (r.value) s.value = S(*r.value);
    for (const auto& [k, v] : r.headers) {
      s.headers.emplace_back(std::string(k), v ? std::optional<std::string>(S(*v)) : std::nullopt);
    }
    s.ts_delta = r.timestamp_delta;
    s.offset_delta = r.offset_delta;
    out.push_back(std::move(s));
    return Status::Ok();
  });
  if (!st.ok()) return st.take_error();
  return out;
}

Errc ValidateCode(ByteView records, ValidationLimits limits = {}) {
  auto r = ValidateProduceRecords(records, limits);
  return r.ok() ? Errc::kOk : r.error().code;
}

class RecordsCodecTest : public ::testing::TestWithParam<Compression> {};

TEST_P(RecordsCodecTest, BuildValidateIterateRoundTrip) {
  Bytes batch = RichBatch(GetParam()).Build();
  auto v = ValidateProduceRecords(batch, {});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->size(), 1u);
  const ValidatedBatch& vb = (*v)[0];
  EXPECT_EQ(vb.position, 0u);
  EXPECT_EQ(vb.size, batch.size());
  EXPECT_EQ(vb.header.compression(), GetParam());
  EXPECT_EQ(vb.header.records_count, 4);
  EXPECT_EQ(vb.header.last_offset_delta, 3);
  EXPECT_EQ(vb.header.base_timestamp, 1000);
  EXPECT_EQ(vb.header.max_timestamp, 1005);
  EXPECT_EQ(vb.header.producer_id, 42);
  EXPECT_EQ(vb.header.producer_epoch, 3);
  EXPECT_EQ(vb.header.base_sequence, 17);
  EXPECT_EQ(vb.max_timestamp, 1005);
  EXPECT_EQ(vb.offset_delta_of_max_timestamp, 1);  // first of the two 1005s

  auto seen = Collect(batch);
  ASSERT_TRUE(seen.ok()) << seen.error().message;
  ASSERT_EQ(seen->size(), 4u);
  const auto& r = *seen;
  EXPECT_EQ(r[0].key, "k0");
  EXPECT_EQ(r[0].value, "value zero");
  EXPECT_EQ(r[0].ts_delta, 0);
  EXPECT_EQ(r[1].key, std::nullopt);
  EXPECT_EQ(r[1].value, "null key");
  EXPECT_EQ(r[1].ts_delta, 5);
  EXPECT_EQ(r[2].key, "null value");
  EXPECT_EQ(r[2].value, std::nullopt);
  EXPECT_EQ(r[2].ts_delta, -1);
  EXPECT_EQ(r[3].key, "k3");
  EXPECT_EQ(r[3].value, "");
  ASSERT_EQ(r[3].headers.size(), 3u);
  EXPECT_EQ(r[3].headers[0], (std::pair<std::string, std::optional<std::string>>("trace", "abc")));
  EXPECT_EQ(r[3].headers[1].first, "");
  EXPECT_EQ(r[3].headers[1].second, std::nullopt);
  EXPECT_EQ(r[3].headers[2].second, "");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r[i].offset_delta, i);
}

TEST_P(RecordsCodecTest, ManyRecords) {
  BatchBuilder b;
  b.set_compression(GetParam());
  for (int i = 0; i < 5000; ++i) {
    b.Add("key-" + std::to_string(i), std::string(i % 300, 'v'), 1'700'000'000'000 + i % 97);
  }
  Bytes batch = b.Build();
  auto v = ValidateProduceRecords(batch, {});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ((*v)[0].max_timestamp, 1'700'000'000'096);
  EXPECT_EQ((*v)[0].offset_delta_of_max_timestamp, 96);
  auto seen = Collect(batch);
  ASSERT_TRUE(seen.ok());
  ASSERT_EQ(seen->size(), 5000u);
  EXPECT_EQ((*seen)[4321].key, "key-4321");
  EXPECT_EQ((*seen)[4321].value, std::string(4321 % 300, 'v'));
}

// Trailing bytes after the last record inside a compressed section.
TEST_P(RecordsCodecTest, TrailingBytesInsideSectionAreCorrupt) {
  Bytes good = BatchBuilder().Add("k", "v").Build();
  Bytes section(good.begin() + kBatchHeaderSize, good.end());
  section.push_back(0);
  Bytes bad = WithSection(good, section, GetParam());
  EXPECT_EQ(ValidateCode(bad), Errc::kCorrupt);
  Bytes ok = WithSection(good, Bytes(good.begin() + kBatchHeaderSize, good.end()), GetParam());
  EXPECT_EQ(ValidateCode(ok), Errc::kOk);
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, RecordsCodecTest,
                         ::testing::Values(Compression::kNone, Compression::kGzip,
                                           Compression::kSnappy, Compression::kLz4,
                                           Compression::kZstd),
                         [](const auto& info) { return std::string(CompressionName(info.param)); });

TEST(ValidateProduceRecords, SeveralBatchesAndNonZeroBaseOffset) {
  Bytes a = BatchBuilder().set_base_offset(12345).Add("a", "1", 5).Build();
  Bytes b =
      BatchBuilder().set_compression(Compression::kZstd).Add("b", "2", 6).Add("c", "3", 4).Build();
  Bytes both = a;
  both.insert(both.end(), b.begin(), b.end());
  auto v = ValidateProduceRecords(both, {});
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[0].header.base_offset, 12345_o);
  EXPECT_EQ((*v)[0].position, 0u);
  EXPECT_EQ((*v)[1].position, a.size());
  EXPECT_EQ((*v)[1].size, b.size());
  EXPECT_EQ((*v)[1].max_timestamp, 6);
  EXPECT_EQ((*v)[1].offset_delta_of_max_timestamp, 0);
}

TEST(ValidateProduceRecords, EmptyBlobHasNoBatches) {
  auto v = ValidateProduceRecords({}, {});
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->empty());
}

TEST(ValidateProduceRecords, CorruptCrc) {
  Bytes batch = BatchBuilder().Add("k", "value").Build();
  batch.back() ^= 1;
  auto v = ValidateProduceRecords(batch, {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Errc::kCorrupt);
  EXPECT_NE(v.error().message.find("CORRUPT_MESSAGE"), std::string::npos);
}

TEST(ValidateProduceRecords, TruncatedBatch) {
  Bytes batch = BatchBuilder().Add("k", "value").Build();
  for (size_t len : {batch.size() - 1, size_t{61}, size_t{20}, size_t{16}, size_t{1}}) {
    EXPECT_EQ(ValidateCode(ByteView(batch).first(len)), Errc::kCorrupt) << len;
  }
  // A whole batch followed by part of a second one.
  Bytes two = batch;
  two.insert(two.end(), batch.begin(), batch.begin() + 30);
  auto v = ValidateProduceRecords(two, {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Errc::kCorrupt);
  EXPECT_NE(v.error().message.find(fmt::format("batch at byte {}", batch.size())),
            std::string::npos);
}

TEST(ValidateProduceRecords, CountDisagreesWithLastOffsetDelta) {
  Bytes batch = BatchBuilder().Add("a", "1").Add("b", "2").Build();
  StoreBE32(batch.data() + 57, 3);  // recordsCount 3, lastOffsetDelta 1
  Reseal(batch);
  auto v = ValidateProduceRecords(batch, {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Errc::kInvalidArgument);
  EXPECT_NE(v.error().message.find("INVALID_RECORD"), std::string::npos);
}

TEST(ValidateProduceRecords, ZeroCountIsInvalid) {
  Bytes batch = BatchBuilder().Build();  // count 0, lastOffsetDelta -1
  EXPECT_EQ(ValidateCode(batch), Errc::kInvalidArgument);
}

// Header says 3 (consistently) but only 2 records are present.
TEST(ValidateProduceRecords, CountDisagreesWithRecordsPresent) {
  Bytes batch = BatchBuilder().Add("a", "1").Add("b", "2").Build();
  StoreBE32(batch.data() + 23, 2);
  StoreBE32(batch.data() + 57, 3);
  Reseal(batch);
  EXPECT_EQ(ValidateCode(batch), Errc::kCorrupt);
  // And one record too few declared: the third record is trailing data.
  Bytes more = BatchBuilder().Add("a", "1").Add("b", "2").Add("c", "3").Build();
  StoreBE32(more.data() + 23, 1);
  StoreBE32(more.data() + 57, 2);
  Reseal(more);
  EXPECT_EQ(ValidateCode(more), Errc::kCorrupt);
}

TEST(ValidateProduceRecords, OffsetDeltaMustBeIndex) {
  BatchBuilder b;
  b.Add("a", "1");
  BatchBuilder::Entry e;
  e.value = B("2");
  e.offset_delta = 5;
  b.Add(std::move(e));
  b.Add("c", "3");  // lastOffsetDelta 2, count 3: header is consistent
  auto v = ValidateProduceRecords(b.Build(), {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Errc::kInvalidArgument);
  EXPECT_NE(v.error().message.find("record 1 has offset delta 5"), std::string::npos);
}

TEST(ValidateProduceRecords, OldMagicIsUnsupported) {
  // A v1 message: offset, size, crc, magic 1, attributes, timestamp, key -1, value "x".
  Bytes msg(8 + 4 + 4 + 1 + 1 + 8 + 4 + 4 + 1, 0);
  StoreBE32(msg.data() + 8, static_cast<uint32_t>(msg.size() - 12));
  msg[16] = 1;
  StoreBE32(msg.data() + 26, 0xffffffffu);
  StoreBE32(msg.data() + 30, 1);
  msg[34] = 'x';
  for (int8_t magic : {0, 1}) {
    msg[16] = static_cast<uint8_t>(magic);
    auto v = ValidateProduceRecords(msg, {});
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().code, Errc::kUnsupported);
    EXPECT_NE(v.error().message.find("old message formats are not supported"), std::string::npos);
  }
  msg[16] = 3;
  EXPECT_EQ(ValidateCode(msg), Errc::kCorrupt);
}

TEST(ValidateProduceRecords, OversizeBatch) {
  Bytes batch = BatchBuilder().Add("k", std::string(1000, 'x')).Build();
  ValidationLimits limits;
  limits.max_batch_bytes = batch.size() - 1;
  EXPECT_EQ(ValidateCode(batch, limits), Errc::kTooLarge);
  limits.max_batch_bytes = batch.size();
  EXPECT_EQ(ValidateCode(batch, limits), Errc::kOk);
  // Over the limit wins over truncation, as in Kafka: the size is declared.
  limits.max_batch_bytes = 100;
  EXPECT_EQ(ValidateCode(ByteView(batch).first(80), limits), Errc::kTooLarge);
}

TEST(ValidateProduceRecords, DecompressedSizeIsBounded) {
  Bytes batch =
      BatchBuilder().set_compression(Compression::kZstd).Add("k", std::string(1 << 20, 0)).Build();
  ValidationLimits limits;
  limits.max_decompressed_bytes = 64 * 1024;
  EXPECT_LT(batch.size(), 1000u);
  EXPECT_EQ(ValidateCode(batch, limits), Errc::kTooLarge);
  limits.max_decompressed_bytes = 2 << 20;
  EXPECT_EQ(ValidateCode(batch, limits), Errc::kOk);
}

TEST(ValidateProduceRecords, TrailingGarbageInUncompressedBatch) {
  Bytes batch = BatchBuilder().Add("k", "v").Build();
  batch.push_back(0);
  batch.push_back(0);
  Reseal(batch);
  auto v = ValidateProduceRecords(batch, {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Errc::kCorrupt);
  EXPECT_NE(v.error().message.find("2 bytes follow the last of 1 records"), std::string::npos);
}

TEST(ValidateProduceRecords, ControlBatchFromClient) {
  Bytes batch = BatchBuilder().set_control(true).set_producer(1, 0, 0).Add("k", "v").Build();
  EXPECT_EQ(ValidateCode(batch), Errc::kInvalidArgument);
}

TEST(ValidateProduceRecords, ProducerIdNeedsBaseSequence) {
  EXPECT_EQ(ValidateCode(BatchBuilder().set_producer(7, 0, -1).Add("k", "v").Build()),
            Errc::kInvalidArgument);
  EXPECT_EQ(ValidateCode(BatchBuilder().set_producer(7, 0, 0).Add("k", "v").Build()), Errc::kOk);
  EXPECT_EQ(ValidateCode(BatchBuilder().set_producer(-1, -1, -1).Add("k", "v").Build()), Errc::kOk);
}

TEST(ValidateProduceRecords, UnknownCodecIsCorrupt) {
  Bytes batch = BatchBuilder().Add("k", "v").Build();
  StoreBE16(batch.data() + kAttributesOffset, 6);
  Reseal(batch);
  EXPECT_EQ(ValidateCode(batch), Errc::kCorrupt);
}

// Records whose inner lengths lie: each must be kCorrupt, never a crash.
TEST(ValidateProduceRecords, MalformedRecords) {
  Bytes one = BatchBuilder().Add("k", "v").Build();
  auto check = [&](const Bytes& section, const char* what) {
    EXPECT_EQ(ValidateCode(WithSection(one, section)), Errc::kCorrupt) << what;
  };
  check(RawRecord(RecordBody({10, 'k', 1, 0})), "key beyond record");
  check(RawRecord(RecordBody({3, 'k', 1, 0})), "key length -2");
  check(RawRecord(RecordBody({1, 1, 1})), "header count -1");
  check(RawRecord(RecordBody({1, 1, 2, 1, 0})), "header key null");
  check(RawRecord(RecordBody({1, 1, 0xfe, 0xff, 0xff, 0xff, 0x07})), "header count 2^30-1");
  check(RawRecord(RecordBody({1, 1, 0, 0})), "record length leaves a byte");
  check(RawRecord(RecordBody({1, 1, 0xff, 0xff, 0xff, 0xff, 0x7f})), "header count INT32_MIN");
  check(RawRecord(RecordBody({0xff, 0xff, 0xff, 0xff, 0xff, 0x01})), "varint too long");
  check(Bytes{0x81}, "length varint cut");
  check(Bytes{3}, "negative record length");
  check(Bytes{40, 0, 0}, "record length beyond section");
  // The same bytes with a correct layout pass: key "k", null value, 0 headers.
  EXPECT_EQ(ValidateCode(WithSection(one, RawRecord(RecordBody({2, 'k', 1, 0})))), Errc::kOk);
}

TEST(ForEachRecord, StopsAtVisitorError) {
  Bytes batch = BatchBuilder().Add("a", "1").Add("b", "2").Add("c", "3").Build();
  BatchHeader h = *ParseBatchHeader(batch);
  int calls = 0;
  Status st = ForEachRecord(h, batch, 1 << 20, [&](const Record&) -> Status {
    if (++calls == 2) return MakeError(Errc::kNotFound, "stop");
    return Status::Ok();
  });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(st.error().code, Errc::kNotFound);
}

TEST(ForEachRecord, ShortBufferIsCorrupt) {
  Bytes batch = BatchBuilder().Add("a", "1").Build();
  BatchHeader h = *ParseBatchHeader(batch);
  Status st = ForEachRecord(h, ByteView(batch).first(batch.size() - 1), 1 << 20,
                            [](const Record&) { return Status::Ok(); });
  EXPECT_EQ(st.error().code, Errc::kCorrupt);
}

TEST(BatchBuilder, HeaderFieldsAndCrc) {
  Bytes batch = BatchBuilder()
                    .set_base_offset(77)
                    .set_partition_leader_epoch(9)
                    .set_transactional(true)
                    .set_producer(5, 2, 100)
                    .set_compression(Compression::kLz4)
                    .Add("a", "1", 50)
                    .Add("b", "2", 40)
                    .Build();
  EXPECT_TRUE(BatchCrcValid(batch));
  BatchHeader h = *ParseBatchHeader(batch);
  EXPECT_EQ(h.base_offset, 77_o);
  EXPECT_EQ(h.size_in_bytes(), static_cast<int32_t>(batch.size()));
  EXPECT_EQ(h.partition_leader_epoch, 9);
  EXPECT_TRUE(h.transactional());
  EXPECT_FALSE(h.control());
  EXPECT_EQ(h.compression(), Compression::kLz4);
  EXPECT_EQ(h.base_timestamp, 50);
  EXPECT_EQ(h.max_timestamp, 50);
  EXPECT_EQ(h.last_offset_delta, 1);
  EXPECT_EQ(h.records_count, 2);
  EXPECT_EQ(h.producer_id, 5);
  EXPECT_EQ(h.producer_epoch, 2);
  EXPECT_EQ(h.base_sequence, 100);
}

// Exact bytes of an uncompressed one-record batch's records section.
TEST(BatchBuilder, RecordEncodingBytes) {
  BatchBuilder::Entry e;
  e.key = B("k");
  e.value = B("vv");
  e.timestamp = 10;
  e.headers = {{"h", std::nullopt}};
  Bytes batch = BatchBuilder().Add(std::move(e)).Build();
  Bytes section(batch.begin() + kBatchHeaderSize, batch.end());
  // len 12 | attr 0 | tsDelta 0 | offDelta 0 | key 1 'k' | value 2 'vv' | 1 header: 'h', null
  Bytes expected = {24, 0, 0, 0, 2, 'k', 4, 'v', 'v', 2, 2, 'h', 1};
  EXPECT_EQ(section, expected);
}

}  // namespace
}  // namespace strata::protocol
