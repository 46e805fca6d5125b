#pragma once
// The one list of the request structs Strata parses (protocol/messages/),
// as a type list: the request registry derives the supported versions from
// it, and the fuzzer and the codec tests walk it. Serving a new API starts by
// adding its request struct here (see docs/architecture.md).
#include "protocol/messages/acls.h"
#include "protocol/messages/add_offsets_to_txn.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/alter_configs.h"
#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/client_quotas.h"
#include "protocol/messages/consumer_group_describe.h"
#include "protocol/messages/consumer_group_heartbeat.h"
#include "protocol/messages/create_partitions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_groups.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/describe_cluster.h"
#include "protocol/messages/describe_configs.h"
#include "protocol/messages/describe_groups.h"
#include "protocol/messages/describe_log_dirs.h"
#include "protocol/messages/describe_producers.h"
#include "protocol/messages/describe_quorum.h"
#include "protocol/messages/describe_topic_partitions.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/elect_leaders.h"
#include "protocol/messages/end_txn.h"
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
#include "protocol/messages/list_transactions.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_delete.h"
#include "protocol/messages/offset_fetch.h"
#include "protocol/messages/offset_for_leader_epoch.h"
#include "protocol/messages/produce.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"
#include "protocol/messages/sync_group.h"
#include "protocol/messages/telemetry.h"
#include "protocol/messages/txn_offset_commit.h"
#include "protocol/messages/unregister_broker.h"
#include "protocol/messages/user_scram_credentials.h"
#include "protocol/messages/write_txn_markers.h"

namespace strata::protocol {

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
    AlterPartitionReassignmentsRequest, ListPartitionReassignmentsRequest, DescribeLogDirsRequest,
    WriteTxnMarkersRequest, DescribeProducersRequest, AddPartitionsToTxnRequest,
    AddOffsetsToTxnRequest, EndTxnRequest, TxnOffsetCommitRequest, DescribeTransactionsRequest,
    ListTransactionsRequest, SaslHandshakeRequest, SaslAuthenticateRequest,
    DescribeUserScramCredentialsRequest, AlterUserScramCredentialsRequest, DescribeAclsRequest,
    CreateAclsRequest, DeleteAclsRequest, DescribeClientQuotasRequest, AlterClientQuotasRequest,
    GetTelemetrySubscriptionsRequest, PushTelemetryRequest, ConsumerGroupHeartbeatRequest,
    ConsumerGroupDescribeRequest>;

}  // namespace strata::protocol
