// The API table against the request structs, and the controller-bound APIs'
// answers when no controller takes them.
#include "kafka/handlers/api_table.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "kafka/handlers/test_requests.h"
#include "protocol/api_key.h"
#include "protocol/header.h"
#include "protocol/message.h"
#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/create_partitions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/elect_leaders.h"
#include "protocol/request_registry.h"

namespace strata::kafka {
namespace {

using protocol::ApiKey;
using protocol::ErrorCode;

TEST(ApiTable, RowsAreSortedAndUnique) {
  auto apis = ServedApis();
  ASSERT_FALSE(apis.empty());
  for (size_t i = 1; i < apis.size(); ++i) EXPECT_LT(apis[i - 1].key, apis[i].key);
  for (const ApiHandler& api : apis) EXPECT_EQ(FindServedApi(api.key), &api);
  EXPECT_EQ(FindServedApi(static_cast<int16_t>(ApiKey::kLeaderAndIsr)), nullptr);
  EXPECT_EQ(FindServedApi(-1), nullptr);
  EXPECT_EQ(FindServedApi(1000), nullptr);
}

// A request struct without a handler would be parsed and then refused; a
// handler without a struct could not be reached. Both are mistakes.
TEST(ApiTable, ServesExactlyTheRequestsTheCodecKnows) {
  std::set<int16_t> codec, served;
  for (const auto& r : protocol::SupportedApis()) codec.insert(r.key);
  for (const ApiHandler& api : ServedApis()) served.insert(api.key);
  EXPECT_EQ(codec, served);
  for (int16_t key : served) EXPECT_STRNE(protocol::ApiKeyName(key), "Unknown") << key;
}

TEST(ApiTable, EachRowHasOneHandlerEnvelopeNone) {
  for (const ApiHandler& api : ServedApis()) {
    const int handlers = (api.handle != nullptr) + (api.handle_async != nullptr);
    if (api.key == static_cast<int16_t>(ApiKey::kEnvelope)) {
      EXPECT_EQ(handlers, 0);
      EXPECT_FALSE(api.advertised);
    } else {
      EXPECT_TRUE(api.advertised) << protocol::ApiKeyName(api.key);
      EXPECT_EQ(handlers, 1) << protocol::ApiKeyName(api.key);
    }
  }
}

// Kafka 4's brokers forward these to the active controller (and only these
// of the APIs served here).
TEST(ApiTable, ControllerBoundAreTheApisKafkaForwards) {
  std::set<int16_t> bound;
  for (const ApiHandler& api : ServedApis()) {
    if (api.controller_bound()) bound.insert(api.key);
  }
  const std::set<int16_t> kafka{
      static_cast<int16_t>(ApiKey::kCreateTopics), static_cast<int16_t>(ApiKey::kDeleteTopics),
      static_cast<int16_t>(ApiKey::kCreatePartitions), static_cast<int16_t>(ApiKey::kElectLeaders),
      static_cast<int16_t>(ApiKey::kAlterPartitionReassignments)};
  EXPECT_EQ(bound, kafka);
}

// Runs `req` through its API's controller_unavailable at `version` and
// decodes the response.
template <class Req, class Resp>
Resp Unavailable(Req& req, int16_t version, ErrorCode code) {
  auto call = testing::Encode(req, version);
  const ApiHandler* api = FindServedApi(Req::kApiKey);
  EXPECT_TRUE(api != nullptr && api->controller_bound());
  if (api == nullptr || !api->controller_bound()) return Resp{};
  HandlerResult out = api->controller_unavailable(call->request, code, "no controller");
  return testing::DecodeResponse<Resp>(call->request, out);
}

TEST(ApiTable, CreateTopicsUnavailableFailsEveryTopic) {
  protocol::CreateTopicsRequest req;
  req.topics.resize(2);
  req.topics[0].name = "a";
  req.topics[1].name = "b";
  for (int16_t v : {int16_t{2}, protocol::CreateTopicsRequest::kMaxVersion}) {
    auto resp = Unavailable<protocol::CreateTopicsRequest, protocol::CreateTopicsResponse>(
        req, v, ErrorCode::kNotController);
    ASSERT_EQ(resp.topics.size(), 2u) << v;
    EXPECT_EQ(resp.topics[1].name, "b");
    for (const auto& t : resp.topics) EXPECT_EQ(t.error_code, Code(ErrorCode::kNotController));
  }
}

TEST(ApiTable, DeleteTopicsUnavailableFailsNamesAndIds) {
  protocol::DeleteTopicsRequest old_req;
  old_req.topic_names = {"a", "b", "c"};
  auto old_resp = Unavailable<protocol::DeleteTopicsRequest, protocol::DeleteTopicsResponse>(
      old_req, 5, ErrorCode::kRequestTimedOut);
  ASSERT_EQ(old_resp.responses.size(), 3u);
  for (const auto& t : old_resp.responses) {
    EXPECT_EQ(t.error_code, Code(ErrorCode::kRequestTimedOut));
  }
  protocol::DeleteTopicsRequest req;
  req.topics.resize(1);
  req.topics[0].name = "x";
  auto resp = Unavailable<protocol::DeleteTopicsRequest, protocol::DeleteTopicsResponse>(
      req, protocol::DeleteTopicsRequest::kMaxVersion, ErrorCode::kNotController);
  ASSERT_EQ(resp.responses.size(), 1u);
  EXPECT_EQ(resp.responses[0].error_code, Code(ErrorCode::kNotController));
}

TEST(ApiTable, CreatePartitionsUnavailableFailsEveryTopic) {
  protocol::CreatePartitionsRequest req;
  req.topics.resize(2);
  req.topics[0].name = "a";
  req.topics[1].name = "b";
  auto resp = Unavailable<protocol::CreatePartitionsRequest, protocol::CreatePartitionsResponse>(
      req, protocol::CreatePartitionsRequest::kMaxVersion, ErrorCode::kNotController);
  ASSERT_EQ(resp.results.size(), 2u);
  for (const auto& t : resp.results) EXPECT_EQ(t.error_code, Code(ErrorCode::kNotController));
}

TEST(ApiTable, ElectLeadersUnavailableFailsEveryPartition) {
  protocol::ElectLeadersRequest req;
  req.topic_partitions.emplace(1);
  (*req.topic_partitions)[0].topic = "t";
  (*req.topic_partitions)[0].partition_ids = {0, 1, 2};
  auto resp = Unavailable<protocol::ElectLeadersRequest, protocol::ElectLeadersResponse>(
      req, protocol::ElectLeadersRequest::kMaxVersion, ErrorCode::kNotController);
  ASSERT_EQ(resp.replica_election_results.size(), 1u);
  ASSERT_EQ(resp.replica_election_results[0].partition_results.size(), 3u);
  for (const auto& p : resp.replica_election_results[0].partition_results) {
    EXPECT_EQ(p.error_code, Code(ErrorCode::kNotController));
  }
}

TEST(ApiTable, AlterPartitionReassignmentsUnavailableFailsEveryPartition) {
  protocol::AlterPartitionReassignmentsRequest req;
  req.topics.resize(1);
  req.topics[0].name = "t";
  req.topics[0].partitions.resize(2);
  req.topics[0].partitions[1].partition_index = 1;
  auto resp = Unavailable<protocol::AlterPartitionReassignmentsRequest,
                          protocol::AlterPartitionReassignmentsResponse>(
      req, protocol::AlterPartitionReassignmentsRequest::kMaxVersion, ErrorCode::kNotController);
  EXPECT_EQ(resp.error_code, Code(ErrorCode::kNotController));
  ASSERT_EQ(resp.responses.size(), 1u);
  ASSERT_EQ(resp.responses[0].partitions.size(), 2u);
  EXPECT_EQ(resp.responses[0].partitions[1].partition_index, 1);
  for (const auto& p : resp.responses[0].partitions) {
    EXPECT_EQ(p.error_code, Code(ErrorCode::kNotController));
  }
}

}  // namespace
}  // namespace strata::kafka
