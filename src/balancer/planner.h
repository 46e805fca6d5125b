#pragma once
// MakePlan: one balancing cycle's decisions on a ClusterModel, after
// Cruise Control's greedy goal-by-goal optimisation (research note, section
// 2.3) with AutoMQ's damping (section 1.4).
//
// Hard goals first: every replica off brokers that are dead, draining or
// standby; rack awareness (no rack holds more of a partition's replicas
// than an even spread needs); at most max_replicas_per_broker replicas and
// at most disk_cap_ratio of a broker's declared disk on any broker. Then
// the soft goals in order (PlannerOptions::goals): network in (including
// replication), network out, leader count, leader bytes in, topic replica
// spread. For each, a broker outside the band avg +- band sheds load (or
// takes some) until it is within half the band of the average, leadership
// moves first, then replica moves. A move must keep every hard goal, may
// not push another broker out of the goal's target, and may not take a
// broker further from the band of a goal optimised before it. Nothing
// moves for a network goal while its average is below the traffic floor;
// a partition moves at most once per cycle, never while it is frozen (a
// reassignment running) or cooling down; a cycle stops at max_moves.
//
// The plan is deterministic: the same model and options give the same
// moves in the same order (every choice breaks ties by broker id and
// partition index). The model passed in is changed: it ends as the plan
// leaves the cluster (pass a copy to keep the original).
//
// Thread-safety: a pure function of its arguments.
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "balancer/cluster_model.h"

namespace strata::balancer {

// The soft goals, in the default order.
inline constexpr const char* kGoalNetworkIn = "network_in";
inline constexpr const char* kGoalNetworkOut = "network_out";
inline constexpr const char* kGoalLeaderCount = "leader_count";
inline constexpr const char* kGoalLeaderBytesIn = "leader_bytes_in";
inline constexpr const char* kGoalTopicSpread = "topic_replica_spread";
// The hard goals, named in moves and violations.
inline constexpr const char* kGoalLiveBrokers = "live_brokers";
inline constexpr const char* kGoalRackAware = "rack_aware";
inline constexpr const char* kGoalReplicaCap = "replica_cap";
inline constexpr const char* kGoalDiskCap = "disk_cap";

struct PlannerOptions {
  std::vector<std::string> goals = {kGoalNetworkIn, kGoalNetworkOut, kGoalLeaderCount,
                                    kGoalLeaderBytesIn, kGoalTopicSpread};
  double band = 0.10;  // brokers within avg * (1 +- band) are left alone
  // A network goal whose per-broker average is below this (bytes/s) moves
  // nothing: small loads are noise.
  double network_floor = 1 << 20;
  int max_moves = 50;  // per cycle; <= 0: no cap (the simulator)
  int32_t max_replicas_per_broker = 10000;
  double disk_cap_ratio = 0.8;  // of the declared disk capacity
  // Partitions in their cool-down (moved by a recent cycle): (topic, index).
  std::set<std::pair<std::string, int32_t>> cooling;
};

enum class MoveKind { kLeadership, kReplica };

struct Move {
  MoveKind kind = MoveKind::kReplica;
  std::string topic;
  int32_t partition = 0;
  std::vector<NodeId> replicas_before;
  std::vector<NodeId> replicas_after;  // the leader first after a leadership move
  NodeId leader_before{-1};
  NodeId leader_after{-1};
  NodeId from{-1};  // the broker that gives up the replica or leadership
  NodeId to{-1};
  std::string goal;    // the goal that chose it
  std::string reason;  // why, with figures: "broker 3 network_in 12.1 MB/s > 10.4 MB/s"
};

// One goal's figures over the brokers it balances, before and after.
struct GoalSummary {
  std::string goal;
  double average = 0;
  double max_before = 0, max_after = 0;
  double min_before = 0, min_after = 0;
  bool met_before = false, met_after = false;  // every broker within the band (or below the floor)
  int moves = 0;
};

struct Plan {
  std::vector<Move> moves;
  std::vector<GoalSummary> goals;       // hard goals first, then the soft ones in order
  std::vector<std::string> violations;  // hard goals that could not be met, and why
  bool move_cap_reached = false;
  double plan_ms = 0;
};

Plan MakePlan(ClusterModel& model, const PlannerOptions& options);

}  // namespace strata::balancer
