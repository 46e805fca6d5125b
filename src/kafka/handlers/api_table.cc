#include "kafka/handlers/api_table.h"

#include <algorithm>
#include <array>

#include "kafka/handlers/handlers.h"
#include "protocol/api_key.h"

namespace strata::kafka {
namespace {

using protocol::ApiKey;

constexpr int16_t K(ApiKey key) { return static_cast<int16_t>(key); }

// Sorted by key (checked by api_table_test.cc).
constexpr std::array kApis{
    ApiHandler{K(ApiKey::kProduce), nullptr, HandleProduce},
    ApiHandler{K(ApiKey::kFetch), nullptr, HandleFetch},
    ApiHandler{K(ApiKey::kListOffsets), HandleListOffsets},
    ApiHandler{K(ApiKey::kMetadata), HandleMetadata},
    ApiHandler{K(ApiKey::kOffsetCommit), nullptr, HandleOffsetCommit},
    ApiHandler{K(ApiKey::kOffsetFetch), HandleOffsetFetch},
    ApiHandler{K(ApiKey::kFindCoordinator), HandleFindCoordinator},
    ApiHandler{K(ApiKey::kJoinGroup), nullptr, HandleJoinGroup},
    ApiHandler{K(ApiKey::kHeartbeat), HandleHeartbeat},
    ApiHandler{K(ApiKey::kLeaveGroup), HandleLeaveGroup},
    ApiHandler{K(ApiKey::kSyncGroup), nullptr, HandleSyncGroup},
    ApiHandler{K(ApiKey::kDescribeGroups), HandleDescribeGroups},
    ApiHandler{K(ApiKey::kListGroups), HandleListGroups},
    ApiHandler{K(ApiKey::kSaslHandshake), HandleSaslHandshake},
    ApiHandler{K(ApiKey::kApiVersions), HandleApiVersions},
    ApiHandler{K(ApiKey::kCreateTopics), HandleCreateTopics, nullptr,
               CreateTopicsControllerUnavailable},
    ApiHandler{K(ApiKey::kDeleteTopics), HandleDeleteTopics, nullptr,
               DeleteTopicsControllerUnavailable},
    ApiHandler{K(ApiKey::kDeleteRecords), HandleDeleteRecords},
    ApiHandler{K(ApiKey::kInitProducerId), nullptr, HandleInitProducerId},
    ApiHandler{K(ApiKey::kOffsetForLeaderEpoch), HandleOffsetForLeaderEpoch},
    ApiHandler{K(ApiKey::kAddPartitionsToTxn), nullptr, HandleAddPartitionsToTxn},
    ApiHandler{K(ApiKey::kAddOffsetsToTxn), nullptr, HandleAddOffsetsToTxn},
    ApiHandler{K(ApiKey::kEndTxn), nullptr, HandleEndTxn},
    ApiHandler{K(ApiKey::kWriteTxnMarkers), nullptr, HandleWriteTxnMarkers},
    ApiHandler{K(ApiKey::kTxnOffsetCommit), nullptr, HandleTxnOffsetCommit},
    ApiHandler{K(ApiKey::kDescribeAcls), HandleDescribeAcls},
    ApiHandler{K(ApiKey::kCreateAcls), HandleCreateAcls},
    ApiHandler{K(ApiKey::kDeleteAcls), HandleDeleteAcls},
    ApiHandler{K(ApiKey::kDescribeConfigs), HandleDescribeConfigs},
    ApiHandler{K(ApiKey::kAlterConfigs), HandleAlterConfigs},
    ApiHandler{K(ApiKey::kDescribeLogDirs), HandleDescribeLogDirs},
    ApiHandler{K(ApiKey::kSaslAuthenticate), HandleSaslAuthenticate},
    ApiHandler{K(ApiKey::kCreatePartitions), HandleCreatePartitions, nullptr,
               CreatePartitionsControllerUnavailable},
    ApiHandler{K(ApiKey::kDeleteGroups), HandleDeleteGroups},
    ApiHandler{K(ApiKey::kElectLeaders), HandleElectLeaders, nullptr,
               ElectLeadersControllerUnavailable},
    ApiHandler{K(ApiKey::kIncrementalAlterConfigs), HandleIncrementalAlterConfigs},
    ApiHandler{K(ApiKey::kAlterPartitionReassignments), HandleAlterPartitionReassignments, nullptr,
               AlterPartitionReassignmentsControllerUnavailable},
    ApiHandler{K(ApiKey::kListPartitionReassignments), HandleListPartitionReassignments},
    ApiHandler{K(ApiKey::kOffsetDelete), HandleOffsetDelete},
    ApiHandler{K(ApiKey::kDescribeClientQuotas), HandleDescribeClientQuotas},
    ApiHandler{K(ApiKey::kAlterClientQuotas), HandleAlterClientQuotas},
    ApiHandler{K(ApiKey::kDescribeUserScramCredentials), HandleDescribeUserScramCredentials},
    ApiHandler{K(ApiKey::kAlterUserScramCredentials), HandleAlterUserScramCredentials},
    ApiHandler{K(ApiKey::kDescribeQuorum), HandleDescribeQuorum},
    ApiHandler{K(ApiKey::kEnvelope), nullptr, nullptr, nullptr, /*advertised=*/false},
    ApiHandler{K(ApiKey::kDescribeCluster), HandleDescribeCluster},
    ApiHandler{K(ApiKey::kDescribeProducers), HandleDescribeProducers},
    ApiHandler{K(ApiKey::kUnregisterBroker), HandleUnregisterBroker},
    ApiHandler{K(ApiKey::kDescribeTransactions), HandleDescribeTransactions},
    ApiHandler{K(ApiKey::kListTransactions), HandleListTransactions},
    ApiHandler{K(ApiKey::kConsumerGroupHeartbeat), nullptr, HandleConsumerGroupHeartbeat},
    ApiHandler{K(ApiKey::kConsumerGroupDescribe), HandleConsumerGroupDescribe},
    ApiHandler{K(ApiKey::kGetTelemetrySubscriptions), HandleGetTelemetrySubscriptions},
    ApiHandler{K(ApiKey::kPushTelemetry), HandlePushTelemetry},
    ApiHandler{K(ApiKey::kDescribeTopicPartitions), HandleDescribeTopicPartitions},
};

}  // namespace

std::span<const ApiHandler> ServedApis() { return kApis; }

const ApiHandler* FindServedApi(int16_t key) {
  auto it = std::lower_bound(kApis.begin(), kApis.end(), key,
                             [](const ApiHandler& a, int16_t k) { return a.key < k; });
  if (it == kApis.end() || it->key != key) return nullptr;
  return &*it;
}

}  // namespace strata::kafka
