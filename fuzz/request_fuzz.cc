// libFuzzer target: the input is a request frame body (what follows the
// 4-byte size prefix): request header (api key, version, correlation id,
// client id, tagged fields when flexible) and then the request body.
// Checks that decoding never crashes, hangs or over-allocates, and that a
// successfully decoded request re-encodes to a fixed point
// (encode(decode(encode(m))) == encode(m)).
#include <cstddef>
#include <cstdint>

#include "base/bytes.h"
#include "protocol/header.h"
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
#include "protocol/request_registry.h"

namespace strata::protocol {
namespace {

template <class... Ms>
struct List {};
using AllRequests =
    List<ProduceRequest, FetchRequest, ListOffsetsRequest, MetadataRequest, OffsetCommitRequest,
         OffsetFetchRequest, FindCoordinatorRequest, JoinGroupRequest, HeartbeatRequest,
         LeaveGroupRequest, SyncGroupRequest, DescribeGroupsRequest, ListGroupsRequest,
         ApiVersionsRequest, CreateTopicsRequest, DeleteTopicsRequest, DeleteRecordsRequest,
         InitProducerIdRequest, OffsetForLeaderEpochRequest, DescribeConfigsRequest,
         AlterConfigsRequest, CreatePartitionsRequest, DeleteGroupsRequest,
         IncrementalAlterConfigsRequest, OffsetDeleteRequest, DescribeQuorumRequest,
         EnvelopeRequest, DescribeClusterRequest, DescribeTopicPartitionsRequest,
         ElectLeadersRequest, UnregisterBrokerRequest, AlterPartitionReassignmentsRequest,
         ListPartitionReassignmentsRequest, DescribeLogDirsRequest>;

// Decodes as M; if that works, encode -> decode -> encode must be stable.
template <class M>
void RoundTrip(int16_t version, MutableByteView body) {
  if (version < M::kMinVersion || version > M::kMaxVersion) return;
  const bool flex = IsFlexible<M>(version);
  auto first = Decode<M>(body, version, flex);
  if (!first.ok()) return;
  Bytes once;
  Encode(*first, version, flex, once);
  Bytes copy = once;
  auto second = Decode<M>(MutableByteView(copy), version, flex);
  if (!second.ok()) __builtin_trap();  // our own encoding must decode
  Bytes twice;
  Encode(*second, version, flex, twice);
  if (twice != once) __builtin_trap();
}

template <class... Ms>
void RoundTripAny(List<Ms...>, int16_t key, int16_t version, MutableByteView body) {
  (void)((key == Ms::kApiKey ? (RoundTrip<Ms>(version, body), true) : false) || ...);
}

}  // namespace
}  // namespace strata::protocol

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  using namespace strata::protocol;
  if (size < 4) return 0;
  // A mutable copy: decoded records fields may point into (and be rewritten in) the buffer.
  Bytes frame(data, data + size);
  const auto key = static_cast<int16_t>(LoadBE16(frame.data()));
  const auto version = static_cast<int16_t>(LoadBE16(frame.data() + 2));
  WireReader reader(MutableByteView(frame), RequestIsFlexible(key, version));
  RequestHeader header;
  ReadRequestHeader(reader, header);
  if (!reader.ok()) return 0;
  MutableByteView body = MutableByteView(frame).subspan(reader.position());
  Status st = DecodeRequestBody(key, version, body);
  if (st.ok()) {
    Bytes copy(body.begin(), body.end());
    RoundTripAny(AllRequests{}, key, version, MutableByteView(copy));
  }
  return 0;
}
