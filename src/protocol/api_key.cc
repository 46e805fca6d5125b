#include "protocol/api_key.h"

namespace strata::protocol {

const char* ApiKeyName(int16_t key) {
  switch (static_cast<ApiKey>(key)) {
    case ApiKey::kProduce:
      return "Produce";
    case ApiKey::kDescribeQuorum:
      return "DescribeQuorum";
    case ApiKey::kUnregisterBroker:
      return "UnregisterBroker";
    case ApiKey::kEnvelope:
      return "Envelope";
    case ApiKey::kElectLeaders:
      return "ElectLeaders";
    case ApiKey::kDescribeTopicPartitions:
      return "DescribeTopicPartitions";
    case ApiKey::kFetch:
      return "Fetch";
    case ApiKey::kListOffsets:
      return "ListOffsets";
    case ApiKey::kMetadata:
      return "Metadata";
    case ApiKey::kOffsetCommit:
      return "OffsetCommit";
    case ApiKey::kOffsetFetch:
      return "OffsetFetch";
    case ApiKey::kFindCoordinator:
      return "FindCoordinator";
    case ApiKey::kJoinGroup:
      return "JoinGroup";
    case ApiKey::kHeartbeat:
      return "Heartbeat";
    case ApiKey::kLeaveGroup:
      return "LeaveGroup";
    case ApiKey::kSyncGroup:
      return "SyncGroup";
    case ApiKey::kDescribeGroups:
      return "DescribeGroups";
    case ApiKey::kListGroups:
      return "ListGroups";
    case ApiKey::kApiVersions:
      return "ApiVersions";
    case ApiKey::kCreateTopics:
      return "CreateTopics";
    case ApiKey::kDeleteTopics:
      return "DeleteTopics";
    case ApiKey::kDeleteRecords:
      return "DeleteRecords";
    case ApiKey::kInitProducerId:
      return "InitProducerId";
    case ApiKey::kOffsetForLeaderEpoch:
      return "OffsetForLeaderEpoch";
    case ApiKey::kDescribeConfigs:
      return "DescribeConfigs";
    case ApiKey::kAlterConfigs:
      return "AlterConfigs";
    case ApiKey::kDescribeLogDirs:
      return "DescribeLogDirs";
    case ApiKey::kCreatePartitions:
      return "CreatePartitions";
    case ApiKey::kDeleteGroups:
      return "DeleteGroups";
    case ApiKey::kIncrementalAlterConfigs:
      return "IncrementalAlterConfigs";
    case ApiKey::kAlterPartitionReassignments:
      return "AlterPartitionReassignments";
    case ApiKey::kListPartitionReassignments:
      return "ListPartitionReassignments";
    case ApiKey::kOffsetDelete:
      return "OffsetDelete";
    case ApiKey::kDescribeCluster:
      return "DescribeCluster";
  }
  return "Unknown";
}

}  // namespace strata::protocol
