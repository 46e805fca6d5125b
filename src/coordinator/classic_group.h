#pragma once
// ClassicGroup: one consumer group of the classic rebalance protocol (JoinGroup
// / SyncGroup / Heartbeat), following Kafka's ClassicGroup: its members and
// their supported protocols, the state machine
//   Empty -> PreparingRebalance -> CompletingRebalance -> Stable -> ...
//   (any state -> Dead when the group is deleted)
// the generation, the chosen protocol and leader, members awaiting a JoinGroup
// or SyncGroup response (held as callbacks), static members by instance id,
// the group's timers (deadlines the coordinator checks), and its committed
// offsets.
//
// Thread-safety: none. GroupCoordinator guards each group with `mu` and holds
// it for every read or change.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/offset.h"
#include "coordinator/consumer_group.h"
#include "protocol/error_code.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/sync_group.h"

namespace strata::coordinator {

inline constexpr int64_t kNoDeadline = INT64_MAX;

enum class GroupState : uint8_t {
  kEmpty,
  kPreparingRebalance,
  kCompletingRebalance,
  kStable,
  kDead
};

// Kafka's names: "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead".
const char* GroupStateName(GroupState state);

// Called exactly once with the response to a parked JoinGroup / SyncGroup.
// Invoked with the group's mutex held: it must only hand the response over.
using JoinCallback = std::function<void(protocol::JoinGroupResponse)>;
using SyncCallback = std::function<void(protocol::SyncGroupResponse)>;

using ProtocolList = std::vector<protocol::JoinGroupRequest::Protocol>;

struct GroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = 0;
  int32_t session_timeout_ms = 0;
  std::string protocol_type;
  ProtocolList protocols;  // in the member's order of preference
  Bytes assignment;
  JoinCallback awaiting_join;
  SyncCallback awaiting_sync;
  bool is_new = false;  // joined but never got a JoinGroup response
  int64_t heartbeat_deadline_ms = kNoDeadline;

  bool IsAwaitingJoin() const { return static_cast<bool>(awaiting_join); }
  bool IsAwaitingSync() const { return static_cast<bool>(awaiting_sync); }
  // Whether an expired session should be forgiven: members parked in a
  // rebalance cannot heartbeat (their connection is busy), new members can.
  bool HasSatisfiedHeartbeat() const { return !is_new && (IsAwaitingJoin() || IsAwaitingSync()); }
  bool Matches(const ProtocolList& other) const { return protocols == other; }
  // The metadata this member sent for `protocol`; empty if none.
  Bytes Metadata(const std::string& protocol) const;
  // The first of this member's protocols that is in `candidates`.
  std::string Vote(const std::set<std::string>& candidates) const;
};

struct CommittedOffset {
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp_ms = 0;
  int64_t expire_timestamp_ms = -1;  // only from v1 commits read back from a log
  // Where the commit's batch ends in __consumer_offsets. A transaction's
  // offsets reach the group when its marker does, which may be after a plain
  // commit of the same partition: the one written later wins, as in Kafka.
  Offset record_offset = kNoOffset;
};

// topic -> partition -> offset.
using OffsetMap = std::map<std::string, std::map<int32_t, CommittedOffset>>;

// Makes a committed transaction's `offset` the partition's committed offset
// unless a commit written after it is already there; whether it did.
bool KeepLaterCommit(std::map<int32_t, CommittedOffset>& partitions, int32_t partition,
                     CommittedOffset offset);

class ClassicGroup {
 public:
  ClassicGroup(std::string group_id, int64_t now_ms);

  std::mutex mu;

  const std::string& group_id() const { return group_id_; }
  GroupState state() const { return state_; }
  GroupState previous_state() const { return previous_state_; }
  bool Is(GroupState s) const { return state_ == s; }
  int64_t state_timestamp_ms() const { return state_timestamp_ms_; }
  int32_t generation() const { return generation_; }
  const std::optional<std::string>& protocol_type() const { return protocol_type_; }
  const std::optional<std::string>& protocol_name() const { return protocol_name_; }
  const std::optional<std::string>& leader() const { return leader_; }
  bool IsLeader(const std::string& member_id) const { return leader_ == member_id; }

  // Restores persisted state (replay). Members are added with Add().
  void Restore(GroupState state, int32_t generation, std::optional<std::string> protocol_type,
               std::optional<std::string> protocol_name, std::optional<std::string> leader,
               int64_t state_timestamp_ms);

  bool HasMember(const std::string& member_id) const { return members_.count(member_id) > 0; }
  GroupMember* member(const std::string& member_id);
  const std::map<std::string, GroupMember>& members() const { return members_; }
  std::map<std::string, GroupMember>& mutable_members() { return members_; }
  size_t num_members() const { return members_.size(); }
  int num_awaiting_join() const { return num_awaiting_join_; }

  // Adds a member (the first one fixes the protocol type and becomes leader).
  // `join` may be empty (loaded members). Removes it from the pending set.
  GroupMember& Add(GroupMember member, JoinCallback join);
  // Removes a member (electing another leader if needed). Callbacks must
  // have been completed by the caller.
  void Remove(const std::string& member_id);
  // Replaces the member id of a static member, fencing the old id's parked
  // requests with FENCED_INSTANCE_ID. Returns the new member.
  GroupMember& ReplaceStaticMember(const std::string& instance_id, const std::string& old_id,
                                   const std::string& new_id);
  void UpdateMember(GroupMember& member, ProtocolList protocols, int32_t rebalance_timeout_ms,
                    int32_t session_timeout_ms, JoinCallback join);
  // Completes a parked request, if any; returns whether there was one.
  bool CompleteJoin(GroupMember& member, protocol::JoinGroupResponse response);
  bool CompleteSync(GroupMember& member, protocol::SyncGroupResponse response);

  // Members told to rejoin with the id they were given (MEMBER_ID_REQUIRED),
  // with their session deadline.
  bool IsPendingMember(const std::string& id) const { return pending_members_.count(id) > 0; }
  void AddPendingMember(const std::string& id, int64_t deadline_ms) {
    pending_members_[id] = deadline_ms;
  }
  void RemovePendingMember(const std::string& id) { pending_members_.erase(id); }
  const std::map<std::string, int64_t>& pending_members() const { return pending_members_; }

  // Members that got a JoinGroup response but have not sent SyncGroup yet.
  void AddPendingSync(const std::string& id) { pending_sync_.insert(id); }
  void RemovePendingSync(const std::string& id) { pending_sync_.erase(id); }
  void ClearPendingSync() { pending_sync_.clear(); }
  const std::set<std::string>& pending_sync() const { return pending_sync_; }

  bool HasStaticMember(const std::string& instance_id) const {
    return static_members_.count(instance_id) > 0;
  }
  // The member id of a static member; nullptr if unknown.
  const std::string* StaticMemberId(const std::string& instance_id) const;

  // NONE, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID (Kafka's validateMember).
  protocol::ErrorCode ValidateMember(const std::string& member_id,
                                     const std::optional<std::string>& instance_id) const;

  bool HasAllMembersJoined() const {
    return members_.size() == static_cast<size_t>(num_awaiting_join_) && pending_members_.empty();
  }
  // If the leader has not rejoined, picks a member that has; false if none.
  bool MaybeElectNewJoinedLeader();
  int32_t RebalanceTimeoutMs() const;

  // PreparingRebalance may be entered from Empty, CompletingRebalance, Stable.
  bool CanRebalance() const;
  void TransitionTo(GroupState state, int64_t now_ms);

  // Protocol type and names acceptable for a joining member.
  bool SupportsProtocols(const std::string& protocol_type, const ProtocolList& protocols) const;
  // The protocol every member supports with the most first-choice votes; ties
  // go to the leader's preference order.
  std::string SelectProtocol() const;

  // Next generation: Empty when no members, else CompletingRebalance with a
  // newly selected protocol.
  void InitNextGeneration(int64_t now_ms);
  // What the leader's JoinGroup response lists.
  std::vector<protocol::JoinGroupResponse::Member> MembersForLeader() const;

  // Topics the members subscribe to (consumer protocol only); nullopt when
  // unknown (other protocol types, or unparsable metadata).
  const std::optional<std::set<std::string>>& subscribed_topics() const {
    return subscribed_topics_;
  }
  void RecomputeSubscribedTopics();
  bool IsSubscribedToTopic(const std::string& topic) const;
  bool UsesConsumerProtocol() const { return protocol_type_ == std::string("consumer"); }

  // The group's KIP-848 side: set while it is a consumer group (members
  // speak ConsumerGroupHeartbeat); its classic side then stays Empty, and
  // only the offsets below are shared.
  std::unique_ptr<ConsumerGroup> consumer;
  bool IsConsumerGroup() const { return consumer != nullptr; }

  OffsetMap offsets;
  // Offsets committed in open transactions, by producer id (TxnOffsetCommit):
  // they join `offsets` when the transaction's COMMIT marker is written to
  // the group's partition and are dropped on ABORT (KIP-98, KIP-447).
  std::map<int64_t, OffsetMap> pending_txn_offsets;
  // Whether an open transaction has an offset of `topic`-`partition`.
  bool HasPendingTxnOffset(const std::string& topic, int32_t partition) const;

  // Timers (monotonic deadlines; kNoDeadline when unset), run by the coordinator.
  struct Timers {
    int64_t join_deadline_ms = kNoDeadline;
    bool join_is_initial = false;  // group.initial.rebalance.delay.ms phase
    int32_t initial_delay_ms = 0;
    int32_t initial_remaining_ms = 0;
    int64_t sync_deadline_ms = kNoDeadline;
    int32_t sync_generation = -1;
  } timers;
  bool new_member_added = false;  // a member joined during the initial delay

  // Earliest deadline of this group, readable without the mutex (Tick).
  std::atomic<int64_t> next_deadline_ms{kNoDeadline};
  void RefreshNextDeadline();

 private:
  void CountProtocols(const GroupMember& m, int delta);

  std::string group_id_;
  GroupState state_ = GroupState::kEmpty;
  GroupState previous_state_ = GroupState::kEmpty;
  int64_t state_timestamp_ms_ = -1;
  int32_t generation_ = 0;
  std::optional<std::string> protocol_type_;
  std::optional<std::string> protocol_name_;
  std::optional<std::string> leader_;
  std::map<std::string, GroupMember> members_;
  std::map<std::string, std::string> static_members_;  // instance id -> member id
  std::map<std::string, int64_t> pending_members_;
  std::set<std::string> pending_sync_;
  std::map<std::string, int> supported_protocols_;  // protocol -> members supporting it
  int num_awaiting_join_ = 0;
  std::optional<std::set<std::string>> subscribed_topics_;
};

}  // namespace strata::coordinator
