// Kafka's classic group protocol on one group, following its
// GroupMetadataManager (classicGroupJoin*, prepareRebalance,
// completeClassicGroupJoin, classicGroupSync/Heartbeat/Leave): the join and
// sync phases, membership, the group timers, and the group's records.
#include "coordinator/classic_rebalance.h"

#include <fmt/format.h>

#include <random>

#include "base/log.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;
using protocol::JoinGroupResponse;
using protocol::SyncGroupResponse;

// Kafka's member ids: "<client id or instance id>-<random UUID>".
std::string GenerateMemberId(const std::string& prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;                         // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // IETF variant
  return fmt::format("{}-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", prefix, hi >> 32,
                     (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48, lo & 0xFFFFFFFFFFFFULL);
}

JoinGroupResponse JoinError(ErrorCode code, std::string member_id) {
  JoinGroupResponse r;
  r.error_code = Code(code);
  r.member_id = std::move(member_id);
  return r;
}

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

ClassicRebalance::ClassicRebalance(const CoordinatorConfig& config, Clock* clock, PersistFn persist)
    : config_(config), clock_(clock), persist_(std::move(persist)) {}

struct ClassicRebalance::JoinArgs {
  const RequestContext& ctx;
  const protocol::JoinGroupRequest& req;
  JoinCallback& done;  // moved into the group when the request is parked
  int32_t rebalance_timeout_ms;
};

void ClassicRebalance::Join(ClassicGroup& g, const RequestContext& ctx,
                            const protocol::JoinGroupRequest& req, JoinCallback& done) {
  // v0 has no rebalance timeout: the session timeout stands in for it.
  JoinArgs a{ctx, req, done,
             req.rebalance_timeout_ms < 0 ? req.session_timeout_ms : req.rebalance_timeout_ms};
  bool accept = false;
  switch (g.state()) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      accept = true;
      break;
    case GroupState::kPreparingRebalance: {
      const GroupMember* m = g.member(req.member_id);
      accept = (m && m->IsAwaitingJoin()) || g.num_awaiting_join() < config_.max_group_size;
      break;
    }
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      accept = g.HasMember(req.member_id) ||
               g.num_members() < static_cast<size_t>(config_.max_group_size);
      break;
  }
  if (!accept) {
    g.Remove(req.member_id);
    done(JoinError(ErrorCode::kGroupMaxSizeReached, ""));
  } else if (req.member_id.empty()) {
    JoinNewMember(g, a);
  } else {
    JoinExistingMember(g, a);
  }
  // A zero initial delay (or an already expired timer) completes right away.
  RunTimers(g, Now());
}

void ClassicRebalance::JoinNewMember(ClassicGroup& g, const JoinArgs& a) {
  if (g.Is(GroupState::kDead)) return a.done(JoinError(ErrorCode::kCoordinatorNotAvailable, ""));
  if (!g.SupportsProtocols(a.req.protocol_type, a.req.protocols)) {
    return a.done(JoinError(ErrorCode::kInconsistentGroupProtocol, ""));
  }
  std::string new_id = GenerateMemberId(a.req.group_instance_id.value_or(a.ctx.client_id));
  if (a.req.group_instance_id) return JoinNewStaticMember(g, a, new_id);
  if (a.ctx.api_version >= 4) {
    // KIP-394: the member must come back with this id; until then it is
    // pending and expires after its session timeout.
    g.AddPendingMember(new_id, Now() + a.req.session_timeout_ms);
    return a.done(JoinError(ErrorCode::kMemberIdRequired, new_id));
  }
  AddMemberAndRebalance(g, a, new_id);
}

void ClassicRebalance::JoinNewStaticMember(ClassicGroup& g, const JoinArgs& a,
                                           const std::string& new_id) {
  const std::string* existing = g.StaticMemberId(*a.req.group_instance_id);
  if (existing) {
    Log()->info("group {}: static member {} rejoins, replacing member id {} with {}", g.group_id(),
                *a.req.group_instance_id, *existing, new_id);
    std::string old_id = *existing;
    return UpdateStaticMember(g, a, old_id, new_id);
  }
  AddMemberAndRebalance(g, a, new_id);
}

void ClassicRebalance::JoinExistingMember(ClassicGroup& g, const JoinArgs& a) {
  const std::string& id = a.req.member_id;
  if (g.Is(GroupState::kDead)) return a.done(JoinError(ErrorCode::kCoordinatorNotAvailable, id));
  if (!g.SupportsProtocols(a.req.protocol_type, a.req.protocols)) {
    return a.done(JoinError(ErrorCode::kInconsistentGroupProtocol, id));
  }
  if (g.IsPendingMember(id)) {
    // Pending members are always dynamic (Kafka fails the request otherwise).
    if (a.req.group_instance_id) return a.done(JoinError(ErrorCode::kUnknownServerError, id));
    return AddMemberAndRebalance(g, a, id);
  }
  ErrorCode err = g.ValidateMember(id, a.req.group_instance_id);
  if (err != ErrorCode::kNone) return a.done(JoinError(err, id));
  GroupMember& m = *g.member(id);
  switch (g.state()) {
    case GroupState::kPreparingRebalance:
      return UpdateMemberAndRebalance(g, m, a);
    case GroupState::kCompletingRebalance:
      // Same metadata: it probably missed the JoinGroup response; resend it.
      if (m.Matches(a.req.protocols))
        return a.done(CurrentGenerationResponse(g, id, g.IsLeader(id)));
      return UpdateMemberAndRebalance(g, m, a);
    case GroupState::kStable:
      // The leader rejoining forces a rebalance (e.g. topic metadata changed).
      if (g.IsLeader(id) || !m.Matches(a.req.protocols)) return UpdateMemberAndRebalance(g, m, a);
      return a.done(CurrentGenerationResponse(g, id, false));
    default:
      return a.done(JoinError(ErrorCode::kUnknownMemberId, id));
  }
}

void ClassicRebalance::UpdateStaticMember(ClassicGroup& g, const JoinArgs& a,
                                          const std::string& old_id, const std::string& new_id) {
  std::string current_leader = g.leader().value_or("");
  const std::string instance = *a.req.group_instance_id;
  GroupMember& m = g.ReplaceStaticMember(instance, old_id, new_id);
  RescheduleHeartbeat(m, m.session_timeout_ms);
  ProtocolList old_protocols = m.protocols;
  int32_t old_rebalance = m.rebalance_timeout_ms, old_session = m.session_timeout_ms;
  g.UpdateMember(m, a.req.protocols, a.rebalance_timeout_ms, a.req.session_timeout_ms,
                 std::move(a.done));
  if (g.Is(GroupState::kStable)) {
    if (g.protocol_name().value_or("") != g.SelectProtocol()) {
      return MaybePrepareRebalanceOrCompleteJoin(
          g, "static member " + instance + " changed protocols");
    }
    // Same protocol: keep the assignment, persist the new member id.
    Status st = persist_(g, {GroupMetadataRecord(g, nullptr)});
    if (!st.ok()) {
      JoinGroupResponse r = CurrentGenerationResponse(g, "", false);
      r.error_code = Code(ErrorCode::kCoordinatorNotAvailable);
      r.leader = current_leader;
      g.CompleteJoin(m, std::move(r));
      g.UpdateMember(m, std::move(old_protocols), old_rebalance, old_session, nullptr);
      GroupMember& back = g.ReplaceStaticMember(instance, new_id, old_id);
      return RescheduleHeartbeat(back, back.session_timeout_ms);
    }
    if (a.ctx.api_version >= 9) {
      // KIP-814: a static leader learns the members but skips assigning.
      bool leader = g.IsLeader(new_id);
      JoinGroupResponse r = CurrentGenerationResponse(g, new_id, leader);
      r.skip_assignment = leader;
      g.CompleteJoin(m, std::move(r));
    } else {
      // Older leaders must not reassign: they are told the old leader id.
      JoinGroupResponse r = CurrentGenerationResponse(g, new_id, false);
      r.leader = current_leader;
      g.CompleteJoin(m, std::move(r));
    }
  } else if (g.Is(GroupState::kCompletingRebalance)) {
    // The leader may have assigned to the old id: rebalance again.
    PrepareRebalance(g, "static member " + instance + " rejoined during CompletingRebalance");
  } else {
    MaybeCompleteJoinPhase(g);
  }
}

void ClassicRebalance::AddMemberAndRebalance(ClassicGroup& g, const JoinArgs& a,
                                             const std::string& member_id) {
  GroupMember m;
  m.member_id = member_id;
  m.group_instance_id = a.req.group_instance_id;
  m.client_id = a.ctx.client_id;
  m.client_host = a.ctx.client_host;
  m.rebalance_timeout_ms = a.rebalance_timeout_ms;
  m.session_timeout_ms = a.req.session_timeout_ms;
  m.protocol_type = a.req.protocol_type;
  m.protocols = a.req.protocols;
  m.is_new = true;
  if (g.Is(GroupState::kPreparingRebalance) && g.previous_state() == GroupState::kEmpty) {
    g.new_member_added = true;  // extends the initial delay
  }
  GroupMember& added = g.Add(std::move(m), std::move(a.done));
  // A new member cannot heartbeat while parked; its join times out instead.
  RescheduleHeartbeat(added, config_.new_member_join_timeout_ms);
  MaybePrepareRebalanceOrCompleteJoin(g, "adding member " + member_id);
}

void ClassicRebalance::UpdateMemberAndRebalance(ClassicGroup& g, GroupMember& m,
                                                const JoinArgs& a) {
  if (m.IsAwaitingJoin()) {
    // A second JoinGroup for the same member (another connection): the older
    // one is answered so it is not left parked forever.
    g.CompleteJoin(m, JoinError(ErrorCode::kRebalanceInProgress, m.member_id));
  }
  g.UpdateMember(m, a.req.protocols, a.rebalance_timeout_ms, a.req.session_timeout_ms,
                 std::move(a.done));
  MaybePrepareRebalanceOrCompleteJoin(g, "member " + m.member_id + " rejoined");
}

void ClassicRebalance::MaybePrepareRebalanceOrCompleteJoin(ClassicGroup& g,
                                                           const std::string& reason) {
  if (g.CanRebalance()) return PrepareRebalance(g, reason);
  MaybeCompleteJoinPhase(g);
}

void ClassicRebalance::PrepareRebalance(ClassicGroup& g, const std::string& reason) {
  if (g.Is(GroupState::kCompletingRebalance)) {
    ResetAndPropagateAssignmentWithError(g, ErrorCode::kRebalanceInProgress);
  }
  g.ClearPendingSync();
  g.timers.sync_deadline_ms = kNoDeadline;
  bool initial = g.Is(GroupState::kEmpty);
  if (initial) {
    g.timers.join_is_initial = true;
    g.timers.initial_delay_ms = config_.initial_rebalance_delay_ms;
    g.timers.initial_remaining_ms =
        std::max(g.RebalanceTimeoutMs() - config_.initial_rebalance_delay_ms, 0);
    g.timers.join_deadline_ms = Now() + config_.initial_rebalance_delay_ms;
    g.new_member_added = false;
  }
  g.TransitionTo(GroupState::kPreparingRebalance, WallNow());
  Log()->info("group {}: preparing to rebalance (old generation {}, {} members): {}", g.group_id(),
              g.generation(), g.num_members(), reason);
  if (initial) return;
  if (g.HasAllMembersJoined()) return CompleteJoin(g);
  g.timers.join_is_initial = false;
  g.timers.join_deadline_ms = Now() + g.RebalanceTimeoutMs();
}

void ClassicRebalance::MaybeCompleteJoinPhase(ClassicGroup& g) {
  if (!g.Is(GroupState::kPreparingRebalance)) return;
  if (g.previous_state() == GroupState::kEmpty) return;  // initial rebalance: the timer decides
  if (!g.HasAllMembersJoined()) return;
  CompleteJoin(g);
}

void ClassicRebalance::CompleteJoin(ClassicGroup& g) {
  g.timers.join_deadline_ms = kNoDeadline;
  std::vector<std::string> gone;
  for (const auto& [id, m] : g.members()) {
    if (!m.IsAwaitingJoin() && !m.group_instance_id) gone.push_back(id);
  }
  for (const auto& id : gone) {
    GroupMember* m = g.member(id);
    if (m->IsAwaitingSync()) {
      g.CompleteSync(*m, {.error_code = Code(ErrorCode::kRebalanceInProgress)});
    }
    g.Remove(id);
  }
  if (!gone.empty()) {
    Log()->info("group {}: removed {} members that did not rejoin", g.group_id(), gone.size());
  }
  if (g.Is(GroupState::kDead)) return;
  if (!g.MaybeElectNewJoinedLeader() && g.num_members() > 0) {
    // Only static members that have not rejoined are left: wait another
    // rebalance timeout for them (or for their sessions to expire).
    Log()->warn("group {}: no member rejoined; waiting another rebalance timeout", g.group_id());
    g.timers.join_is_initial = false;
    g.timers.join_deadline_ms = Now() + g.RebalanceTimeoutMs();
    return;
  }
  g.InitNextGeneration(WallNow());
  if (g.Is(GroupState::kEmpty)) {
    Log()->info("group {}: generation {} is empty", g.group_id(), g.generation());
    std::map<std::string, Bytes> none;
    Status st = persist_(g, {GroupMetadataRecord(g, &none)});
    if (!st.ok())
      Log()->warn("group {}: cannot write empty metadata: {}", g.group_id(), st.error().message);
    return;
  }
  Log()->info("group {}: generation {} with {} members, protocol {}", g.group_id(), g.generation(),
              g.num_members(), g.protocol_name().value_or(""));
  for (auto& [id, m] : g.mutable_members()) {
    g.CompleteJoin(m, CurrentGenerationResponse(g, id, g.IsLeader(id)));
    RescheduleHeartbeat(m, m.session_timeout_ms);
    m.is_new = false;
    g.AddPendingSync(id);
  }
  g.timers.sync_generation = g.generation();
  g.timers.sync_deadline_ms = Now() + g.RebalanceTimeoutMs();
}

JoinGroupResponse ClassicRebalance::CurrentGenerationResponse(const ClassicGroup& g,
                                                              const std::string& member_id,
                                                              bool with_members) const {
  JoinGroupResponse r;
  if (with_members) r.members = g.MembersForLeader();
  r.member_id = member_id;
  r.generation_id = g.generation();
  r.protocol_type = g.protocol_type();
  r.protocol_name = g.protocol_name();
  r.leader = g.leader().value_or("");
  return r;
}

void ClassicRebalance::Sync(ClassicGroup& g, const protocol::SyncGroupRequest& req,
                            SyncCallback done) {
  ErrorCode err = g.ValidateMember(req.member_id, req.group_instance_id);
  if (err != ErrorCode::kNone) return done(SyncError(err));
  if (req.generation_id != g.generation()) return done(SyncError(ErrorCode::kIllegalGeneration));
  if (Inconsistent(req.protocol_type, g.protocol_type()) ||
      Inconsistent(req.protocol_name, g.protocol_name())) {
    return done(SyncError(ErrorCode::kInconsistentGroupProtocol));
  }
  GroupMember& m = *g.member(req.member_id);
  if (g.Is(GroupState::kPreparingRebalance))
    return done(SyncError(ErrorCode::kRebalanceInProgress));
  if (g.Is(GroupState::kStable)) {
    g.RemovePendingSync(req.member_id);
    SyncGroupResponse r;
    r.protocol_type = g.protocol_type();
    r.protocol_name = g.protocol_name();
    r.assignment = m.assignment;
    return done(std::move(r));
  }
  // CompletingRebalance: park until the leader's assignment is stored.
  if (m.IsAwaitingSync()) g.CompleteSync(m, SyncError(ErrorCode::kRebalanceInProgress));
  m.awaiting_sync = std::move(done);
  g.RemovePendingSync(req.member_id);
  if (!g.IsLeader(req.member_id)) return;
  std::map<std::string, Bytes> assignment;
  for (const auto& a : req.assignments) assignment[a.member_id] = a.assignment;
  for (const auto& [id, member] : g.members()) assignment.try_emplace(id);  // missing -> empty
  Status st = persist_(g, {GroupMetadataRecord(g, &assignment)});
  if (st.ok()) {
    SetAndPropagateAssignment(g, std::move(assignment));
    g.TransitionTo(GroupState::kStable, WallNow());
    return;
  }
  Log()->warn("group {}: cannot store assignment: {}", req.group_id, st.error().message);
  ResetAndPropagateAssignmentWithError(g, ErrorCode::kCoordinatorNotAvailable);
  MaybePrepareRebalanceOrCompleteJoin(g, "failed to store the assignment");
}

void ClassicRebalance::SetAndPropagateAssignment(ClassicGroup& g,
                                                 std::map<std::string, Bytes> assignment) {
  for (auto& [id, m] : g.mutable_members()) {
    auto it = assignment.find(id);
    m.assignment = it == assignment.end() ? Bytes() : std::move(it->second);
  }
  PropagateAssignment(g, ErrorCode::kNone);
}

void ClassicRebalance::ResetAndPropagateAssignmentWithError(ClassicGroup& g, ErrorCode error) {
  for (auto& [id, m] : g.mutable_members()) m.assignment.clear();
  PropagateAssignment(g, error);
}

void ClassicRebalance::PropagateAssignment(ClassicGroup& g, ErrorCode error) {
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

protocol::HeartbeatResponse ClassicRebalance::Heartbeat(ClassicGroup& g,
                                                        const protocol::HeartbeatRequest& req) {
  protocol::HeartbeatResponse r;
  auto fail = [&](ErrorCode code) {
    r.error_code = Code(code);
    return r;
  };
  ErrorCode err = g.ValidateMember(req.member_id, req.group_instance_id);
  if (err != ErrorCode::kNone) return fail(err);
  if (req.generation_id != g.generation()) return fail(ErrorCode::kIllegalGeneration);
  GroupMember& m = *g.member(req.member_id);
  switch (g.state()) {
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

protocol::LeaveGroupResponse ClassicRebalance::Leave(
    ClassicGroup* g, const std::vector<protocol::LeaveGroupRequest::Member>& members) {
  protocol::LeaveGroupResponse resp;
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

void ClassicRebalance::RemoveMemberOnLeave(ClassicGroup& g, const std::string& member_id) {
  GroupMember* m = g.member(member_id);
  Log()->info("group {}: member {} left", g.group_id(), member_id);
  // A parked request of the leaving member (another connection) is answered
  // so the client retries if it is still alive.
  g.CompleteJoin(*m, {.error_code = Code(ErrorCode::kUnknownMemberId)});
  g.CompleteSync(*m, SyncError(ErrorCode::kUnknownMemberId));
  g.Remove(member_id);
}

void ClassicRebalance::RemoveMemberAndUpdateGroup(ClassicGroup& g, const std::string& member_id,
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

void ClassicRebalance::RescheduleHeartbeat(GroupMember& m, int64_t timeout_ms) const {
  m.heartbeat_deadline_ms = Now() + timeout_ms;
}

void ClassicRebalance::RunTimers(ClassicGroup& g, int64_t now) {
  if (g.timers.join_deadline_ms <= now) {
    if (!g.Is(GroupState::kPreparingRebalance)) {
      g.timers.join_deadline_ms = kNoDeadline;
    } else if (g.timers.join_is_initial) {
      InitialRebalanceTimer(g, now);
    } else {
      CompleteJoin(g);
    }
  }
  if (g.timers.sync_deadline_ms <= now) {
    g.timers.sync_deadline_ms = kNoDeadline;
    ExpirePendingSync(g);
  }
  ExpireHeartbeats(g, now);
}

void ClassicRebalance::InitialRebalanceTimer(ClassicGroup& g, int64_t now) {
  auto& t = g.timers;
  if (g.new_member_added && t.initial_remaining_ms != 0) {
    // Members are still arriving: wait again, within the rebalance timeout.
    g.new_member_added = false;
    int32_t delay = std::min(config_.initial_rebalance_delay_ms, t.initial_remaining_ms);
    int32_t remaining = std::max(t.initial_remaining_ms - t.initial_delay_ms, 0);
    t.initial_delay_ms = delay;
    t.initial_remaining_ms = remaining;
    t.join_deadline_ms = now + delay;
    return;
  }
  CompleteJoin(g);
}

void ClassicRebalance::ExpirePendingSync(ClassicGroup& g) {
  if (g.timers.sync_generation != g.generation()) return;
  if (!g.Is(GroupState::kCompletingRebalance) && !g.Is(GroupState::kStable)) return;
  if (g.pending_sync().empty()) return;
  std::vector<std::string> late(g.pending_sync().begin(), g.pending_sync().end());
  for (const auto& id : late) {
    GroupMember* m = g.member(id);
    if (m == nullptr) continue;
    g.CompleteJoin(*m, {.error_code = Code(protocol::ErrorCode::kUnknownMemberId)});
    g.Remove(id);
  }
  Log()->info("group {}: removed {} members that did not send SyncGroup in time", g.group_id(),
              late.size());
  PrepareRebalance(g, "pending SyncGroup expired");
}

void ClassicRebalance::ExpireHeartbeats(ClassicGroup& g, int64_t now) {
  std::vector<std::string> pending;
  for (const auto& [id, deadline] : g.pending_members()) {
    if (deadline <= now) pending.push_back(id);
  }
  for (const auto& id : pending) {
    Log()->info("group {}: pending member {} expired", g.group_id(), id);
    g.Remove(id);
    if (g.Is(GroupState::kPreparingRebalance) && g.HasAllMembersJoined()) CompleteJoin(g);
  }
  std::vector<std::string> expired;
  for (const auto& [id, m] : g.members()) {
    if (m.heartbeat_deadline_ms <= now) expired.push_back(id);
  }
  for (const auto& id : expired) {
    GroupMember* m = g.member(id);
    if (m == nullptr || m->heartbeat_deadline_ms > now) continue;  // changed meanwhile
    if (m->HasSatisfiedHeartbeat()) {
      // Parked in a rebalance: the session restarts when the rebalance answers.
      m->heartbeat_deadline_ms = kNoDeadline;
      continue;
    }
    RemoveMemberAndUpdateGroup(g, id, "session expired");
  }
}

CoordinatorRecord ClassicRebalance::GroupMetadataRecord(
    const ClassicGroup& g, const std::map<std::string, Bytes>* assignment) {
  GroupMetadataValue v;
  v.protocol_type = g.protocol_type().value_or("");
  v.generation = g.generation();
  v.protocol = g.protocol_name();
  v.leader = g.leader();
  v.current_state_timestamp = g.state_timestamp_ms();
  for (const auto& [id, m] : g.members()) {
    GroupMetadataValue::Member out;
    out.member_id = id;
    out.group_instance_id = m.group_instance_id;
    out.client_id = m.client_id;
    out.client_host = m.client_host;
    out.rebalance_timeout = m.rebalance_timeout_ms;
    out.session_timeout = m.session_timeout_ms;
    out.subscription = m.Metadata(g.protocol_name().value_or(""));
    if (assignment) {
      auto it = assignment->find(id);
      if (it != assignment->end()) out.assignment = it->second;
    } else {
      out.assignment = m.assignment;
    }
    v.members.push_back(std::move(out));
  }
  return {EncodeGroupMetadataKey(g.group_id()), EncodeGroupMetadataValue(v)};
}

CoordinatorRecord ClassicRebalance::EmptyGroupRecord(const ClassicGroup& g) {
  GroupMetadataValue v;
  v.current_state_timestamp = g.state_timestamp_ms();
  return {EncodeGroupMetadataKey(g.group_id()), EncodeGroupMetadataValue(v)};
}

}  // namespace strata::coordinator
