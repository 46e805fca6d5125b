#pragma once
// Partition: one replica of a partition on this broker, and the one home of
// its state: the log and what cluster metadata says of it (leader, leader
// epoch, partition epoch, replicas, ISR). TopicManager creates and removes
// them as the metadata places replicas here; handlers reach them only
// through LeaderLookup, which checks leadership and epochs the way Kafka's
// ReplicaManager does.
//
// Thread-safety: safe from any thread; the log is shared so a request that
// holds it keeps it valid while the replica is removed.
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "broker/partition_traffic.h"
#include "broker/replica_selector.h"
#include "broker/topic_partition.h"
#include "cluster/records.h"
#include "protocol/error_code.h"
#include "replication/follower_replica.h"
#include "replication/follower_tracker.h"
#include "storage/log.h"

namespace strata::broker {

class Partition : public replication::FollowerReplica {
 public:
  // `self`: this broker, which the record may name as leader;
  // `high_watermark`: the checkpointed one (kept within the log's bounds).
  Partition(TopicPartition tp, std::string topic_id, std::shared_ptr<storage::Log> log,
            cluster::PartitionRecord state, cluster::NodeId self, int64_t now_ms,
            Offset high_watermark = Offset());

  const TopicPartition& tp() const { return tp_; }
  const std::string& topic_id() const { return topic_id_; }  // base64
  const std::shared_ptr<storage::Log>& log() const { return log_; }
  PartitionTraffic& traffic() { return traffic_; }

  cluster::PartitionRecord state() const;
  // Takes a newer record of this partition; one with an older partition
  // epoch is ignored, so the leader epoch seen here never goes back. A new
  // leadership of this broker starts tracking its followers at `now_ms`.
  void Apply(const cluster::PartitionRecord& record, int64_t now_ms);
  cluster::NodeId leader() const;
  cluster::LeaderEpoch leader_epoch() const;
  // The replica left this broker (moved away, or its topic deleted): what
  // waits on it (an acks=all produce) will never be settled here. The last
  // record it saw may still name this broker leader.
  void MarkRemoved() { removed_.store(true); }
  bool removed() const { return removed_.load(); }

  // Told when something waiting on this partition may proceed: records
  // appended here (fetch long-polls) or the high watermark moved (acks=all
  // produces). Set once, before the partition is published.
  void SetWakeListener(std::function<void(const TopicPartition&)> wake) { wake_ = std::move(wake); }
  // Tells the wake listener now (a leadership change, a removal).
  void Wake() const {
    if (wake_) wake_(tp_);
  }

  // What AppendAsLeader wrote: where, and the leader epoch it was stamped with.
  struct LeaderAppend {
    storage::AppendResult appended;
    cluster::LeaderEpoch leader_epoch{-1};
  };
  // Leader: the one way a client's or the group coordinator's records get
  // into the partition (Kafka's appendRecordsToLeader). Appends `batches`
  // (validated; `infos` describes them) at this leadership's epoch, counts
  // the traffic, moves the high watermark as far as the ISR allows and wakes
  // the waiters. kFenced when this replica does not lead or was removed.
  // `origin` kCoordinator: the transaction coordinator's end-transaction
  // markers, the group coordinator's transactional offsets (storage::Log::Append).
  Result<LeaderAppend> AppendAsLeader(
      MutableByteView batches, const std::vector<storage::BatchInfo>& infos,
      int min_insync_replicas, storage::AppendOrigin origin = storage::AppendOrigin::kClient);

  // --- Replication (the leader's side follows Kafka's Partition.scala) ---
  // The offset below which records are committed, and consumers read: on
  // the leader the smallest log end over the ISR (held while the ISR is
  // below min.insync.replicas, capped at the replication factor); on a
  // follower the leader's, capped at the local log end. Never goes back.
  // Never above the log end (OnTruncated lowers it, as Kafka's truncateTo).
  // Never below the log start either: a log started at its leader's active
  // segment (replica_start.cc) has nothing below to wait for.
  Offset high_watermark() const {
    return std::clamp(high_watermark_.load(), log_->log_start_offset(), log_->log_end_offset());
  }
  // Kafka's last stable offset (storage::Log::last_stable_offset): the high
  // watermark, or the first offset of a transaction not yet decided and
  // committed when lower. read_committed consumers read below it.
  // Never above this replica's high watermark (the log learns the mark
  // without this partition's lock, so its copy may run ahead after a
  // truncation).
  Offset last_stable_offset() const {
    return std::min(log_->last_stable_offset(), high_watermark());
  }
  // Leader: moves the mark as far as the ISR allows; true when it moved.
  // Whatever moves the mark wakes what waits on it (acks=all produces,
  // consumers' long polls), here and in OnFollowerFetch and OnLeaderFetched.
  bool MaybeAdvanceHighWatermark(int min_insync_replicas);
  // Leader: a fetch by replica `follower` at `fetch_offset` (its log end).
  // True when the mark moved.
  bool OnFollowerFetch(cluster::NodeId follower, Offset fetch_offset, int min_insync_replicas,
                       int64_t now_ms, Offset follower_log_start = kNoOffset,
                       int64_t follower_broker_epoch = 0);
  // Leader: forgets what followers that registered again since said
  // (FollowerTracker::ForgetRestarted); `current_epoch(id)`: 0 when none.
  void ForgetRestartedFollowers(const std::function<int64_t(cluster::NodeId)>& current_epoch);
  // Follower: how many offsets the local log is behind the leader's high
  // watermark as of the last fetch (Kafka's replica fetcher ConsumerLag).
  int64_t follower_lag() const {
    return std::max<int64_t>(0, leader_high_watermark_.load() - log_->log_end_offset());
  }
  // Leader: the ISR and remote contiguity this partition should have now,
  // when they differ from the record's (the caller writes them with
  // AlterPartition). Followers that caught up join the ISR, if contiguous;
  // those not caught up for `max_lag_ms` leave it. A follower is contiguous
  // when its local log starts at or below `contiguity_bound` (see
  // FollowerTracker::NonContiguous; Offset::Max() when nothing is tiered).
  std::optional<cluster::PartitionStateChange> WantedState(int64_t now_ms, int64_t max_lag_ms,
                                                           Offset contiguity_bound) const;
  // Leader: an ISR change to `isr` is about to be written, based on the
  // record at `base`. Until a record newer than `base` is applied, the mark
  // waits for every replica of the base ISR and of each ISR proposed on it
  // (Kafka's "maximal ISR"): the write may be in the metadata store before
  // the reply (or without one, on a timeout), and from then on the
  // controller may elect any replica it names.
  void ProposeIsr(cluster::PartitionEpoch base, const std::vector<cluster::NodeId>& isr);
  std::optional<replication::FollowerState> Follower(cluster::NodeId follower) const;

  // --- Follower: the replica fetcher's way in (replication::FollowerReplica) ---
  // Each write is refused (kFenced) unless this replica still follows the
  // leadership `fetched_under` names; mu_ is held across it, so a leadership
  // applied meanwhile never sees a follower's write land after it began.
  Offset log_end_offset() const override { return log_->log_end_offset(); }
  Offset log_start_offset() const override { return log_->log_start_offset(); }
  cluster::LeaderEpoch latest_epoch() const override { return log_->latest_epoch(); }
  std::pair<cluster::LeaderEpoch, Offset> EndOffsetForEpoch(
      cluster::LeaderEpoch epoch) const override {
    return log_->EndOffsetForEpoch(epoch);
  }
  // Counts the bytes as replication traffic.
  Status AppendAsFollower(cluster::LeaderEpoch fetched_under, MutableByteView batches,
                          const std::vector<storage::BatchInfo>& infos) override;
  // The high watermark goes no higher than the new end.
  Status TruncateTo(cluster::LeaderEpoch fetched_under, Offset offset) override;
  Status StartLogAt(cluster::LeaderEpoch fetched_under, Offset offset,
                    cluster::LeaderEpoch epoch_at = cluster::kNoLeaderEpoch) override;
  Status DeleteRecordsBefore(cluster::LeaderEpoch fetched_under, Offset offset) override;
  // The leader's mark, capped at the local log end, never back; wakes the
  // waiters (consumers fetching from this follower, KIP-392) when it moved.
  // As in Kafka, what the leader no longer holds (DeleteRecords, retention)
  // goes here too, up to this replica's mark, so a follower that takes over
  // never serves records the leader had deleted.
  void OnLeaderFetched(cluster::LeaderEpoch fetched_under, Offset high_watermark,
                       Offset log_start) override;
  // Leader: its followers as read replicas for a consumer (KIP-392), with
  // what their fetches said; rack and liveness are left for the caller.
  std::vector<ReadReplicaCandidate> ReadReplicaCandidates(int64_t now_ms) const;

 private:
  bool AdvanceLocked(int min_insync_replicas);
  // After the mark moved (called without mu_): the log learns it (its last
  // stable offset follows) and what waits on the partition is woken.
  void HighWatermarkMoved();
  // Ok when this replica follows the leadership `fetched_under` (mu_ held).
  Status CheckFollowingLocked(cluster::LeaderEpoch fetched_under) const;
  bool TakeLeaderHighWatermark(Offset leader_high_watermark);  // true when ours moved
  void TakeLeaderLogStart(Offset leader_log_start);
  void CapHighWatermark(Offset log_end);
  std::vector<cluster::NodeId> MaximalIsrLocked() const;

  const TopicPartition tp_;
  const std::string topic_id_;
  const std::shared_ptr<storage::Log> log_;
  const cluster::NodeId self_;
  PartitionTraffic traffic_;
  std::function<void(const TopicPartition&)> wake_;
  std::atomic<bool> removed_{false};
  mutable std::mutex mu_;
  cluster::PartitionRecord state_;
  std::atomic<Offset> high_watermark_{Offset(0)};
  std::atomic<Offset> leader_high_watermark_{Offset(0)};  // as the leader last said (follower)
  replication::FollowerTracker followers_;                // while leading
  Offset epoch_start_offset_;                             // the log end when this leadership began
  // Replicas proposed for the ISR on top of the record at proposed_base_.
  std::vector<cluster::NodeId> proposed_isr_;
  cluster::PartitionEpoch proposed_base_{-1};
};

// What a request that must reach a partition's leader gets: the partition,
// or Kafka's error for why not, and the leader to tell the client about.
struct LeaderLookup {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::string message;
  std::shared_ptr<Partition> partition;  // set when error is kNone
  cluster::NodeId leader{-1};            // the known leader (KIP-951), -1 if none
  cluster::LeaderEpoch leader_epoch{-1};
};

// Kafka's order: an unknown topic or partition, then the request's leader
// epoch against ours (older: FENCED_LEADER_EPOCH, newer: UNKNOWN_LEADER_EPOCH;
// -1 skips the check), then leadership: a replica that does not lead, or a
// broker whose registration is fenced, is NOT_LEADER_OR_FOLLOWER.
// `partition` is null when this broker holds no replica of it.
LeaderLookup CheckLeader(const TopicPartition& tp, bool partition_exists,
                         std::shared_ptr<Partition> partition, cluster::NodeId self, bool fenced,
                         int32_t current_leader_epoch);
// The same checks for a consumer's fetch that a follower may serve
// (KIP-392, Kafka's fetchOnlyLeader false): any replica hosted here passes,
// unless this broker's registration is fenced (NOT_LEADER_OR_FOLLOWER).
LeaderLookup CheckReplica(const TopicPartition& tp, bool partition_exists,
                          std::shared_ptr<Partition> partition, cluster::NodeId self, bool fenced,
                          int32_t current_leader_epoch);

}  // namespace strata::broker
