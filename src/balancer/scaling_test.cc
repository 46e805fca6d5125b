#include "balancer/scaling.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace strata::balancer {
namespace {

using cluster::ScalingRoles;

constexpr double kCapacity = 1000;  // network in and out per broker, bytes/s

// Brokers 1..active active and the next `standby` ones standby, each
// declaring kCapacity; partitions of RF 2 over the active brokers sharing
// `bytes_in` (network in counts every replica: twice that in all).
ClusterModel Model(int active, int standby, double bytes_in, int partitions = 12) {
  ClusterModel m;
  for (int b = 1; b <= active + standby; ++b) {
    BrokerInfo info;
    info.id = NodeId(b);
    info.status = b <= active ? BrokerStatus::kActive : BrokerStatus::kStandby;
    info.capacity.network_in = kCapacity;
    info.capacity.network_out = kCapacity;
    m.AddBroker(info);
  }
  for (int p = 0; p < partitions; ++p) {
    PartitionInfo info;
    info.topic = "t";
    info.partition = p;
    info.replicas = {NodeId(1 + p % active), NodeId(1 + (p + 1) % active)};
    info.leader = info.replicas[0];
    info.load.bytes_in = bytes_in / partitions;
    m.AddPartition(info);
  }
  return m;
}

// Moves every replica off broker `from` to another broker that lacks one.
void Empty(ClusterModel& m, NodeId from) {
  for (size_t p : m.ReplicasOn(m.IndexOf(from))) {
    const auto& replicas = m.partition(p).replicas;
    for (int32_t b = 0; b < m.broker_count(); ++b) {
      const NodeId to = m.broker(b).id;
      if (std::find(replicas.begin(), replicas.end(), to) != replicas.end()) continue;
      m.MoveReplica(p, from, to);
      break;
    }
  }
  ASSERT_TRUE(m.ReplicasOn(m.IndexOf(from)).empty());
}

ScalingOptions Options() {
  ScalingOptions o;
  o.enabled = true;
  o.scale_out_threshold = 0.8;
  o.scale_in_threshold = 0.3;
  o.sustain_ms = 10'000;
  o.min_active_brokers = 2;
  return o;
}

TEST(ScalingTest, UtilizationIsTheMostLoadedDeclaredDimension) {
  // 3 brokers, 1200 B/s produced at RF 2: 2400 in of 3000 (80 %); out is
  // the replication, 1200 of 3000.
  ClusterModel m = Model(3, 1, 1200);
  std::string dimension;
  EXPECT_NEAR(Utilization(m, &dimension), 0.8, 1e-9);
  EXPECT_EQ(dimension, "network_in");
  // A standby broker's capacity does not count; with none declared there
  // is nothing to compare against.
  ClusterModel bare;
  bare.AddBroker(BrokerInfo{NodeId(1), "", BrokerStatus::kActive, {}, 0});
  EXPECT_LT(Utilization(bare, nullptr), 0);
}

TEST(ScalingTest, SustainedHighLoadActivatesTheLowestStandbyBroker) {
  ClusterModel m = Model(3, 2, 1500);  // 100 %
  ScalingTimers t;
  ScalingDecision d = DecideScaling(m, {}, t, Options(), 1'000);
  EXPECT_EQ(d.event, ScalingEvent::kNone);  // not sustained yet
  d = DecideScaling(m, {}, t, Options(), 10'999);
  EXPECT_EQ(d.event, ScalingEvent::kNone);
  d = DecideScaling(m, {}, t, Options(), 11'000);
  ASSERT_EQ(d.event, ScalingEvent::kScaleOut) << d.reason;
  EXPECT_EQ(d.broker, NodeId(4));
  EXPECT_EQ(d.roles.activated, std::set<NodeId>{NodeId(4)});
  EXPECT_NE(d.reason.find("network_in"), std::string::npos) << d.reason;
  // The timer starts over after an event.
  EXPECT_EQ(DecideScaling(m, d.roles, t, Options(), 12'000).event, ScalingEvent::kNone);
}

TEST(ScalingTest, ADipBelowTheThresholdRestartsTheTimer) {
  ScalingTimers t;
  EXPECT_EQ(DecideScaling(Model(3, 1, 1500), {}, t, Options(), 0).event, ScalingEvent::kNone);
  EXPECT_EQ(DecideScaling(Model(3, 1, 900), {}, t, Options(), 9'000).event, ScalingEvent::kNone);
  EXPECT_EQ(DecideScaling(Model(3, 1, 1500), {}, t, Options(), 12'000).event, ScalingEvent::kNone);
  EXPECT_EQ(DecideScaling(Model(3, 1, 1500), {}, t, Options(), 22'000).event,
            ScalingEvent::kScaleOut);
}

TEST(ScalingTest, WithoutAStandbyBrokerItAsksForOneOncePerPeriod) {
  ClusterModel m = Model(3, 0, 1500);
  ScalingTimers t;
  DecideScaling(m, {}, t, Options(), 0);
  EXPECT_EQ(DecideScaling(m, {}, t, Options(), 10'000).event, ScalingEvent::kStandbyWanted);
  EXPECT_EQ(DecideScaling(m, {}, t, Options(), 15'000).event, ScalingEvent::kNone);
  EXPECT_EQ(DecideScaling(m, {}, t, Options(), 20'000).event, ScalingEvent::kStandbyWanted);
}

TEST(ScalingTest, LowLoadDrainsAnActivatedBrokerFirstThenItGoesBackToStandby) {
  ClusterModel m = Model(4, 0, 200);  // 400 of 4000: 10 %
  ScalingRoles roles;
  roles.activated = {NodeId(2)};  // registered standby, activated earlier
  ScalingTimers t;
  DecideScaling(m, roles, t, Options(), 0);
  ScalingDecision d = DecideScaling(m, roles, t, Options(), 10'000);
  ASSERT_EQ(d.event, ScalingEvent::kDrainStarted) << d.reason;
  EXPECT_EQ(d.broker, NodeId(2));
  EXPECT_EQ(d.roles.draining, std::set<NodeId>{NodeId(2)});
  // While it still holds replicas nothing else happens.
  m.SetStatus(m.IndexOf(NodeId(2)), BrokerStatus::kDraining);
  EXPECT_EQ(DecideScaling(m, d.roles, t, Options(), 30'000).event, ScalingEvent::kNone);
  // Emptied: back to its registered role, standby.
  Empty(m, NodeId(2));
  d = DecideScaling(m, d.roles, t, Options(), 31'000);
  ASSERT_EQ(d.event, ScalingEvent::kScaleIn) << d.reason;
  EXPECT_EQ(d.broker, NodeId(2));
  EXPECT_TRUE(d.roles.draining.empty());
  EXPECT_TRUE(d.roles.activated.empty());
  EXPECT_TRUE(d.roles.retired.empty());
}

TEST(ScalingTest, ARegisteredActiveBrokerDrainedIsRetiredAndReactivatedFirst) {
  ClusterModel m = Model(4, 0, 200);
  Empty(m, NodeId(4));
  ScalingRoles roles;
  roles.draining = {NodeId(4)};
  ScalingTimers t;
  ScalingDecision d = DecideScaling(m, roles, t, Options(), 0);
  ASSERT_EQ(d.event, ScalingEvent::kScaleIn);
  EXPECT_EQ(d.roles.retired, std::set<NodeId>{NodeId(4)});
  // A retired broker is a standby broker: scaling out brings it back.
  ClusterModel hot = Model(3, 1, 1500);
  DecideScaling(hot, d.roles, t, Options(), 1'000);
  d = DecideScaling(hot, d.roles, t, Options(), 11'000);
  ASSERT_EQ(d.event, ScalingEvent::kScaleOut);
  EXPECT_EQ(d.broker, NodeId(4));
  EXPECT_TRUE(d.roles.retired.empty());
  EXPECT_TRUE(d.roles.activated.empty());
}

TEST(ScalingTest, ScaleInKeepsEnoughBrokersAndNeverOverloadsThem) {
  ScalingOptions o = Options();
  o.scale_in_threshold = 0.7;
  ScalingTimers t;
  // 3 brokers at 66 %: without one they would be at 100 %.
  ClusterModel busy = Model(3, 0, 1000);
  DecideScaling(busy, {}, t, o, 0);
  ScalingDecision d = DecideScaling(busy, {}, t, o, 10'000);
  EXPECT_EQ(d.event, ScalingEvent::kNone);
  EXPECT_NE(d.reason.find("above the scale-out threshold"), std::string::npos) << d.reason;
  // Two brokers and RF 2: neither may go.
  ScalingTimers t2;
  ClusterModel small = Model(2, 0, 10);
  DecideScaling(small, {}, t2, o, 0);
  d = DecideScaling(small, {}, t2, o, 10'000);
  EXPECT_EQ(d.event, ScalingEvent::kNone);
  EXPECT_NE(d.reason.find("must stay"), std::string::npos) << d.reason;
  // A broker that is stale blocks it too.
  ScalingTimers t3;
  ClusterModel stale = Model(4, 0, 10);
  stale.SetStatus(0, BrokerStatus::kStale);
  DecideScaling(stale, {}, t3, o, 0);
  d = DecideScaling(stale, {}, t3, o, 10'000);
  EXPECT_EQ(d.event, ScalingEvent::kNone);
  EXPECT_NE(d.reason.find("stale"), std::string::npos) << d.reason;
}

TEST(ScalingTest, HighLoadCallsOffADrain) {
  ClusterModel m = Model(3, 0, 1500);
  ScalingRoles roles;
  roles.draining = {NodeId(3)};
  ScalingTimers t;
  DecideScaling(m, roles, t, Options(), 0);
  ScalingDecision d = DecideScaling(m, roles, t, Options(), 10'000);
  ASSERT_EQ(d.event, ScalingEvent::kDrainCanceled) << d.reason;
  EXPECT_TRUE(d.roles.draining.empty());
}

TEST(ScalingTest, DisabledDecidesNothing) {
  ScalingOptions o = Options();
  o.enabled = false;
  ScalingTimers t;
  ClusterModel m = Model(3, 1, 1500);
  DecideScaling(m, {}, t, o, 0);
  EXPECT_EQ(DecideScaling(m, {}, t, o, 100'000).event, ScalingEvent::kNone);
}

}  // namespace
}  // namespace strata::balancer
