// JoinGroup and the join phase of a rebalance, following Kafka's
// GroupMetadataManager (classicGroupJoin*, prepareRebalance,
// completeClassicGroupJoin).
#include <fmt/format.h>

#include <random>

#include "base/log.h"
#include "coordinator/group_coordinator.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;
using protocol::JoinGroupResponse;

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

}  // namespace

struct GroupCoordinator::JoinArgs {
  const RequestContext& ctx;
  const protocol::JoinGroupRequest& req;
  JoinCallback& done;  // moved into the group when the request is parked
  int32_t rebalance_timeout_ms;
};

void GroupCoordinator::JoinGroup(const RequestContext& ctx, const protocol::JoinGroupRequest& req,
                                 JoinCallback done) {
  if (req.group_id.empty()) return done(JoinError(ErrorCode::kInvalidGroupId, req.member_id));
  if (req.session_timeout_ms < config_.min_session_timeout_ms ||
      req.session_timeout_ms > config_.max_session_timeout_ms) {
    return done(JoinError(ErrorCode::kInvalidSessionTimeout, req.member_id));
  }
  bool unknown_member = req.member_id.empty();
  bool created = false;
  LockedGroup g = Acquire(req.group_id, /*create=*/unknown_member, &created);
  if (!g) return done(JoinError(ErrorCode::kUnknownMemberId, req.member_id));
  if (created) {
    // As Kafka: a new group is committed to the log as an empty group first.
    Status st = Persist(*g, {EmptyGroupRecord(*g)});
    if (!st.ok()) {
      Log()->warn("group {}: cannot write empty group metadata: {}", req.group_id,
                  st.error().message);
      g->TransitionTo(GroupState::kDead, WallNow());
      Unlink(g.shared());
      return done(JoinError(ErrorCode::kCoordinatorNotAvailable, req.member_id));
    }
  }
  // v0 has no rebalance timeout: the session timeout stands in for it.
  JoinArgs a{ctx, req, done,
             req.rebalance_timeout_ms < 0 ? req.session_timeout_ms : req.rebalance_timeout_ms};
  bool accept = false;
  switch (g->state()) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      accept = true;
      break;
    case GroupState::kPreparingRebalance: {
      const GroupMember* m = g->member(req.member_id);
      accept = (m && m->IsAwaitingJoin()) || g->num_awaiting_join() < config_.max_group_size;
      break;
    }
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      accept = g->HasMember(req.member_id) ||
               g->num_members() < static_cast<size_t>(config_.max_group_size);
      break;
  }
  if (!accept) {
    g->Remove(req.member_id);
    done(JoinError(ErrorCode::kGroupMaxSizeReached, ""));
  } else if (unknown_member) {
    JoinNewMember(*g, a);
  } else {
    JoinExistingMember(*g, a);
  }
  // A zero initial delay (or an already expired timer) completes right away.
  RunTimers(*g, Now());
}

void GroupCoordinator::JoinNewMember(ClassicGroup& g, const JoinArgs& a) {
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

void GroupCoordinator::JoinNewStaticMember(ClassicGroup& g, const JoinArgs& a,
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

void GroupCoordinator::JoinExistingMember(ClassicGroup& g, const JoinArgs& a) {
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

void GroupCoordinator::UpdateStaticMember(ClassicGroup& g, const JoinArgs& a,
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
    Status st = Persist(g, {GroupMetadataRecord(g, nullptr)});
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

void GroupCoordinator::AddMemberAndRebalance(ClassicGroup& g, const JoinArgs& a,
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

void GroupCoordinator::UpdateMemberAndRebalance(ClassicGroup& g, GroupMember& m,
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

void GroupCoordinator::MaybePrepareRebalanceOrCompleteJoin(ClassicGroup& g,
                                                           const std::string& reason) {
  if (g.CanRebalance()) return PrepareRebalance(g, reason);
  MaybeCompleteJoinPhase(g);
}

void GroupCoordinator::PrepareRebalance(ClassicGroup& g, const std::string& reason) {
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

void GroupCoordinator::MaybeCompleteJoinPhase(ClassicGroup& g) {
  if (!g.Is(GroupState::kPreparingRebalance)) return;
  if (g.previous_state() == GroupState::kEmpty) return;  // initial rebalance: the timer decides
  if (!g.HasAllMembersJoined()) return;
  CompleteJoin(g);
}

void GroupCoordinator::CompleteJoin(ClassicGroup& g) {
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
    Status st = Persist(g, {GroupMetadataRecord(g, &none)});
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

JoinGroupResponse GroupCoordinator::CurrentGenerationResponse(const ClassicGroup& g,
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

}  // namespace strata::coordinator
