// OffsetForLeaderEpoch (23): where a leader epoch ends in the leader's log,
// which clients use to detect log truncation after a failover (KIP-320).
#include "protocol/messages/offset_for_leader_epoch.h"

#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {

using protocol::ErrorCode;

HandlerResult HandleOffsetForLeaderEpoch(BrokerContext& ctx, net::Request& request) {
  using protocol::OffsetForLeaderEpochRequest;
  STRATA_ASSIGN_OR_RETURN(OffsetForLeaderEpochRequest req,
                          DecodeRequest<OffsetForLeaderEpochRequest>(request));
  protocol::OffsetForLeaderEpochResponse resp;
  // Followers need CLUSTER_ACTION; consumers DESCRIBE on each topic.
  const bool follower = req.replica_id >= 0;
  const bool cluster_action =
      follower && AuthorizedOnCluster(ctx, request, security::AclOperation::kClusterAction);
  for (const auto& topic : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.topic = topic.topic;
    const bool allowed = follower ? cluster_action
                                  : Authorized(ctx, request, security::AclOperation::kDescribe,
                                               security::ResourceType::kTopic, topic.topic);
    for (const auto& p : topic.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition = p.partition;
      if (!allowed) {
        out.error_code = Code(follower ? ErrorCode::kClusterAuthorizationFailed
                                       : ErrorCode::kTopicAuthorizationFailed);
        continue;
      }
      broker::LeaderLookup leader =
          ctx.topics.LeaderPartition({topic.topic, p.partition}, p.current_leader_epoch);
      if (leader.error != ErrorCode::kNone) {
        out.error_code = Code(leader.error);
        continue;
      }
      const std::shared_ptr<storage::Log>& log = leader.partition->log();
      const LeaderEpoch current = leader.partition->leader_epoch();
      const LeaderEpoch requested(p.leader_epoch);
      LeaderEpoch epoch = kNoLeaderEpoch;
      Offset end_offset = kNoOffset;
      if (requested == current) {
        // The leader's own epoch ends at the log end, written in it or not.
        epoch = current;
        end_offset = log->log_end_offset();
      } else if (requested < current) {
        std::tie(epoch, end_offset) = log->EndOffsetForEpoch(requested);
        if (epoch == kNoLeaderEpoch && log->latest_epoch() == kNoLeaderEpoch) {
          // Nothing written yet: every earlier epoch ends at the log end.
          epoch = current;
          end_offset = log->log_end_offset();
        }
      }  // a future epoch: UNDEFINED (-1, -1), as Kafka
      out.leader_epoch = epoch.value();
      out.end_offset = end_offset.value();
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
