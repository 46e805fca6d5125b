// Tests for the transaction APIs' definitions in protocol/messages/
// (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, WriteTxnMarkers,
// TxnOffsetCommit, DescribeProducers, DescribeTransactions, ListTransactions):
// per-version round trips of fully populated messages, fields absent from
// older versions, hand-built golden bytes, truncated and hostile input. They
// decode with Decode<M> directly; the request registry's own tests
// (messages_test.cc) cover those it lists.
#include <gtest/gtest.h>

#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "protocol/message.h"
#include "protocol/messages/add_offsets_to_txn.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/describe_producers.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/end_txn.h"
#include "protocol/messages/list_transactions.h"
#include "protocol/messages/txn_offset_commit.h"
#include "protocol/messages/write_txn_markers.h"
#include "protocol/txn_messages_fill.h"

namespace strata::protocol {
namespace {

// ------------------------------------------------------------------ helpers
// Small equivalents of messages_test.cc's (which are local to that file).

Bytes Hex(const std::string& hex) {
  Bytes out;
  std::string digits;
  for (char c : hex) {
    if (std::isxdigit(static_cast<unsigned char>(c))) digits.push_back(c);
  }
  for (size_t i = 0; i + 1 < digits.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

template <class M>
Bytes EncodeAt(M& m, int16_t v, bool flexible) {
  Bytes out;
  Encode(m, v, flexible, out);
  return out;
}

// Encodes, decodes (requiring every byte consumed) and re-encodes; the two
// encodings must be identical. Returns the decoded message.
template <class M>
M RoundTrip(M& m, int16_t v, bool flexible) {
  Bytes wire = EncodeAt(m, v, flexible);
  Bytes copy = wire;
  M d;
  WireReader r(MutableByteView(wire.data(), wire.size()), flexible);
  d.Serde(r, v);
  EXPECT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(EncodeAt(d, v, flexible), copy);
  return d;
}


// -------------------------------------------------------- round-trip tests

// Round-trips request and response of one API at every supported version,
// once with every nullable field set and once with them null.
template <class Req, class Resp>
void RoundTripAllVersions() {
  for (int16_t v = Req::kMinVersion; v <= Req::kMaxVersion; ++v) {
    const bool flex = IsFlexible<Req>(v);
    for (bool nulls : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "api " << Req::kApiKey << " v" << v << (nulls ? " nulls" : " values"));
      Req req;
      Fill(req, v, nulls);
      EXPECT_TRUE(RoundTrip(req, v, flex) == req);
      Resp resp;
      Fill(resp, v, nulls);
      EXPECT_TRUE(RoundTrip(resp, v, flex) == resp);
    }
  }
}

TEST(TxnMessagesRoundTrip, AddPartitionsToTxn) {
  RoundTripAllVersions<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse>();
}
TEST(TxnMessagesRoundTrip, AddOffsetsToTxn) {
  RoundTripAllVersions<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse>();
}
TEST(TxnMessagesRoundTrip, EndTxn) { RoundTripAllVersions<EndTxnRequest, EndTxnResponse>(); }
TEST(TxnMessagesRoundTrip, WriteTxnMarkers) {
  RoundTripAllVersions<WriteTxnMarkersRequest, WriteTxnMarkersResponse>();
}
TEST(TxnMessagesRoundTrip, TxnOffsetCommit) {
  RoundTripAllVersions<TxnOffsetCommitRequest, TxnOffsetCommitResponse>();
}
TEST(TxnMessagesRoundTrip, DescribeProducers) {
  RoundTripAllVersions<DescribeProducersRequest, DescribeProducersResponse>();
}
TEST(TxnMessagesRoundTrip, DescribeTransactions) {
  RoundTripAllVersions<DescribeTransactionsRequest, DescribeTransactionsResponse>();
}
TEST(TxnMessagesRoundTrip, ListTransactions) {
  RoundTripAllVersions<ListTransactionsRequest, ListTransactionsResponse>();
}

TEST(TxnMessagesRoundTrip, VersionRanges) {
  EXPECT_EQ(AddPartitionsToTxnRequest::kApiKey, 24);
  EXPECT_EQ(AddPartitionsToTxnRequest::kMaxVersion, 5);
  EXPECT_EQ(AddOffsetsToTxnRequest::kApiKey, 25);
  EXPECT_EQ(AddOffsetsToTxnRequest::kMaxVersion, 4);
  EXPECT_EQ(EndTxnRequest::kApiKey, 26);
  EXPECT_EQ(EndTxnRequest::kMaxVersion, 5);
  EXPECT_EQ(WriteTxnMarkersRequest::kApiKey, 27);
  EXPECT_EQ(WriteTxnMarkersRequest::kMinVersion, 1);
  EXPECT_EQ(WriteTxnMarkersRequest::kMaxVersion, 2);
  EXPECT_EQ(TxnOffsetCommitRequest::kApiKey, 28);
  EXPECT_EQ(TxnOffsetCommitRequest::kMaxVersion, 5);
  EXPECT_EQ(DescribeProducersRequest::kApiKey, 61);
  EXPECT_EQ(DescribeTransactionsRequest::kApiKey, 65);
  EXPECT_EQ(ListTransactionsRequest::kApiKey, 66);
  EXPECT_EQ(ListTransactionsRequest::kMaxVersion, 2);
  EXPECT_FALSE(IsFlexible<AddPartitionsToTxnRequest>(2));
  EXPECT_TRUE(IsFlexible<AddPartitionsToTxnRequest>(3));
  EXPECT_FALSE(IsFlexible<AddOffsetsToTxnRequest>(2));
  EXPECT_TRUE(IsFlexible<AddOffsetsToTxnRequest>(3));
  EXPECT_FALSE(IsFlexible<EndTxnRequest>(2));
  EXPECT_TRUE(IsFlexible<EndTxnRequest>(3));
  EXPECT_TRUE(IsFlexible<WriteTxnMarkersRequest>(1));
  EXPECT_FALSE(IsFlexible<TxnOffsetCommitRequest>(2));
  EXPECT_TRUE(IsFlexible<TxnOffsetCommitRequest>(3));
  EXPECT_TRUE(IsFlexible<DescribeProducersRequest>(0));
  EXPECT_TRUE(IsFlexible<DescribeTransactionsRequest>(0));
  EXPECT_TRUE(IsFlexible<ListTransactionsRequest>(0));
}

// ------------------------------------------- fields absent from a version

// The union of every version's fields.
template <class M>
M FillEveryVersion(int16_t min, int16_t max) {
  M m;
  for (int16_t v = min; v <= max; ++v) Fill(m, v, false);
  return m;
}

// Encoding a message with every version's fields set at version v writes
// only v's fields: it decodes to exactly what Fill(v) sets, the others
// keeping their defaults.
template <class Req, class Resp>
void DropsFieldsAbsentInVersion() {
  for (int16_t v = Req::kMinVersion; v <= Req::kMaxVersion; ++v) {
    SCOPED_TRACE(::testing::Message() << "api " << Req::kApiKey << " v" << v);
    const bool flex = IsFlexible<Req>(v);
    Req req = FillEveryVersion<Req>(Req::kMinVersion, Req::kMaxVersion);
    Req want_req;
    Fill(want_req, v, false);
    Bytes wire = EncodeAt(req, v, flex);
    auto d = Decode<Req>(MutableByteView(wire), v, flex);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_TRUE(*d == want_req);
    EXPECT_EQ(EncodeAt(want_req, v, flex), EncodeAt(req, v, flex));

    Resp resp = FillEveryVersion<Resp>(Req::kMinVersion, Req::kMaxVersion);
    Resp want_resp;
    Fill(want_resp, v, false);
    Bytes rwire = EncodeAt(resp, v, flex);
    auto dr = Decode<Resp>(MutableByteView(rwire), v, flex);
    ASSERT_TRUE(dr.ok()) << dr.error().message;
    EXPECT_TRUE(*dr == want_resp);
  }
}

TEST(TxnMessagesVersions, AbsentFieldsDroppedAndDefaulted) {
  DropsFieldsAbsentInVersion<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse>();
  DropsFieldsAbsentInVersion<EndTxnRequest, EndTxnResponse>();
  DropsFieldsAbsentInVersion<TxnOffsetCommitRequest, TxnOffsetCommitResponse>();
  DropsFieldsAbsentInVersion<ListTransactionsRequest, ListTransactionsResponse>();
}

// The same, reading the named fields.
TEST(TxnMessagesVersions, NamedFieldsOfOlderVersions) {
  // EndTxn v4 response: no producer id/epoch; they decode as -1.
  EndTxnResponse er;
  Fill(er, 5, false);
  EXPECT_EQ(EncodeAt(er, 4, true), Hex("00000009 0030 00"));
  Bytes ew = EncodeAt(er, 4, true);
  auto e = Decode<EndTxnResponse>(MutableByteView(ew), 4, true);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->producer_id, -1);
  EXPECT_EQ(e->producer_epoch, -1);

  // TxnOffsetCommit v1: no leader epoch, generation, member or instance id.
  TxnOffsetCommitRequest t;
  Fill(t, 5, false);
  Bytes tw = EncodeAt(t, 1, false);
  auto d1 = Decode<TxnOffsetCommitRequest>(MutableByteView(tw), 1, false);
  ASSERT_TRUE(d1.ok());
  EXPECT_EQ(d1->generation_id, -1);
  EXPECT_EQ(d1->member_id, "");
  EXPECT_FALSE(d1->group_instance_id.has_value());
  EXPECT_EQ(d1->topics.at(0).partitions.at(0).committed_leader_epoch, -1);
  EXPECT_EQ(d1->topics.at(0).partitions.at(0).committed_offset, 100);
  EXPECT_EQ(d1->topics.at(0).partitions.at(0).committed_metadata, "meta");
  // v2 keeps the leader epoch but not the v3 group fields.
  Bytes tw2 = EncodeAt(t, 2, false);
  auto d2 = Decode<TxnOffsetCommitRequest>(MutableByteView(tw2), 2, false);
  ASSERT_TRUE(d2.ok());
  EXPECT_EQ(d2->topics.at(0).partitions.at(0).committed_leader_epoch, 5);
  EXPECT_EQ(d2->generation_id, -1);
  EXPECT_EQ(tw2.size(), tw.size() + 2 * 4);  // two partitions' epochs

  // ListTransactions: v0 has no duration filter, v1 no pattern.
  ListTransactionsRequest l;
  Fill(l, 2, false);
  Bytes lw0 = EncodeAt(l, 0, true);
  auto l0 = Decode<ListTransactionsRequest>(MutableByteView(lw0), 0, true);
  ASSERT_TRUE(l0.ok());
  EXPECT_EQ(l0->duration_filter, -1);
  EXPECT_FALSE(l0->transactional_id_pattern.has_value());
  Bytes lw1 = EncodeAt(l, 1, true);
  auto l1 = Decode<ListTransactionsRequest>(MutableByteView(lw1), 1, true);
  ASSERT_TRUE(l1.ok());
  EXPECT_EQ(l1->duration_filter, 30000);
  EXPECT_FALSE(l1->transactional_id_pattern.has_value());
  EXPECT_EQ(lw1.size(), lw0.size() + 8);

  // AddPartitionsToTxn: v3 writes only the single-transaction fields, v4
  // only the batch; the response's top-level error code is v4+.
  AddPartitionsToTxnRequest a = FillEveryVersion<AddPartitionsToTxnRequest>(0, 5);
  Bytes aw3 = EncodeAt(a, 3, true);
  auto a3 = Decode<AddPartitionsToTxnRequest>(MutableByteView(aw3), 3, true);
  ASSERT_TRUE(a3.ok());
  EXPECT_TRUE(a3->transactions.empty());
  EXPECT_EQ(a3->v3_and_below_transactional_id, "txn-a");
  Bytes aw4 = EncodeAt(a, 4, true);
  auto a4 = Decode<AddPartitionsToTxnRequest>(MutableByteView(aw4), 4, true);
  ASSERT_TRUE(a4.ok());
  EXPECT_EQ(a4->v3_and_below_transactional_id, "");
  EXPECT_EQ(a4->v3_and_below_producer_id, 0);
  EXPECT_TRUE(a4->v3_and_below_topics.empty());
  ASSERT_EQ(a4->transactions.size(), 2u);
  EXPECT_TRUE(a4->transactions[1].verify_only);
  AddPartitionsToTxnResponse ar = FillEveryVersion<AddPartitionsToTxnResponse>(0, 5);
  Bytes arw = EncodeAt(ar, 3, true);
  auto ar3 = Decode<AddPartitionsToTxnResponse>(MutableByteView(arw), 3, true);
  ASSERT_TRUE(ar3.ok());
  EXPECT_EQ(ar3->error_code, 0);
  EXPECT_TRUE(ar3->results_by_transaction.empty());
  EXPECT_EQ(ar3->results_by_topic_v3_and_below.size(), 2u);
}

// ------------------------------------------------------------ golden bytes

// EndTxn v3 (flexible): compact string, then fixed-width fields, then the
// empty tagged-field section.
TEST(TxnMessagesGolden, EndTxnRequestV3) {
  EndTxnRequest r{
      .transactional_id = "tx", .producer_id = 0x1234, .producer_epoch = 5, .committed = true};
  Bytes want =
      Hex("03 7478"           // TransactionalId: compact length 2+1, "tx"
          "0000000000001234"  // ProducerId int64
          "0005"              // ProducerEpoch int16
          "01"                // Committed
          "00");              // no tagged fields
  EXPECT_EQ(EncodeAt(r, 3, true), want);
  auto d = Decode<EndTxnRequest>(MutableByteView(want), 3, true);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, r);

  // v2 (classic): int16 string length, no tagged fields.
  r.committed = false;
  EXPECT_EQ(EncodeAt(r, 2, false), Hex("0002 7478 0000000000001234 0005 00"));
}

// EndTxn v5 response: the new producer id and epoch follow the error code.
TEST(TxnMessagesGolden, EndTxnResponseV5) {
  EndTxnResponse r{
      .throttle_time_ms = 0, .error_code = 0, .producer_id = 0x1234, .producer_epoch = 6};
  Bytes want =
      Hex("00000000"          // ThrottleTimeMs
          "0000"              // ErrorCode
          "0000000000001234"  // ProducerId (v5+)
          "0006"              // ProducerEpoch (v5+)
          "00");              // no tagged fields
  EXPECT_EQ(EncodeAt(r, 5, true), want);
  auto d = Decode<EndTxnResponse>(MutableByteView(want), 5, true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, r);
}

// AddPartitionsToTxn v3: the last client version, flexible, single
// transaction. Every struct (topic, then the request) ends in a tag section.
TEST(TxnMessagesGolden, AddPartitionsToTxnRequestV3) {
  AddPartitionsToTxnRequest r;
  r.v3_and_below_transactional_id = "tx";
  r.v3_and_below_producer_id = 0x1234;
  r.v3_and_below_producer_epoch = 5;
  r.v3_and_below_topics = {{"foo", {0, 2}}};
  Bytes want =
      Hex("03 7478"               // V3AndBelowTransactionalId "tx"
          "0000000000001234"      // V3AndBelowProducerId
          "0005"                  // V3AndBelowProducerEpoch
          "02"                    // V3AndBelowTopics: compact length 1+1
          "04 666f6f"             //   Name "foo"
          "03 00000000 00000002"  // Partitions: compact length 2+1, [0, 2]
          "00"                    //   topic tags
          "00");                  // request tags
  EXPECT_EQ(EncodeAt(r, 3, true), want);
  auto d = Decode<AddPartitionsToTxnRequest>(MutableByteView(want), 3, true);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, r);

  // v2: the same fields in the classic encoding.
  EXPECT_EQ(EncodeAt(r, 2, false), Hex("0002 7478 0000000000001234 0005"
                                       "00000001 0003 666f6f 00000002 00000000 00000002"));
}

// AddPartitionsToTxn v4: the broker's batched form with VerifyOnly.
TEST(TxnMessagesGolden, AddPartitionsToTxnRequestV4) {
  AddPartitionsToTxnRequest r;
  r.transactions = {{"tx", 0x1234, 5, true, {{"foo", {1}}}}};
  Bytes want =
      Hex("02"                // Transactions: 1
          "03 7478"           //   TransactionalId "tx"
          "0000000000001234"  //   ProducerId
          "0005"              //   ProducerEpoch
          "01"                //   VerifyOnly
          "02 04 666f6f"      //   Topics: 1, Name "foo"
          "02 00000001 00"    //     Partitions [1], topic tags
          "00"                //   transaction tags
          "00");              // request tags
  EXPECT_EQ(EncodeAt(r, 4, true), want);
  auto d = Decode<AddPartitionsToTxnRequest>(MutableByteView(want), 4, true);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, r);

  // An unknown tagged field inside the transaction (tag 9, 2 bytes) is
  // skipped.
  Bytes tagged =
      Hex("02 03 7478 0000000000001234 0005 01 02 04 666f6f 02 00000001 00"
          "01 09 02 abcd 00");
  auto t = Decode<AddPartitionsToTxnRequest>(MutableByteView(tagged), 4, true);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t, r);
}

// AddPartitionsToTxn responses: v3 results by topic; v4 adds the top-level
// error code and groups the results by transaction.
TEST(TxnMessagesGolden, AddPartitionsToTxnResponse) {
  using R = AddPartitionsToTxnResponse;
  R r3;
  r3.results_by_topic_v3_and_below = {{"foo", {{1, 55}}}};
  EXPECT_EQ(EncodeAt(r3, 3, true), Hex("00000000"             // ThrottleTimeMs
                                       "02 04 666f6f"         // 1 topic "foo"
                                       "02 00000001 0037 00"  // partition 1, error 55, tags
                                       "00 00"));             // topic tags, response tags
  R r4;
  r4.error_code = 0;
  r4.results_by_transaction = {{"tx", {{"foo", {{1, 0}}}}}};
  Bytes want4 =
      Hex("00000000"             // ThrottleTimeMs
          "0000"                 // ErrorCode (v4+)
          "02 03 7478"           // 1 transaction "tx"
          "02 04 666f6f"         //   1 topic "foo"
          "02 00000001 0000 00"  //     partition 1, error 0, tags
          "00 00 00");           //   topic tags, transaction tags, response tags
  EXPECT_EQ(EncodeAt(r4, 4, true), want4);
  auto d = Decode<R>(MutableByteView(want4), 4, true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, r4);
}

// WriteTxnMarkers v1: CoordinatorEpoch comes after the topics.
TEST(TxnMessagesGolden, WriteTxnMarkersRequestV1) {
  WriteTxnMarkersRequest r;
  r.markers = {{0x1234, 5, true, {{"foo", {0}}}, 7}};
  Bytes want =
      Hex("02"                // Markers: 1
          "0000000000001234"  //   ProducerId
          "0005"              //   ProducerEpoch
          "01"                //   TransactionResult (commit)
          "02 04 666f6f"      //   Topics: 1, Name "foo"
          "02 00000000 00"    //     PartitionIndexes [0], topic tags
          "00000007"          //   CoordinatorEpoch
          "00"                //   marker tags
          "00");              // request tags
  EXPECT_EQ(EncodeAt(r, 1, true), want);
  auto d = Decode<WriteTxnMarkersRequest>(MutableByteView(want), 1, true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, r);
}

// WriteTxnMarkers v2: TransactionVersion (int8) after CoordinatorEpoch.
TEST(TxnMessagesGolden, WriteTxnMarkersRequestV2) {
  WriteTxnMarkersRequest r;
  r.markers = {{0x1234, 5, false, {{"foo", {0}}}, 7, 2}};
  Bytes want =
      Hex("02"                // Markers: 1
          "0000000000001234"  //   ProducerId
          "0005"              //   ProducerEpoch
          "00"                //   TransactionResult (abort)
          "02 04 666f6f"      //   Topics: 1, Name "foo"
          "02 00000000 00"    //     PartitionIndexes [0], topic tags
          "00000007"          //   CoordinatorEpoch
          "02"                //   TransactionVersion
          "00"                //   marker tags
          "00");              // request tags
  EXPECT_EQ(EncodeAt(r, 2, true), want);
  auto d = Decode<WriteTxnMarkersRequest>(MutableByteView(want), 2, true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, r);
}

// TxnOffsetCommit v3: the group fields sit between ProducerEpoch and Topics;
// null GroupInstanceId and CommittedMetadata are compact length 0.
TEST(TxnMessagesGolden, TxnOffsetCommitRequestV3) {
  TxnOffsetCommitRequest r;
  r.transactional_id = "tx";
  r.group_id = "g";
  r.producer_id = 0x1234;
  r.producer_epoch = 5;
  r.generation_id = 2;
  r.member_id = "m";
  r.group_instance_id = std::nullopt;
  r.topics = {{"foo", {{0, 100, 4, std::nullopt}}}};
  Bytes want =
      Hex("03 7478 02 67"          // TransactionalId "tx", GroupId "g"
          "0000000000001234 0005"  // ProducerId, ProducerEpoch
          "00000002 02 6d 00"      // GenerationId 2, MemberId "m", GroupInstanceId null
          "02 04 666f6f"           // Topics: 1, Name "foo"
          "02 00000000"            //   Partitions: 1, PartitionIndex 0
          "0000000000000064"       //     CommittedOffset 100
          "00000004"               //     CommittedLeaderEpoch 4
          "00 00"                  //     CommittedMetadata null, partition tags
          "00 00");                //   topic tags, request tags
  EXPECT_EQ(EncodeAt(r, 3, true), want);
  auto d = Decode<TxnOffsetCommitRequest>(MutableByteView(want), 3, true);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, r);
}

// DescribeProducers v0 response: ProducerEpoch is an int32 here.
TEST(TxnMessagesGolden, DescribeProducersResponseV0) {
  DescribeProducersResponse r;
  r.topics = {{"foo", {{0, 0, std::nullopt, {{0x1234, 5, 9, 1000, 3, 42}}}}}};
  Bytes want =
      Hex("00000000"          // ThrottleTimeMs
          "02 04 666f6f"      // Topics: 1, Name "foo"
          "02 00000000 0000"  //   Partitions: 1, index 0, ErrorCode 0
          "00"                //   ErrorMessage null
          "02"                //   ActiveProducers: 1
          "0000000000001234"  //     ProducerId
          "00000005"          //     ProducerEpoch (int32)
          "00000009"          //     LastSequence
          "00000000000003e8"  //     LastTimestamp 1000
          "00000003"          //     CoordinatorEpoch
          "000000000000002a"  //     CurrentTxnStartOffset 42
          "00 00 00 00");     //   producer, partition, topic and response tags
  EXPECT_EQ(EncodeAt(r, 0, true), want);
  auto d = Decode<DescribeProducersResponse>(MutableByteView(want), 0, true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, r);
}

// ListTransactions v2: DurationFilter then a nullable TransactionalIdPattern.
TEST(TxnMessagesGolden, ListTransactionsRequestV2) {
  ListTransactionsRequest r;
  r.state_filters = {"Ongoing"};
  r.producer_id_filters = {7};
  r.duration_filter = -1;
  r.transactional_id_pattern = "t.*";
  Bytes want =
      Hex("02 08 4f6e676f696e67"  // StateFilters ["Ongoing"]
          "02 0000000000000007"   // ProducerIdFilters [7]
          "ffffffffffffffff"      // DurationFilter -1 (v1+)
          "04 742e2a"             // TransactionalIdPattern "t.*" (v2+)
          "00");                  // tags
  EXPECT_EQ(EncodeAt(r, 2, true), want);
  auto d = Decode<ListTransactionsRequest>(MutableByteView(want), 2, true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, r);
  r.transactional_id_pattern = std::nullopt;
  EXPECT_EQ(EncodeAt(r, 2, true),
            Hex("02 08 4f6e676f696e67 02 0000000000000007 ffffffffffffffff 00 00"));
}

// ------------------------------------------------------ hostile input

// Every strict prefix of a valid encoding fails to decode, as kCorrupt.
template <class M>
void ExpectTruncationFails(int16_t min, int16_t max, bool (*flexible)(int16_t)) {
  for (int16_t v = min; v <= max; ++v) {
    for (bool nulls : {false, true}) {
      M m;
      Fill(m, v, nulls);
      const bool flex = flexible(v);
      Bytes full = EncodeAt(m, v, flex);
      Bytes copy = full;
      ASSERT_TRUE(Decode<M>(MutableByteView(copy), v, flex).ok()) << "v" << v;
      for (size_t len = 0; len < full.size(); ++len) {
        Bytes prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
        auto d = Decode<M>(MutableByteView(prefix), v, flex);
        ASSERT_FALSE(d.ok()) << "v" << v << " len " << len;
        EXPECT_EQ(d.error().code, Errc::kCorrupt);
      }
    }
  }
}

template <class Req, class Resp>
void TruncateBoth() {
  SCOPED_TRACE(::testing::Message() << "api " << Req::kApiKey);
  ExpectTruncationFails<Req>(Req::kMinVersion, Req::kMaxVersion, &IsFlexible<Req>);
  ExpectTruncationFails<Resp>(Req::kMinVersion, Req::kMaxVersion, &IsFlexible<Req>);
}

TEST(TxnMessagesHostile, TruncatedInputFails) {
  TruncateBoth<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse>();
  TruncateBoth<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse>();
  TruncateBoth<EndTxnRequest, EndTxnResponse>();
  TruncateBoth<WriteTxnMarkersRequest, WriteTxnMarkersResponse>();
  TruncateBoth<TxnOffsetCommitRequest, TxnOffsetCommitResponse>();
  TruncateBoth<DescribeProducersRequest, DescribeProducersResponse>();
  TruncateBoth<DescribeTransactionsRequest, DescribeTransactionsResponse>();
  TruncateBoth<ListTransactionsRequest, ListTransactionsResponse>();
}

TEST(TxnMessagesHostile, BadLengthsFail) {
  // Markers: compact array of 2^30-1 elements in a 6-byte body.
  Bytes huge = Hex("8080808004 00");
  auto m = Decode<WriteTxnMarkersRequest>(MutableByteView(huge), 1, true);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, Errc::kCorrupt);

  // AddPartitionsToTxn v2: a null (-1) topics array is not allowed.
  Bytes null_topics = Hex("0002 7478 0000000000001234 0005 ffffffff");
  auto a = Decode<AddPartitionsToTxnRequest>(MutableByteView(null_topics), 2, false);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, Errc::kCorrupt);

  // EndTxn v3: a null TransactionalId (compact length 0) is not allowed.
  Bytes null_id = Hex("00 0000000000001234 0005 01 00");
  auto e = Decode<EndTxnRequest>(MutableByteView(null_id), 3, true);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, Errc::kCorrupt);

  // DescribeTransactions: string length beyond the body.
  Bytes long_id = Hex("02 7f 6162 00");
  auto t = Decode<DescribeTransactionsRequest>(MutableByteView(long_id), 0, true);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, Errc::kCorrupt);
}

}  // namespace
}  // namespace strata::protocol
