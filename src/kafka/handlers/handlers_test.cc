// Handlers against an in-process broker (a TopicManager over the real
// embedded metadata store): what a client sends, decoded back from the bytes
// the handler answers with.
#include "kafka/handlers/handlers.h"

#include <gtest/gtest.h>

#include <set>

#include "kafka/handlers/api_table.h"
#include "kafka/handlers/test_requests.h"
#include "kafka/in_process_broker.h"
#include "protocol/api_key.h"
#include "protocol/batch_builder.h"
#include "protocol/control_record.h"
#include "protocol/error_code.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/offset_for_leader_epoch.h"
#include "protocol/messages/produce.h"
#include "protocol/request_registry.h"

namespace strata::kafka {
namespace {

using cluster::NodeId;
using protocol::ErrorCode;
using testing::DecodeResponse;
using testing::Encode;

class HandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_.MakeTopic("t", {{NodeId(1)}});
    ASSERT_TRUE(broker_.topics().Start().ok());
  }

  // Produces `n` records to t-`partition` with acks=1, timestamped from
  // `first_ms` on; the partition's answer.
  protocol::ProduceResponse::Partition Produce(int32_t partition, int n, int64_t first_ms = 1000) {
    return testing::ProduceRecords(ctx(), "t", partition, n, "value-", first_ms);
  }
  // ListOffsets for t-0 at `timestamp` (-1 latest, -2 earliest).
  protocol::ListOffsetsResponse::Partition ListOffset(
      int64_t timestamp, int8_t isolation = protocol::kReadUncommitted) {
    protocol::ListOffsetsRequest req;
    req.isolation_level = isolation;
    auto& topic = req.topics.emplace_back();
    topic.name = "t";
    topic.partitions.push_back({.partition_index = 0, .timestamp = timestamp});
    auto call = Encode(req, 7);
    HandlerResult out = HandleListOffsets(ctx(), call->request);
    auto resp = DecodeResponse<protocol::ListOffsetsResponse>(call->request, out);
    if (resp.topics.empty() || resp.topics[0].partitions.empty()) return {};
    return resp.topics[0].partitions[0];
  }
  protocol::DeleteRecordsResponse::Partition DeleteBefore(int64_t offset) {
    protocol::DeleteRecordsRequest req;
    auto& topic = req.topics.emplace_back();
    topic.name = "t";
    topic.partitions.push_back({.partition_index = 0, .offset = offset});
    auto call = Encode(req, 2);
    HandlerResult out = HandleDeleteRecords(ctx(), call->request);
    auto resp = DecodeResponse<protocol::DeleteRecordsResponse>(call->request, out);
    if (resp.topics.empty() || resp.topics[0].partitions.empty()) return {};
    return resp.topics[0].partitions[0];
  }
  BrokerContext& ctx() { return broker_.context(); }

  testing::InProcessBroker broker_;
};

TEST_F(HandlersTest, ProducedRecordsAreCommittedListedAndDeletable) {
  auto first = Produce(0, 3);
  EXPECT_EQ(first.error_code, 0);
  EXPECT_EQ(first.base_offset, 0);
  auto second = Produce(0, 2, 1003);
  EXPECT_EQ(second.error_code, 0);
  EXPECT_EQ(second.base_offset, 3);
  auto partition = broker_.topics().GetPartition({"t", 0});
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->log()->log_end_offset(), 5_o);
  EXPECT_EQ(partition->high_watermark(), 5_o);  // an ISR of one

  EXPECT_EQ(ListOffset(-1).offset, 5);
  EXPECT_EQ(ListOffset(-2).offset, 0);
  EXPECT_EQ(ListOffset(1003).offset, 3);  // the first record at or after that time

  auto deleted = DeleteBefore(2);
  EXPECT_EQ(deleted.error_code, 0);
  EXPECT_EQ(deleted.low_watermark, 2);
  EXPECT_EQ(ListOffset(-2).offset, 2);
  EXPECT_EQ(DeleteBefore(6).error_code, Code(ErrorCode::kOffsetOutOfRange));  // past the mark
}

// A read_committed consumer's latest offset is the last stable offset: it
// stops at an open transaction, and moves on once the transaction's marker
// is committed; a timestamp lookup finds nothing it could not read.
TEST_F(HandlersTest, ListOffsetsForReadCommittedStopsAtAnOpenTransaction) {
  Produce(0, 2);
  auto partition = broker_.topics().GetPartition({"t", 0});
  protocol::BatchBuilder txn;
  txn.set_producer(11, 0, 0).set_transactional(true).Add("k", "v", 5000);
  Bytes batch = txn.Build();
  std::vector<storage::BatchInfo> infos{{.size = static_cast<int32_t>(batch.size()),
                                         .record_count = 1,
                                         .max_timestamp = 5000,
                                         .producer_id = 11,
                                         .producer_epoch = 0,
                                         .base_sequence = 0,
                                         .transactional = true}};
  ASSERT_TRUE(partition->AppendAsLeader(MutableByteView(batch), infos, 1).ok());
  EXPECT_EQ(ListOffset(-1).offset, 3);
  EXPECT_EQ(ListOffset(-1, protocol::kReadCommitted).offset, 2);
  EXPECT_EQ(ListOffset(5000).offset, 2);
  EXPECT_EQ(ListOffset(5000, protocol::kReadCommitted).offset, -1);

  Bytes marker = protocol::BuildTxnMarkerBatch(11, 0, {protocol::ControlType::kCommit, 0}, 6000);
  std::vector<storage::BatchInfo> marker_infos{{.size = static_cast<int32_t>(marker.size()),
                                                .record_count = 1,
                                                .max_timestamp = 6000,
                                                .producer_id = 11,
                                                .producer_epoch = 0,
                                                .transactional = true}};
  ASSERT_TRUE(partition
                  ->AppendAsLeader(MutableByteView(marker), marker_infos, 1,
                                   storage::AppendOrigin::kCoordinator)
                  .ok());
  EXPECT_EQ(ListOffset(-1, protocol::kReadCommitted).offset, 4);
  EXPECT_EQ(ListOffset(5000, protocol::kReadCommitted).offset, 2);
}

TEST_F(HandlersTest, AProduceToAPartitionNotHereIsRefused) {
  EXPECT_EQ(Produce(3, 1).error_code, Code(ErrorCode::kUnknownTopicOrPartition));
  EXPECT_EQ(broker_.topics().GetPartition({"t", 0})->log()->log_end_offset(), 0_o);
}

TEST_F(HandlersTest, OffsetForLeaderEpochEndsTheCurrentEpochAtTheLogEnd) {
  Produce(0, 4);
  const int32_t epoch = broker_.topics().GetPartition({"t", 0})->leader_epoch().value();
  protocol::OffsetForLeaderEpochRequest req;
  auto& topic = req.topics.emplace_back();
  topic.topic = "t";
  topic.partitions.push_back({.partition = 0, .leader_epoch = epoch});
  topic.partitions.push_back({.partition = 0, .leader_epoch = epoch + 1});  // a future epoch
  auto call = Encode(req, 4);
  HandlerResult out = HandleOffsetForLeaderEpoch(ctx(), call->request);
  auto resp = DecodeResponse<protocol::OffsetForLeaderEpochResponse>(call->request, out);
  ASSERT_EQ(resp.topics.size(), 1u);
  ASSERT_EQ(resp.topics[0].partitions.size(), 2u);
  EXPECT_EQ(resp.topics[0].partitions[0].leader_epoch, epoch);
  EXPECT_EQ(resp.topics[0].partitions[0].end_offset, 4);
  EXPECT_EQ(resp.topics[0].partitions[1].end_offset, -1);  // UNDEFINED, as Kafka
}

TEST_F(HandlersTest, InitProducerIdGivesFreshIdsWithoutATransactionalId) {
  std::set<int64_t> ids;
  for (int i = 0; i < 2; ++i) {
    protocol::InitProducerIdRequest req;
    auto call = Encode(req, 4);
    HandlerResult out = testing::RunAsync(HandleInitProducerId(ctx(), call->request));
    auto resp = DecodeResponse<protocol::InitProducerIdResponse>(call->request, out);
    EXPECT_EQ(resp.error_code, 0);
    EXPECT_GE(resp.producer_id, 0);
    EXPECT_EQ(resp.producer_epoch, 0);
    ids.insert(resp.producer_id);
  }
  EXPECT_EQ(ids.size(), 2u);
}

// ApiVersions lists every served API at the request struct's versions, and
// not Envelope (for brokers only).
TEST_F(HandlersTest, ApiVersionsListsTheServedApisButNotEnvelope) {
  protocol::ApiVersionsRequest req;
  req.client_software_name = "test";
  req.client_software_version = "1";
  auto call = Encode(req, 3);
  HandlerResult out = HandleApiVersions(ctx(), call->request);
  ASSERT_TRUE(out.ok() && out->has_value());
  // The response header is always v0 (KIP-511): the correlation id alone.
  auto decoded = protocol::Decode<protocol::ApiVersionsResponse>(MutableByteView(**out).subspan(4),
                                                                 3, /*flexible=*/true);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  const protocol::ApiVersionsResponse& resp = *decoded;
  EXPECT_EQ(resp.error_code, 0);
  std::set<int16_t> listed;
  for (const auto& api : resp.api_keys) {
    listed.insert(api.api_key);
    const protocol::ApiRange* range = protocol::FindApi(api.api_key);
    ASSERT_NE(range, nullptr);
    EXPECT_EQ(api.min_version, range->min);
    EXPECT_EQ(api.max_version, range->max);
  }
  std::set<int16_t> advertised;
  for (const ApiHandler& api : ServedApis()) {
    if (api.key != static_cast<int16_t>(protocol::ApiKey::kEnvelope)) advertised.insert(api.key);
  }
  EXPECT_EQ(listed, advertised);
  EXPECT_FALSE(listed.contains(static_cast<int16_t>(protocol::ApiKey::kEnvelope)));
}

// KIP-584: ApiVersions v3+ says transaction.version is finalized at
// strata.transaction.version (2 by default), which Java clients read to use
// KIP-890 part 2.
TEST_F(HandlersTest, ApiVersionsFinalizesTheTransactionVersion) {
  protocol::ApiVersionsRequest req;
  req.client_software_name = "test";
  req.client_software_version = "1";
  auto call = Encode(req, 3);
  HandlerResult out = HandleApiVersions(ctx(), call->request);
  ASSERT_TRUE(out.ok() && out->has_value());
  auto resp = protocol::Decode<protocol::ApiVersionsResponse>(MutableByteView(**out).subspan(4), 3,
                                                              /*flexible=*/true);
  ASSERT_TRUE(resp.ok()) << resp.error().message;
  ASSERT_TRUE(resp->supported_features.has_value());
  ASSERT_EQ(resp->supported_features->size(), 1u);
  EXPECT_EQ(resp->supported_features->at(0).name, "transaction.version");
  EXPECT_EQ(resp->supported_features->at(0).max_version, 2);
  EXPECT_GE(resp->finalized_features_epoch.value_or(-1), 0);
  ASSERT_TRUE(resp->finalized_features.has_value());
  ASSERT_EQ(resp->finalized_features->size(), 1u);
  EXPECT_EQ(resp->finalized_features->at(0).max_version_level, 2);
  EXPECT_EQ(resp->finalized_features->at(0).min_version_level, 2);
  // v0-2 have no tagged fields: nothing to say.
  auto old_call = Encode(req, 2);
  HandlerResult old_out = HandleApiVersions(ctx(), old_call->request);
  auto old_resp = protocol::Decode<protocol::ApiVersionsResponse>(
      MutableByteView(**old_out).subspan(4), 2, /*flexible=*/false);
  ASSERT_TRUE(old_resp.ok());
  EXPECT_FALSE(old_resp->finalized_features.has_value());
}

}  // namespace
}  // namespace strata::kafka
