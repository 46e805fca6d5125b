#pragma once
// ClassicRebalance: Kafka's classic group protocol on one group (JoinGroup,
// SyncGroup, Heartbeat, LeaveGroup, static membership, the rebalance, initial
// delay, pending-sync and session timers), and the group records it writes to
// __consumer_offsets. GroupCoordinator owns the group table and finds (and
// locks) the group a request names; this decides what the request does to
// it. JoinGroup and SyncGroup may park their callback in the group's member
// until the rebalance answers it, from another request or from RunTimers.
//
// Thread-safety: every call takes a group its caller has locked; the
// rebalance itself holds no state besides its settings.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "coordinator/classic_group.h"
#include "coordinator/coordinator_config.h"
#include "coordinator/coordinator_log.h"
#include "coordinator/group_records.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/leave_group.h"
#include "protocol/messages/sync_group.h"

namespace strata::coordinator {

class ClassicRebalance {
 public:
  // Writes records of group `g` to its offsets partition, in one batch.
  using PersistFn =
      std::function<Status(const ClassicGroup& g, const std::vector<CoordinatorRecord>& records)>;

  ClassicRebalance(const CoordinatorConfig& config, Clock* clock, PersistFn persist);

  // JoinGroup for `g` (validated: group id, session timeout; made by this
  // request when the member is new, and its empty record written).
  void Join(ClassicGroup& g, const RequestContext& ctx, const protocol::JoinGroupRequest& req,
            JoinCallback& done);
  // SyncGroup for `g`, which is not Empty.
  void Sync(ClassicGroup& g, const protocol::SyncGroupRequest& req, SyncCallback done);
  protocol::HeartbeatResponse Heartbeat(ClassicGroup& g, const protocol::HeartbeatRequest& req);
  // LeaveGroup (v3+ shape) for `g`; null when the group does not exist.
  protocol::LeaveGroupResponse Leave(
      ClassicGroup* g, const std::vector<protocol::LeaveGroupRequest::Member>& members);
  // Applies the group's timers that are due at `now` (monotonic ms).
  void RunTimers(ClassicGroup& g, int64_t now);
  // Member `m` is alive: its session restarts, ending `timeout_ms` from now.
  void RescheduleHeartbeat(GroupMember& m, int64_t timeout_ms) const;

  // The group's metadata record: its generation, protocol, leader and
  // members with `assignment` (nullptr: the members' current ones).
  static CoordinatorRecord GroupMetadataRecord(const ClassicGroup& g,
                                               const std::map<std::string, Bytes>* assignment);
  // The record of a group just made, before any member.
  static CoordinatorRecord EmptyGroupRecord(const ClassicGroup& g);

 private:
  struct JoinArgs;

  // Join phase.
  void JoinNewMember(ClassicGroup& g, const JoinArgs& a);
  void JoinExistingMember(ClassicGroup& g, const JoinArgs& a);
  void JoinNewStaticMember(ClassicGroup& g, const JoinArgs& a, const std::string& new_id);
  void UpdateStaticMember(ClassicGroup& g, const JoinArgs& a, const std::string& old_id,
                          const std::string& new_id);
  void AddMemberAndRebalance(ClassicGroup& g, const JoinArgs& a, const std::string& member_id);
  void UpdateMemberAndRebalance(ClassicGroup& g, GroupMember& m, const JoinArgs& a);
  void MaybePrepareRebalanceOrCompleteJoin(ClassicGroup& g, const std::string& reason);
  void PrepareRebalance(ClassicGroup& g, const std::string& reason);
  void MaybeCompleteJoinPhase(ClassicGroup& g);
  void CompleteJoin(ClassicGroup& g);
  protocol::JoinGroupResponse CurrentGenerationResponse(const ClassicGroup& g,
                                                        const std::string& member_id,
                                                        bool with_members) const;

  // Sync phase and membership.
  void SetAndPropagateAssignment(ClassicGroup& g, std::map<std::string, Bytes> assignment);
  void ResetAndPropagateAssignmentWithError(ClassicGroup& g, protocol::ErrorCode error);
  void PropagateAssignment(ClassicGroup& g, protocol::ErrorCode error);
  void RemoveMemberAndUpdateGroup(ClassicGroup& g, const std::string& member_id,
                                  const std::string& reason);
  void RemoveMemberOnLeave(ClassicGroup& g, const std::string& member_id);

  // Timers.
  void ExpireHeartbeats(ClassicGroup& g, int64_t now);
  void ExpirePendingSync(ClassicGroup& g);
  void InitialRebalanceTimer(ClassicGroup& g, int64_t now);

  int64_t Now() const { return clock_->MonotonicMs(); }
  int64_t WallNow() const { return clock_->NowMs(); }

  const CoordinatorConfig& config_;
  Clock* clock_;
  PersistFn persist_;
};

}  // namespace strata::coordinator
