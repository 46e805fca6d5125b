// __consumer_offsets record formats against bytes written out by hand from
// Kafka's OffsetCommitKey/Value and GroupMetadataKey/Value JSON specs, the
// group -> partition mapping, and consumer-protocol subscription parsing.
#include "coordinator/group_records.h"

#include <gtest/gtest.h>

#include "coordinator/consumer_protocol.h"
#include "coordinator/key_partitioner.h"

namespace strata::coordinator {
namespace {

// Big-endian helpers for writing expected bytes.
void I16(Bytes& b, int16_t v) { b.push_back(uint8_t(v >> 8)), b.push_back(uint8_t(v)); }
void I32(Bytes& b, int32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(uint32_t(v) >> s));
}
void I64(Bytes& b, int64_t v) {
  for (int s = 56; s >= 0; s -= 8) b.push_back(uint8_t(uint64_t(v) >> s));
}
void Str(Bytes& b, const std::string& s) {
  I16(b, int16_t(s.size()));
  b.insert(b.end(), s.begin(), s.end());
}
void CompactStr(Bytes& b, const std::string& s) {
  b.push_back(uint8_t(s.size() + 1));  // short strings: one-byte uvarint
  b.insert(b.end(), s.begin(), s.end());
}

TEST(GroupRecordsTest, OffsetCommitKeyBytes) {
  Bytes expected;
  I16(expected, 1);
  Str(expected, "grp");
  Str(expected, "topic-a");
  I32(expected, 7);
  EXPECT_EQ(EncodeOffsetCommitKey({"grp", "topic-a", 7}), expected);
  auto key = DecodeRecordKey(expected);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->kind, RecordKey::Kind::kOffsetCommit);
  EXPECT_EQ(key->offset, (OffsetCommitKey{"grp", "topic-a", 7}));
  EXPECT_EQ(key->group, "grp");
  // Key version 0 (pre-0.10 brokers) has the same layout.
  expected[1] = 0;
  auto legacy = DecodeRecordKey(expected);
  ASSERT_TRUE(legacy.ok());
  EXPECT_EQ(legacy->kind, RecordKey::Kind::kOffsetCommit);
  EXPECT_EQ(legacy->offset.partition, 7);
}

TEST(GroupRecordsTest, GroupMetadataKeyBytesAndOtherKeys) {
  Bytes expected;
  I16(expected, 2);
  Str(expected, "my-group");
  EXPECT_EQ(EncodeGroupMetadataKey("my-group"), expected);
  auto key = DecodeRecordKey(expected);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->kind, RecordKey::Kind::kGroupMetadata);
  EXPECT_EQ(key->group, "my-group");
  // Version 3+ keys (consumer-protocol groups) are not ours: skipped, not errors.
  Bytes other;
  I16(other, 3);
  Str(other, "x");
  auto o = DecodeRecordKey(other);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->kind, RecordKey::Kind::kOther);
  EXPECT_FALSE(DecodeRecordKey(Bytes{0x00, 0x01, 0x00, 0x05, 'a'}).ok());  // truncated
}

TEST(GroupRecordsTest, OffsetCommitValueV3Bytes) {
  Bytes expected;
  I16(expected, 3);
  I64(expected, 4242);
  I32(expected, 5);
  Str(expected, "meta");
  I64(expected, 1700000000123);
  OffsetCommitValue v{4242, 5, "meta", 1700000000123, -1};
  EXPECT_EQ(EncodeOffsetCommitValue(v), expected);
  auto back = DecodeOffsetCommitValue(expected);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, v);
}

TEST(GroupRecordsTest, OffsetCommitValueOlderAndFlexibleVersions) {
  Bytes v0;
  I16(v0, 0);
  I64(v0, 10);
  Str(v0, "");
  I64(v0, 99);
  auto d0 = DecodeOffsetCommitValue(v0);
  ASSERT_TRUE(d0.ok());
  EXPECT_EQ(*d0, (OffsetCommitValue{10, -1, "", 99, -1}));

  Bytes v1;
  I16(v1, 1);
  I64(v1, 11);
  Str(v1, "m");
  I64(v1, 100);
  I64(v1, 200);  // expireTimestamp exists only in v1
  auto d1 = DecodeOffsetCommitValue(v1);
  ASSERT_TRUE(d1.ok());
  EXPECT_EQ(*d1, (OffsetCommitValue{11, -1, "m", 100, 200}));
  EXPECT_EQ(EncodeOffsetCommitValue(*d1, 1), v1);

  Bytes v4;  // flexible: compact string and an (empty) tagged-field section
  I16(v4, 4);
  I64(v4, 12);
  I32(v4, 3);
  CompactStr(v4, "md");
  I64(v4, 300);
  v4.push_back(0);
  auto d4 = DecodeOffsetCommitValue(v4);
  ASSERT_TRUE(d4.ok());
  EXPECT_EQ(*d4, (OffsetCommitValue{12, 3, "md", 300, -1}));
  EXPECT_EQ(EncodeOffsetCommitValue(*d4, 4), v4);

  Bytes v5;
  I16(v5, 5);
  EXPECT_EQ(DecodeOffsetCommitValue(v5).error().code, Errc::kUnsupported);
  v0.pop_back();
  EXPECT_EQ(DecodeOffsetCommitValue(v0).error().code, Errc::kCorrupt);
}

TEST(GroupRecordsTest, GroupMetadataValueV3Bytes) {
  GroupMetadataValue v;
  v.protocol_type = "consumer";
  v.generation = 4;
  v.protocol = "range";
  v.leader = "m1";
  v.current_state_timestamp = 1700000000000;
  v.members.push_back(
      {"m1", std::nullopt, "client", "/127.0.0.1", 30000, 10000, Bytes{1, 2}, Bytes{3}});
  v.members.push_back({"m2", "inst-2", "c2", "/10.0.0.2", 30000, 10000, Bytes{}, Bytes{4, 5, 6}});

  Bytes expected;
  I16(expected, 3);
  Str(expected, "consumer");
  I32(expected, 4);
  Str(expected, "range");
  Str(expected, "m1");
  I64(expected, 1700000000000);
  I32(expected, 2);  // members
  Str(expected, "m1");
  I16(expected, -1);  // null groupInstanceId
  Str(expected, "client");
  Str(expected, "/127.0.0.1");
  I32(expected, 30000);
  I32(expected, 10000);
  I32(expected, 2), expected.push_back(1), expected.push_back(2);
  I32(expected, 1), expected.push_back(3);
  Str(expected, "m2");
  Str(expected, "inst-2");
  Str(expected, "c2");
  Str(expected, "/10.0.0.2");
  I32(expected, 30000);
  I32(expected, 10000);
  I32(expected, 0);
  I32(expected, 3), expected.push_back(4), expected.push_back(5), expected.push_back(6);

  EXPECT_EQ(EncodeGroupMetadataValue(v), expected);
  auto back = DecodeGroupMetadataValue(expected);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, v);
}

TEST(GroupRecordsTest, GroupMetadataValueV0AndEmptyGroup) {
  // v0: no currentStateTimestamp, no groupInstanceId, no rebalanceTimeout.
  Bytes v0;
  I16(v0, 0);
  Str(v0, "consumer");
  I32(v0, 1);
  Str(v0, "roundrobin");
  Str(v0, "a");
  I32(v0, 1);
  Str(v0, "a");
  Str(v0, "cid");
  Str(v0, "/h");
  I32(v0, 6000);
  I32(v0, 0);
  I32(v0, 0);
  auto d = DecodeGroupMetadataValue(v0);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->protocol, "roundrobin");
  EXPECT_EQ(d->current_state_timestamp, -1);
  ASSERT_EQ(d->members.size(), 1u);
  EXPECT_EQ(d->members[0].rebalance_timeout, -1);
  EXPECT_EQ(d->members[0].session_timeout, 6000);

  // What Kafka writes for a new or emptied group: null protocol and leader.
  GroupMetadataValue empty;
  empty.current_state_timestamp = 5;
  Bytes expected;
  I16(expected, 3);
  Str(expected, "");
  I32(expected, 0);
  I16(expected, -1);
  I16(expected, -1);
  I64(expected, 5);
  I32(expected, 0);
  EXPECT_EQ(EncodeGroupMetadataValue(empty), expected);
}

TEST(GroupPartitionerTest, MatchesJavaStringHashCode) {
  // Values of Java's "...".hashCode().
  EXPECT_EQ(JavaStringHashCode(""), 0);
  EXPECT_EQ(JavaStringHashCode("a"), 97);
  EXPECT_EQ(JavaStringHashCode("hello"), 99162322);
  EXPECT_EQ(JavaStringHashCode("my-group"), -1906497762);
  EXPECT_EQ(JavaStringHashCode("polygenelubricants"), INT32_MIN);
  EXPECT_EQ(JavaStringHashCode("\xC3\xA9"), 233);              // é
  EXPECT_EQ(JavaStringHashCode("\xF0\x9F\x98\x80"), 1772899);  // U+1F600 as a surrogate pair
  EXPECT_EQ(JavaStringHashCode("gr\xC3\xBCppe-1"), 243490808);
}

TEST(GroupPartitionerTest, KafkaPartitionFor) {
  EXPECT_EQ(PartitionForKey("my-group", 50), 12);           // Utils.abs(-1906497762) % 50
  EXPECT_EQ(PartitionForKey("polygenelubricants", 50), 0);  // Utils.abs(MIN_VALUE) == 0
  EXPECT_EQ(PartitionForKey("console-consumer-12345", 50), 6);
  EXPECT_EQ(PartitionForKey("a", 50), 47);
  EXPECT_EQ(PartitionForKey("a", 1), 0);
}

Bytes Subscription(int16_t version, const std::vector<std::string>& topics, bool trailing) {
  Bytes b;
  I16(b, version);
  I32(b, int32_t(topics.size()));
  for (const auto& t : topics) Str(b, t);
  if (trailing) {
    I32(b, -1);  // null user data
    I32(b, 0);   // owned partitions (v1+)
  }
  return b;
}

TEST(ConsumerProtocolTest, SubscriptionTopics) {
  auto v0 = ParseSubscriptionTopics(Subscription(0, {"a", "bb"}, false));
  ASSERT_TRUE(v0.ok());
  EXPECT_EQ(*v0, (std::vector<std::string>{"a", "bb"}));
  auto v3 = ParseSubscriptionTopics(Subscription(3, {"orders"}, true));
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(*v3, (std::vector<std::string>{"orders"}));
  EXPECT_FALSE(ParseSubscriptionTopics(Subscription(-1, {"a"}, false)).ok());
  Bytes cut = Subscription(0, {"abc"}, false);
  cut.pop_back();
  EXPECT_FALSE(ParseSubscriptionTopics(cut).ok());
  EXPECT_FALSE(ParseSubscriptionTopics(Bytes{0}).ok());
}

}  // namespace
}  // namespace strata::coordinator
