// DescribeQuorum (55): the metadata quorum is the metadata store's, so this
// describes the etcd members (the embedded store: one voter, itself) as
// KRaft's __cluster_metadata-0 would be: voters are the members (ids 0..n-1
// in member-id order), the leader is the etcd leader, the leader epoch its
// raft term, the high watermark its raft index, each voter's log end offset
// its own raft index (-1 when it does not answer); the brokers are observers.
// Asks every member, so it waits up to strata.etcd.request.timeout.ms.
#include "protocol/messages/describe_quorum.h"

#include "base/log.h"
#include "cluster/metadata.h"
#include "kafka/authorization.h"
#include "kafka/cluster_state.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using protocol::DescribeQuorumRequest;
using protocol::DescribeQuorumResponse;
using protocol::ErrorCode;

constexpr const char* kMetadataTopic = "__cluster_metadata";

void Describe(BrokerContext& ctx, const cluster::QuorumStatus& q,
              DescribeQuorumResponse::Partition& out) {
  const int64_t now = ctx.clock->NowMs();
  out.leader_epoch = static_cast<int32_t>(q.term);
  out.high_watermark = q.commit_index;
  for (size_t i = 0; i < q.members.size(); ++i) {
    const cluster::QuorumMember& m = q.members[i];
    DescribeQuorumResponse::ReplicaState r;
    r.replica_id = static_cast<int32_t>(i);
    r.log_end_offset = m.raft_index;
    if (m.reachable) r.last_fetch_timestamp = r.last_caught_up_timestamp = now;
    if (m.id == q.leader_id) out.leader_id = r.replica_id;
    out.current_voters.push_back(r);
  }
  // A broker's position is a store revision, not a raft index: unknown (-1).
  for (const auto& b : LiveBrokers(ctx, InterBrokerListener(ctx)))
    out.observers.push_back({b.node_id, -1, -1, -1});
}

}  // namespace

HandlerResult HandleDescribeQuorum(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(DescribeQuorumRequest req, DecodeRequest<DescribeQuorumRequest>(request));
  DescribeQuorumResponse resp;
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kDescribe)) {
    resp.error_code = Code(protocol::ErrorCode::kClusterAuthorizationFailed);
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  std::optional<Result<cluster::QuorumStatus>> status;
  for (const auto& topic : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.topic_name = topic.topic_name;
    for (const auto& p : topic.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = p.partition_index;
      if (topic.topic_name != kMetadataTopic || p.partition_index != 0 || ctx.metadata == nullptr) {
        out.error_code = Code(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      if (!status) status = ctx.metadata->kv().DescribeQuorum();
      if (!status->ok()) {
        Log()->warn("DescribeQuorum: {}", status->error().message);
        out.error_code = Code(ErrorCode::kRequestTimedOut);
        continue;
      }
      Describe(ctx, **status, out);
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
