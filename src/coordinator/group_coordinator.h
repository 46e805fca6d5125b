#pragma once
// GroupCoordinator: Kafka's classic consumer-group coordinator for the
// groups of the __consumer_offsets partitions this broker holds. It keeps the
// group table, runs the rebalance protocol on its groups (ClassicRebalance:
// JoinGroup / SyncGroup / Heartbeat / LeaveGroup, static membership, session
// and rebalance timeouts), stores committed offsets and group
// metadata as records in __consumer_offsets (CoordinatorLog), rebuilds both by
// replaying that log at start-up, and expires offsets of empty groups.
//
// JoinGroup and SyncGroup may have to wait for other members: they take a
// callback that is invoked exactly once, either before the call returns or
// later from another request or from Tick(). Other calls answer directly.
//
// Timers (rebalance, initial delay, session, pending sync) are deadlines that
// Tick() applies; the broker calls it every few tens of milliseconds.
//
// Thread-safety: every method is safe to call from any thread. Each group has
// its own mutex; a map mutex only guards the group table and is never held
// while waiting for a group's mutex. Callbacks run with the group mutex held
// and must not call back into the coordinator.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "coordinator/classic_group.h"
#include "coordinator/classic_rebalance.h"
#include "coordinator/consumer_group.h"
#include "coordinator/coordinator_config.h"
#include "coordinator/coordinator_log.h"
#include "protocol/messages/consumer_group_describe.h"
#include "protocol/messages/consumer_group_heartbeat.h"
#include "protocol/messages/delete_groups.h"
#include "protocol/messages/describe_groups.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/leave_group.h"
#include "protocol/messages/list_groups.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_delete.h"
#include "protocol/messages/offset_fetch.h"
#include "protocol/messages/sync_group.h"
#include "protocol/messages/txn_offset_commit.h"

namespace strata::coordinator {

inline constexpr const char* kOffsetsTopic = "__consumer_offsets";

class GroupCoordinator {
 public:
  GroupCoordinator(CoordinatorConfig config, std::unique_ptr<CoordinatorLog> log, Clock* clock);
  ~GroupCoordinator();

  // Rebuilds groups and offsets from every partition of the log this broker
  // holds (the broker answers NOT_COORDINATOR for the others). Call once,
  // before serving requests.
  Status Load();
  // Takes over offsets partition `p` (this broker now leads it): rebuilds its
  // groups by replaying it; Serves() answers COORDINATOR_LOAD_IN_PROGRESS for
  // them meanwhile. Loading a partition already loaded is a no-op.
  Status LoadPartition(int32_t p);
  // Gives partition `p` up (its leadership moved or its replica went): its
  // groups leave this coordinator, and members waiting in JoinGroup or
  // SyncGroup are answered NOT_COORDINATOR, so they find the new coordinator.
  void UnloadPartition(int32_t p);
  // Whether this coordinator serves `group_id` now: NONE, or
  // COORDINATOR_LOAD_IN_PROGRESS while its partition loads, or
  // NOT_COORDINATOR when its partition is not (or no longer) loaded here.
  protocol::ErrorCode Serves(const std::string& group_id) const;

  int32_t PartitionFor(const std::string& group_id) const;
  // The end of this coordinator's latest write to partition `p`.
  std::optional<CoordinatorLog::LastAppend> LastAppended(int32_t p) const {
    return log_->LastAppended(p);
  }

  // --- rebalance protocol
  void JoinGroup(const RequestContext& ctx, const protocol::JoinGroupRequest& req,
                 JoinCallback done);
  void SyncGroup(const RequestContext& ctx, const protocol::SyncGroupRequest& req,
                 SyncCallback done);
  protocol::HeartbeatResponse Heartbeat(const protocol::HeartbeatRequest& req);
  // Answers in the v3+ shape (one entry per member); the caller converts for v0-2.
  protocol::LeaveGroupResponse LeaveGroup(
      const std::string& group_id, const std::vector<protocol::LeaveGroupRequest::Member>& members);

  // --- KIP-848 consumer groups (coordinator_consumer.cc). The catalog is
  // set once, before requests are served.
  void SetTopicCatalog(TopicCatalog catalog) { catalog_ = std::move(catalog); }
  bool ConsumerProtocolEnabled() const { return config_.consumer.enabled; }
  // A validated-or-not heartbeat: the answer once its records are written
  // (the caller still waits for them to be replicated).
  protocol::ConsumerGroupHeartbeatResponse ConsumerGroupHeartbeat(
      const RequestContext& ctx, const protocol::ConsumerGroupHeartbeatRequest& req);
  protocol::ConsumerGroupDescribeResponse::Group DescribeConsumerGroup(const std::string& group_id);

  // --- offsets. The caller has already answered partitions of unknown topics.
  protocol::OffsetCommitResponse CommitOffsets(const protocol::OffsetCommitRequest& req,
                                               int16_t api_version);
  // topics nullopt = every committed offset of the group. With
  // `require_stable` (KIP-447) a partition an open transaction has an offset
  // for is UNSTABLE_OFFSET_COMMIT: the client retries once it has ended.
  protocol::OffsetFetchResponse::Group FetchOffsets(
      const std::string& group_id,
      const std::optional<std::vector<protocol::OffsetFetchRequest::Topic>>& topics,
      bool require_stable = false);
  // TxnOffsetCommit (coordinator_txn_offsets.cc): the offsets are written in
  // a transactional batch of the producer and held pending until the
  // transaction ends. The caller has answered partitions of unknown topics.
  // `verification_guard`: the offsets partition's KIP-890 guard when the
  // transaction coordinator confirmed it is in the transaction (0: none).
  protocol::TxnOffsetCommitResponse CommitTxnOffsets(const protocol::TxnOffsetCommitRequest& req,
                                                     uint64_t verification_guard = 0);
  // A transaction of `producer_id` ended in offsets partition `p` (its
  // marker is committed there): its pending offsets are applied or dropped.
  void CompleteTransaction(int32_t p, int64_t producer_id, bool committed);
  protocol::OffsetDeleteResponse DeleteOffsets(const protocol::OffsetDeleteRequest& req);

  // --- administration
  std::vector<protocol::ListGroupsResponse::Group> ListGroups(
      const std::vector<std::string>& states_filter);
  protocol::DescribeGroupsResponse::Group DescribeGroup(const std::string& group_id);
  protocol::DeleteGroupsResponse::GroupResult DeleteGroup(const std::string& group_id);

  // Applies due timers; every retention_check_interval_ms also expires offsets.
  void Tick();

  // Runs the offset expiry pass now (tests; Tick does it periodically).
  void ExpireOffsets();

 private:
  class LockedGroup;

  // Group table. Acquire locks the group; with `create` a missing group is
  // made (Empty). Returns an empty handle when the group does not exist.
  LockedGroup Acquire(const std::string& group_id, bool create, bool* created = nullptr);
  void Unlink(const std::shared_ptr<ClassicGroup>& group);  // caller holds the group lock

  // Writes records of group `g` to its offsets partition, in one batch.
  Status Persist(const ClassicGroup& g, const std::vector<CoordinatorRecord>& records);
  // Persist, returning where the batch ended (CommittedOffset::record_offset).
  Result<Offset> PersistAt(const ClassicGroup& g, const std::vector<CoordinatorRecord>& records);
  std::vector<std::shared_ptr<ClassicGroup>> Snapshot() const;

  // One partition's commit (OffsetCommit or TxnOffsetCommit): its record
  // added to `records` and the offset it will hold, or nullopt when the
  // metadata is over offset.metadata.max.bytes (OFFSET_METADATA_TOO_LARGE).
  std::optional<CommittedOffset> StageOffsetCommit(const std::string& group_id,
                                                   const std::string& topic, int32_t partition,
                                                   int64_t offset, int32_t leader_epoch,
                                                   const std::optional<std::string>& metadata,
                                                   int64_t now,
                                                   std::vector<CoordinatorRecord>& records) const;

  // Offset expiry of one group (coordinator_offsets.cc); true when it has no
  // offsets left and may be removed if Empty.
  bool ExpireGroupOffsets(ClassicGroup& g, int64_t now_ms);

  // Writes a consumer group's records (after `extra`, already encoded) and
  // replays them into it; nothing changes when the write fails.
  Status PersistConsumer(ClassicGroup& g, const std::vector<ConsumerGroupRecord>& records,
                         std::vector<CoordinatorRecord> extra = {});
  // Fences the members of a consumer group whose session or rebalance
  // timeout has passed.
  void RunConsumerTimers(ClassicGroup& g, int64_t now_ms);

  int64_t Now() const { return clock_->MonotonicMs(); }
  int64_t WallNow() const { return clock_->NowMs(); }

  // Applies a transaction's end to the groups of partition `p` now.
  void ApplyTransactionEnd(int32_t p, int64_t producer_id, bool committed);

  enum class Residency : uint8_t { kAbsent, kLoading, kLoaded };
  // A transaction's end that reached a partition while it loaded (its
  // marker may be past the end the replay reads to): applied once the
  // partition's groups are in. Guarded by deferred_mu_, which also orders
  // the switch from kLoading to kLoaded.
  struct DeferredEnd {
    int64_t producer_id = -1;
    bool committed = false;
  };
  std::mutex deferred_mu_;
  std::map<int32_t, std::vector<DeferredEnd>> deferred_ends_;
  const CoordinatorConfig config_;
  std::unique_ptr<CoordinatorLog> log_;
  // Per offsets partition; Load/Unload are serialised by residency_mu_.
  std::unique_ptr<std::atomic<Residency>[]> residency_;
  std::mutex residency_mu_;
  Clock* clock_;
  mutable std::mutex map_mu_;
  std::unordered_map<std::string, std::shared_ptr<ClassicGroup>> groups_;
  std::mutex expiry_mu_;
  int64_t next_expiry_ms_ = 0;
  ClassicRebalance rebalance_;  // what join, sync, heartbeat and leave do to a group
  TopicCatalog catalog_;
};

// A group with its mutex held. On release it republishes the group's next
// deadline, so Tick() sees timers armed by the operation.
class GroupCoordinator::LockedGroup {
 public:
  LockedGroup() = default;
  explicit LockedGroup(std::shared_ptr<ClassicGroup> g) : group_(std::move(g)), lock_(group_->mu) {}
  LockedGroup(LockedGroup&&) = default;
  LockedGroup& operator=(LockedGroup&& other) {
    Publish();
    lock_ = std::move(other.lock_);  // unlocks the group held so far
    group_ = std::move(other.group_);
    return *this;
  }
  ~LockedGroup() { Publish(); }

  explicit operator bool() const { return group_ != nullptr; }
  ClassicGroup* operator->() const { return group_.get(); }
  ClassicGroup& operator*() const { return *group_; }
  const std::shared_ptr<ClassicGroup>& shared() const { return group_; }

 private:
  void Publish() {
    if (group_ && lock_.owns_lock()) group_->RefreshNextDeadline();
  }

  std::shared_ptr<ClassicGroup> group_;
  std::unique_lock<std::mutex> lock_;
};

}  // namespace strata::coordinator
