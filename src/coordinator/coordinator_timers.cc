// The group timers: rebalance timeout and initial delay (join phase), pending
// SyncGroup expiry, and member sessions. Kafka schedules each as a timer
// task; here they are deadlines on the group that Tick() (and the end of each
// JoinGroup) applies once they have passed.
#include "base/log.h"
#include "coordinator/group_coordinator.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

void GroupCoordinator::RunTimers(ClassicGroup& g, int64_t now) {
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

void GroupCoordinator::InitialRebalanceTimer(ClassicGroup& g, int64_t now) {
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

void GroupCoordinator::ExpirePendingSync(ClassicGroup& g) {
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

void GroupCoordinator::ExpireHeartbeats(ClassicGroup& g, int64_t now) {
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

}  // namespace strata::coordinator
