// SyncGroup, Heartbeat and LeaveGroup, and member removal, following Kafka's
// GroupMetadataManager (classicGroupSync/Heartbeat/Leave).
#include "base/log.h"
#include "coordinator/group_coordinator.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;
using protocol::SyncGroupResponse;

SyncGroupResponse SyncError(ErrorCode code) {
  SyncGroupResponse r;
  r.error_code = Code(code);
  return r;
}

// A request's protocol type/name conflicts only when both sides have one.
bool Inconsistent(const std::optional<std::string>& requested,
                  const std::optional<std::string>& group) {
  return requested && group && *requested != *group;
}

}  // namespace

void GroupCoordinator::SyncGroup(const RequestContext&, const protocol::SyncGroupRequest& req,
                                 SyncCallback done) {
  if (req.group_id.empty()) return done(SyncError(ErrorCode::kInvalidGroupId));
  LockedGroup g = Acquire(req.group_id, false);
  if (!g || g->Is(GroupState::kEmpty)) return done(SyncError(ErrorCode::kUnknownMemberId));
  ErrorCode err = g->ValidateMember(req.member_id, req.group_instance_id);
  if (err != ErrorCode::kNone) return done(SyncError(err));
  if (req.generation_id != g->generation()) return done(SyncError(ErrorCode::kIllegalGeneration));
  if (Inconsistent(req.protocol_type, g->protocol_type()) ||
      Inconsistent(req.protocol_name, g->protocol_name())) {
    return done(SyncError(ErrorCode::kInconsistentGroupProtocol));
  }
  GroupMember& m = *g->member(req.member_id);
  if (g->Is(GroupState::kPreparingRebalance))
    return done(SyncError(ErrorCode::kRebalanceInProgress));
  if (g->Is(GroupState::kStable)) {
    g->RemovePendingSync(req.member_id);
    SyncGroupResponse r;
    r.protocol_type = g->protocol_type();
    r.protocol_name = g->protocol_name();
    r.assignment = m.assignment;
    return done(std::move(r));
  }
  // CompletingRebalance: park until the leader's assignment is stored.
  if (m.IsAwaitingSync()) g->CompleteSync(m, SyncError(ErrorCode::kRebalanceInProgress));
  m.awaiting_sync = std::move(done);
  g->RemovePendingSync(req.member_id);
  if (!g->IsLeader(req.member_id)) return;
  std::map<std::string, Bytes> assignment;
  for (const auto& a : req.assignments) assignment[a.member_id] = a.assignment;
  for (const auto& [id, member] : g->members()) assignment.try_emplace(id);  // missing -> empty
  Status st = Persist(*g, {GroupMetadataRecord(*g, &assignment)});
  if (st.ok()) {
    SetAndPropagateAssignment(*g, std::move(assignment));
    g->TransitionTo(GroupState::kStable, WallNow());
    return;
  }
  Log()->warn("group {}: cannot store assignment: {}", req.group_id, st.error().message);
  ResetAndPropagateAssignmentWithError(*g, ErrorCode::kCoordinatorNotAvailable);
  MaybePrepareRebalanceOrCompleteJoin(*g, "failed to store the assignment");
}

void GroupCoordinator::SetAndPropagateAssignment(ClassicGroup& g,
                                                 std::map<std::string, Bytes> assignment) {
  for (auto& [id, m] : g.mutable_members()) {
    auto it = assignment.find(id);
    m.assignment = it == assignment.end() ? Bytes() : std::move(it->second);
  }
  PropagateAssignment(g, ErrorCode::kNone);
}

void GroupCoordinator::ResetAndPropagateAssignmentWithError(ClassicGroup& g, ErrorCode error) {
  for (auto& [id, m] : g.mutable_members()) m.assignment.clear();
  PropagateAssignment(g, error);
}

void GroupCoordinator::PropagateAssignment(ClassicGroup& g, ErrorCode error) {
  for (auto& [id, m] : g.mutable_members()) {
    SyncGroupResponse r;
    r.error_code = Code(error);
    if (error == ErrorCode::kNone) {
      r.protocol_type = g.protocol_type();
      r.protocol_name = g.protocol_name();
      r.assignment = m.assignment;
    }
    // A member whose session ran out while parked gets a fresh one.
    if (g.CompleteSync(m, std::move(r))) RescheduleHeartbeat(m, m.session_timeout_ms);
  }
}

protocol::HeartbeatResponse GroupCoordinator::Heartbeat(const protocol::HeartbeatRequest& req) {
  protocol::HeartbeatResponse r;
  auto fail = [&](ErrorCode code) {
    r.error_code = Code(code);
    return r;
  };
  if (req.group_id.empty()) return fail(ErrorCode::kInvalidGroupId);
  LockedGroup g = Acquire(req.group_id, false);
  if (!g) return fail(ErrorCode::kUnknownMemberId);
  ErrorCode err = g->ValidateMember(req.member_id, req.group_instance_id);
  if (err != ErrorCode::kNone) return fail(err);
  if (req.generation_id != g->generation()) return fail(ErrorCode::kIllegalGeneration);
  GroupMember& m = *g->member(req.member_id);
  switch (g->state()) {
    case GroupState::kPreparingRebalance:
      RescheduleHeartbeat(m, m.session_timeout_ms);
      return fail(ErrorCode::kRebalanceInProgress);
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      RescheduleHeartbeat(m, m.session_timeout_ms);
      return r;
    default:
      return fail(ErrorCode::kUnknownMemberId);
  }
}

protocol::LeaveGroupResponse GroupCoordinator::LeaveGroup(
    const std::string& group_id, const std::vector<protocol::LeaveGroupRequest::Member>& members) {
  protocol::LeaveGroupResponse resp;
  if (group_id.empty()) {
    resp.error_code = Code(ErrorCode::kInvalidGroupId);
    return resp;
  }
  LockedGroup g = Acquire(group_id, false);
  bool any_left = false;
  for (const auto& in : members) {
    auto& out = resp.members.emplace_back();
    out.member_id = in.member_id;
    out.group_instance_id = in.group_instance_id;
    if (!g) {
      out.error_code = Code(ErrorCode::kUnknownMemberId);
    } else if (in.member_id.empty()) {
      // Administrative removal of a static member by instance id.
      const std::string* id =
          in.group_instance_id ? g->StaticMemberId(*in.group_instance_id) : nullptr;
      if (id) {
        std::string member_id = *id;
        RemoveMemberOnLeave(*g, member_id);
        any_left = true;
      } else {
        out.error_code = Code(ErrorCode::kUnknownMemberId);
      }
    } else if (g->IsPendingMember(in.member_id)) {
      g->Remove(in.member_id);
      any_left = true;
    } else {
      ErrorCode err = g->ValidateMember(in.member_id, in.group_instance_id);
      out.error_code = Code(err);
      if (err == ErrorCode::kNone) {
        RemoveMemberOnLeave(*g, in.member_id);
        any_left = true;
      }
    }
  }
  if (g && any_left) {
    if (g->Is(GroupState::kStable) || g->Is(GroupState::kCompletingRebalance)) {
      MaybePrepareRebalanceOrCompleteJoin(*g, "members left the group");
    } else if (g->Is(GroupState::kPreparingRebalance)) {
      MaybeCompleteJoinPhase(*g);
    }
  }
  return resp;
}

void GroupCoordinator::RemoveMemberOnLeave(ClassicGroup& g, const std::string& member_id) {
  GroupMember* m = g.member(member_id);
  Log()->info("group {}: member {} left", g.group_id(), member_id);
  // A parked request of the leaving member (another connection) is answered
  // so the client retries if it is still alive.
  g.CompleteJoin(*m, {.error_code = Code(ErrorCode::kUnknownMemberId)});
  g.CompleteSync(*m, SyncError(ErrorCode::kUnknownMemberId));
  g.Remove(member_id);
}

void GroupCoordinator::RemoveMemberAndUpdateGroup(ClassicGroup& g, const std::string& member_id,
                                                  const std::string& reason) {
  GroupMember* m = g.member(member_id);
  Log()->info("group {}: removing member {}: {}", g.group_id(), member_id, reason);
  g.CompleteJoin(*m, {.error_code = Code(ErrorCode::kUnknownMemberId)});
  g.CompleteSync(*m, SyncError(ErrorCode::kUnknownMemberId));
  g.Remove(member_id);
  if (g.Is(GroupState::kStable) || g.Is(GroupState::kCompletingRebalance)) {
    MaybePrepareRebalanceOrCompleteJoin(g, reason);
  } else if (g.Is(GroupState::kPreparingRebalance) && g.HasAllMembersJoined()) {
    CompleteJoin(g);
  }
}

void GroupCoordinator::RescheduleHeartbeat(GroupMember& m, int64_t timeout_ms) {
  m.heartbeat_deadline_ms = Now() + timeout_ms;
}

}  // namespace strata::coordinator
