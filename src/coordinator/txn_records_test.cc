// __transaction_state record formats against bytes written out field by field
// from Kafka's TransactionLogKey/TransactionLogValue JSON schemas, round trips
// of both value versions, and hostile input (truncation, bad lengths, bad
// versions) that must fail with an error, never a crash.
#include "coordinator/txn_records.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace strata::coordinator {
namespace {

// Big-endian and varint helpers for writing expected bytes.
void I8(Bytes& b, int8_t v) { b.push_back(uint8_t(v)); }
void I16(Bytes& b, int16_t v) { b.push_back(uint8_t(uint16_t(v) >> 8)), b.push_back(uint8_t(v)); }
void I32(Bytes& b, int32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(uint32_t(v) >> s));
}
void I64(Bytes& b, int64_t v) {
  for (int s = 56; s >= 0; s -= 8) b.push_back(uint8_t(uint64_t(v) >> s));
}
void Uvarint(Bytes& b, uint32_t v) {
  while (v >= 0x80) {
    b.push_back(uint8_t(v | 0x80));
    v >>= 7;
  }
  b.push_back(uint8_t(v));
}
void Str(Bytes& b, const std::string& s) {
  I16(b, int16_t(s.size()));
  b.insert(b.end(), s.begin(), s.end());
}
void CompactStr(Bytes& b, const std::string& s) {
  Uvarint(b, uint32_t(s.size() + 1));
  b.insert(b.end(), s.begin(), s.end());
}

constexpr int64_t kPid = 4001;
constexpr int16_t kEpoch = 7;
constexpr int32_t kTimeout = 60000;
constexpr int64_t kUpdated = 1700000005000;
constexpr int64_t kStarted = 1700000001000;

TxnLogValue TwoTopics(TxnStatus status) {
  TxnLogValue v;
  v.producer_id = kPid;
  v.producer_epoch = kEpoch;
  v.timeout_ms = kTimeout;
  v.status = status;
  v.partitions = {{"alpha", {0, 3}}, {"beta", {7}}};
  v.last_update_ms = kUpdated;
  v.start_ms = kStarted;
  return v;
}

// The value fields before the partitions array, identical in v0 and v1.
void Head(Bytes& b, int16_t version, TxnStatus status) {
  I16(b, version);
  I64(b, kPid);           // ProducerId
  I16(b, kEpoch);         // ProducerEpoch
  I32(b, kTimeout);       // TransactionTimeoutMs
  I8(b, int8_t(status));  // TransactionStatus
}

TEST(TxnRecordsTest, StatusIdsAndNamesMatchKafka) {
  EXPECT_EQ(int(TxnStatus::kEmpty), 0);
  EXPECT_EQ(int(TxnStatus::kOngoing), 1);
  EXPECT_EQ(int(TxnStatus::kPrepareCommit), 2);
  EXPECT_EQ(int(TxnStatus::kPrepareAbort), 3);
  EXPECT_EQ(int(TxnStatus::kCompleteCommit), 4);
  EXPECT_EQ(int(TxnStatus::kCompleteAbort), 5);
  EXPECT_EQ(int(TxnStatus::kDead), 6);
  EXPECT_EQ(int(TxnStatus::kPrepareEpochFence), 7);
  EXPECT_EQ(TxnStatusName(TxnStatus::kEmpty), "Empty");
  EXPECT_EQ(TxnStatusName(TxnStatus::kOngoing), "Ongoing");
  EXPECT_EQ(TxnStatusName(TxnStatus::kPrepareCommit), "PrepareCommit");
  EXPECT_EQ(TxnStatusName(TxnStatus::kPrepareAbort), "PrepareAbort");
  EXPECT_EQ(TxnStatusName(TxnStatus::kCompleteCommit), "CompleteCommit");
  EXPECT_EQ(TxnStatusName(TxnStatus::kCompleteAbort), "CompleteAbort");
  EXPECT_EQ(TxnStatusName(TxnStatus::kDead), "Dead");
  EXPECT_EQ(TxnStatusName(TxnStatus::kPrepareEpochFence), "PrepareEpochFence");
  EXPECT_EQ(TxnStatusName(static_cast<TxnStatus>(9)), "Unknown");
}

TEST(TxnRecordsTest, StatusFromNameIsTheExactInverse) {
  for (int8_t id = 0; id <= 7; ++id) {
    const auto status = static_cast<TxnStatus>(id);
    EXPECT_EQ(TxnStatusFromName(TxnStatusName(status)), status);
  }
  EXPECT_EQ(TxnStatusFromName("ongoing"), std::nullopt);  // case sensitive, as Kafka
  EXPECT_EQ(TxnStatusFromName("Unknown"), std::nullopt);
  EXPECT_EQ(TxnStatusFromName(""), std::nullopt);
}

TEST(TxnRecordsTest, KeyBytes) {
  Bytes expected;
  I16(expected, 0);         // key version
  Str(expected, "txn-42");  // TransactionalId: int16 length + UTF-8
  EXPECT_EQ(EncodeTxnLogKey("txn-42"), expected);
  auto id = DecodeTxnLogKey(expected);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "txn-42");

  auto empty = DecodeTxnLogKey(EncodeTxnLogKey(""));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");

  // Another key version is not ours to read: the loader skips it.
  expected[1] = 1;
  EXPECT_EQ(DecodeTxnLogKey(expected).error().code, Errc::kUnsupported);
  Bytes negative_length;
  I16(negative_length, 0);
  I16(negative_length, -3);
  EXPECT_EQ(DecodeTxnLogKey(negative_length).error().code, Errc::kCorrupt);
}

TEST(TxnRecordsTest, ValueV0Bytes) {
  Bytes expected;
  Head(expected, 0, TxnStatus::kOngoing);
  I32(expected, 2);  // TransactionPartitions: int32 count
  Str(expected, "alpha");
  I32(expected, 2);  // PartitionIds: int32 count
  I32(expected, 0);
  I32(expected, 3);
  Str(expected, "beta");
  I32(expected, 1);
  I32(expected, 7);
  I64(expected, kUpdated);  // TransactionLastUpdateTimestampMs
  I64(expected, kStarted);  // TransactionStartTimestampMs
  // No tagged fields in v0.

  const TxnLogValue v = TwoTopics(TxnStatus::kOngoing);
  EXPECT_EQ(EncodeTxnLogValue(v, 0), expected);
  auto back = DecodeTxnLogValue(expected);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, v);
}

TEST(TxnRecordsTest, ValueV1BytesWithTags0And2) {
  Bytes expected;
  Head(expected, 1, TxnStatus::kPrepareCommit);
  Uvarint(expected, 2 + 1);  // compact array: count + 1
  CompactStr(expected, "alpha");
  Uvarint(expected, 2 + 1);  // compact int32 array
  I32(expected, 0);
  I32(expected, 3);
  Uvarint(expected, 0);  // PartitionsSchema's own (empty) tagged fields
  CompactStr(expected, "beta");
  Uvarint(expected, 1 + 1);
  I32(expected, 7);
  Uvarint(expected, 0);
  I64(expected, kUpdated);
  I64(expected, kStarted);
  Uvarint(expected, 2);  // two top-level tagged fields, ascending tags
  Uvarint(expected, 0);  // tag 0 PreviousProducerId
  Uvarint(expected, 8);  //   size
  I64(expected, 3999);
  Uvarint(expected, 2);  // tag 2 ClientTransactionVersion
  Uvarint(expected, 2);  //   size
  I16(expected, 2);

  TxnLogValue v = TwoTopics(TxnStatus::kPrepareCommit);
  v.previous_producer_id = 3999;
  v.client_transaction_version = 2;  // next_producer_id stays -1: not written
  EXPECT_EQ(EncodeTxnLogValue(v, 1), expected);
  auto back = DecodeTxnLogValue(expected);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, v);
}

TEST(TxnRecordsTest, NullPartitionsForEmpty) {
  TxnLogValue v = TwoTopics(TxnStatus::kEmpty);
  v.partitions.clear();

  Bytes v0;
  Head(v0, 0, TxnStatus::kEmpty);
  I32(v0, -1);  // null array
  I64(v0, kUpdated);
  I64(v0, kStarted);
  EXPECT_EQ(EncodeTxnLogValue(v, 0), v0);

  Bytes v1;
  Head(v1, 1, TxnStatus::kEmpty);
  Uvarint(v1, 0);  // null compact array
  I64(v1, kUpdated);
  I64(v1, kStarted);
  Uvarint(v1, 0);  // every tagged field at its default
  EXPECT_EQ(EncodeTxnLogValue(v, 1), v1);

  for (const Bytes* b : {&v0, &v1}) {
    auto back = DecodeTxnLogValue(*b);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, v);
  }
}

TEST(TxnRecordsTest, PartitionsAsKafkaReadsThem) {
  // A completed transaction has an empty, not null, array.
  TxnLogValue done = TwoTopics(TxnStatus::kCompleteAbort);
  done.partitions.clear();
  Bytes b = EncodeTxnLogValue(done, 0);
  EXPECT_EQ(Bytes(b.begin() + 17, b.begin() + 21), (Bytes{0, 0, 0, 0}));

  // Null outside Empty reads as no partitions.
  Bytes null_ongoing;
  Head(null_ongoing, 0, TxnStatus::kOngoing);
  I32(null_ongoing, -1);
  I64(null_ongoing, kUpdated);
  I64(null_ongoing, kStarted);
  auto d = DecodeTxnLogValue(null_ongoing);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->partitions.empty());
  EXPECT_EQ(d->status, TxnStatus::kOngoing);

  // Kafka keeps a set: a repeated topic merges, ids come back sorted, once.
  Bytes repeated;
  Head(repeated, 0, TxnStatus::kOngoing);
  I32(repeated, 2);
  Str(repeated, "t");
  I32(repeated, 3), I32(repeated, 5), I32(repeated, 1), I32(repeated, 5);
  Str(repeated, "t");
  I32(repeated, 1), I32(repeated, 0);
  I64(repeated, kUpdated);
  I64(repeated, kStarted);
  auto r = DecodeTxnLogValue(repeated);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->partitions, (std::map<std::string, std::vector<int32_t>>{{"t", {0, 1, 5}}}));

  // Empty ignores whatever array is there, as Kafka's loader does.
  Bytes empty_with_topics = repeated;
  empty_with_topics[2 + 8 + 2 + 4] = uint8_t(TxnStatus::kEmpty);  // the status byte
  auto e = DecodeTxnLogValue(empty_with_topics);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->status, TxnStatus::kEmpty);
  EXPECT_TRUE(e->partitions.empty());
}

TEST(TxnRecordsTest, V1UnknownTagsSkipped) {
  Bytes b;
  Head(b, 1, TxnStatus::kOngoing);
  Uvarint(b, 1 + 1);
  CompactStr(b, "alpha");
  Uvarint(b, 1 + 1);
  I32(b, 4);
  Uvarint(b, 1);  // an entry-level tagged field from the future
  Uvarint(b, 9);
  Uvarint(b, 1);
  b.push_back(0xAB);
  I64(b, kUpdated);
  I64(b, kStarted);
  Uvarint(b, 4);
  Uvarint(b, 1);  // tag 1 NextProducerId
  Uvarint(b, 8);
  I64(b, 5000);
  Uvarint(b, 2);  // tag 2 ClientTransactionVersion
  Uvarint(b, 2);
  I16(b, 2);
  Uvarint(b, 3);  // unknown tag 3, two bytes (a later Kafka's int16 field)
  Uvarint(b, 2);
  I16(b, 12);
  Uvarint(b, 200);  // unknown tag 200 with a 300-byte body: two-byte varints
  Uvarint(b, 300);
  b.insert(b.end(), 300, 0x5A);

  auto d = DecodeTxnLogValue(b);
  ASSERT_TRUE(d.ok()) << d.error().message;
  TxnLogValue want = TwoTopics(TxnStatus::kOngoing);
  want.partitions = {{"alpha", {4}}};
  want.next_producer_id = 5000;
  want.client_transaction_version = 2;
  EXPECT_EQ(*d, want);
}

TEST(TxnRecordsTest, RoundTrips) {
  std::vector<TxnLogValue> values;
  values.push_back(TwoTopics(TxnStatus::kOngoing));
  values.push_back(TwoTopics(TxnStatus::kPrepareAbort));
  TxnLogValue empty = TwoTopics(TxnStatus::kEmpty);
  empty.partitions.clear();
  values.push_back(empty);
  TxnLogValue committed = TwoTopics(TxnStatus::kCompleteCommit);
  committed.partitions.clear();
  values.push_back(committed);
  TxnLogValue tagged = TwoTopics(TxnStatus::kPrepareCommit);
  tagged.previous_producer_id = 1;
  tagged.next_producer_id = INT64_MAX;
  tagged.client_transaction_version = 2;
  tagged.partitions["a-topic-with-a-name-longer-than-127-bytes-" + std::string(100, 'x')] = {
      0, 1, 2, INT32_MAX};
  values.push_back(tagged);

  for (const TxnLogValue& v : values) {
    SCOPED_TRACE(std::string(TxnStatusName(v.status)));
    auto v1 = DecodeTxnLogValue(EncodeTxnLogValue(v, 1));
    ASSERT_TRUE(v1.ok()) << v1.error().message;
    EXPECT_EQ(*v1, v);
    // v0 has no place for the tagged fields: they read back as defaults.
    TxnLogValue untagged = v;
    untagged.previous_producer_id = -1;
    untagged.next_producer_id = -1;
    untagged.client_transaction_version = 0;
    auto v0 = DecodeTxnLogValue(EncodeTxnLogValue(v, 0));
    ASSERT_TRUE(v0.ok()) << v0.error().message;
    EXPECT_EQ(*v0, untagged);
  }
}

TEST(TxnRecordsTest, EveryStrictPrefixFails) {
  TxnLogValue v = TwoTopics(TxnStatus::kOngoing);
  v.previous_producer_id = 9;
  v.next_producer_id = 10;
  v.client_transaction_version = 2;
  TxnLogValue empty = v;
  empty.status = TxnStatus::kEmpty;
  empty.partitions.clear();
  for (const Bytes& full : {EncodeTxnLogValue(v, 0), EncodeTxnLogValue(v, 1),
                            EncodeTxnLogValue(empty, 0), EncodeTxnLogValue(empty, 1)}) {
    ASSERT_TRUE(DecodeTxnLogValue(full).ok());
    for (size_t n = 0; n < full.size(); ++n) {
      auto d = DecodeTxnLogValue(ByteView(full.data(), n));
      ASSERT_FALSE(d.ok()) << "prefix " << n << " of " << full.size();
      EXPECT_EQ(d.error().code, Errc::kCorrupt) << "prefix " << n;
    }
  }
  const Bytes key = EncodeTxnLogKey("some-transactional-id");
  for (size_t n = 0; n < key.size(); ++n) {
    auto d = DecodeTxnLogKey(ByteView(key.data(), n));
    ASSERT_FALSE(d.ok()) << "key prefix " << n;
    EXPECT_EQ(d.error().code, Errc::kCorrupt);
  }
}

TEST(TxnRecordsTest, UnknownValueVersionsRejected) {
  Bytes v1 = EncodeTxnLogValue(TwoTopics(TxnStatus::kOngoing), 1);
  for (int16_t version : {int16_t(2), int16_t(-1), int16_t(INT16_MAX)}) {
    Bytes b = v1;
    b[0] = uint8_t(uint16_t(version) >> 8);
    b[1] = uint8_t(version);
    auto d = DecodeTxnLogValue(b);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code, Errc::kUnsupported) << version;
  }
}

// Each case is a v0 or v1 value cut or bent somewhere; all must be kCorrupt.
TEST(TxnRecordsTest, HostileInputIsCorrupt) {
  std::vector<std::pair<std::string, Bytes>> cases;
  auto add = [&](std::string name, Bytes b) { cases.emplace_back(std::move(name), std::move(b)); };

  Bytes b;
  Head(b, 0, TxnStatus::kOngoing);
  I32(b, INT32_MAX);  // two billion topics in a few bytes
  add("huge topic count", b);

  b.clear();
  Head(b, 0, TxnStatus::kOngoing);
  I32(b, -2);
  add("negative topic count", b);

  b.clear();
  Head(b, 0, TxnStatus::kOngoing);
  I32(b, 1);
  I16(b, -5);  // topic length
  add("negative topic length", b);

  b.clear();
  Head(b, 0, TxnStatus::kOngoing);
  I32(b, 1);
  Str(b, "t");
  I32(b, 0x10000000);  // partition ids
  I32(b, 0);
  add("huge partition count", b);

  b.clear();
  Head(b, 1, TxnStatus::kOngoing);
  b.insert(b.end(), {0xFF, 0xFF, 0xFF, 0xFF, 0x0F});  // uvarint 2^32-1
  add("huge compact count", b);

  b.clear();
  Head(b, 1, TxnStatus::kOngoing);
  b.insert(b.end(), {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01});  // six-byte uvarint
  add("overlong uvarint", b);

  Bytes tail;  // a valid v1 value up to the top-level tagged fields
  Head(tail, 1, TxnStatus::kOngoing);
  Uvarint(tail, 1);  // no topics
  I64(tail, kUpdated);
  I64(tail, kStarted);

  b = tail;
  Uvarint(b, 1);
  Uvarint(b, 7);
  Uvarint(b, 1000);  // body beyond the input
  b.insert(b.end(), 10, 0);
  add("tagged field beyond input", b);

  b = tail;
  Uvarint(b, 1);
  Uvarint(b, 0);  // PreviousProducerId with 4 bytes, not 8
  Uvarint(b, 4);
  I32(b, 1);
  add("known tag of wrong size", b);

  b = tail;
  Uvarint(b, 1);
  Uvarint(b, 2);  // ClientTransactionVersion with 3 bytes, not 2
  Uvarint(b, 3);
  b.insert(b.end(), {0, 2, 0});
  add("known tag too long", b);

  b = tail;
  Uvarint(b, 0xFFFFFFFF);  // four billion tagged fields
  add("huge tag count", b);

  for (int8_t status : {int8_t(8), int8_t(-1), int8_t(127)}) {
    b.clear();
    I16(b, 0);
    I64(b, kPid);
    I16(b, kEpoch);
    I32(b, kTimeout);
    I8(b, status);
    I32(b, 0);
    I64(b, kUpdated);
    I64(b, kStarted);
    add("status id " + std::to_string(status), b);
  }

  for (const auto& [name, bytes] : cases) {
    auto d = DecodeTxnLogValue(bytes);
    ASSERT_FALSE(d.ok()) << name;
    EXPECT_EQ(d.error().code, Errc::kCorrupt) << name << ": " << d.error().message;
  }
}

TEST(TxnRecordsTest, RecordWithTombstone) {
  const Bytes key = EncodeTxnLogKey("expired-id");
  auto tomb = DecodeTxnLogRecord(key, std::nullopt);
  ASSERT_TRUE(tomb.ok());
  EXPECT_EQ(tomb->transactional_id, "expired-id");
  EXPECT_FALSE(tomb->value.has_value());

  const TxnLogValue v = TwoTopics(TxnStatus::kOngoing);
  const Bytes value = EncodeTxnLogValue(v, 1);
  auto rec = DecodeTxnLogRecord(key, ByteView(value));
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->transactional_id, "expired-id");
  ASSERT_TRUE(rec->value.has_value());
  EXPECT_EQ(*rec->value, v);

  Bytes other_key = key;
  other_key[1] = 1;
  EXPECT_EQ(DecodeTxnLogRecord(other_key, ByteView(value)).error().code, Errc::kUnsupported);
  EXPECT_EQ(DecodeTxnLogRecord(key, ByteView(value.data(), 5)).error().code, Errc::kCorrupt);
}

}  // namespace
}  // namespace strata::coordinator
