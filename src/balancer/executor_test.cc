#include "balancer/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace strata::balancer {
namespace {

// A cluster in miniature: a reassignment completes `polls_to_finish`
// polls after it starts (never when 0); a preferred election makes the
// first replica leader.
class FakeCluster : public ReassignmentPort {
 public:
  struct P {
    std::vector<NodeId> replicas;
    NodeId leader;
    std::vector<NodeId> target;
    int polls = -1;  // -1: nothing running
  };
  std::map<std::pair<std::string, int32_t>, P> parts;
  int polls_to_finish = 2;
  int max_running = 0;
  int running = 0;
  int64_t now = 0;
  std::vector<std::string> log;

  Status Reassign(const std::string& t, int32_t p, const std::vector<NodeId>& r) override {
    auto& x = parts.at({t, p});
    if (r.empty()) return MakeError(Errc::kInvalidArgument, "empty");
    x.target = r;
    x.polls = 0;
    max_running = std::max(max_running, ++running);
    log.push_back("reassign " + t);
    return Status::Ok();
  }
  Status Cancel(const std::string& t, int32_t p) override {
    auto& x = parts.at({t, p});
    x.polls = -1;
    running--;
    log.push_back("cancel " + t);
    return Status::Ok();
  }
  std::optional<PartitionTopology> State(const std::string& t, int32_t p) override {
    auto& x = parts.at({t, p});
    if (x.polls >= 0 && polls_to_finish > 0 && ++x.polls >= polls_to_finish) {
      x.replicas = x.target;
      if (std::find(x.replicas.begin(), x.replicas.end(), x.leader) == x.replicas.end()) {
        x.leader = x.replicas.front();
      }
      x.polls = -1;
      running--;
    }
    return PartitionTopology{t, p, x.replicas, x.leader, x.replicas, x.polls >= 0};
  }
  Status ElectPreferred(const std::string& t, int32_t p) override {
    auto& x = parts.at({t, p});
    x.leader = x.replicas.front();
    log.push_back("elect " + t);
    return Status::Ok();
  }
  Status Throttle(const std::vector<Move>& moves, int64_t rate) override {
    if (fail_throttle) return MakeError(Errc::kUnavailable, "etcd down");
    log.push_back("throttle " + std::to_string(moves.size()) + " at " + std::to_string(rate));
    return Status::Ok();
  }
  Status Unthrottle() override {
    log.push_back("unthrottle");
    return Status::Ok();
  }
  bool fail_throttle = false;
  std::set<NodeId> dead;
  bool Live(NodeId id) override { return dead.count(id) == 0; }
  int64_t NowMs() override { return now; }
  void Sleep(std::chrono::milliseconds d) override { now += d.count(); }
};

Move ReplicaMove(const std::string& topic, std::vector<int32_t> before,
                 std::vector<int32_t> after) {
  Move m;
  m.topic = topic;
  for (int32_t id : before) m.replicas_before.push_back(NodeId(id));
  for (int32_t id : after) m.replicas_after.push_back(NodeId(id));
  m.leader_before = m.replicas_before.front();
  m.leader_after = m.replicas_after.front();
  return m;
}

TEST(ExecutorTest, MovesRunWithinThePerBrokerLimitAndLeadershipFollows) {
  FakeCluster c;
  std::vector<Move> moves;
  for (int i = 0; i < 6; ++i) {
    const std::string t = "t" + std::to_string(i);
    c.parts[{t, 0}] = {{NodeId(1), NodeId(2)}, NodeId(1), {}, -1};
    // Broker 1 is in every move: at most 2 at a time.
    moves.push_back(ReplicaMove(t, {1, 2}, {3 + i % 2, 1}));
  }
  Executor e({.per_broker_concurrency = 2, .move_timeout_ms = 10'000});
  auto outcomes = e.Execute(
      moves, c, [] { return false; }, [] { return false; }, nullptr);
  ASSERT_EQ(outcomes.size(), 6u);
  for (const auto& o : outcomes) EXPECT_EQ(o.result, MoveOutcome::Result::kDone) << o.detail;
  EXPECT_EQ(c.max_running, 2);
  for (int i = 0; i < 6; ++i) {
    const auto& p = c.parts[{"t" + std::to_string(i), 0}];
    EXPECT_EQ(p.leader, NodeId(3 + i % 2));  // moved by a preferred election
  }
}

TEST(ExecutorTest, ADeadBrokerDoesNotLimitHowManyOfItsReplicasMoveAtOnce) {
  FakeCluster c;
  c.dead.insert(NodeId(1));
  std::vector<Move> moves;
  for (int i = 0; i < 8; ++i) {
    const std::string t = "t" + std::to_string(i);
    c.parts[{t, 0}] = {{NodeId(1), NodeId(2 + i % 4)}, NodeId(2 + i % 4), {}, -1};
    // Off dead broker 1, onto one of four others: two per live broker.
    moves.push_back(ReplicaMove(t, {1, 2 + i % 4}, {2 + i % 4, 2 + (i + 1) % 4}));
  }
  Executor e({.per_broker_concurrency = 4, .move_timeout_ms = 10'000});
  auto outcomes = e.Execute(
      moves, c, [] { return false; }, [] { return false; }, nullptr);
  ASSERT_EQ(outcomes.size(), 8u);
  for (const auto& o : outcomes) EXPECT_EQ(o.result, MoveOutcome::Result::kDone) << o.detail;
  // Each live broker is in 4 moves: all 8 start at once (broker 1 counted, it would be 4).
  EXPECT_EQ(c.max_running, 8);
}

TEST(ExecutorTest, AMoveThatDoesNotFinishIsCancelled) {
  FakeCluster c;
  c.polls_to_finish = 0;
  c.parts[{"t", 0}] = {{NodeId(1), NodeId(2)}, NodeId(1), {}, -1};
  Executor e({.per_broker_concurrency = 5, .move_timeout_ms = 1'000});
  auto outcomes = e.Execute(
      {ReplicaMove("t", {1, 2}, {3, 2})}, c, [] { return false; }, [] { return false; }, nullptr);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].result, MoveOutcome::Result::kCancelled);
  EXPECT_EQ(c.log.back(), "cancel t");
}

TEST(ExecutorTest, AMoveOntoABrokerThatLeavesIsCancelledAndOneOntoAGoneBrokerSkipped) {
  FakeCluster c;
  c.polls_to_finish = 0;  // nothing finishes on its own
  c.parts[{"a", 0}] = {{NodeId(1), NodeId(2)}, NodeId(1), {}, -1};
  c.parts[{"b", 0}] = {{NodeId(1), NodeId(2)}, NodeId(1), {}, -1};
  Executor e({.per_broker_concurrency = 1, .move_timeout_ms = 300'000});
  // "a" starts onto broker 4, which then dies; "b" (waiting for room on
  // broker 1) would go onto broker 4 too.
  int polls = 0;
  auto outcomes = e.Execute(
      {ReplicaMove("a", {1, 2}, {4, 2}), ReplicaMove("b", {1, 2}, {2, 4})}, c,
      [&] {
        if (++polls == 2) c.dead.insert(NodeId(4));
        return false;
      },
      [] { return false; }, nullptr);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].move.topic, "a");
  EXPECT_EQ(outcomes[0].result, MoveOutcome::Result::kCancelled) << outcomes[0].detail;
  EXPECT_NE(outcomes[0].detail.find("broker 4 left"), std::string::npos) << outcomes[0].detail;
  EXPECT_EQ(outcomes[1].move.topic, "b");
  EXPECT_EQ(outcomes[1].result, MoveOutcome::Result::kSkipped) << outcomes[1].detail;
  // Long before the move timeout: the executor did not wait on it.
  EXPECT_LT(c.now, 10'000);
  EXPECT_EQ(c.log, (std::vector<std::string>{"reassign a", "cancel a"}));
}

TEST(ExecutorTest, StoppingStartsNothingNewAndFinishesWhatRuns) {
  FakeCluster c;
  std::vector<Move> moves;
  for (int i = 0; i < 4; ++i) {
    const std::string t = "t" + std::to_string(i);
    c.parts[{t, 0}] = {{NodeId(1), NodeId(2)}, NodeId(1), {}, -1};
    moves.push_back(ReplicaMove(t, {1, 2}, {3, 2}));
  }
  Executor e({.per_broker_concurrency = 1, .move_timeout_ms = 10'000});
  int outcomes_seen = 0;
  auto outcomes = e.Execute(
      moves, c, [&] { return outcomes_seen >= 1; }, [] { return false; },
      [&](const MoveOutcome&) { outcomes_seen++; });
  EXPECT_EQ(outcomes.size(), 1u);
  const auto& untouched = c.parts[std::make_pair(std::string("t1"), 0)];
  EXPECT_EQ(untouched.replicas, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
}

TEST(ExecutorTest, ReplicaMovesAreThrottledFromBeforeTheFirstUntilAfterTheLast) {
  FakeCluster c;
  c.parts[{"a", 0}] = {{NodeId(1), NodeId(2)}, NodeId(1), {}, -1};
  c.parts[{"b", 0}] = {{NodeId(3), NodeId(4)}, NodeId(3), {}, -1};
  c.parts[{"c", 0}] = {{NodeId(1), NodeId(3)}, NodeId(1), {}, -1};
  Move lead = ReplicaMove("c", {1, 3}, {3, 1});
  lead.kind = MoveKind::kLeadership;
  std::vector<Move> moves = {ReplicaMove("a", {1, 2}, {5, 2}), ReplicaMove("b", {3, 4}, {3, 6}),
                             lead};
  ExecutorOptions o;
  o.throttle_bytes_per_sec = 10 << 20;
  Executor e(o);
  auto outcomes = e.Execute(
      moves, c, [] { return false; }, nullptr, nullptr);
  ASSERT_EQ(outcomes.size(), 3u);
  ASSERT_GE(c.log.size(), 3u);
  EXPECT_EQ(c.log.front(), "throttle 2 at 10485760");  // the replica moves only
  EXPECT_EQ(c.log.back(), "unthrottle");
  // Without a throttle configured, none is set.
  FakeCluster plain;
  plain.parts = c.parts;
  Executor(ExecutorOptions{})
      .Execute(
          moves, plain, [] { return false; }, nullptr, nullptr);
  EXPECT_EQ(std::count(plain.log.begin(), plain.log.end(), "unthrottle"), 0);
}

TEST(ExecutorTest, WhenTheThrottleCannotBeSetOnlyLeadershipMoves) {
  FakeCluster c;
  c.fail_throttle = true;
  c.parts[{"a", 0}] = {{NodeId(1), NodeId(2)}, NodeId(1), {}, -1};
  c.parts[{"c", 0}] = {{NodeId(1), NodeId(3)}, NodeId(1), {}, -1};
  Move lead = ReplicaMove("c", {1, 3}, {3, 1});
  lead.kind = MoveKind::kLeadership;
  ExecutorOptions o;
  o.throttle_bytes_per_sec = 1 << 20;
  auto outcomes = Executor(o).Execute(
      {ReplicaMove("a", {1, 2}, {5, 2}), lead}, c, [] { return false; }, nullptr, nullptr);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].result, MoveOutcome::Result::kSkipped);
  EXPECT_NE(outcomes[0].detail.find("throttle"), std::string::npos) << outcomes[0].detail;
  EXPECT_EQ(outcomes[1].result, MoveOutcome::Result::kDone) << outcomes[1].detail;
  EXPECT_EQ(c.parts.at({"a", 0}).replicas, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
}

}  // namespace
}  // namespace strata::balancer
