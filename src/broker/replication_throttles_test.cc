// Tests of ReplicationThrottles: which rate applies (dynamic broker config
// over the cluster default over server.properties) and which replicas a
// throttled-replicas list throttles (never one in the ISR).
#include "broker/replication_throttles.h"

#include <gtest/gtest.h>

namespace strata::broker {
namespace {

using cluster::NodeId;

config::BrokerConfig Config(config::Properties props) {
  props.emplace("node.id", "1");
  props.emplace("log.dirs", "/nonexistent");
  std::vector<std::string> unknown;
  return config::BrokerConfig::FromProperties(props, &unknown);
}

TEST(ReplicationThrottlesTest, TheDynamicBrokerRateWinsOverTheDefaultAndTheFile) {
  ManualClock clock(0);
  config::BrokerConfig config = Config({{"leader.replication.throttled.rate", "1000"}});
  ReplicationThrottles throttles(config, &clock);
  EXPECT_EQ(throttles.leader().rate(), 1000);
  EXPECT_EQ(throttles.follower()->rate(), replication::kUnthrottled);

  config::BrokerConfig::DynamicConfigs dynamic;
  dynamic.cluster_default["follower.replication.throttled.rate"] = "300";
  dynamic.cluster_default["leader.replication.throttled.rate"] = "200";
  dynamic.broker["leader.replication.throttled.rate"] = "100";
  config.SetDynamic(dynamic);
  throttles.Refresh();
  EXPECT_EQ(throttles.leader().rate(), 100);
  EXPECT_EQ(throttles.follower()->rate(), 300);

  dynamic.broker["leader.replication.throttled.rate"] = "not a number";  // an old record
  config.SetDynamic(dynamic);
  throttles.Refresh();
  EXPECT_EQ(throttles.leader().rate(), replication::kUnthrottled);
}

TEST(ReplicationThrottlesTest, NamedReplicasOutsideTheIsrAreThrottled) {
  const char* kLeaderList = "leader.replication.throttled.replicas";
  const std::map<std::string, std::string> configs{{kLeaderList, "0:2,1:3"}};
  const std::vector<NodeId> isr{NodeId(1)};
  // Partition 0 names broker 2: its copy (not in the ISR) is throttled.
  EXPECT_TRUE(ReplicationThrottles::Throttled(configs, kLeaderList, 0, NodeId(2), isr, NodeId(2)));
  // Not named for partition 0, or no list on the other side.
  EXPECT_FALSE(ReplicationThrottles::Throttled(configs, kLeaderList, 0, NodeId(3), isr, NodeId(3)));
  EXPECT_FALSE(ReplicationThrottles::Throttled(configs, "follower.replication.throttled.replicas",
                                               0, NodeId(2), isr, NodeId(2)));
  // Once in the ISR it replicates unthrottled.
  const std::vector<NodeId> joined{NodeId(1), NodeId(2)};
  EXPECT_FALSE(
      ReplicationThrottles::Throttled(configs, kLeaderList, 0, NodeId(2), joined, NodeId(2)));
  // "*": every replica of every partition.
  const std::map<std::string, std::string> all{{kLeaderList, "*"}};
  EXPECT_TRUE(ReplicationThrottles::Throttled(all, kLeaderList, 7, NodeId(5), isr, NodeId(5)));
}

}  // namespace
}  // namespace strata::broker
