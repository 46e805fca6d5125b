#include "protocol/request_registry.h"

#include <fmt/format.h>

#include <algorithm>

#include "protocol/message.h"
#include "protocol/messages/alter_configs.h"
#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/create_partitions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_groups.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/describe_cluster.h"
#include "protocol/messages/describe_configs.h"
#include "protocol/messages/describe_groups.h"
#include "protocol/messages/describe_log_dirs.h"
#include "protocol/messages/describe_quorum.h"
#include "protocol/messages/describe_topic_partitions.h"
#include "protocol/messages/elect_leaders.h"
#include "protocol/messages/envelope.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/incremental_alter_configs.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/leave_group.h"
#include "protocol/messages/list_groups.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/list_partition_reassignments.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_delete.h"
#include "protocol/messages/offset_fetch.h"
#include "protocol/messages/offset_for_leader_epoch.h"
#include "protocol/messages/produce.h"
#include "protocol/messages/sync_group.h"
#include "protocol/messages/unregister_broker.h"

namespace strata::protocol {
namespace {

// The one list of request structs; ranges and dispatch are derived from it.
template <class... Ms>
struct RequestList {};

using AllRequests = RequestList<
    ProduceRequest, FetchRequest, ListOffsetsRequest, MetadataRequest, OffsetCommitRequest,
    OffsetFetchRequest, FindCoordinatorRequest, JoinGroupRequest, HeartbeatRequest,
    LeaveGroupRequest, SyncGroupRequest, DescribeGroupsRequest, ListGroupsRequest,
    ApiVersionsRequest, CreateTopicsRequest, DeleteTopicsRequest, DeleteRecordsRequest,
    InitProducerIdRequest, OffsetForLeaderEpochRequest, DescribeConfigsRequest, AlterConfigsRequest,
    CreatePartitionsRequest, DeleteGroupsRequest, IncrementalAlterConfigsRequest,
    OffsetDeleteRequest, DescribeQuorumRequest, EnvelopeRequest, DescribeClusterRequest,
    DescribeTopicPartitionsRequest, ElectLeadersRequest, UnregisterBrokerRequest,
    AlterPartitionReassignmentsRequest, ListPartitionReassignmentsRequest, DescribeLogDirsRequest>;

template <class... Ms>
std::vector<ApiRange> BuildRanges(RequestList<Ms...>) {
  std::vector<ApiRange> v{
      ApiRange{Ms::kApiKey, Ms::kMinVersion, Ms::kMaxVersion, Ms::kFirstFlexible}...};
  std::sort(v.begin(), v.end(), [](const ApiRange& a, const ApiRange& b) { return a.key < b.key; });
  return v;
}

template <class M>
Status DecodeAs(int16_t version, MutableByteView body) {
  if (version < M::kMinVersion || version > M::kMaxVersion) {
    return MakeError(Errc::kUnsupported,
                     fmt::format("api key {} version {} not supported", M::kApiKey, version));
  }
  auto r = Decode<M>(body, version, IsFlexible<M>(version));
  if (!r.ok()) return r.take_error();
  return Status::Ok();
}

template <class... Ms>
Status Dispatch(RequestList<Ms...>, int16_t key, int16_t version, MutableByteView body) {
  Status st = MakeError(Errc::kUnsupported, fmt::format("unknown api key {}", key));
  // Short-circuits at the matching type.
  (void)((key == Ms::kApiKey ? (st = DecodeAs<Ms>(version, body), true) : false) || ...);
  return st;
}

}  // namespace

const std::vector<ApiRange>& SupportedApis() {
  static const std::vector<ApiRange> kApis = BuildRanges(AllRequests{});
  return kApis;
}

const ApiRange* FindApi(int16_t key) {
  const auto& apis = SupportedApis();
  auto it = std::lower_bound(apis.begin(), apis.end(), key,
                             [](const ApiRange& a, int16_t k) { return a.key < k; });
  if (it == apis.end() || it->key != key) return nullptr;
  return &*it;
}

bool RequestIsFlexible(int16_t key, int16_t version) {
  const ApiRange* api = FindApi(key);
  return api != nullptr && api->first_flexible <= api->max && version >= api->first_flexible;
}

Status DecodeRequestBody(int16_t key, int16_t version, MutableByteView body) {
  return Dispatch(AllRequests{}, key, version, body);
}

}  // namespace strata::protocol
