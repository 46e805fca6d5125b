#pragma once
// PlanContext: the state one MakePlan call shares between its goals: the
// model being changed, the moves so far, which partitions may still move,
// the hard-goal check every move passes, and the bands of the soft goals
// already optimised, which later moves must respect. Internal to the
// planner (planner.h is the public face).
//
// Thread-safety: none; one per MakePlan call.
#include <string>
#include <vector>

#include "balancer/cluster_model.h"
#include "balancer/planner.h"

namespace strata::balancer {

// A soft goal's per-broker figure, and what each kind of move carries of it.
struct Metric {
  const char* goal;
  double (*value)(const BrokerLoad&);
  // What moving p's replica off a broker takes with it (`leader`: that
  // replica leads p).
  double (*replica_share)(const PartitionInfo& p, bool leader);
  // What moving p's leadership takes; null when leadership does not count.
  double (*leader_share)(const PartitionInfo& p);
  bool network;  // the traffic floor applies
  // The declared capacity the figure is measured against (null: none).
  double (*capacity)(const BrokerCapacity&) = nullptr;
};
// The metric of a distribution goal by name; null for others.
const Metric* FindMetric(const std::string& goal);

// A goal's target around the average: brokers outside [lo, hi] are out of
// balance; one being fixed is brought within [target_lo, target_hi].
struct Band {
  const Metric* metric = nullptr;
  double average = 0;
  double lo = 0, hi = 0;
  double target_lo = 0, target_hi = 0;
};

class PlanContext {
 public:
  PlanContext(ClusterModel& model, const PlannerOptions& options);

  ClusterModel& model() { return model_; }
  const ClusterModel& model() const { return model_; }
  const PlannerOptions& options() const { return options_; }
  Plan& plan() { return plan_; }

  // The brokers soft goals balance (and moves may go to): the active ones.
  const std::vector<int32_t>& active() const { return active_; }
  // The per-broker average below which a network goal moves nothing: the
  // configured floor, or a tenth of the active brokers' declared capacity
  // when that is lower (0.75 MB/s on brokers that declare 1 MB/s is not
  // trivial traffic); 0 for goals the floor does not apply to.
  double TrafficFloor(const Metric& metric) const;
  bool IsActive(int32_t b) const;
  // Neither frozen nor cooling down. A partition may move more than once
  // in a cycle (the plan merges its moves into one reassignment).
  bool Movable(size_t p) const;
  // Whether b holds a replica of p now.
  bool Holds(size_t p, int32_t b) const;
  // The cycle's cap on moved partitions is reached.
  bool CapReached() const;
  // The moves, merged to one per partition (first to last state).
  std::vector<Move> MergedMoves() const;

  // Whether a replica of p may move from broker `from` (index; -1: a new
  // replica) to `to` as far as the hard goals go; `why` says why not.
  bool CanHost(size_t p, int32_t from, int32_t to, std::string* why = nullptr) const;
  // Replicas of p on `rack`, not counting broker index `except`.
  int32_t ReplicasOnRack(size_t p, const std::string& rack, int32_t except) const;
  // The most replicas of a partition with `replication_factor` replicas
  // one rack may hold (everything when racks are not in use).
  int32_t MaxPerRack(size_t replication_factor) const;

  // Whether moving `share` of every optimised goal's metric from `from` to
  // `to` (as the move of p of `kind` would) keeps each within its band or
  // no further from it.
  bool KeepsOptimized(size_t p, MoveKind kind, int32_t from, int32_t to) const;
  void MarkOptimized(const Band& band) { optimized_.push_back(band); }

  // Applies a move to the model and records it.
  void MoveReplica(size_t p, int32_t from, int32_t to, const char* goal, std::string reason);
  void MoveLeader(size_t p, int32_t from, int32_t to, const char* goal, std::string reason);
  // Takes back the last move (its partition may move again).
  void UndoLast();

 private:
  Move StartMove(size_t p, MoveKind kind, int32_t from, int32_t to) const;
  void Record(size_t p, Move m, const char* goal, std::string reason);

  ClusterModel& model_;
  const PlannerOptions& options_;
  Plan plan_;
  std::vector<int32_t> active_;
  std::vector<bool> active_flag_;
  std::vector<uint16_t> moves_on_;  // moves of each partition in plan_
  int64_t partitions_moved_ = 0;
  std::vector<bool> cooling_;
  int32_t racks_ = 0;  // distinct racks of the active brokers; 0: racks not in use
  std::vector<Band> optimized_;
  std::vector<size_t> move_partitions_;  // the partition of each move in plan_
};

// Shares a move of kind `kind` of p carries of `metric` off broker `from`.
double MoveShare(const Metric& metric, const PartitionInfo& p, MoveKind kind, NodeId from);

// Hard goals (hard_goals.cc), each true when met.
bool EvacuateBrokers(PlanContext& ctx);
bool FixRackAwareness(PlanContext& ctx);
bool FixReplicaCap(PlanContext& ctx);
bool FixDiskCap(PlanContext& ctx);
// Soft goals.
Band ComputeBand(const PlanContext& ctx, const Metric& metric);
void BalanceDistribution(PlanContext& ctx, const Metric& metric);  // distribution_goal.cc
void BalanceTopicSpread(PlanContext& ctx);                         // topic_spread_goal.cc

// "12.1 MB/s", "340", as a goal's figures print.
std::string FormatFigure(const Metric& metric, double value);

}  // namespace strata::balancer
