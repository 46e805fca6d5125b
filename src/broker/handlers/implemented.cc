#include "broker/handlers/implemented.h"

#include "protocol/api_key.h"

namespace strata::broker {

bool IsImplementedApi(int16_t api_key) {
  using protocol::ApiKey;
  switch (static_cast<ApiKey>(api_key)) {
    case ApiKey::kProduce:
    case ApiKey::kFetch:
    case ApiKey::kListOffsets:
    case ApiKey::kMetadata:
    case ApiKey::kApiVersions:
    case ApiKey::kCreateTopics:
    case ApiKey::kDeleteTopics:
    case ApiKey::kDeleteRecords:
    case ApiKey::kInitProducerId:
    case ApiKey::kOffsetForLeaderEpoch:
    case ApiKey::kDescribeConfigs:
    case ApiKey::kAlterConfigs:
    case ApiKey::kCreatePartitions:
    case ApiKey::kIncrementalAlterConfigs:
    case ApiKey::kDescribeCluster:
    case ApiKey::kDescribeQuorum:
    case ApiKey::kUnregisterBroker:
    case ApiKey::kAlterPartitionReassignments:
    case ApiKey::kListPartitionReassignments:
    case ApiKey::kDescribeLogDirs:
    case ApiKey::kDescribeTopicPartitions:
    case ApiKey::kElectLeaders:
    case ApiKey::kFindCoordinator:
    case ApiKey::kJoinGroup:
    case ApiKey::kSyncGroup:
    case ApiKey::kHeartbeat:
    case ApiKey::kLeaveGroup:
    case ApiKey::kOffsetCommit:
    case ApiKey::kOffsetFetch:
    case ApiKey::kOffsetDelete:
    case ApiKey::kListGroups:
    case ApiKey::kDescribeGroups:
    case ApiKey::kDeleteGroups:
      return true;
    default:
      return false;
  }
}

}  // namespace strata::broker
