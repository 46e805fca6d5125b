#include "balancer/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "balancer/simulator.h"

namespace strata::balancer {
namespace {

double NetworkIn(const BrokerLoad& l) { return l.network_in; }

ClusterModel Synthetic(int32_t brokers, int64_t partitions, const std::string& placement,
                       uint64_t seed = 1) {
  SimulationOptions o;
  o.brokers = brokers;
  o.partitions = partitions;
  o.placement = placement;
  o.partitions_per_topic = 20;
  o.seed = seed;
  auto model = SynthesizeCluster(o);
  EXPECT_TRUE(model.ok()) << model.error().message;
  return std::move(model).value();
}

PlannerOptions Unlimited() {
  PlannerOptions o;
  o.max_moves = 0;
  o.network_floor = 0;
  return o;
}

// Every partition has one replica per rack, and no replica on a broker
// that is not active.
void ExpectHardGoalsHold(const ClusterModel& m) {
  for (size_t p = 0; p < m.partition_count(); ++p) {
    std::set<std::string> racks;
    for (NodeId r : m.partition(p).replicas) {
      const int32_t b = m.IndexOf(r);
      ASSERT_GE(b, 0);
      EXPECT_EQ(m.broker(b).status, BrokerStatus::kActive) << "replica on broker " << r.value();
      racks.insert(m.broker(b).rack);
    }
    EXPECT_EQ(racks.size(), m.partition(p).replicas.size())
        << m.partition(p).topic << "-" << m.partition(p).partition;
  }
}

TEST(PlannerTest, BalancesASkewedPlacementWithinTheTarget) {
  ClusterModel m = Synthetic(30, 3000, "zipf:1.1");
  const double before = MaxOverAverage(m, NetworkIn);
  ASSERT_GT(before, 2.0);
  Plan plan = MakePlan(m, Unlimited());
  EXPECT_TRUE(plan.violations.empty());
  EXPECT_LE(MaxOverAverage(m, NetworkIn), 1.05 + 1e-9);
  ExpectHardGoalsHold(m);
}

TEST(PlannerTest, SamePlanForTheSameModel) {
  ClusterModel a = Synthetic(20, 2000, "zipf:1.1", 7);
  ClusterModel b = Synthetic(20, 2000, "zipf:1.1", 7);
  Plan pa = MakePlan(a, Unlimited());
  Plan pb = MakePlan(b, Unlimited());
  ASSERT_EQ(pa.moves.size(), pb.moves.size());
  ASSERT_FALSE(pa.moves.empty());
  for (size_t i = 0; i < pa.moves.size(); ++i) {
    EXPECT_EQ(pa.moves[i].topic, pb.moves[i].topic);
    EXPECT_EQ(pa.moves[i].partition, pb.moves[i].partition);
    EXPECT_EQ(pa.moves[i].replicas_after, pb.moves[i].replicas_after);
    EXPECT_EQ(pa.moves[i].leader_after, pb.moves[i].leader_after);
  }
}

TEST(PlannerTest, ABalancedClusterStaysStillOverManyCycles) {
  ClusterModel m = Synthetic(30, 3000, "zipf:1.1");
  Plan first = MakePlan(m, Unlimited());
  ASSERT_FALSE(first.moves.empty());
  // The plan applied: later cycles on the same load find nothing to do.
  for (int cycle = 0; cycle < 10; ++cycle) {
    Plan again = MakePlan(m, Unlimited());
    EXPECT_TRUE(again.moves.empty()) << "cycle " << cycle << " moved " << again.moves.size()
                                     << ", first: " << again.moves.front().reason;
  }
}

TEST(PlannerTest, NothingMovesInsideTheBand) {
  ClusterModel m = Synthetic(12, 1200, "round_robin");
  PlannerOptions o = Unlimited();
  o.band = 10.0;  // every broker is inside
  o.goals = {kGoalNetworkIn, kGoalNetworkOut, kGoalLeaderCount, kGoalLeaderBytesIn};
  EXPECT_TRUE(MakePlan(m, o).moves.empty());
}

TEST(PlannerTest, NothingMovesBelowTheTrafficFloor) {
  ClusterModel m = Synthetic(12, 1200, "zipf:1.1");
  PlannerOptions o;
  o.network_floor = 1e12;
  o.goals = {kGoalNetworkIn, kGoalNetworkOut};
  EXPECT_TRUE(MakePlan(m, o).moves.empty());
}

// Brokers 1-3 hold 12 partitions at RF 2 taking 1.5 MB/s (1 MB/s in per
// broker, 0.75 MB/s on average over 4: below the default 1 MiB/s floor);
// broker 4 holds nothing, as a standby just activated.
ClusterModel ThreeLoadedAndOneEmpty(double declared_capacity) {
  ClusterModel m;
  for (int32_t id = 1; id <= 4; ++id) {
    BrokerInfo b;
    b.id = NodeId(id);
    b.capacity.network_in = b.capacity.network_out = declared_capacity;
    m.AddBroker(b);
  }
  for (int32_t p = 0; p < 12; ++p) {
    PartitionInfo info;
    info.topic = "surge";
    info.partition = p;
    info.replicas = {NodeId(1 + p % 3), NodeId(1 + (p + 1) % 3)};
    info.leader = info.replicas[0];
    info.isr = info.replicas;
    info.load.bytes_in = 125000;
    m.AddPartition(info);
  }
  return m;
}

TEST(PlannerTest, TheTrafficFloorIsATenthOfTheDeclaredCapacityWhenThatIsLower) {
  PlannerOptions o;  // the default floor, 1 MiB/s
  o.goals = {kGoalNetworkIn};
  ClusterModel undeclared = ThreeLoadedAndOneEmpty(0);
  EXPECT_TRUE(MakePlan(undeclared, o).moves.empty());  // 0.75 MB/s: below the floor

  ClusterModel declared = ThreeLoadedAndOneEmpty(1e6);  // 75 % of what they can take
  Plan plan = MakePlan(declared, o);
  ASSERT_FALSE(plan.moves.empty());
  for (const Move& move : plan.moves) {
    EXPECT_EQ(move.to, NodeId(4)) << move.topic << "-" << move.partition << ": " << move.reason;
  }
}

TEST(PlannerTest, TheMoveCapBoundsACycle) {
  ClusterModel m = Synthetic(30, 3000, "zipf:1.1");
  PlannerOptions o = Unlimited();
  o.max_moves = 25;
  Plan plan = MakePlan(m, o);
  EXPECT_EQ(plan.moves.size(), 25u);
  EXPECT_TRUE(plan.move_cap_reached);
  std::set<std::pair<std::string, int32_t>> seen;
  for (const Move& mv : plan.moves) EXPECT_TRUE(seen.insert({mv.topic, mv.partition}).second);
}

TEST(PlannerTest, CoolingAndFrozenPartitionsStayPut) {
  ClusterModel m = Synthetic(30, 3000, "zipf:1.1");
  PlannerOptions o = Unlimited();
  for (size_t p = 0; p < m.partition_count(); p += 2) {
    o.cooling.insert({m.partition(p).topic, m.partition(p).partition});
  }
  Plan plan = MakePlan(m, o);
  ASSERT_FALSE(plan.moves.empty());
  for (const Move& mv : plan.moves) EXPECT_EQ(o.cooling.count({mv.topic, mv.partition}), 0u);
}

TEST(PlannerTest, ADeadBrokerIsEmptiedRackAware) {
  ClusterModel m = Synthetic(9, 900, "round_robin");
  const int32_t dead = m.IndexOf(NodeId(4));
  const int32_t held = m.load(dead).replicas;
  ASSERT_GT(held, 0);
  m.SetStatus(dead, BrokerStatus::kDead);
  PlannerOptions o;  // defaults: the cap does not hold evacuation back
  o.max_moves = 5;
  Plan plan = MakePlan(m, o);
  EXPECT_TRUE(plan.violations.empty());
  EXPECT_EQ(m.load(dead).replicas, 0);
  int evacuated = 0;
  for (const Move& mv : plan.moves) {
    if (mv.goal == kGoalLiveBrokers) {
      EXPECT_EQ(mv.from, NodeId(4));
      evacuated++;
    }
  }
  EXPECT_EQ(evacuated, held);
  ExpectHardGoalsHold(m);
}

TEST(PlannerTest, AStandbyBrokerHoldsNothingAndAStaleOneGetsNothing) {
  ClusterModel m = Synthetic(9, 900, "zipf:1.1");
  m.SetStatus(m.IndexOf(NodeId(9)), BrokerStatus::kStandby);
  m.SetStatus(m.IndexOf(NodeId(1)), BrokerStatus::kStale);
  const int32_t stale_before = m.load(m.IndexOf(NodeId(1))).replicas;
  Plan plan = MakePlan(m, Unlimited());
  EXPECT_EQ(m.load(m.IndexOf(NodeId(9))).replicas, 0);
  EXPECT_EQ(m.load(m.IndexOf(NodeId(1))).replicas, stale_before);
  for (const Move& mv : plan.moves) {
    EXPECT_NE(mv.to, NodeId(1));
    EXPECT_NE(mv.to, NodeId(9));
  }
}

TEST(PlannerTest, RackViolationsAreRepaired) {
  ClusterModel m;
  for (int32_t b = 1; b <= 6; ++b) m.AddBroker({NodeId(b), b % 2 ? "a" : "b", {}, {}, 0});
  for (int32_t p = 0; p < 6; ++p) {
    // Both replicas on rack "a" (odd ids).
    m.AddPartition({"t",
                    p,
                    {NodeId(1), NodeId(3)},
                    NodeId(1),
                    {NodeId(1), NodeId(3)},
                    {1e6, 1e6, 1e3, 1 << 20},
                    false});
  }
  Plan plan = MakePlan(m, Unlimited());
  EXPECT_TRUE(plan.violations.empty());
  ExpectHardGoalsHold(m);
}

TEST(PlannerTest, TheReplicaCapIsHard) {
  ClusterModel m = Synthetic(6, 600, "zipf:1.1");
  PlannerOptions o = Unlimited();
  o.max_replicas_per_broker = 320;  // 1800 replicas on 6 brokers: 300 each fits
  Plan plan = MakePlan(m, o);
  EXPECT_TRUE(plan.violations.empty());
  for (int32_t b = 0; b < m.broker_count(); ++b) EXPECT_LE(m.load(b).replicas, 320);
}

TEST(PlannerTest, LeadershipMovesPutTheNewLeaderFirst) {
  ClusterModel m;
  for (int32_t b = 1; b <= 2; ++b) m.AddBroker({NodeId(b), "", {}, {}, 0});
  for (int32_t p = 0; p < 10; ++p) {
    m.AddPartition({"t",
                    p,
                    {NodeId(1), NodeId(2)},
                    NodeId(1),
                    {NodeId(1), NodeId(2)},
                    {1e6, 1e6, 1e3, 1 << 20},
                    false});
  }
  PlannerOptions o = Unlimited();
  o.goals = {kGoalLeaderCount};
  Plan plan = MakePlan(m, o);
  ASSERT_EQ(plan.moves.size(), 5u);
  for (const Move& mv : plan.moves) {
    EXPECT_EQ(mv.kind, MoveKind::kLeadership);
    EXPECT_EQ(mv.leader_after, NodeId(2));
    EXPECT_EQ(mv.replicas_after, (std::vector<NodeId>{NodeId(2), NodeId(1)}));
  }
  EXPECT_EQ(m.load(0).leaders, 5);
  EXPECT_EQ(m.load(1).leaders, 5);
}

}  // namespace
}  // namespace strata::balancer
