#include "broker/partition.h"

#include <fmt/format.h>

#include <algorithm>

#include "broker/logger.h"

namespace strata::broker {

using protocol::ErrorCode;

Partition::Partition(TopicPartition tp, std::string topic_id, std::shared_ptr<storage::Log> log,
                     cluster::PartitionRecord state, cluster::NodeId self, int64_t now_ms,
                     Offset high_watermark)
    : tp_(std::move(tp)),
      topic_id_(std::move(topic_id)),
      log_(std::move(log)),
      self_(self),
      traffic_(tp_.topic),
      state_(std::move(state)) {
  // What was committed when the replica last checkpointed, as far as the
  // log still reaches; the ISR (leading) or the leader (following) moves it.
  high_watermark_ = std::clamp(high_watermark, log_->log_start_offset(), log_->log_end_offset());
  log_->SetHighWatermark(high_watermark_.load());
  if (state_.leader == self_) {
    followers_.Reset(self_, state_.replicas, state_.isr, now_ms);
    epoch_start_offset_ = log_->log_end_offset();
  }
}

cluster::PartitionRecord Partition::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

void Partition::Apply(const cluster::PartitionRecord& record, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (record.partition_epoch < state_.partition_epoch) return;
  bool new_leadership = record.leader == self_ &&
                        (state_.leader != self_ || record.leader_epoch != state_.leader_epoch);
  bool new_replicas =
      record.leader == self_ && !new_leadership && record.replicas != state_.replicas;
  state_ = record;
  if (new_replicas) followers_.UpdateReplicas(state_.replicas);
  if (new_leadership) {
    // Kafka's makeLeader: followers start unknown, ISR members caught up
    // as of now; this epoch's data starts at our log end.
    followers_.Reset(self_, state_.replicas, state_.isr, now_ms);
    epoch_start_offset_ = log_->log_end_offset();
  }
}

cluster::NodeId Partition::leader() const {
  std::lock_guard lock(mu_);
  return state_.leader;
}

cluster::LeaderEpoch Partition::leader_epoch() const {
  std::lock_guard lock(mu_);
  return state_.leader_epoch;
}

void Partition::HighWatermarkMoved() {
  log_->SetHighWatermark(high_watermark());
  Wake();
}

bool Partition::AdvanceLocked(int min_insync_replicas) {
  if (state_.leader != self_) return false;
  // Kafka's effective min ISR: never more than the replicas there are.
  int min_isr = std::min<int>(min_insync_replicas, static_cast<int>(state_.replicas.size()));
  const Offset current = high_watermark();
  auto hw = followers_.HighWatermark(MaximalIsrLocked(), log_->log_end_offset(), min_isr, current);
  if (!hw || *hw <= current) return false;
  high_watermark_.store(*hw);
  return true;
}

std::vector<cluster::NodeId> Partition::MaximalIsrLocked() const {
  std::vector<cluster::NodeId> isr = state_.isr;
  if (proposed_base_ != state_.partition_epoch) return isr;  // a newer record settled it
  for (cluster::NodeId r : proposed_isr_) {
    if (std::find(isr.begin(), isr.end(), r) == isr.end()) isr.push_back(r);
  }
  return isr;
}

void Partition::ProposeIsr(cluster::PartitionEpoch base, const std::vector<cluster::NodeId>& isr) {
  std::lock_guard lock(mu_);
  if (base != state_.partition_epoch) return;  // already superseded
  if (proposed_base_ != base) {
    proposed_isr_.clear();
    proposed_base_ = base;
  }
  for (cluster::NodeId r : isr) {
    if (std::find(proposed_isr_.begin(), proposed_isr_.end(), r) == proposed_isr_.end())
      proposed_isr_.push_back(r);
  }
}

Result<Partition::LeaderAppend> Partition::AppendAsLeader(
    MutableByteView batches, const std::vector<storage::BatchInfo>& infos, int min_insync_replicas,
    storage::AppendOrigin origin) {
  cluster::LeaderEpoch epoch{-1};
  {
    std::lock_guard lock(mu_);
    if (state_.leader != self_ || removed_.load()) {
      return MakeError(Errc::kFenced, fmt::format("{}: this broker does not lead it (leader {})",
                                                  tp_.ToString(), state_.leader.value()));
    }
    epoch = state_.leader_epoch;
  }
  // The log's own lock orders appends; holding mu_ across the write would
  // stall the followers' fetches of this partition behind the disk.
  auto appended = log_->Append(batches, infos, epoch, origin);
  if (!appended.ok()) return appended.take_error();
  if (!appended->duplicate) {
    traffic_.Produced(static_cast<int64_t>(batches.size()),
                      appended->last_offset - appended->base_offset + 1);
  }
  // Fetch long-polls wait on the new records even when the mark stays.
  if (!MaybeAdvanceHighWatermark(min_insync_replicas) && !appended->duplicate) Wake();
  return LeaderAppend{*appended, epoch};
}

bool Partition::MaybeAdvanceHighWatermark(int min_insync_replicas) {
  bool moved = false;
  {
    std::lock_guard lock(mu_);
    moved = AdvanceLocked(min_insync_replicas);
  }
  if (moved) HighWatermarkMoved();
  return moved;
}

bool Partition::OnFollowerFetch(cluster::NodeId follower, Offset fetch_offset,
                                int min_insync_replicas, int64_t now_ms, Offset follower_log_start,
                                int64_t follower_broker_epoch) {
  bool moved = false;
  {
    std::lock_guard lock(mu_);
    if (state_.leader != self_) return false;
    followers_.OnFetch(follower, fetch_offset, log_->log_end_offset(), now_ms, follower_log_start,
                       follower_broker_epoch);
    moved = AdvanceLocked(min_insync_replicas);
  }
  if (moved) HighWatermarkMoved();
  return moved;
}

void Partition::ForgetRestartedFollowers(
    const std::function<int64_t(cluster::NodeId)>& current_epoch) {
  std::lock_guard lock(mu_);
  if (state_.leader == self_) followers_.ForgetRestarted(current_epoch);
}

Status Partition::CheckFollowingLocked(cluster::LeaderEpoch fetched_under) const {
  if (removed_.load() || state_.leader == self_ || state_.leader_epoch != fetched_under) {
    return MakeError(Errc::kFenced,
                     fmt::format("{}: fetched under leader epoch {}, now {} (leader {}{})",
                                 tp_.ToString(), fetched_under.value(), state_.leader_epoch.value(),
                                 state_.leader.value(), removed_.load() ? ", removed" : ""));
  }
  return Status::Ok();
}

Status Partition::AppendAsFollower(cluster::LeaderEpoch fetched_under, MutableByteView batches,
                                   const std::vector<storage::BatchInfo>& infos) {
  std::lock_guard lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckFollowingLocked(fetched_under));
  auto appended = log_->AppendAsFollower(batches, infos);
  if (!appended.ok()) return appended.take_error();
  traffic_.ReplicatedIn(static_cast<int64_t>(batches.size()));
  return Status::Ok();
}

Status Partition::TruncateTo(cluster::LeaderEpoch fetched_under, Offset offset) {
  std::lock_guard lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckFollowingLocked(fetched_under));
  Status st = log_->TruncateTo(offset);
  CapHighWatermark(log_->log_end_offset());
  return st;
}

Status Partition::StartLogAt(cluster::LeaderEpoch fetched_under, Offset offset,
                             cluster::LeaderEpoch epoch_at) {
  std::lock_guard lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckFollowingLocked(fetched_under));
  Status st = log_->TruncateFullyAndStartAt(offset, epoch_at);
  CapHighWatermark(log_->log_end_offset());
  return st;
}

Status Partition::DeleteRecordsBefore(cluster::LeaderEpoch fetched_under, Offset offset) {
  std::lock_guard lock(mu_);
  STRATA_RETURN_IF_ERROR(CheckFollowingLocked(fetched_under));
  return log_->DeleteRecordsBefore(offset);
}

void Partition::OnLeaderFetched(cluster::LeaderEpoch fetched_under, Offset high_watermark,
                                Offset log_start) {
  bool moved = false;
  {
    std::lock_guard lock(mu_);
    if (!CheckFollowingLocked(fetched_under).ok()) return;
    moved = TakeLeaderHighWatermark(high_watermark);
    TakeLeaderLogStart(log_start);
  }
  if (moved) HighWatermarkMoved();
}

bool Partition::TakeLeaderHighWatermark(Offset leader_high_watermark) {
  leader_high_watermark_.store(leader_high_watermark);
  Offset hw = std::min(leader_high_watermark, log_->log_end_offset());
  Offset current = high_watermark_.load();
  while (hw > current) {
    if (high_watermark_.compare_exchange_weak(current, hw)) return true;
  }
  return false;
}

void Partition::TakeLeaderLogStart(Offset leader_log_start) {
  const Offset start = std::min(leader_log_start, high_watermark());
  if (start <= log_->log_start_offset()) return;
  Status st = log_->DeleteRecordsBefore(start);
  if (!st.ok()) {
    Log()->warn("{}: taking the leader's log start offset {}: {}", tp_.ToString(), start,
                st.error().message);
  }
}

void Partition::CapHighWatermark(Offset log_end) {
  Offset current = high_watermark_.load();
  while (current > log_end && !high_watermark_.compare_exchange_weak(current, log_end)) {
  }
}

std::optional<cluster::PartitionStateChange> Partition::WantedState(int64_t now_ms,
                                                                    int64_t max_lag_ms,
                                                                    Offset contiguity_bound) const {
  std::lock_guard lock(mu_);
  if (state_.leader != self_) return std::nullopt;
  auto has = [](const std::vector<cluster::NodeId>& v, cluster::NodeId r) {
    return std::find(v.begin(), v.end(), r) != v.end();
  };
  cluster::PartitionStateChange wanted;
  wanted.non_contiguous =
      followers_.NonContiguous(state_.replicas, state_.non_contiguous, contiguity_bound);
  auto lagging = followers_.Lagging(state_.isr, now_ms, max_lag_ms);
  auto joining = followers_.ReadyToJoin(state_.isr, high_watermark_.load(), epoch_start_offset_);
  // In replica order, as Kafka keeps it; a replica with a gap to remote
  // storage neither joins nor stays.
  for (cluster::NodeId r : state_.replicas) {
    bool member = has(state_.isr, r) ? !has(lagging, r) : has(joining, r);
    if (!member || has(wanted.non_contiguous, r)) continue;
    wanted.isr.push_back(r);
    if (!has(state_.isr, r)) {
      if (auto f = followers_.Get(r)) wanted.joining_epochs[r] = f->broker_epoch;
    }
  }
  // The same members in another order (the replicas were reordered) is no change.
  const bool same_isr = std::is_permutation(wanted.isr.begin(), wanted.isr.end(),
                                            state_.isr.begin(), state_.isr.end());
  if (same_isr && wanted.non_contiguous == state_.non_contiguous) return std::nullopt;
  return wanted;
}

std::optional<replication::FollowerState> Partition::Follower(cluster::NodeId follower) const {
  std::lock_guard lock(mu_);
  return followers_.Get(follower);
}

std::vector<ReadReplicaCandidate> Partition::ReadReplicaCandidates(int64_t now_ms) const {
  std::lock_guard lock(mu_);
  std::vector<ReadReplicaCandidate> out;
  if (state_.leader != self_) return out;
  for (cluster::NodeId r : state_.replicas) {
    if (r == self_) continue;
    ReadReplicaCandidate c;
    c.id = r;
    c.in_isr = std::find(state_.isr.begin(), state_.isr.end(), r) != state_.isr.end();
    if (auto f = followers_.Get(r)) {
      c.log_start_offset = f->log_start_offset;
      c.log_end_offset = f->log_end_offset;
      c.since_caught_up_ms = now_ms - f->last_caught_up_ms;
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

LeaderLookup CheckPartition(const TopicPartition& tp, bool partition_exists,
                            std::shared_ptr<Partition> partition, cluster::NodeId self, bool fenced,
                            int32_t current_leader_epoch, bool require_leader) {
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
  if ((require_leader && state.leader != self) || fenced) {
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

}  // namespace

LeaderLookup CheckLeader(const TopicPartition& tp, bool partition_exists,
                         std::shared_ptr<Partition> partition, cluster::NodeId self, bool fenced,
                         int32_t current_leader_epoch) {
  return CheckPartition(tp, partition_exists, std::move(partition), self, fenced,
                        current_leader_epoch, /*require_leader=*/true);
}

LeaderLookup CheckReplica(const TopicPartition& tp, bool partition_exists,
                          std::shared_ptr<Partition> partition, cluster::NodeId self, bool fenced,
                          int32_t current_leader_epoch) {
  return CheckPartition(tp, partition_exists, std::move(partition), self, fenced,
                        current_leader_epoch, /*require_leader=*/false);
}

}  // namespace strata::broker
