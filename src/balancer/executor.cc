#include "balancer/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace strata::balancer {

namespace {

// The live brokers a move keeps busy (copying to, from or serving it).
std::vector<NodeId> Touched(const Move& m, ReassignmentPort& port) {
  std::vector<NodeId> ids = m.replicas_before;
  ids.insert(ids.end(), m.replicas_after.begin(), m.replicas_after.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::erase_if(ids, [&](NodeId id) { return !port.Live(id); });
  return ids;
}

// The first broker the move puts a replica on that is not registered now:
// such a move cannot finish (its new replica never joins the ISR).
std::optional<NodeId> GoneTarget(const Move& m, ReassignmentPort& port) {
  for (NodeId id : m.replicas_after) {
    if (!port.Live(id)) return id;
  }
  return std::nullopt;
}

bool SameSet(std::vector<NodeId> a, std::vector<NodeId> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace

const char* MoveResultName(MoveOutcome::Result r) {
  switch (r) {
    case MoveOutcome::Result::kDone:
      return "done";
    case MoveOutcome::Result::kFailed:
      return "failed";
    case MoveOutcome::Result::kCancelled:
      return "cancelled";
    case MoveOutcome::Result::kSkipped:
      return "skipped";
  }
  return "unknown";
}

// Whether the move's reassignment is complete (and its leadership where
// the plan wants it, electing when needed).
bool Executor::Finished(const Move& move, ReassignmentPort& port, std::string* detail) {
  auto state = port.State(move.topic, move.partition);
  if (!state) {
    *detail = "the partition is gone";
    return true;
  }
  if (state->reassigning || !SameSet(state->replicas, move.replicas_after)) return false;
  if (state->leader != move.leader_after) {
    // Needs the new leader in the ISR; an election that cannot yet is
    // simply tried again at the next poll.
    (void)port.ElectPreferred(move.topic, move.partition);
    return false;
  }
  return true;
}

std::vector<MoveOutcome> Executor::Execute(
    const std::vector<Move>& moves, ReassignmentPort& port,
    const std::function<bool()>& should_stop, const std::function<bool()>& abandon,
    const std::function<void(const MoveOutcome&)>& on_outcome) {
  std::vector<MoveOutcome> outcomes;
  std::map<NodeId, int> busy;
  // Each move's brokers as counted when it started (liveness may change).
  std::map<size_t, std::vector<NodeId>> counted;
  std::vector<Running> running;
  size_t next = 0;
  auto finish = [&](size_t i, MoveOutcome::Result result, std::string detail, int64_t started) {
    MoveOutcome o{moves[i], result, std::move(detail), port.NowMs() - started};
    for (NodeId id : counted[i]) busy[id]--;
    counted.erase(i);
    if (on_outcome) on_outcome(o);
    outcomes.push_back(std::move(o));
  };
  std::vector<Move> replica_moves;
  for (const Move& m : moves) {
    if (m.kind == MoveKind::kReplica) replica_moves.push_back(m);
  }
  const bool throttled = options_.throttle_bytes_per_sec > 0 && !replica_moves.empty();
  // A throttle asked for and not in place: no replica moves (they would
  // copy at full speed), leadership moves still.
  std::string throttle_error;
  if (throttled) {
    Status st = port.Throttle(replica_moves, options_.throttle_bytes_per_sec);
    if (!st.ok())
      throttle_error = "the replication throttle could not be set: " + st.error().message;
  }
  while (next < moves.size() || !running.empty()) {
    // Start what the per-broker limits allow, in plan order.
    for (; next < moves.size() && !should_stop(); ++next) {
      std::vector<NodeId> ids = Touched(moves[next], port);
      const bool room = std::all_of(ids.begin(), ids.end(), [&](NodeId id) {
        return busy[id] < options_.per_broker_concurrency;
      });
      if (!room) break;
      if (auto gone = GoneTarget(moves[next], port)) {
        finish(next, MoveOutcome::Result::kSkipped,
               fmt::format("broker {} is not registered", gone->value()), port.NowMs());
        continue;
      }
      for (NodeId id : ids) busy[id]++;
      counted[next] = std::move(ids);
      const int64_t now = port.NowMs();
      Status st =
          !throttle_error.empty() && moves[next].kind == MoveKind::kReplica
              ? MakeError(Errc::kUnavailable, throttle_error)
              : port.Reassign(moves[next].topic, moves[next].partition, moves[next].replicas_after);
      if (!st.ok()) {
        finish(next, MoveOutcome::Result::kSkipped, st.error().message, now);
        continue;
      }
      running.push_back({next, now});
    }
    if (running.empty() || (abandon && abandon())) break;
    port.Sleep(options_.poll_interval);
    for (auto it = running.begin(); it != running.end();) {
      std::string detail;
      std::optional<NodeId> gone;
      if (Finished(moves[it->index], port, &detail)) {
        finish(it->index, MoveOutcome::Result::kDone, detail, it->started_ms);
        it = running.erase(it);
      } else if ((gone = GoneTarget(moves[it->index], port))) {
        Status st = port.Cancel(moves[it->index].topic, moves[it->index].partition);
        finish(it->index, MoveOutcome::Result::kCancelled,
               fmt::format("broker {} left the cluster{}", gone->value(),
                           st.ok() ? ", cancelled" : ": cancelling: " + st.error().message),
               it->started_ms);
        it = running.erase(it);
      } else if (port.NowMs() - it->started_ms > options_.move_timeout_ms) {
        Status st = port.Cancel(moves[it->index].topic, moves[it->index].partition);
        finish(it->index, MoveOutcome::Result::kCancelled,
               fmt::format("not done within {} ms{}", options_.move_timeout_ms,
                           st.ok() ? ", cancelled" : ": cancelling: " + st.error().message),
               it->started_ms);
        it = running.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (throttled) (void)port.Unthrottle();
  return outcomes;
}

}  // namespace strata::balancer
