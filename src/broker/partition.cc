#include "broker/partition.h"

#include <fmt/format.h>

namespace strata::broker {

using protocol::ErrorCode;

Partition::Partition(TopicPartition tp, std::string topic_id, std::shared_ptr<storage::Log> log,
                     cluster::PartitionRecord state)
    : tp_(std::move(tp)),
      topic_id_(std::move(topic_id)),
      log_(std::move(log)),
      state_(std::move(state)) {}

cluster::PartitionRecord Partition::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

void Partition::Apply(const cluster::PartitionRecord& record) {
  std::lock_guard lock(mu_);
  if (record.partition_epoch < state_.partition_epoch) return;
  state_ = record;
}

cluster::NodeId Partition::leader() const {
  std::lock_guard lock(mu_);
  return state_.leader;
}

cluster::LeaderEpoch Partition::leader_epoch() const {
  std::lock_guard lock(mu_);
  return state_.leader_epoch;
}

LeaderLookup CheckLeader(const TopicPartition& tp, bool partition_exists,
                         std::shared_ptr<Partition> partition, cluster::NodeId self, bool fenced,
                         int32_t current_leader_epoch) {
  LeaderLookup out;
  if (!partition_exists) {
    out.error = ErrorCode::kUnknownTopicOrPartition;
    out.message = "This server does not host this topic-partition: " + tp.ToString();
    return out;
  }
  if (!partition) {
    out.error = ErrorCode::kNotLeaderOrFollower;
    out.message = fmt::format("Broker {} holds no replica of {}", self.value(), tp.ToString());
    return out;
  }
  cluster::PartitionRecord state = partition->state();
  out.leader = state.leader;
  out.leader_epoch = state.leader_epoch;
  if (current_leader_epoch >= 0) {
    int32_t ours = state.leader_epoch.value();
    if (current_leader_epoch < ours) {
      out.error = ErrorCode::kFencedLeaderEpoch;
      out.message = fmt::format("{}: leader epoch {} in the request is older than the current {}",
                                tp.ToString(), current_leader_epoch, ours);
      return out;
    }
    if (current_leader_epoch > ours) {
      out.error = ErrorCode::kUnknownLeaderEpoch;
      out.message = fmt::format("{}: leader epoch {} in the request is newer than the current {}",
                                tp.ToString(), current_leader_epoch, ours);
      return out;
    }
  }
  if (state.leader != self || fenced) {
    out.error = ErrorCode::kNotLeaderOrFollower;
    out.message = fenced ? fmt::format(
                               "Broker {} lost its cluster registration and leads nothing "
                               "until it registers again",
                               self.value())
                         : fmt::format("Broker {} is not the leader of {} (leader: {})",
                                       self.value(), tp.ToString(), state.leader.value());
    if (fenced) out.leader = cluster::kNoNode;
    return out;
  }
  out.partition = std::move(partition);
  return out;
}

}  // namespace strata::broker
