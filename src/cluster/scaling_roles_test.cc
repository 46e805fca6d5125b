#include "cluster/scaling_roles.h"

#include <gtest/gtest.h>

namespace strata::cluster {
namespace {

BrokerRegistration Registered(int32_t id, BrokerState state) {
  BrokerRegistration r;
  r.node_id = NodeId(id);
  r.state = state;
  return r;
}

TEST(ScalingRolesTest, RoundTripsThroughTheClusterConfigs) {
  std::map<std::string, std::string> configs = {{"strata.balancer.paused", "true"}};
  ScalingRoles roles;
  roles.activated = {NodeId(5), NodeId(4)};
  roles.retired = {NodeId(2)};
  roles.ToConfigs(configs);
  EXPECT_EQ(configs.at(kScalingActivatedKey), "4,5");
  EXPECT_EQ(configs.count(kScalingDrainingKey), 0u);
  EXPECT_EQ(ScalingRoles::FromConfigs(configs), roles);
  roles.activated.clear();
  roles.ToConfigs(configs);
  EXPECT_EQ(configs.count(kScalingActivatedKey), 0u);
  EXPECT_EQ(configs.at("strata.balancer.paused"), "true");  // others untouched
  // What an operator typed, spaces and junk included: the ids that parse.
  configs[kScalingDrainingKey] = " 3, x,7 ,-1,";
  EXPECT_EQ(ScalingRoles::FromConfigs(configs).draining, (std::set<NodeId>{NodeId(3), NodeId(7)}));
}

TEST(ScalingRolesTest, TheEffectiveRoleIsTheRegisteredOneAsScalingChangedIt) {
  ScalingRoles roles;
  roles.activated = {NodeId(4)};
  roles.retired = {NodeId(2)};
  roles.draining = {NodeId(3)};
  EXPECT_EQ(roles.Effective(Registered(1, BrokerState::kActive)), BrokerState::kActive);
  EXPECT_EQ(roles.Effective(Registered(2, BrokerState::kActive)), BrokerState::kStandby);
  EXPECT_EQ(roles.Effective(Registered(3, BrokerState::kActive)), BrokerState::kDraining);
  EXPECT_EQ(roles.Effective(Registered(4, BrokerState::kStandby)), BrokerState::kActive);
  EXPECT_EQ(roles.Effective(Registered(5, BrokerState::kStandby)), BrokerState::kStandby);
  EXPECT_EQ(roles.Effective(Registered(3, BrokerState::kShuttingDown)), BrokerState::kShuttingDown);
}

}  // namespace
}  // namespace strata::cluster
